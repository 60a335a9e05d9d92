#!/usr/bin/env bash
# Does diff's interval cover the change it claims to measure? (issue 65) Generated pairs of
# one workload, side B with `ffn chain` chunks F times as costly (jqtrace-gen --scale), under
# two noise models (a preempted chunk costs a multiple of its own time, or a delay of its
# own): for each row (ffn chain per token and per layer), over SEEDS pairs of TOKENS tokens
# of 8 layers, how often the 95% interval holds the true per-unit ratio, and how often the
# row is significant. The truth is the population's ratio: diff of POOL runs a side of the
# same TOKENS tokens, pooled (--vs), on seeds none of the pairs uses (its interval is printed
# beside it: it must be narrow). A run's first token differs from the rest (the generator's
# markers close their tokens, so the first runs from the trace's start and holds its start-up
# work: its ffn chain time is 3.5x the others' in A, and moves the other way in B), one token
# in 32 but one in 1500: runs of 32 tokens and one run of 1500 are different populations; the ratio on one pair of BIG tokens a side is
# printed too, with the coverage against it, for comparison. F = 1 are null pairs: how
# many have any significant row in the table.
# The truth is always the ratio (TRUTH: the build that measures it, default build-test's), so
# an older build's % of A's median is judged against the change a person reads it as.
# Every cell draws its own seeds: the generator's two noise models consume one random stream
# alike, so cells sharing seeds share their heavy chunks, and a seed that misses in one cell
# missed in all of them (30 shared seeds read 88 % where 100 seeds a cell read 93 %). The
# totals print the coverage with its Wilson 95 % interval: 30 trials cannot tell 90 from 95.
#
#   bash bench/coverage.sh [JQTRACE] [SEEDS] [TOKENS] [BIG] [POOL]
#   bash bench/coverage.sh /tmp/old/build/jqtrace     (an older build: its shift_pct interval)
#
# A bench harness, not a test: it takes minutes, and its figures go in the issue's note.
set -euo pipefail
cd "$(dirname "$0")/.."
jqtrace=${1:-build-test/jqtrace}
seeds=${2:-100}
tokens=${3:-32}
big=${4:-1500}
pool=${5:-100}
gen=${GEN:-build-test/jqtrace-gen}
truth=${TRUTH:-build-test/jqtrace}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# row KIND GROUP FILE: "significant ci_lo_pct ci_hi_pct shift_pct" of that changes row.
row() {
  awk -F, -v kind="$1" -v group="$2" '
    NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
    $col["kind"] == kind && $col["group"] == group {
      print $col["significant"], $col["ci_lo_pct"], $col["ci_hi_pct"], $col["shift_pct"] }' "$3"
}

changes() {  # changes JQTRACE A B OUT
  local tool=$1; shift
  "$tool" diff -q --format csv --table changes "$1" "$2" > "$3" 2> /dev/null || [ $? -le 2 ]
}

