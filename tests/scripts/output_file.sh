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
# SPEC §3: a file that cannot be written is an input or output error (3).
[ $status -eq 3 ] || { echo "FAIL: unwritable -o gave exit $status"; exit 1; }
grep -q "jqtrace: /nonexistent/dir/report.txt: cannot write: No such file or directory" "$tmp/err" ||
  { echo "FAIL: message"; cat "$tmp/err"; exit 1; }
# Colors only when asked for or on a TTY without NO_COLOR.
"$jqtrace" validate --color always samples/broken.trace.json | grep -q $'\x1b\[' || { echo "FAIL: --color always"; exit 1; }
NO_COLOR=1 "$jqtrace" validate samples/broken.trace.json | grep -q $'\x1b\[' && { echo "FAIL: color without a TTY"; exit 1; }
# A write that fails (a full disk) names the path and the reason, exit 3.
"$jqtrace" stats -o /dev/full samples/decode-small.trace.json 2> "$tmp/err"
status=$?
[ $status -eq 3 ] || { echo "FAIL: -o /dev/full gave exit $status"; exit 1; }
grep -q "jqtrace: /dev/full: write failed: No space left on device" "$tmp/err" ||
  { echo "FAIL: /dev/full message"; cat "$tmp/err"; exit 1; }
# auto colors: CLICOLOR_FORCE forces them without a TTY; TERM=dumb and NO_COLOR turn them off.
CLICOLOR_FORCE=1 "$jqtrace" validate samples/broken.trace.json | grep -q $'\x1b\[' ||
  { echo "FAIL: no color with CLICOLOR_FORCE"; exit 1; }
CLICOLOR_FORCE=0 "$jqtrace" validate samples/broken.trace.json | grep -q $'\x1b\[' &&
  { echo "FAIL: color with CLICOLOR_FORCE=0 and no TTY"; exit 1; }
NO_COLOR=1 CLICOLOR_FORCE=1 "$jqtrace" validate samples/broken.trace.json | grep -q $'\x1b\[' &&
  { echo "FAIL: color with NO_COLOR"; exit 1; }
if command -v script > /dev/null; then  # a real terminal for stdout
  script -qec "TERM=dumb '$jqtrace' validate samples/broken.trace.json" /dev/null | grep -q $'\x1b\[' &&
    { echo "FAIL: color with TERM=dumb"; exit 1; }
  script -qec "TERM=xterm '$jqtrace' validate samples/broken.trace.json" /dev/null | grep -q $'\x1b\[' ||
    { echo "FAIL: no color on a terminal"; exit 1; }
fi
# A file is what its name says: an extension no format has is refused (exit 2, naming
# the formats and their extensions) and nothing is written; .txt is a table; --format
# writes into any name; window's .json.gz would be an uncompressed trace under a gzip name.
"$jqtrace" stats -o "$tmp/shares.xlsx" samples/tiny.trace.json 2> "$tmp/err"
status=$?
[ $status -eq 2 ] || { echo "FAIL: -o x.xlsx gave exit $status"; exit 1; }
grep -q "stats writes no .xlsx file (its formats: table|csv|tsv|json|md; -o chooses one by .txt .csv .tsv .json .md)" \
  "$tmp/err" || { echo "FAIL: -o x.xlsx message"; cat "$tmp/err"; exit 1; }
[ ! -e "$tmp/shares.xlsx" ] || { echo "FAIL: -o x.xlsx wrote a file"; exit 1; }
"$jqtrace" stats -o "$tmp/shares.txt" samples/tiny.trace.json && grep -q "^category  *busy_us" "$tmp/shares.txt" ||
  { echo "FAIL: -o x.txt is not a table"; exit 1; }
"$jqtrace" stats --format csv -o "$tmp/shares.xlsx" samples/tiny.trace.json && grep -q "^name,color," "$tmp/shares.xlsx" ||
  { echo "FAIL: --format csv -o x.xlsx"; exit 1; }
"$jqtrace" window --us 0 50 -o "$tmp/cut.json.gz" samples/tiny.trace.json 2> "$tmp/err"
status=$?
[ $status -eq 2 ] && grep -q "window writes no .gz file" "$tmp/err" || { echo "FAIL: window -o x.json.gz: exit $status"; exit 1; }
"$jqtrace" timeline -o "$tmp/t.jpg" samples/tiny.trace.json 2> "$tmp/err"
[ $? -eq 2 ] && grep -q "its formats: svg|png; -o chooses one by .svg .png" "$tmp/err" ||
  { echo "FAIL: timeline -o x.jpg"; cat "$tmp/err"; exit 1; }
# A hidden file's leading dot is its name, not an extension; a directory's dot is not either.
mkdir "$tmp/v1.2"
"$jqtrace" stats -o "$tmp/v1.2/shares" samples/tiny.trace.json || { echo "FAIL: -o in a dotted directory"; exit 1; }
"$jqtrace" stats -o "$tmp/.shares" samples/tiny.trace.json || { echo "FAIL: -o .hidden"; exit 1; }
echo "output file: ok"
