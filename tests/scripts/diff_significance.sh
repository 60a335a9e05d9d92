#!/usr/bin/env bash
# diff tells a real change from noise (issue 42), on generated runs:
# - two runs of one workload (different seeds): no row of the changes table is significant;
# - one category's chunks 30% heavier: its per-layer row is significant, with an interval
#   that holds the true shift (27.6%: the chunks' 30% of ~99 us, publishes unchanged, on
#   ~107.5 us a layer), pooled runs (--vs) too;
# - gates fail only on a real change past their threshold, pass when the interval rules the
#   threshold out, and otherwise cannot judge (exit 2, or as --inconclusive says); exit 2 on
#   units cut by a guess; too few units are never significant. (The statistics themselves: tests/lib/significance_test.cc.)
source "$(dirname "$0")/lib/prelude.bash"
gen=$2

for seed in 1 2; do "$gen" --tokens 24 --layers 8 --seed $seed -o "$tmp/same$seed.json"; done
for seed in 3 4; do "$gen" --tokens 24 --layers 8 --seed $seed --scale 3=1.3 -o "$tmp/heavy$seed.json"; done

json=$("$jqtrace" diff -q --format json "$tmp/same1.json" "$tmp/same2.json")
grep -q '"changes": \[' <<< "$json" || fail "no changes table in diff's JSON"
rows=$(grep -c '"significant":' <<< "$json")
[ "$rows" -gt 20 ] || fail "only $rows rows in the changes table"
grep -q '"significant": true' <<< "$json" && fail "two runs of one workload: a row is significant"

changes_of() {  # prints kind,group,significant,ci_lo_pct,ci_hi_pct a row of the changes table
  "$jqtrace" diff -q --format csv --table changes "$@" | awk -F, '
    NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
    { print $col["kind"] "," $col["group"] "," $col["significant"] "," $col["ci_lo_pct"] "," $col["ci_hi_pct"] }'
}
heavy=$(changes_of "$tmp/same1.json" --vs "$tmp/heavy3.json")
line=$(grep '^layer,ffn chain,' <<< "$heavy")
[ "$(cut -d, -f3 <<< "$line")" = true ] || fail "30% heavier ffn chain is not significant: $line"
awk -F, '{ exit !($4 <= 27.6 && 27.6 <= $5) }' <<< "$line" || fail "the interval misses the true shift 27.6%: $line"
grep -q '^layer,ffn chain,true' <<< "$(changes_of "$tmp/same1.json" "$tmp/same2.json" --vs "$tmp/heavy3.json" "$tmp/heavy4.json")" ||
  fail "pooled runs: the heavier ffn chain is not significant"
# (Layers with a 30% heavier ffn chain are heavier too: compared arg by arg, the layer
# units row sees it; the token rows may.)
grep -q ',true,' <<< "$(grep -v '^layer,ffn chain,\|^layer,(unit),' <<< "$heavy" | grep -v '^token,ffn chain,\|^token,(unit),')" &&
  fail "a row other than ffn chain's is significant: $(grep ',true,' <<< "$heavy")"
head=$("$jqtrace" diff -q "$tmp/same1.json" "$tmp/same2.json" --vs "$tmp/heavy3.json" "$tmp/heavy4.json" | head -2)
grep -q "^A .*same1.json and 1 more run" <<< "$head" || fail "the heading does not name the pooled runs: $head"

# --latency: the rows of the marker lane's time per unit. Noise stays quiet; the heavier ffn
# chain shows in the caller's time in ffn chain per layer, and the default table has no
# latency row (its Holm family is unchanged).
grep -q '^[a-z]*,latency: [^,]*,true' <<< "$(changes_of --latency "$tmp/same1.json" "$tmp/same2.json")" &&
  fail "--latency, two runs of one workload: a latency row is significant"
