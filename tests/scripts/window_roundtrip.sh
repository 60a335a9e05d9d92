#!/usr/bin/env bash
# Every window jqtrace writes is a valid trace, and its stats over the window's range are
# the stats of the original over that range (the window keeps every overlapping event and
# every lane). Samples and a generated trace always; the corpus's jobque traces when present.
set -u
jqtrace=$1
gen=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
"$gen" --tokens 6 --layers 8 --seed 21 -o "$tmp/gen.json"
"$gen" --tokens 4 --layers 6 --seed 22 --ring 1=150 -o "$tmp/ring.json"
files=("$tmp/gen.json" "$tmp/ring.json" samples/decode-small.trace.json samples/tiny.trace.json)
[ -d ../shared/corpus/jobque ] && files+=(../shared/corpus/jobque/*.trace.json.gz)

# check FILE SCOPE...: the window of SCOPE validates, and stats over its range match.
check() {
  local file=$1; shift
  "$jqtrace" window -q "$@" "$file" -o "$tmp/w.json" 2> /dev/null
  local status=$?
  [ $status -eq 2 ] && return  # a scope this trace has not (no such marker kind or unit)
  [ $status -eq 0 ] || { echo "FAIL: window $* $file: exit $status"; failures=$((failures + 1)); return; }
  if ! "$jqtrace" validate -q --max-errors 5 "$tmp/w.json" > "$tmp/v.txt"; then
    echo "FAIL: window $* of $file is not valid:"; cat "$tmp/v.txt"; failures=$((failures + 1)); return
  fi
  local range a b
  range=$("$jqtrace" stats -q "$@" --format json "$file" | tr -d ' \n' | grep -o '"range_us":\[[^]]*\]' | grep -o '[-0-9.]*,[-0-9.]*')
  # Whole-span durations of B events never closed run to the trace's end, which a window
  # moves: for traces with B/E, compare up to the event counts.
  local columns=1-100
  grep -q '"ph": *"B"' "$file" 2> /dev/null && columns=1-5
  # Groups without events are listed when the trace has them at all (a category no chain of
  # the window uses is not in the window): compare the groups with events.
  a=$("$jqtrace" stats -q --us "${range%,*}" "${range#*,}" --format csv "$file" | awk -F, '$5 != 0' | cut -d, -f$columns)
  b=$("$jqtrace" stats -q --us "${range%,*}" "${range#*,}" --format csv "$tmp/w.json" | awk -F, '$5 != 0' | cut -d, -f$columns)
  if [ "$a" != "$b" ]; then
    echo "FAIL: stats of window $* of $file differ from the original's"; diff <(echo "$a") <(echo "$b") | head -5
    failures=$((failures + 1))
  fi
}
for f in "${files[@]}"; do
  check "$f" --marker token 0
  check "$f" --marker token 1..2
  check "$f" --marker layer 3
  check "$f" --us 1000 1500.5
done
# Generic traces, with B/E pairs cut by the range.
check samples/chrome-small.json --us 110 150
check samples/array-form.json --marker frame 0
[ -f ../shared/corpus/chrome/main_thread_has_unclosed_slices.json ] &&
  check ../shared/corpus/chrome/main_thread_has_unclosed_slices.json --us 714008000000 714009000000
echo "window round trips: $failures failed"
[ $failures -eq 0 ]
