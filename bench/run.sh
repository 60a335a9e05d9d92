#!/usr/bin/env bash
# Benchmark: generate big jobque traces with 3, 8 and 32 lanes (the generator's --workers
# 2, 7, 31) and time, interleaved in one run, the parse floors and jqtrace's commands on
# each, reporting the median of REPEAT runs, MB/s, peak RSS and the ratio to the fast floor.
#
#   bash bench/run.sh [SIZE_MB] [REPEAT]      (default 200 MB per trace, 5 runs)
#   LANES="8" ROWS='^(stats|latency)' bash bench/run.sh 570 5
#                                             (only these lane counts, and the rows whose
#                                             label matches ROWS: the fast floor always runs)
# Needs a Release build in build/ (bash build.sh demo makes one), gzip, zstd and /usr/bin/time.
#
# The floor is RapidJSON's fastest configuration for these bytes (default flags, native
# numbers, a do-nothing handler, 64 KiB FileReadStream: parse-floor --fast); "jqtrace-flags
# floor" parses with jqtrace's flags (numbers as strings), ~10% more work, for reference;
# "zcat | floor" is the limit for a gzip trace read through zlib on one core; decode-floor
# is jqtrace's own decoder alone (ISA-L for gzip, zstd), the limit of the compressed rows. The machine
# is shared and noisy: runs are interleaved (every row of a round, then the next round) so
# that a slow spell hits all rows alike, and medians, not best runs, are reported. The CPU
# columns (user + system time, median) move much less with the host's load than wall time:
# for the one-thread rows they are the steadier measure of a change.
set -euo pipefail
cd "$(dirname "$0")/.."
size_mb=${1:-200}
repeat=${2:-5}
build=${BUILD_DIR:-build}
out=bench/out
mkdir -p "$out"
cmake --build "$build" --target jqtrace jqtrace-gen parse-floor decode-floor load-model >/dev/null
jobs=$(nproc)

