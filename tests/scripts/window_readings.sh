#!/usr/bin/env bash
# A window keeps what its source knew of its units (issue 65 part 5): a kind whose rule auto
# could not decide stays "ambiguous" in the window's record, so a gate refused on the source
# (exit 2: units cut by a guess) is refused on the window too, where it used to run and
# exit 1; an explicit --unit-at decides, on the window as on the source.
source "$(dirname "$0")/lib/prelude.bash"
gen=$2
"$gen" --tokens 24 --layers 8 --seed 1 -o "$tmp/a.json"
grep -q '^step .*ambiguous' <<< "$("$jqtrace" markers "$tmp/a.json")" || fail "seed 1's steps are no longer ambiguous: pick another case"
"$jqtrace" stats -q --marker step 1 --fail-if 'idle > 0' "$tmp/a.json" > /dev/null 2> "$tmp/err"
[ $? -eq 2 ] || fail "the source: a gate on ambiguous step units is not refused: $(cat "$tmp/err")"
"$jqtrace" window -q --marker step 1 "$tmp/a.json" -o "$tmp/w.json" || fail "window: exit $?"
grep -q '"kind":"step"' "$tmp/w.json" || fail "the window's record does not name its kind"
grep -q '"step":"start (ambiguous)"' "$tmp/w.json" || fail "the window's record dropped the ambiguous rule"
"$jqtrace" stats -q --fail-if 'idle > 0' "$tmp/w.json" > /dev/null 2> "$tmp/err"
status=$?
[ $status -eq 2 ] || fail "the window: a gate on its ambiguous units exits $status, want 2: $(cat "$tmp/err")"
grep -q "a window of 'step' units: where 'step' markers stand in their units is ambiguous (so recorded from the window's source)" "$tmp/err" ||
  fail "the refusal does not say why: $(cat "$tmp/err")"
"$jqtrace" stats -q --unit-at step=start --fail-if 'idle > 0' "$tmp/w.json" > /dev/null 2> "$tmp/err"
[ $? -eq 1 ] || fail "an explicit --unit-at on the window: the gate is not checked: $(cat "$tmp/err")"
grep -q 'start (the window.s record, ambiguous)' <<< "$("$jqtrace" markers "$tmp/w.json")" ||
  fail "markers on the window does not say its step rule is ambiguous"
# A window of unambiguous units still checks its gates.
"$jqtrace" window -q --marker token 3 "$tmp/a.json" -o "$tmp/t.json"
"$jqtrace" stats -q --fail-if 'idle > 0' "$tmp/t.json" > /dev/null 2>&1
[ $? -eq 1 ] || fail "a window of token units: its gate is not checked"
echo "window_readings: $failures failed"
[ $failures -eq 0 ]