heavy_latency=$(changes_of --latency "$tmp/same1.json" --vs "$tmp/heavy3.json")
grep -q '^layer,latency: ffn chain,true' <<< "$heavy_latency" ||
  fail "--latency: the heavier ffn chain is not significant in the caller's time: $(grep 'latency: ffn chain' <<< "$heavy_latency")"
grep -q 'latency: ' <<< "$heavy" && fail "without --latency, the changes table has latency rows"

# Gates: only a significant change wholly past the threshold fails them; an interval that
# straddles it cannot judge (exit 2, naming the interval) unless --inconclusive says.
expect_status() {
  local want=$1; shift
  "$jqtrace" diff -q "$@" > "$tmp/out" 2> "$tmp/err"
  local got=$?
  [ $got -eq "$want" ] || fail "diff $*: exit $got, want $want: $(cat "$tmp/err")"
}
expect_status 1 --fail-if 'slower(ffn chain) > 3' "$tmp/same1.json" "$tmp/heavy3.json"
grep -qE 'gate failed: slower\(ffn chain\) = 2[0-9.]+ \[[0-9.]+, [0-9.]+\] > 3 \(layer/ffn chain: x1\.[0-9]+, p_adj .* over 1 gated row, within [0-9]+ strata\)' "$tmp/err" ||
  fail "the gate line has no interval: $(cat "$tmp/err")"
expect_status 0 --fail-if 'slower(ffn chain) > 40' "$tmp/same1.json" "$tmp/heavy3.json"
expect_status 0 --fail-if 'faster(ffn chain) > 3' "$tmp/same1.json" "$tmp/heavy3.json"
expect_status 1 --fail-if 'faster(ffn chain) > 3' "$tmp/heavy3.json" "$tmp/same1.json"
# Two runs of one workload: 24 tokens a side leave token's interval wide ([-13.2, +63.7] at
# this writing): a gate at 3% cannot judge it, and says so with the interval.
expect_status 2 --fail-if 'slower(token) > 3' --fail-if 'slower(attn chain) > 3' "$tmp/same1.json" "$tmp/same2.json"
grep -qE "gate cannot judge: slower\(token\) = .*: its 95% interval \[-?[0-9.]+, [0-9.]+\] straddles 3; more runs a side \(--vs\)" "$tmp/err" ||
  fail "an undecided gate does not say why: $(cat "$tmp/err")"
grep -q "slower(attn chain)" "$tmp/err" && fail "attn chain's gate (its interval well below 3) is not a pass: $(cat "$tmp/err")"
expect_status 0 --inconclusive pass --fail-if 'slower(token) > 3' "$tmp/same1.json" "$tmp/same2.json"
grep -q "warning: gate passed by --inconclusive pass: slower(token)" "$tmp/err" || fail "--inconclusive pass is silent: $(cat "$tmp/err")"
expect_status 1 --inconclusive fail --fail-if 'slower(token) > 3' "$tmp/same1.json" "$tmp/same2.json"
expect_status 0 --fail-if 'slower(token) > 80' "$tmp/same1.json" "$tmp/same2.json"  # the interval rules 80 out
expect_status 2 --fail-if 'slower(step) > 3' "$tmp/same1.json" "$tmp/same2.json"  # step markers sit at both ends
expect_status 0 --unit-at start --fail-if 'slower(step) > 200' "$tmp/same1.json" "$tmp/same2.json"
expect_status 2 --fail-if 'slower(nothing) > 3' "$tmp/same1.json" "$tmp/same2.json"
# Gates are their own Holm family (the rows they name): --latency adds ~30 rows to the table
# and must never change a gate's outcome or its p_adj (it flipped 3 of 30 before). Over
# seeds with a small change, where outcomes sit near the edge:
for seed in 5 6 7 8 9; do
  "$gen" --tokens 16 --layers 8 --seed $seed -o "$tmp/edgeA.json"
  "$gen" --tokens 16 --layers 8 --seed $((seed + 10)) --scale 'ffn chain=1.1' -o "$tmp/edgeB.json"
  for latency in "" --latency; do
    "$jqtrace" diff -q $latency --fail-if 'slower(ffn chain) > 2' --fail-if 'slower(layer) > 2' \
      --fail-if 'faster(attn chain, token) > 1' "$tmp/edgeA.json" "$tmp/edgeB.json" > /dev/null 2> "$tmp/gates$latency"
    echo "exit $?" >> "$tmp/gates$latency"
  done
  cmp -s "$tmp/gates" "$tmp/gates--latency" ||
    fail "seed $seed: --latency changed the gates: $(diff "$tmp/gates" "$tmp/gates--latency")"
