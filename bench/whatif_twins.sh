#!/usr/bin/env bash
# whatif against the truth on generator twins (issue 68): the same seed generated with and
# without --scale TAG=F (--fixed-stream: the twins differ only by the change and what the
# simulated runtime makes of it, chunks re-assigned to lanes included), whatif --scale
# GROUP=F on the first predicting the second, unit by unit (tokens and layers). Prints per
# (group, F) what bench/whatif_compare.py measures: the median and p90 of |predicted -
# measured| / measured per unit, the error of the change itself, and the total change.
#
#   bash bench/whatif_twins.sh [SEEDS] [TOKENS]     (default 3 seeds, 60 tokens; 3 workers;
#                                                   then lane twins: --lanes against 2..7 workers)
#   NOISE=proportional bash bench/whatif_twins.sh   (preemption scaled with the work: the
#                                                   replay's cap keeps it, so it errs there)
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=${1:-3}
tokens=${2:-60}
build=${BUILD_DIR:-build}
noise=${NOISE:-additive}
out=bench/out/twins
mkdir -p "$out"
cmake --build "$build" --target jqtrace jqtrace-gen > /dev/null
# predict SEED TWIN WHATIF_ARGS...: whatif WHATIF_ARGS on a-SEED.json, and the twin measured,
# unit by unit for each kind.
predict() {
  local seed=$1 twin=$2
  shift 2
  for kind in token layer; do
    "$build/jqtrace" whatif -q "$@" --per-unit "$kind" --format json "$out/a-$seed.json" > "$out/p-$seed-$kind.json"
    "$build/jqtrace" whatif -q --per-unit "$kind" --format json "$twin" > "$out/m-$seed-$kind.json"
  done
}
# compare LABEL: every seed's prediction against its twin, per kind (the files are written
# anew for each change: compared before the next).
compare() {
  for kind in token layer; do
    local pairs=()
    for seed in $(seq "$seeds"); do pairs+=("$out/p-$seed-$kind.json" "$out/m-$seed-$kind.json"); done
    python3 bench/whatif_compare.py "$1" "$kind" "${pairs[@]}"
  done
}

echo "| change | kind | units | median error | p90 error | median error of the change | total change measured | predicted |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
for change in "3:ffn chain" "6:moe experts" "1:attn chain"; do
  tag=${change%%:*} group=${change#*:}
  for factor in 0.5 0.8 1.25; do
    for seed in $(seq "$seeds"); do
      common=(--workers 3 --tokens "$tokens" --layers 8 --seed "$seed" --noise "$noise" --fixed-stream)
      "$build/jqtrace-gen" "${common[@]}" -o "$out/a-$seed.json"
      "$build/jqtrace-gen" "${common[@]}" --scale "$tag=$factor" -o "$out/b-$seed.json"
      predict "$seed" "$out/b-$seed.json" --scale "$group=$factor"
    done
    compare "$group x$factor"
  done
done
# Lane twins: the same seed with other worker counts (--fixed-stream draws every worker's
# claim latency alike whatever the count), whatif --lanes on the first predicting the second.
for pair in "3 5" "3 7" "3 2" "2 7"; do
  read -r from to <<< "$pair"
  for seed in $(seq "$seeds"); do
    common=(--tokens "$tokens" --layers 8 --seed "$seed" --noise "$noise" --fixed-stream)
    "$build/jqtrace-gen" "${common[@]}" --workers "$from" -o "$out/a-$seed.json"
    "$build/jqtrace-gen" "${common[@]}" --workers "$to" -o "$out/b-$seed.json"
    predict "$seed" "$out/b-$seed.json" --lanes $((to + 1))
  done
  compare "$((from + 1)) -> $((to + 1)) lanes"
done
