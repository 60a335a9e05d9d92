#!/usr/bin/env bash
# A window's units keep the numbers they had in its source (issue 65 part 5): token 3's
# window holds token 3, so `stats --marker token 3` on it selects that unit, `markers` lists
# it as 3 (and its layers as in the source), a unit the window lacks is refused with the
# numbers it has, and a window of a window keeps counting from the source.
source "$(dirname "$0")/lib/prelude.bash"
gen=$2
"$gen" --tokens 8 --layers 4 --seed 2 -o "$tmp/a.json"
for rule in start end; do
  "$jqtrace" window -q --unit-at token=$rule --marker token 3 "$tmp/a.json" -o "$tmp/w.json" || fail "window ($rule): exit $?"
  src=$("$jqtrace" stats -q --unit-at token=$rule --marker token 3 --format json "$tmp/a.json" | grep -o '"busy_us":[0-9.]*' | head -1)
  win=$("$jqtrace" stats -q --marker token 3 --format json "$tmp/w.json" | grep -o '"busy_us":[0-9.]*' | head -1)
  [ -n "$src" ] && [ "$src" = "$win" ] || fail "$rule: stats --marker token 3 on the window ($win) is not token 3 of the source ($src)"
  got=$("$jqtrace" markers -q --kind token --format csv "$tmp/w.json" | sed -n 2p | cut -d, -f1)
  [ "$got" = 3 ] || fail "$rule: markers on token 3's window lists unit '$got'"
  "$jqtrace" stats -q --marker token 0 "$tmp/w.json" > /dev/null 2> "$tmp/err"
  [ $? -eq 2 ] || fail "$rule: token 0 on token 3's window is not refused"
  grep -q "'token' has 1 units (3..3); unit 0 does not exist" "$tmp/err" || fail "$rule: the refusal: $(cat "$tmp/err")"
done
# The layers of token 3 keep their numbers too, and a window of one of them.
"$jqtrace" window -q --unit-at token=start --marker token 3 "$tmp/a.json" -o "$tmp/w.json"
layer=$("$jqtrace" markers -q --kind layer --format csv "$tmp/w.json" | awk -F, 'NR==3 {print $1}')
[ "${layer:-0}" -gt 3 ] || fail "token 3's second layer is numbered '$layer': from the window, not the source"
src=$("$jqtrace" markers -q --unit-at token=start --kind layer --format csv "$tmp/a.json" | awk -F, -v l="$layer" '$1==l {print $2","$3","$4}')
win=$("$jqtrace" markers -q --kind layer --format csv "$tmp/w.json" | awk -F, -v l="$layer" '$1==l {print $2","$3","$4}')
[ -n "$src" ] && [ "$src" = "$win" ] || fail "layer $layer in token 3's window ($win) is not the source's ($src)"
"$jqtrace" window -q --marker layer "$layer" "$tmp/w.json" -o "$tmp/ww.json" || fail "a window of the window: exit $?"
win=$("$jqtrace" markers -q --kind layer --format csv "$tmp/ww.json" | awk -F, 'NR==2 {print $1","$2","$3","$4}')
[ "$win" = "$layer,$src" ] || fail "layer $layer's window of token 3's window lists '$win', want $layer,$src"
echo "window_indices: $failures failed"
[ $failures -eq 0 ]
