#!/usr/bin/env bash
# The progress bar: drawn on stderr when it is a terminal and the file is large, never
# with -q, never when stderr is not a terminal, never under CI. `script` gives a pty.
set -u
jqtrace=$1
gen=$2
if ! command -v script > /dev/null; then
  echo "SKIP: no 'script' command to run jqtrace on a pseudo-terminal"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$gen" --size-mb 40 --seed 2 -o "$tmp/big.json"
on_tty() { env -u CI NO_COLOR=1 script -qec "$*" /dev/null; }
out=$(on_tty "'$jqtrace' validate '$tmp/big.json'")
grep -q "jqtrace: reading $tmp/big.json" <<< "$out" || { echo "FAIL: no progress bar on a TTY"; echo "$out" | head -3; exit 1; }
grep -q "valid jobque trace" <<< "$out" || { echo "FAIL: no result"; exit 1; }
out=$(on_tty "'$jqtrace' validate -q '$tmp/big.json'")
grep -q "jqtrace: reading" <<< "$out" && { echo "FAIL: progress bar with -q"; exit 1; }
out=$(CI=true script -qec "'$jqtrace' validate '$tmp/big.json'" /dev/null)
grep -q "jqtrace: reading" <<< "$out" && { echo "FAIL: progress bar under CI"; exit 1; }
err=$(env -u CI "$jqtrace" validate "$tmp/big.json" 2>&1 >/dev/null)
[ -z "$err" ] || { echo "FAIL: stderr not a TTY but got: $err"; exit 1; }
echo "progress: ok"