done

# A gate that cannot be judged exits 2 naming the row it would have used, never a silent 0
# (each of these exited 0 with value 0): too few units (3 tokens a side), a group of the
# traces with no busy time in any unit.
small=samples/decode-small.trace.json
expect_status 2 --fail-if 'slower(token) > 3' "$small" "$small"
grep -q "slower(token): the 'token' units row has too few units to test (3 and 3; 6 a side needed)" "$tmp/err" ||
  fail "too few units: $(cat "$tmp/err")"
expect_status 2 --fail-if 'faster(moe experts) > 3' "$small" "$small"
# (moe experts runs in 3 of decode-small's 12 layers: its row compares those 3 a side. Before
# issue 54 it compared all 12, 9 of them 0: a median of 0 on side A, no percentage of it.)
grep -q "faster(moe experts): the row of 'moe experts' in 'layer' units has too few units in which 'moe experts' runs to test (3 of 12 and 3 of 12; 6 a side needed)" \
  "$tmp/err" || fail "moe experts in 3 layers of 12: $(cat "$tmp/err")"
# Units of 0 us have no ratio: ticks in groups of 3 at one time (2 of 3 units empty) against
# ticks 5 us apart. (Before the ratio, the row's median on side A was 0: a gate on it exited
# 2.) The empty units are left out and counted; the rest are compared.
ticks() {  # ticks SPREAD: 8 groups of 3 'tick' instants 100 us apart, SPREAD us apart in a group
  awk -v spread="$1" 'BEGIN { printf "["; for (g = 0; g < 8; g++) { for (k = 0; k < 3; k++) printf "{\"ph\":\"i\",\"name\":\"tick\",\"pid\":0,\"tid\":0,\"ts\":%d},\n", 100 * g + spread * k;
                                                     printf "{\"ph\":\"X\",\"name\":\"w\",\"cat\":\"c\",\"pid\":0,\"tid\":0,\"ts\":%d,\"dur\":50},\n", 100 * g + 20 }
                              print "{\"ph\":\"X\",\"name\":\"w\",\"cat\":\"c\",\"pid\":0,\"tid\":0,\"ts\":900,\"dur\":1}]" }'
}
ticks 0 > "$tmp/ticks-together.json"
ticks 5 > "$tmp/ticks-apart.json"
tick_row=$("$jqtrace" diff -q --unit-at start --format csv --table changes --columns kind,group,n_a,n_b,left_out_a,left_out_b \
  "$tmp/ticks-together.json" "$tmp/ticks-apart.json" | grep '^tick,(unit),')
[ "$tick_row" = "tick,(unit),8,24,16,0" ] || fail "units of 0 us: $tick_row"
grep -q "^16 units of 0 us left out" <<< "$("$jqtrace" diff -q --unit-at start "$tmp/ticks-together.json" "$tmp/ticks-apart.json")" ||
  fail "the table does not say units of 0 us were left out"
expect_status 2 --fail-if 'slower(deltanet) > 3' "$small" "$small"
grep -q "slower(deltanet): 'deltanet' has no busy time in any unit of either side: nothing to compare" "$tmp/err" ||
  fail "a group without busy time: $(cat "$tmp/err")"
