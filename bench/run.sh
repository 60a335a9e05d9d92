#!/usr/bin/env bash
# Benchmark: generate a big jobque trace, then time the RapidJSON parse floor and jqtrace on
# it in one run, reporting wall time, MB/s, peak RSS and the ratio to the floor. The machine
# is shared and noisy, so each row is the best of REPEAT runs and only ratios are compared.
#
#   bash bench/run.sh [SIZE_MB] [REPEAT]      (default 500 MB, 3 runs)
# Needs a Release build in build/ (bash build.sh demo makes one) and /usr/bin/time.
#
# OLD_SCRIPTS=DIR adds one run each of the Python analyzers jqtrace replaces (trace_gaps.py
# and trace_window.py from daScript's modules/dasLLAMA/harness; they are not part of this
# repository) when python3 is installed. They need ~6x the file in RAM.
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

# The rows: label and command. Runs are interleaved (floor, validate, model, floor, ...)
# so that a slow spell on the shared machine hits every row alike; each row keeps its
# fastest run and its largest peak RSS.
jobs=$(nproc)
labels=("parse floor (RapidJSON)" "full model (load-model)")
commands=("$build/parse-floor $trace" "$build/load-model $trace")
# Every command at one thread and at every core ($jobs): the scaling table compares them.
for j in 1 "$jobs"; do
  labels+=("jqtrace validate -j $j" "jqtrace stats -j $j" "jqtrace markers --kind token -j $j"
           "jqtrace window --marker token N -j $j" "jqtrace gaps -j $j")
  commands+=("$build/jqtrace validate -j $j $trace" "$build/jqtrace stats -j $j $trace"
             "$build/jqtrace markers -j $j --kind token $trace"
             "$build/jqtrace window -q -j $j --marker token 100 -o $out/window.json $trace"
             "$build/jqtrace gaps -j $j $trace")
done
declare -a best_s best_kb
for _ in $(seq "$repeat"); do
  for i in "${!commands[@]}"; do
    # shellcheck disable=SC2086  # the command strings are split on purpose
    /usr/bin/time -f "%e %M" -o "$out/time.txt" ${commands[$i]} > /dev/null 2>&1 || { echo "failed: ${commands[$i]}" >&2; exit 1; }
    read -r s kb < "$out/time.txt"
    if [ -z "${best_s[$i]:-}" ] || awk "BEGIN{exit !($s < ${best_s[$i]})}"; then best_s[$i]=$s; fi
    if [ -z "${best_kb[$i]:-}" ] || [ "$kb" -gt "${best_kb[$i]}" ]; then best_kb[$i]=$kb; fi
  done
done

# The old scripts: once each (a minute apiece on 500 MB), on the same trace and window.
if [ -n "${OLD_SCRIPTS:-}" ] && command -v python3 > /dev/null; then
  read -r lo_ms hi_ms < <("$build/jqtrace" markers -q --kind token --format csv "$trace" |
    awk -F, 'NR == 102 { printf "%.6f %.6f\n", $3 / 1000, $4 / 1000 }')
  labels+=("python3 trace_gaps.py" "python3 trace_window.py")
  commands+=("python3 $OLD_SCRIPTS/trace_gaps.py $trace"
             "python3 $OLD_SCRIPTS/trace_window.py $trace $out/window-py.json $lo_ms $hi_ms")
  for i in $(seq $((${#commands[@]} - 2)) $((${#commands[@]} - 1))); do
    # shellcheck disable=SC2086
    /usr/bin/time -f "%e %M" -o "$out/time.txt" ${commands[$i]} > /dev/null 2>&1 || { echo "failed: ${commands[$i]}" >&2; exit 1; }
    read -r best_s[$i] best_kb[$i] < "$out/time.txt"
  done
fi

printf "trace: %s (%.1f MB), %s cores, best of %s interleaved runs\n" "$trace" "$(awk -v b="$bytes" 'BEGIN{print b/1e6}')" "$(nproc)" "$repeat"
printf "%-38s %8s %9s %10s %8s %9s\n" "command" "seconds" "MB/s" "peak MiB" "x floor" "RSS/file"
for i in "${!labels[@]}"; do
  awk -v n="${labels[$i]}" -v s="${best_s[$i]}" -v kb="${best_kb[$i]}" -v f="${best_s[0]}" -v b="$bytes" 'BEGIN{
    printf "%-38s %8.2f %9.1f %10.1f %8.2f %9.3f\n", n, s, b/1e6/s, kb/1024, s/f, kb*1024/b }'
done
echo "targets (one thread): validate <= 1.25x floor and <= 64 MiB; model <= 1.30x floor;"
echo "         stats, markers, window, gaps <= 1.35x floor; model, stats, markers, window, gaps RSS/file <= 0.25"
# Scaling: the same command at 1 and at $jobs threads (rows 2.. are -j 1, then -j $jobs).
if [ "$jobs" -gt 1 ]; then
  echo
  printf "scaling on %s cores: %-34s %8s %8s %8s %12s\n" "$jobs" "command" "-j 1" "-j $jobs" "speedup" "floor MB/s x"
  for i in 0 1 2 3 4; do
    one=$((2 + i)) many=$((7 + i))
    awk -v n="${labels[$one]% -j 1}" -v a="${best_s[$one]}" -v b="${best_s[$many]}" -v f="${best_s[0]}" -v j="$jobs" 'BEGIN{
      printf "                   %-34s %8.2f %8.2f %7.2fx %11.2fx\n", n, a, b, a/b, f/b }'
  done
  echo "targets: stats -j $jobs >= 1.7x faster than -j 1 and >= 1.6x the floor's throughput"
fi
