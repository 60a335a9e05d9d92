#!/usr/bin/env bash
# Layers are a fixed mix of layer types (attention, MoE, dense FFN by the layer's arg): does
# the layer (unit) row of diff's changes table hold its 5% level, and how often does it see a
# x1.1 slowdown of every layer? (issue 65 part 4) PAIRS generated pairs of TOKENS tokens of 8
# layers: null pairs (one workload, two seeds), then pairs whose side B has every category's
# chunks 1.1 times as costly. Prints how many rows had p < 0.05 (the row's own test, as a
# reader of one row takes it) and p_adj < 0.05, and how many were stratified.
#
#   bash bench/layer_power.sh [JQTRACE] [PAIRS] [TOKENS]
#
# A bench harness, not a test: minutes, and its figures go in the issue's note.
set -euo pipefail
cd "$(dirname "$0")/.."
jqtrace=${1:-build-test/jqtrace}
pairs=${2:-100}
tokens=${3:-16}
gen=${GEN:-build-test/jqtrace-gen}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

scale_all=()
for c in 0 'attn chain' 'attn std' 'ffn chain' 'moe experts' shexp ple router 'park/reduce' classifier; do
  scale_all+=(--scale "$c=1.1")
done

printf '%-8s %6s %10s %12s %10s\n' pairs kind 'p<0.05' 'p_adj<0.05' stratified
for change in null x1.1; do
  raw=0 adjusted=0 stratified=0
  for ((s = 1; s <= pairs; ++s)); do
    "$gen" --tokens "$tokens" --layers 8 --seed $((2 * s)) -o "$tmp/a.json" 2> /dev/null
    if [ $change = null ]; then
      "$gen" --tokens "$tokens" --layers 8 --seed $((2 * s + 1)) -o "$tmp/b.json" 2> /dev/null
    else
      "$gen" --tokens "$tokens" --layers 8 --seed $((2 * s + 1)) "${scale_all[@]}" -o "$tmp/b.json" 2> /dev/null
    fi
    "$jqtrace" diff -q --format csv --table changes "$tmp/a.json" "$tmp/b.json" > "$tmp/c.csv" 2> /dev/null || true
    read -r p p_adj strata <<< "$(awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
      $col["kind"] == "layer" && $col["group"] == "(unit)" { print $col["p"], $col["p_adj"], (col["strata"] ? $col["strata"] : 1) }' "$tmp/c.csv")"
    awk -v p="$p" 'BEGIN { exit !(p < 0.05) }' && raw=$((raw + 1))
    awk -v p="$p_adj" 'BEGIN { exit !(p < 0.05) }' && adjusted=$((adjusted + 1))
    [ "${strata:-1}" -gt 1 ] && stratified=$((stratified + 1))
  done
  printf '%-8s %6s %10s %12s %10s\n' "$change" layer "$raw/$pairs" "$adjusted/$pairs" "$stratified/$pairs"
done
