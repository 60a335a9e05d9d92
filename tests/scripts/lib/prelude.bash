# Sourced by script tests: the binary under test ($1), a scratch folder removed at exit, a
# failure counter, fail MESSAGE and measure_plain_build NAME. (Not a test itself: CTest
# runs tests/scripts/*.sh.)
set -u
jqtrace=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# measure_plain_build NAME: tests that count instructions or memory cannot measure a
# sanitizer build (CI's test build is one; valgrind cannot run it and its memory is its
# shadow's): they measure the plain Release build beside it (build.sh test makes build/
# too when CI is set), or NAME is skipped (exit 77).
measure_plain_build() {
  sanitized() { ldd "$1" 2> /dev/null | grep -qE 'lib(asan|ubsan)'; }
  sanitized "$jqtrace" || return 0
  local plain
  plain="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)/build/jqtrace"
  if [ -x "$plain" ] && ! sanitized "$plain"; then
    jqtrace=$plain
  else
    echo "$1: skipped: $jqtrace is a sanitizer build and there is no plain build/jqtrace"
    exit 77
  fi
}
