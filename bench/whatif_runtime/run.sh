#!/usr/bin/env bash
# whatif against the real jobque runtime (issue 68): decode.das (beside this script) run on
# daslang — as it is, with one group's work scaled, and as it is again — on 2, 3 and 5 lanes;
# whatif --scale on the first run predicts the second, token by token and layer by layer
# (bench/whatif_compare.py), beside the noise floor: the first run against the third. Not in CI: daslang is built from the daScript sources
# (README.md here), ~11 minutes on 2 cores.
#
#   DASLANG=/path/to/daslang bash bench/whatif_runtime/run.sh [PAIRS] [TOKENS] [GROUP=F]
#                                           (default 3 pairs of 40 tokens, ffn=0.5)
set -euo pipefail
cd "$(dirname "$0")/../.."
daslang=${DASLANG:?give the daslang binary: DASLANG=/path/to/daslang}
pairs=${1:-3}
tokens=${2:-40}
change=${3:-ffn=0.5}
build=${BUILD_DIR:-build}
out=bench/out/runtime
mkdir -p "$out"
cmake --build "$build" --target jqtrace > /dev/null
group=${change%%=*} factor=${change#*=}
case $group in
  ffn) name="ffn chain" ;;
  attn) name="attn chain" ;;
  moe) name="moe experts" ;;
  classifier) name="classifier" ;;
  *) echo "run.sh: GROUP is ffn, attn, moe or classifier" >&2; exit 2 ;;
esac
script=bench/whatif_runtime/decode.das
echo "| lanes, $name x$factor | kind | units | median error | p90 error | median error of the change | total change measured | predicted |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
for lanes in ${LANES:-2 3 5}; do
  for pair in $(seq "$pairs"); do
    # The two runs of a pair back to back, their order alternating: a slow spell of the
    # shared machine hits both sides alike over the pairs.
    # "again" is the base load run a second time: base against again is the machine's own
    # run-to-run noise, the floor under any prediction's error.
    sides=(base twin again)
    [ $((pair % 2)) -eq 0 ] && sides=(twin base again)
    for side in "${sides[@]}"; do
      args=(--tokens "$tokens" --out "$out/$side-$lanes-$pair.json")
      [ "$side" = twin ] && args+=(--scale "$change")
      DAS_JOBQUE_THREADS=$lanes JOBQUE_PROFILING=1 "$daslang" "$script" -- "${args[@]}" > /dev/null
    done
    for kind in token layer; do
      "$build/jqtrace" whatif -q --scale "$name=$factor" --per-unit $kind --format json "$out/base-$lanes-$pair.json" \
        > "$out/p-$lanes-$pair-$kind.json"
      "$build/jqtrace" whatif -q --per-unit $kind --format json "$out/base-$lanes-$pair.json" > "$out/n-$lanes-$pair-$kind.json"
      for side in twin again; do
        "$build/jqtrace" whatif -q --per-unit $kind --format json "$out/$side-$lanes-$pair.json" > "$out/$side-m-$lanes-$pair-$kind.json"
      done
    done
  done
  for kind in token layer; do
    files=() noise=()
    for pair in $(seq "$pairs"); do
      files+=("$out/p-$lanes-$pair-$kind.json" "$out/twin-m-$lanes-$pair-$kind.json")
      noise+=("$out/n-$lanes-$pair-$kind.json" "$out/again-m-$lanes-$pair-$kind.json")
    done
    python3 bench/whatif_compare.py "$lanes lanes: predicted" "$kind" "${files[@]}"
    python3 bench/whatif_compare.py "$lanes lanes: noise (same load twice)" "$kind" "${noise[@]}"
  done
done