printf '%-13s %5s %-6s %9s %9s %8s %12s %9s %11s\n' noise F kind truth_pct covered signif null_any_sig big_truth big_covered
cell=0 total_token=0 total_layer=0 trials=0
for noise in proportional additive; do
  for f in 0.8 1.1 1.25 1; do
    cell=$((cell + 1)) base=$((100000 * cell))  # this cell's seeds, none shared (see above)
    scale=()
    [ "$f" = 1 ] || scale=(--scale "ffn chain=$f")
    truth_token=0 truth_layer=0 big_token=0 big_layer=0
    if [ "$f" != 1 ]; then
      pool_a=() pool_b=()
      for ((s = 1; s <= pool; ++s)); do
        "$gen" --noise $noise --tokens "$tokens" --layers 8 --seed $((base + 50000 + 2 * s)) -o "$tmp/poolA$s.json" 2> /dev/null
        "$gen" --noise $noise --tokens "$tokens" --layers 8 --seed $((base + 50001 + 2 * s)) "${scale[@]}" -o "$tmp/poolB$s.json" 2> /dev/null
        pool_a+=("$tmp/poolA$s.json") pool_b+=("$tmp/poolB$s.json")
      done
      "$truth" diff -q --format csv --table changes "${pool_a[@]}" --vs "${pool_b[@]}" > "$tmp/pool.csv" 2> /dev/null || true
      read -r _ lo hi truth_token <<< "$(row token 'ffn chain' "$tmp/pool.csv")"
      echo "# $noise x$f truth token ffn chain ($pool runs a side pooled): $truth_token% [$lo, $hi]" >&2
      read -r _ lo hi truth_layer <<< "$(row layer 'ffn chain' "$tmp/pool.csv")"
      echo "# $noise x$f truth layer ffn chain ($pool runs a side pooled): $truth_layer% [$lo, $hi]" >&2
      rm -f "$tmp"/pool[AB]*.json
      "$gen" --noise $noise --tokens "$big" --layers 8 --seed 1001 -o "$tmp/bigA.json" 2> /dev/null
      "$gen" --noise $noise --tokens "$big" --layers 8 --seed 1002 "${scale[@]}" -o "$tmp/bigB.json" 2> /dev/null
      changes "$truth" "$tmp/bigA.json" "$tmp/bigB.json" "$tmp/big.csv"
      read -r _ lo hi big_token <<< "$(row token 'ffn chain' "$tmp/big.csv")"
      echo "# $noise x$f one pair of $big tokens, token ffn chain: $big_token% [$lo, $hi]" >&2
      read -r _ lo hi big_layer <<< "$(row layer 'ffn chain' "$tmp/big.csv")"
      echo "# $noise x$f one pair of $big tokens, layer ffn chain: $big_layer% [$lo, $hi]" >&2
    fi
    covered_token=0 covered_layer=0 sig_token=0 sig_layer=0 any=0 big_covered_token=0 big_covered_layer=0
    for ((s = 1; s <= seeds; ++s)); do
      "$gen" --noise $noise --tokens "$tokens" --layers 8 --seed $((base + 2 * s)) -o "$tmp/a.json" 2> /dev/null
      "$gen" --noise $noise --tokens "$tokens" --layers 8 --seed $((base + 2 * s + 1)) "${scale[@]}" -o "$tmp/b.json" 2> /dev/null
      changes "$jqtrace" "$tmp/a.json" "$tmp/b.json" "$tmp/pair.csv"
      if [ "$f" = 1 ]; then
        grep -q ',true,' "$tmp/pair.csv" && any=$((any + 1))
        continue
      fi
      read -r sig lo hi _ <<< "$(row token 'ffn chain' "$tmp/pair.csv")"
      awk -v t="$truth_token" -v lo="$lo" -v hi="$hi" 'BEGIN { exit !(lo <= t && t <= hi) }' && covered_token=$((covered_token + 1))
      awk -v t="$big_token" -v lo="$lo" -v hi="$hi" 'BEGIN { exit !(lo <= t && t <= hi) }' && big_covered_token=$((big_covered_token + 1))
      [ "$sig" = true ] && sig_token=$((sig_token + 1))
      read -r sig lo hi _ <<< "$(row layer 'ffn chain' "$tmp/pair.csv")"
      awk -v t="$truth_layer" -v lo="$lo" -v hi="$hi" 'BEGIN { exit !(lo <= t && t <= hi) }' && covered_layer=$((covered_layer + 1))
      awk -v t="$big_layer" -v lo="$lo" -v hi="$hi" 'BEGIN { exit !(lo <= t && t <= hi) }' && big_covered_layer=$((big_covered_layer + 1))
      [ "$sig" = true ] && sig_layer=$((sig_layer + 1))
    done
    if [ "$f" = 1 ]; then
      printf '%-13s %5s %-6s %9s %9s %8s %12s %9s %11s\n' $noise "$f" - - - - "$any/$seeds" - -
    else
      total_token=$((total_token + covered_token)) total_layer=$((total_layer + covered_layer)) trials=$((trials + seeds))
      printf '%-13s %5s %-6s %9s %9s %8s %12s %9s %11s\n' $noise "$f" token "$truth_token" "$covered_token/$seeds" "$sig_token/$seeds" - \
        "$big_token" "$big_covered_token/$seeds"
      printf '%-13s %5s %-6s %9s %9s %8s %12s %9s %11s\n' $noise "$f" layer "$truth_layer" "$covered_layer/$seeds" "$sig_layer/$seeds" - \
        "$big_layer" "$big_covered_layer/$seeds"
    fi
  done
done
# covered/trials with its Wilson 95% interval, in %.
coverage() {
  awk -v k="$1" -v n="$2" 'BEGIN { z = 1.959964; p = k / n; c = (p + z * z / (2 * n)) / (1 + z * z / n)
    h = z / (1 + z * z / n) * sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    printf "%d/%d = %.1f %% [%.1f, %.1f]", k, n, 100 * p, 100 * (c - h), 100 * (c + h) }'
}
echo "covered, token rows: $(coverage "$total_token" "$trials")"
echo "covered, layer rows: $(coverage "$total_layer" "$trials")"
echo "covered, all rows:   $(coverage $((total_token + total_layer)) $((2 * trials)))"
