#!/usr/bin/env bash
# Every name and every unit comes from the trace's own words (issue 41), on traces the
# generator writes as the jobque tracer does:
# - untagged ops (tag 0) in a profiled trace are "untagged", never a registered category:
#   each category's busy time equals its tag's chains added up from the file itself (awk);
# - a trace without tags names its chains by stage count, says "stage count" and marks
#   each name as guessed; diff against a profiled run says the two name them differently;
# - a lane whose ring filled is named in stats, markers, gaps and report, with one warning;
# - closers with a short tail are called closers, and `window --marker token 3` cuts the
#   unit that ends at token marker 3; an ambiguous kind is taken as start with a warning,
#   and a gate on its units fails with exit 2 unless --unit-at is given.
source "$(dirname "$0")/lib/prelude.bash"
gen=$2

# expect_in TEXT NEEDLE WHAT
expect_in() { grep -qF -- "$2" <<< "$1" || fail "$3: no '$2' in: $(head -c 400 <<< "$1")"; }
expect_not_in() { ! grep -qF -- "$2" <<< "$1" || fail "$3: '$2' should not be in: $(head -c 400 <<< "$1")"; }

# busy_by_tag FILE TAG: the busy time (chunk + publish durations, us) of the chains whose
# publish carries TAG, added up from the file's own lines (one event a line).
busy_by_tag() {
  awk -v want="$2" '
    /"name":"(publish|chunk)"/ {
      match($0, /"dur":[0-9.]+/); dur = substr($0, RSTART + 6, RLENGTH - 6)
      match($0, /"chain":[0-9]+/); chain = substr($0, RSTART + 8, RLENGTH - 8)
      match($0, /"stage":[0-9]+/); stage = substr($0, RSTART + 8, RLENGTH - 8)
      busy[chain] += dur
      if ($0 ~ /"name":"publish"/) tag[chain] = int(stage / 256)
    }
    END { for (c in busy) if ((c in tag) && tag[c] == want) sum += busy[c]; printf "%.3f\n", sum }' "$1"
}
# group_busy FILE GROUP: the group's busy_us in stats' CSV.
group_busy() {
  "$jqtrace" stats -q --format csv --columns name,busy_us "$1" | awk -F, -v g="$2" '$1 == g { print $2 }'
}

