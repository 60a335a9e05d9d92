# Sourced by script tests: the binary under test ($1), a scratch folder removed at exit, a
# failure counter and fail MESSAGE. (Not a test itself: CTest runs tests/scripts/*.sh.)
set -u
jqtrace=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