lanes=${LANES:-3 8 32}
rows=${ROWS:-}
for lane_count in $lanes; do
  workers=$((lane_count - 1))
  trace="$out/bench-${size_mb}mb-w${workers}.trace.json"
  if [ ! -f "$trace" ]; then
    echo "generating $trace ..." >&2
    "$build/jqtrace-gen" --workers "$workers" --size-mb "$size_mb" --seed 7 -o "$trace"
  fi

  labels=("fast floor (RapidJSON default flags)" "jqtrace-flags floor" "zcat piped to fast floor (.gz)"
          "inflate alone (.gz, decode-floor)" "zstd decode alone (.zst, decode-floor)" "full model (load-model)")
  commands=("$build/parse-floor --fast $trace" "$build/parse-floor $trace"
            "sh -c 'zcat $trace.gz | $build/parse-floor --fast -'" "$build/decode-floor $trace.gz"
            "$build/decode-floor $trace.zst" "$build/load-model $trace")
  for j in 1 "$jobs"; do
    labels+=("validate -j $j" "stats -j $j" "markers --kind token -j $j" "window --marker token 100 -j $j"
             "gaps -j $j" "latency -j $j" "latency --per-unit token -j $j" "timeline -j $j" "report -j $j"
             "diff (the trace against itself) -j $j" "export -j $j" "whatif --scale -j $j" "whatif --rank -j $j")
    commands+=("$build/jqtrace validate -j $j $trace" "$build/jqtrace stats -j $j $trace"
               "$build/jqtrace markers -j $j --kind token $trace"
               "$build/jqtrace window -q --no-index -j $j --marker token 100 -o $out/window.json $trace"
               "$build/jqtrace gaps -j $j $trace" "$build/jqtrace latency -j $j $trace"
               "$build/jqtrace latency -q -j $j --per-unit token $trace"
               "$build/jqtrace timeline -q -j $j -o $out/t.svg $trace"
               "$build/jqtrace report -q -j $j -o $out/r.html $trace"
               "$build/jqtrace diff -q -j $j $trace $trace"
               "$build/jqtrace export -q -j $j -o $out/e.sqlite $trace"
               "$build/jqtrace whatif -q -j $j --scale 'ffn chain=0.5' $trace"
               "$build/jqtrace whatif -q -j $j --rank $trace")
    # Compressed, and from stdin: each beside its plain row above (same command).
    for z in gz zst; do
      labels+=("validate -j $j .$z" "stats -j $j .$z" "window --marker token 100 -j $j .$z")
      commands+=("$build/jqtrace validate -j $j $trace.$z" "$build/jqtrace stats -j $j $trace.$z"
                 "$build/jqtrace window -q --no-index -j $j --marker token 100 -o $out/window.json $trace.$z")
    done
    labels+=("stats -j $j stdin .gz")
    commands+=("sh -c '$build/jqtrace stats -j $j - < $trace.gz'")
  done
  if [ -n "$rows" ]; then  # the floor (row 0) and the rows ROWS names
    kept_labels=("${labels[0]}") kept_commands=("${commands[0]}")
    for i in "${!labels[@]}"; do
      if [ "$i" -gt 0 ] && [[ ${labels[$i]} =~ $rows ]]; then
        kept_labels+=("${labels[$i]}") kept_commands+=("${commands[$i]}")
      fi
    done
    labels=("${kept_labels[@]}") commands=("${kept_commands[@]}")
  fi
  compressed=()
  for z in gz zst; do
    if [[ "${commands[*]}" == *"$trace.$z"* ]]; then compressed+=("$trace.$z"); fi
  done
  [ ! -f "$trace.gz" ] && [[ " ${compressed[*]} " == *".gz "* ]] && gzip -6 -k "$trace"
  [ ! -f "$trace.zst" ] && [[ " ${compressed[*]} " == *".zst "* ]] && zstd -q -3 -k "$trace"
  bytes=$(stat -c %s "$trace")
  cat "$trace" "${compressed[@]}" > /dev/null  # warm the page cache: every row reads from memory
  declare -A times=() peaks=() cpus=()
  for _ in $(seq "$repeat"); do
    for i in "${!commands[@]}"; do
      eval "/usr/bin/time -f '%e %M %U %S' -o $out/time.txt ${commands[$i]}" > /dev/null 2>&1 ||
        { echo "failed: ${commands[$i]}" >&2; exit 1; }
      read -r s kb user sys < "$out/time.txt"
      cpus[$i]+="$(awk -v u="$user" -v k="$sys" 'BEGIN{print u + k}') "
      times[$i]+="$s "
      if [ -z "${peaks[$i]:-}" ] || [ "$kb" -gt "${peaks[$i]}" ]; then peaks[$i]=$kb; fi
    done
  done
  median() { tr ' ' '\n' <<< "$1" | grep . | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
  floor=$(median "${times[0]}")
  floor_cpu=$(median "${cpus[0]}")
  printf "\n%s lanes: %s (%.1f MB), %s cores, median of %s interleaved runs\n" "$lane_count" "$trace" \
    "$(awk -v b="$bytes" 'BEGIN{print b/1e6}')" "$jobs" "$repeat"
  printf "| %-38s | %7s | %7s | %8s | %8s | %8s | %7s | %9s |\n" "command" "seconds" "MB/s" "peak MiB" "x floor" "RSS/file" \
    "CPU s" "CPU x fl."
  printf "|%s|%s|%s|%s|%s|%s|%s|%s|\n" "---" "---:" "---:" "---:" "---:" "---:" "---:" "---:"
  for i in "${!labels[@]}"; do
    s=$(median "${times[$i]}")
    c=$(median "${cpus[$i]}")
    awk -v n="${labels[$i]}" -v s="$s" -v kb="${peaks[$i]}" -v f="$floor" -v b="$bytes" -v c="$c" -v fc="$floor_cpu" 'BEGIN{
      printf "| %-38s | %7.2f | %7.1f | %8.1f | %8.2f | %8.3f | %7.2f | %9.2f |\n", n, s, b/1e6/s, kb/1024, s/f, kb*1024/b, c, c/fc }'
  done
  # Compressed against plain: the ratio of each compressed row to its plain row.
  plain_time() { for k in "${!labels[@]}"; do [ "${labels[$k]}" = "$1" ] && { median "${times[$k]}"; return; }; done; }
  printf "\n| %-38s | %8s |\n|---|---:|\n" "compressed / plain (same command)" "ratio"
  for i in "${!labels[@]}"; do
    case "${labels[$i]}" in
      *" .gz"|*" .zst")
        base=${labels[$i]% .*}
        base=${base% stdin}
        awk -v n="${labels[$i]}" -v s="$(median "${times[$i]}")" -v p="$(plain_time "$base")" \
          'BEGIN{ printf "| %-38s | %8.2f |\n", n, s/p }' ;;
    esac
  done
  unset times peaks cpus
done
echo
echo "targets (issue 15): validate -j 1 <= 1.15x the fast floor, stats -j 1 <= 1.30x, stats -j $jobs <= 0.67x"
echo "(1.5x the floor's throughput); timeline <= 1.3x stats; RSS/file <= 0.25 for the model and the analyses;"
echo "compressed / plain: .gz <= 1.25, .zst <= 1.15 for stats, validate and window"
echo "latency <= 1.2x stats (issue 53); whatif and whatif --rank <= 2x stats (issue 68)"
