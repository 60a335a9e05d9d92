#!/usr/bin/env bash
# The representative unit, found for the user (issue 43): `--marker token slowest` (and
# fastest, median, pXX) cuts the unit `markers --kind token --sort dur` lists first (last,
# ...), in stats, window and timeline alike, and says which unit it chose so that a script
# can reuse the index.
source "$(dirname "$0")/lib/prelude.bash"
gen=$2
"$gen" --tokens 12 --layers 4 --seed 9 -o "$tmp/t.json"

by_dur=$("$jqtrace" markers -q --kind token --sort dur --format csv --columns index,dur_us "$tmp/t.json" | tail -n +2)
slowest=$(head -1 <<< "$by_dur" | cut -d, -f1)
fastest=$(tail -1 <<< "$by_dur" | cut -d, -f1)
sorted=$(cut -d, -f2 <<< "$by_dur")
[ "$sorted" = "$(sort -rn <<< "$sorted")" ] || fail "--sort dur: not the slowest first: $by_dur"

scope_of() { "$jqtrace" stats -q --format json --marker token "$1" "$tmp/t.json" | grep '"scope"'; }
expect_scope() {
  local got; got=$(scope_of "$1")
  grep -qF -- "--marker token $2 --unit-at" <<< "$got" || fail "--marker token $1: $got, want unit $2"
}
expect_scope slowest "$slowest"
expect_scope p100 "$slowest"
expect_scope fastest "$fastest"
expect_scope p0 "$fastest"
"$jqtrace" stats --marker token slowest "$tmp/t.json" 2>&1 > /dev/null | grep -q "^jqtrace: --marker token slowest is unit $slowest (" ||
  fail "the chosen unit is not said on stderr"
# The same unit in a window and a timeline.
"$jqtrace" window -q --marker token slowest "$tmp/t.json" > "$tmp/w.json" || fail "window --marker token slowest: exit $?"
grep -qF "\"--marker token $slowest --unit-at" "$tmp/w.json" || fail "the window does not record unit $slowest"
"$jqtrace" window -q --marker token "$slowest" "$tmp/t.json" | cmp -s - "$tmp/w.json" || fail "window slowest differs from window $slowest"
"$jqtrace" timeline -q --marker token median -o "$tmp/median.svg" "$tmp/t.json" || fail "timeline --marker token median: exit $?"
"$jqtrace" stats -q --marker token slow "$tmp/t.json" > /dev/null 2>&1
[ $? -eq 2 ] || fail "--marker token slow is not a usage error"

echo "representative_unit: $failures failed"
[ $failures -eq 0 ]
