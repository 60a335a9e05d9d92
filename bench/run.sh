#!/usr/bin/env bash
# Benchmark: generate a big jobque trace, then time the RapidJSON parse floor and jqtrace on
# it in one run, reporting wall time, MB/s, peak RSS and the ratio to the floor. The machine
# is shared and noisy, so each row is the best of REPEAT runs and only ratios are compared.
#
#   bash bench/run.sh [SIZE_MB] [REPEAT]      (default 500 MB, 3 runs)
# Needs a Release build in build/ (bash build.sh demo makes one) and /usr/bin/time.
set -euo pipefail
cd "$(dirname "$0")/.."
size_mb=${1:-500}
repeat=${2:-3}
build=${BUILD_DIR:-build}
out=bench/out
mkdir -p "$out"
trace="$out/bench-${size_mb}mb.trace.json"

cmake --build "$build" --target jqtrace jqtrace-gen parse-floor load-model >/dev/null
if [ ! -f "$trace" ]; then
  echo "generating $trace ..." >&2
  "$build/jqtrace-gen" --workers 2 --size-mb "$size_mb" --seed 7 -o "$trace"
fi
bytes=$(stat -c %s "$trace")
cat "$trace" > /dev/null  # warm the page cache so every row reads from memory

# best_of NAME CMD...: prints "seconds peak_kb" of the fastest run.
best_of() {
  local best_s="" best_kb=""
  for _ in $(seq "$repeat"); do
    /usr/bin/time -f "%e %M" -o "$out/time.txt" "$@" > /dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }
    read -r s kb < "$out/time.txt"
    if [ -z "$best_s" ] || awk "BEGIN{exit !($s < $best_s)}"; then best_s=$s; fi
    if [ -z "$best_kb" ] || [ "$kb" -gt "$best_kb" ]; then best_kb=$kb; fi
  done
  echo "$best_s $best_kb"
}

printf "trace: %s (%.1f MB), %s cores, best of %s runs\n" "$trace" "$(echo "$bytes/1000000" | bc -l)" "$(nproc)" "$repeat"
printf "%-28s %8s %9s %10s %8s %9s\n" "command" "seconds" "MB/s" "peak MiB" "x floor" "RSS/file"
read -r floor_s floor_kb < <(best_of "$build/parse-floor" "$trace")
row() {  # NAME SECONDS KB
  awk -v n="$1" -v s="$2" -v kb="$3" -v f="$floor_s" -v b="$bytes" 'BEGIN{
    printf "%-28s %8.2f %9.1f %10.1f %8.2f %9.3f\n", n, s, b/1e6/s, kb/1024, s/f, kb*1024/b }'
}
row "parse floor (RapidJSON)" "$floor_s" "$floor_kb"
read -r s kb < <(best_of "$build/jqtrace" validate -j 1 "$trace"); row "jqtrace validate -j 1" "$s" "$kb"
read -r s kb < <(best_of "$build/load-model" "$trace"); row "full model (load-model)" "$s" "$kb"
echo "targets: validate <= 1.25x floor and <= 64 MiB; model <= 1.30x floor and RSS/file <= 0.25"