# A bare group's row is its row in the kind with the most units, whatever that kind's rule:
# layer's units are ambiguous in the window, and the gate took the token row instead, silently.
expect_status 2 --fail-if 'slower(attn chain) > 3' tests/data/decode-small-layer3.window.json "$small"
grep -q "slower(attn chain): 'attn chain' has no row: no marker kind has 6 units a side to test (token 1 and 3, layer 2 and 12)" "$tmp/err" ||
  fail "a group gate fell back to another kind's row: $(cat "$tmp/err")"
expect_status 2 "$tmp/same1.json"
# Too few units: described, never significant.
"$gen" --tokens 4 --layers 2 --seed 1 -o "$tmp/few.json"
"$gen" --tokens 4 --layers 2 --seed 2 --scale 3=3 -o "$tmp/fewheavy.json"
few=$("$jqtrace" diff -q --format json "$tmp/few.json" "$tmp/fewheavy.json")
# Kinds of fewer than 6 units a side have no rows (issue 54: a generic trace's 20,000
# one-marker kinds were 240,000 rows of "too few units"); the heading counts them.
grep -q '^token,' <<< "$("$jqtrace" diff -q --format csv --table changes "$tmp/few.json" "$tmp/fewheavy.json")" &&
  fail "4 tokens: token rows in the changes table"
grep -q '"kinds_too_few_units": 2' <<< "$few" || fail "4 tokens: kinds_too_few_units is not 2"
table=$("$jqtrace" diff -q "$tmp/few.json" "$tmp/fewheavy.json")
grep -q '^not in the changes table (fewer than 6 units a side): token 4 and 4, step 2 and 2$' <<< "$table" ||
  fail "the heading does not say which kinds have too few units: $(head -4 <<< "$table")"

# The comparison says what it compares: two workloads (24 tokens of 8 layers against 6 of
# 8) and a kind whose units each side cut its own way are warned about; one workload, not.
"$gen" --tokens 6 --layers 8 --seed 5 -o "$tmp/other-workload.json" 2> /dev/null
"$jqtrace" diff "$tmp/same1.json" "$tmp/other-workload.json" > /dev/null 2> "$tmp/err"
grep -q "warning: the sides' workloads differ (token 24 a run in A, 6 in B; layer 192 a run in A, 48 in B" "$tmp/err" ||
  fail "two workloads compared without a word: $(cat "$tmp/err")"
"$jqtrace" diff "$tmp/same1.json" "$tmp/same2.json" > /dev/null 2> "$tmp/err"
grep -q "workloads differ\|cut two ways" "$tmp/err" && fail "one workload warned about: $(cat "$tmp/err")"
"$jqtrace" window -q --unit-at token=start --marker token 1..9 "$tmp/same1.json" -o "$tmp/token-starts.json"
"$jqtrace" diff "$tmp/same1.json" "$tmp/token-starts.json" > /dev/null 2> "$tmp/err"
grep -q "warning: units of 'token' end at their markers in A but start at them in B" "$tmp/err" ||
  fail "units cut two ways compared without a word: $(cat "$tmp/err")"
# A kind's rule is decided on both sides' evidence: alone, seed 2's 6 tokens are ambiguous
# (1 start, 2 end) and its layers nest in steps; seed 1's end (0 start, 1 end). Before, the
# token rows were untested ("ambiguous units") and the sides warned to be cut two ways;
# together the evidence says end (1 start, 3 end), seed 2 is read again and cut so, and its
# layers nest in tokens as seed 1's do.
"$gen" --tokens 6 --layers 4 --seed 1 -o "$tmp/j1.json"
"$gen" --tokens 6 --layers 4 --seed 2 -o "$tmp/j2.json"
"$jqtrace" diff "$tmp/j1.json" "$tmp/j2.json" > "$tmp/out" 2> "$tmp/err"
grep -q "^units: token end in step (auto on both sides' evidence: 1 start, 3 end; 1 run cut again); layer start in token$" "$tmp/out" ||
  fail "the joint rule is not in the heading: $(head -4 "$tmp/out")"
