#!/usr/bin/env bash
# whatif against the truth on generator twins (issue 68): the same seed generated with and
# without --scale TAG=F (--fixed-stream: the twins differ only by the change and what the
# simulated runtime makes of it, chunks re-assigned to lanes included), whatif --scale
# GROUP=F on the first predicting the second, unit by unit (tokens and layers). Prints per
# (group, F): the median and p90 of |predicted - measured| / measured per unit, and the
# total change measured and predicted.
#
#   bash bench/whatif_twins.sh [SEEDS] [TOKENS]     (default 3 seeds, 60 tokens; 3 workers)
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
echo "| group | F | kind | units | median error | p90 error | total change measured | predicted |"
echo "|---|---:|---|---:|---:|---:|---:|---:|"
for change in "3:ffn chain" "6:moe experts" "1:attn chain"; do
  tag=${change%%:*} group=${change#*:}
  for factor in 0.5 0.8 1.25; do
    for seed in $(seq "$seeds"); do
      common=(--workers 3 --tokens "$tokens" --layers 8 --seed "$seed" --noise "$noise" --fixed-stream)
      "$build/jqtrace-gen" "${common[@]}" -o "$out/a-$seed.json"
      "$build/jqtrace-gen" "${common[@]}" --scale "$tag=$factor" -o "$out/b-$seed-$tag-$factor.json"
      for kind in token layer; do
        "$build/jqtrace" whatif -q --scale "$group=$factor" --per-unit "$kind" --format json "$out/a-$seed.json" \
          > "$out/p-$seed-$kind.json"
        "$build/jqtrace" whatif -q --per-unit "$kind" --format json "$out/b-$seed-$tag-$factor.json" \
          > "$out/m-$seed-$kind.json"
      done
    done
    python3 - "$out" "$seeds" "$group" "$factor" << 'PY'
import json, statistics, sys
out, seeds, group, factor = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
for kind in ("token", "layer"):
    errors, measured_total, predicted_total, base_total = [], 0, 0, 0
    for seed in range(1, seeds + 1):
        p = json.load(open(f"{out}/p-{seed}-{kind}.json"))
        m = json.load(open(f"{out}/m-{seed}-{kind}.json"))
        pu = {u["idx"]: u for u in p["units"]}
        mu = {u["idx"]: u for u in m["units"]}
        for idx, u in pu.items():
            if idx in mu and mu[idx]["measured_us"] > 0:
                errors.append(abs(u["predicted_us"] - mu[idx]["measured_us"]) / mu[idx]["measured_us"])
        base_total += p["scope"]["measured_us"]
        predicted_total += p["scope"]["predicted_us"]
        measured_total += m["scope"]["measured_us"]
    errors.sort()
    p90 = errors[int(0.9 * (len(errors) - 1))]
    print(f"| {group} | {factor} | {kind} | {len(errors)} | {100 * statistics.median(errors):.2f}% | {100 * p90:.2f}% "
          f"| {100 * (measured_total / base_total - 1):+.2f}% | {100 * (predicted_total / base_total - 1):+.2f}% |")
PY
  done
done
