#!/usr/bin/env bash
# Golden test: runs `jqtrace $(cat NAME.args)` from the repo root and compares stdout,
# stderr and the exit status with NAME.stdout, NAME.stderr and NAME.status.
# Regenerating the expected files is a deliberate act, to be reviewed in the diff:
#   UPDATE_GOLDEN=1 bash tests/golden/run.sh build/jqtrace NAME
set -u
jqtrace=$1
name=$2
dir=$(dirname "$0")
args=$(cat "$dir/$name.args")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# eval: the args may redirect stdin ("validate - < samples/x.json").
(export NO_COLOR=1 LC_ALL=C; eval "\"$jqtrace\" $args" > "$out/stdout" 2> "$out/stderr" < /dev/null; echo $? > "$out/status")
# The same binary path appears in no output; only the program name "jqtrace" does.

if [ "${UPDATE_GOLDEN:-}" = 1 ]; then
  for f in stdout stderr status; do cp "$out/$f" "$dir/$name.$f"; done
  echo "updated $name"
  exit 0
fi
status=0
for f in status stdout stderr; do
  if ! diff -u "$dir/$name.$f" "$out/$f" > "$out/diff"; then
    echo "golden $name: $f differs (expected vs actual):"
    cat "$out/diff"
    status=1
  fi
done
exit $status