grep -q "cut two ways\|differ" "$tmp/err" && fail "a joint rule still warned: $(cat "$tmp/err")"
grep -qE '^token +\(unit\) .*ambiguous' "$tmp/out" && fail "token units still ambiguous: $(grep '^token' "$tmp/out")"
rules=$("$jqtrace" diff -q --format csv --table unit_rules "$tmp/j1.json" "$tmp/j2.json")
grep -q '^token,end,end,"auto, both sides","auto, both sides",step,step,false,1,3,1$' <<< "$rules" ||
  fail "unit_rules: $rules"
grep -q '^layer,start,start,auto,auto,token,token,false,,,0$' <<< "$rules" || fail "unit_rules (layer): $rules"
# Each side alone still decides alone: seed 2 against itself stays ambiguous.
cp "$tmp/j2.json" "$tmp/j2copy.json"
grep -qE '^token +\(unit\) .*ambiguous' <<< "$("$jqtrace" diff -q "$tmp/j2.json" "$tmp/j2copy.json")" ||
  fail "seed 2 against itself: its token units are not ambiguous"
# Pooled runs of traces of many kinds: 'tick' has 3 units a run (not measured in a run: too
# few alone), 6 a side pooled; the runs are read again to measure it, and its rows equal
# those of the same runs with few kinds (where every kind is measured at once).
one_offs() {  # one_offs SEED NAMES: 3 'tick' instants among NAMES one-off instant names
  awk -v seed="$1" -v names="$2" 'BEGIN { srand(seed); printf "["; for (i = 0; i < 300; i++) printf "{\"ph\":\"X\",\"name\":\"w\",\"cat\":\"c\",\"pid\":0,\"tid\":0,\"ts\":%d,\"dur\":%d},\n", 10 * i, 3 + int(rand() * 5)
    for (k = 0; k < 3; k++) printf "{\"ph\":\"i\",\"name\":\"tick\",\"pid\":0,\"tid\":0,\"ts\":%d},\n", 1000 * k + 5
    for (n = 0; n < names; n++) printf "{\"ph\":\"i\",\"name\":\"one%d\",\"pid\":0,\"tid\":0,\"ts\":%d},\n", n, 7 + n
    print "{\"ph\":\"X\",\"name\":\"w\",\"cat\":\"c\",\"pid\":0,\"tid\":0,\"ts\":2995,\"dur\":1}]" }'
}
for names in 10 400; do
  for seed in 1 2 3 4; do one_offs $seed $names > "$tmp/one-offs-$names-$seed.json"; done
  "$jqtrace" diff -q --unit-at start --format csv --table changes "$tmp/one-offs-$names-1.json" "$tmp/one-offs-$names-2.json" \
    --vs "$tmp/one-offs-$names-3.json" "$tmp/one-offs-$names-4.json" | grep '^tick,' > "$tmp/ticks-$names.csv"
done
grep -q '^tick,c,6,6,' "$tmp/ticks-400.csv" || fail "pooled runs of many kinds: no measured row of tick: $(cat "$tmp/ticks-400.csv")"
cmp -s "$tmp/ticks-10.csv" "$tmp/ticks-400.csv" || fail "pooled runs of many kinds: tick's rows differ from few kinds'"
# A run read again does not say its warnings twice (a cut-off trace warned once a read).
head -c -3 "$tmp/one-offs-400-1.json" > "$tmp/one-offs-cut.json"
"$jqtrace" diff --unit-at start "$tmp/one-offs-cut.json" "$tmp/one-offs-400-2.json" \
  --vs "$tmp/one-offs-400-3.json" "$tmp/one-offs-400-4.json" > /dev/null 2> "$tmp/err"
[ "$(grep -c 'one-offs-cut.json: truncated at byte' "$tmp/err")" = 1 ] ||
  fail "a run read again warned again: $(cat "$tmp/err")"
echo "diff_significance: $failures failed"
[ $failures -eq 0 ]