# 1. Untagged work is its own group; each category is exactly its tag's chains.
"$gen" --tokens 6 --layers 4 --workers 2 --seed 3 -o "$tmp/profiled.json"
stats=$("$jqtrace" stats -q "$tmp/profiled.json")
expect_in "$stats" "attribution: profile" "profiled trace"
expect_in "$stats" "untagged" "profiled trace"
expect_not_in "$stats" "std kernel" "profiled trace"
expect_not_in "$stats" "*" "profiled trace (no guessed name)"
for pair in "untagged 0" "classifier 5" "attn chain 1" "ffn chain 3"; do
  group=${pair% *} tag=${pair##* }
  want=$(busy_by_tag "$tmp/profiled.json" "$tag")
  got=$(group_busy "$tmp/profiled.json" "$group")
  [ "$want" = "$got" ] || fail "busy of '$group' is $got us, its tag-$tag chains add up to $want us"
done

# 2. No tags: guessed names, said so everywhere; diff says the naming differs.
"$gen" --tokens 6 --layers 4 --workers 2 --seed 3 --legacy --no-tags -o "$tmp/untagged.json"
stats=$("$jqtrace" stats -q "$tmp/untagged.json")
expect_in "$stats" "attribution: stage count, names guessed" "no tags: heading"
expect_in "$stats" "classifier*" "no tags: marked name"
expect_in "$stats" "* guessed:" "no tags: footnote"
json=$("$jqtrace" stats -q --format json "$tmp/untagged.json")
expect_in "$json" '"attribution": "stage count"' "no tags: JSON"
expect_in "$json" '"guessed": true' "no tags: JSON"
expect_in "$("$jqtrace" stats -q --format md "$tmp/untagged.json")" "attribution: stage count" "no tags: Markdown"
expect_in "$("$jqtrace" gaps -q --by category "$tmp/untagged.json")" "attribution: stage count" "no tags: gaps"
diff_out=$("$jqtrace" diff -q "$tmp/profiled.json" "$tmp/untagged.json")
expect_in "$diff_out" "categories: A named by profile, B by stage count; a move may be a rename" "diff of profile and guess"
expect_in "$diff_out" "classifier*" "diff: a name guessed on one side is marked"
"$gen" --tokens 6 --layers 4 --workers 2 --seed 3 --legacy -o "$tmp/legacy.json"
expect_in "$("$jqtrace" stats -q "$tmp/legacy.json")" "attribution: legacy tags" "legacy tags"

# 3. A lane whose ring filled: named in every analysis, one warning.
"$gen" --tokens 6 --layers 4 --workers 2 --seed 3 --ring 1=100 -o "$tmp/ring.json"
for cmd in stats markers gaps; do
  out=$("$jqtrace" "$cmd" --format json "$tmp/ring.json" 2> "$tmp/err")
  expect_in "$out" '"lanes_stopped_early"' "$cmd of a full ring"
  expect_in "$out" '"lane": "0:1"' "$cmd of a full ring"
  [ "$(grep -c "stopped recording before the trace ended" "$tmp/err")" = 1 ] || fail "$cmd: not one warning: $(cat "$tmp/err")"
done
"$jqtrace" report -q -o "$tmp/ring.html" "$tmp/ring.json"
expect_in "$(cat "$tmp/ring.html")" "stopped recording at" "report of a full ring: banner"
expect_not_in "$("$jqtrace" stats --format json "$tmp/profiled.json" 2>&1)" "lanes_stopped_early" "no full ring"

# 4. Closers with a short tail (5% of a token): still closers; token 3 is the unit that
# ends at token marker 3.
"$gen" --tokens 8 --layers 4 --workers 2 --seed 3 -o "$tmp/closers.json"
gap=$("$jqtrace" markers -q --format csv --columns kind,unit_us.p50 "$tmp/closers.json" | awk -F, '$1 == "token" { print $2 }')
tail_us=$(awk -v g="$gap" 'BEGIN { printf "%.3f", g * 0.0502 }')
"$gen" --tokens 8 --layers 4 --workers 2 --seed 3 --tail-us "$tail_us" -o "$tmp/closers-tail.json"
kinds=$("$jqtrace" markers -q --format csv --columns kind,unit_at,unit_at_ambiguous "$tmp/closers-tail.json")
expect_in "$kinds" "token,end,false" "closers with a tail of 5.02% of a gap"
m2=$(grep '"name":"token"' "$tmp/closers-tail.json" | grep '"arg":2}' | sed 's/.*"ts":\([0-9.]*\).*/\1/')
m3=$(grep '"name":"token"' "$tmp/closers-tail.json" | grep '"arg":3}' | sed 's/.*"ts":\([0-9.]*\).*/\1/')
range=$("$jqtrace" stats -q --format json --marker token 3 "$tmp/closers-tail.json" | tr -d ' \n' | sed 's/.*"range_us":\[\([^]]*\)\].*/\1/')
[ "$range" = "$m2,$m3" ] || fail "token 3 of closers is $range, want $m2,$m3 (from marker 2 to marker 3)"

# 5. A worker's tail as long as a token after the caller's last marker: the evidence lives on
# the marker lane (issue 51), so tokens stay closers (the trace's tail once made them
# ambiguous). `step` (a fence post: nothing before its first marker, nothing after its last)
# is ambiguous: a warning with the evidence, and unit gates need --unit-at (exit 2), as do
# marker-scoped gates and baselines.
"$gen" --tokens 8 --layers 4 --workers 2 --seed 3 --tail-us "$(awk -v g="$gap" 'BEGIN { printf "%.3f", g * 1.2 }')" \
  -o "$tmp/ambiguous.json"
kinds=$("$jqtrace" markers --format csv --columns kind,unit_at,unit_at_ambiguous "$tmp/ambiguous.json" 2> "$tmp/err")
expect_in "$kinds" "token,end,false" "a worker's tail does not make tokens ambiguous"
expect_in "$kinds" "step,start,true" "ambiguous steps"
expect_in "$(cat "$tmp/err")" "where 'step' markers stand in their units is ambiguous (head" "ambiguous: warning"
"$jqtrace" stats -q --fail-if 'unit_p50(step) > 1' "$tmp/ambiguous.json" > /dev/null 2> "$tmp/err"
status=$?
[ $status -eq 2 ] || fail "a gate on ambiguous units: exit $status, want 2"
expect_in "$(cat "$tmp/err")" "give --unit-at start or end" "a gate on ambiguous units"
"$jqtrace" stats -q --unit-at end --fail-if 'unit_p50(step) > 1e12' "$tmp/ambiguous.json" > /dev/null 2>&1 ||
  fail "a gate with --unit-at end: exit $?, want 0"
"$jqtrace" stats -q --unit-at step=end --fail-if 'unit_p50(step) > 1e12' "$tmp/ambiguous.json" > /dev/null 2>&1 ||
  fail "a gate with --unit-at step=end: exit $?, want 0"
"$jqtrace" stats -q --fail-if 'units(step) > 100' "$tmp/ambiguous.json" > /dev/null 2>&1 ||
  fail "units(step) counts markers whatever the rule: exit $?, want 0"
"$jqtrace" stats -q --marker step 2 --fail-if 'share(attn chain) > 100' "$tmp/ambiguous.json" > /dev/null 2>&1
status=$?
[ $status -eq 2 ] || fail "a gate in ambiguous units: exit $status, want 2"
"$jqtrace" stats -q --format json --marker step 2 --unit-at start "$tmp/ambiguous.json" > "$tmp/base.json"
"$jqtrace" stats -q --marker step 2 --baseline "$tmp/ambiguous.json" "$tmp/ambiguous.json" > /dev/null 2>&1
status=$?
[ $status -eq 2 ] || fail "a baseline in ambiguous units: exit $status, want 2"

# 6. A profile that no event uses (profiling off while recording): said once on stderr, in
# the JSON facts and the text header (issue 51); a trace that uses its profile says nothing.
cat > "$tmp/profile-off.json" <<'JSON'
{"traceEvents":[{"ph":"X","pid":0,"tid":1,"name":"publish","ts":1,"dur":1,"args":{"chain":1,"stage":2}},
{"ph":"X","pid":0,"tid":0,"name":"chunk","ts":2,"dur":5,"args":{"chain":1,"stage":0}}],
"jobqueProfile":{"version":1,"lanes":2,"categories":[{"id":1,"name":"attn chain","color":"#5E96DE"}],"markers":[{"id":0,"name":"token"}]}}
JSON
out=$("$jqtrace" stats --format json "$tmp/profile-off.json" 2> "$tmp/err")
expect_in "$out" '"profile_unused": true' "unused profile: JSON"
[ "$(grep -c "registers 1 categories and 1 marker kinds that no event uses" "$tmp/err")" = 1 ] ||
  fail "unused profile: not one warning: $(cat "$tmp/err")"
expect_in "$("$jqtrace" stats -q "$tmp/profile-off.json")" "used by no event" "unused profile: header"
expect_not_in "$("$jqtrace" stats --format json samples/tiny.trace.json 2>&1)" "profile_unused" "a used profile"

# 7. Legacy tags: tag-5 chains are the trace's `classifier`; 1-stage tag-0 chains are named
# `classifier` by their stage count, a guess: two rows, not one guessed sum (issue 51).
cat > "$tmp/legacy-guess.json" <<'JSON'
{"traceEvents":[{"ph":"X","pid":0,"tid":1,"name":"publish","ts":1,"dur":1,"args":{"chain":1,"stage":1281}},
{"ph":"X","pid":0,"tid":0,"name":"chunk","ts":2,"dur":10,"args":{"chain":1,"stage":0}},
{"ph":"X","pid":0,"tid":1,"name":"publish","ts":20,"dur":1,"args":{"chain":2,"stage":1}},
{"ph":"X","pid":0,"tid":0,"name":"chunk","ts":22,"dur":7,"args":{"chain":2,"stage":0}}]}
JSON
rows=$("$jqtrace" stats -q --format csv --columns name,busy_us,guessed "$tmp/legacy-guess.json")
expect_in "$rows" "classifier,11.000,false" "legacy classifier: its own row"
expect_in "$rows" "classifier*,8.000,true" "guessed classifier: its own row"

echo "attribution: $failures failed"
[ $failures -eq 0 ]
