#!/usr/bin/env bash
# A trace cut short (a writer that died) gives the same exit status for the same command
# whether it is plain, gzipped or in zstd, and no gate or baseline passes on it silently: they fail
# (exit 1) naming the truncation and what is missing, unless --allow-truncated.
source "$(dirname "$0")/lib/prelude.bash"
gen=$2

"$gen" --tokens 4 --layers 6 --seed 5 -o "$tmp/whole.json"
head -c 60000 "$tmp/whole.json" > "$tmp/cut.json"
gzip -c "$tmp/whole.json" > "$tmp/whole.json.gz"
head -c 8000 "$tmp/whole.json.gz" > "$tmp/cut.json.gz"  # the gzip stream itself ends early
# zstd decodes whole blocks (up to 128 KiB): frames of 4 KiB each make a cut after 8000
# bytes fall after some complete text, as a cut gzip stream does.
split -b 4096 "$tmp/whole.json" "$tmp/piece."
for piece in "$tmp"/piece.*; do zstd -q -c "$piece"; done > "$tmp/whole.json.zst"
head -c 8000 "$tmp/whole.json.zst" > "$tmp/cut.json.zst"

# expect STATUS MESSAGE ARGS...: runs jqtrace ARGS on the plain and the gzip cut.
expect() {
  local want=$1 message=$2; shift 2
  for file in "$tmp/cut.json" "$tmp/cut.json.gz" "$tmp/cut.json.zst"; do
    local out status
    out=$(timeout 30 "$jqtrace" "$@" "$file" 2>&1)
    status=$?
    if [ $status -ne "$want" ] || ! grep -qF -- "$message" <<< "$out"; then
      echo "FAIL: jqtrace $* $(basename "$file"): exit $status (want $want), stderr:"
      echo "$out" | head -5
      failures=$((failures + 1))
    fi
  done
}

expect 0 "truncated at byte" stats
expect 1 "missing: the jobqueProfile" stats -q --fail-if 'idle > 99'
expect 1 "gates and baselines are not checked on a cut-off trace" stats --fail-if 'share(attn chain) > 99'
expect 1 "every lane written after lane" markers -q --fail-if 'units(token) < 0'
expect 1 "not checked on a cut-off trace" stats --baseline "$tmp/whole.json" --max-share-delta 100
expect 0 "gates checked anyway (--allow-truncated)" stats -q --allow-truncated --fail-if 'idle > 100'
expect 1 "[truncated]" validate
expect 0 "truncated at byte" window --us 0 100000
# A complete trace is checked as before.
for whole in "$tmp/whole.json.gz" "$tmp/whole.json.zst"; do
  "$jqtrace" stats -q --fail-if 'idle > 100' "$whole" > /dev/null || {
    echo "FAIL: a gate on the whole trace $(basename "$whole") did not pass"
    failures=$((failures + 1))
  }
done
# From stdin, messages name <stdin>, not the temporary copy window reads it back from.
for file in "$tmp/cut.json" "$tmp/cut.json.gz"; do
  out=$("$jqtrace" window --us 0 100000 - < "$file" 2>&1 > /dev/null)
  grep -qF "warning: <stdin>: truncated at byte" <<< "$out" || {
    echo "FAIL: window from stdin ($(basename "$file")) does not name <stdin>: $out"
    failures=$((failures + 1))
  }
done
echo "truncation: $failures failed"
[ $failures -eq 0 ]
