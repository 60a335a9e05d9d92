#!/usr/bin/env bash
# -o PATH writes the data there and nothing to stdout; an unwritable path is an error.
set -u
jqtrace=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$("$jqtrace" validate --format json -o "$tmp/report.json" samples/broken.trace.json)
status=$?
[ $status -eq 1 ] || { echo "FAIL: exit $status"; exit 1; }
[ -z "$out" ] || { echo "FAIL: stdout not empty with -o"; exit 1; }
grep -q '"schema": "jqtrace/validate/1"' "$tmp/report.json" || { echo "FAIL: no report written"; exit 1; }
"$jqtrace" validate -o /nonexistent/dir/report.txt samples/broken.trace.json 2> "$tmp/err"
status=$?
[ $status -eq 2 ] || { echo "FAIL: unwritable -o gave exit $status"; exit 1; }
grep -q "jqtrace: /nonexistent/dir/report.txt: cannot write: No such file or directory" "$tmp/err" ||
  { echo "FAIL: message"; cat "$tmp/err"; exit 1; }
# Colors only when asked for or on a TTY without NO_COLOR.
"$jqtrace" validate --color always samples/broken.trace.json | grep -q $'\x1b\[' || { echo "FAIL: --color always"; exit 1; }
NO_COLOR=1 "$jqtrace" validate samples/broken.trace.json | grep -q $'\x1b\[' && { echo "FAIL: color without a TTY"; exit 1; }
echo "output file: ok"
