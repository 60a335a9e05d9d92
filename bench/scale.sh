#!/usr/bin/env bash
# How jqtrace scales with the cores of this machine (issue 44's table): one generated
# trace of 16 lanes and 24 layers, the RapidJSON floor on one core, then validate and stats
# at -j 1, 2, 4, 8, 16... up to the cores here, gaps, report and window at the lowest and
# highest; seconds (median of REPEAT interleaved runs) and the speedup of the highest -j.
# Then what --timings says of a -j 1 and a -j N run of stats and validate: the serial share
# and the speedup Amdahl's law allows at 16 threads, the prediction for machines with more
# cores than this one.
#
#   bash bench/scale.sh [SIZE_MB] [REPEAT]      (default 400 MB, 3 runs)
# Needs a Release build in build/ (bash build.sh demo makes one). The trace goes to /dev/shm
# when it has room (the table measures the CPU, not the disk), else bench/out.
set -euo pipefail
cd "$(dirname "$0")/.."
size_mb=${1:-400}
repeat=${2:-3}
build=${BUILD_DIR:-build}
cmake --build "$build" --target jqtrace jqtrace-gen parse-floor >/dev/null
cores=$(nproc)
dir=bench/out
if [ -d /dev/shm ] && [ "$(df -Pm /dev/shm | awk 'NR == 2 { print $4 }')" -gt $((size_mb * 3)) ]; then dir=/dev/shm; fi
mkdir -p "$dir" bench/out
trace="$dir/jqtrace-scale-${size_mb}mb.trace.json"
[ -f "$trace" ] || "$build/jqtrace-gen" --workers 15 --layers 24 --size-mb "$size_mb" --seed 11 -o "$trace" 2> /dev/null
cat "$trace" > /dev/null  # in the page cache

threads=()
for j in 1 2 4 8 16 32 64 128; do [ "$j" -le "$cores" ] && threads+=("$j"); done
[ "${threads[-1]}" = "$cores" ] || threads+=("$cores")
low=${threads[0]} high=${threads[-1]}

labels=() commands=()
add() { labels+=("$1"); commands+=("$2"); }
add "floor|1" "$build/parse-floor --fast $trace"
for j in "${threads[@]}"; do
  add "validate|$j" "$build/jqtrace validate -q -j $j $trace"
  add "stats|$j" "$build/jqtrace stats -q -j $j $trace"
done
for j in $low $high; do
  add "gaps|$j" "$build/jqtrace gaps -q -j $j $trace"
  add "report|$j" "$build/jqtrace report -q -j $j -o bench/out/scale.html $trace"
  add "window token 10|$j" "$build/jqtrace window -q --no-index -j $j --marker token 10 -o bench/out/scale-window.json $trace"
done

# What the machine itself gives: the floor on every core at once, each pinned to its core,
# against the floor alone. On a shared host the cores are not equal (here one ran at half
# the other's speed for minutes at a time): the sum of their speeds, in units of the one
# core a -j 1 run gets, is the most any -j N run can reach over -j 1 at that moment.
# The same for stats -j 1 (its own ceiling): copies that share nothing, so what they lose
# running together is the machine's (memory bandwidth, shared caches, page faults on a
# virtual machine), not a join or a serial phase that -j N could do better.
# timed OUT COMMAND...: runs COMMAND, writes its wall seconds (to the millisecond: time(1)
# gives hundredths, a tenth of a -j 2 run's difference on the 100 MB trace) to OUT.
timed() {
  local out=$1 start end
  shift
  start=$(date +%s%N)
  "$@" > /dev/null 2>&1 || return 1
  end=$(date +%s%N)
  awk -v ns=$((end - start)) 'BEGIN { printf "%.3f\n", ns / 1e9 }' > "$out"
}
on_every_core() {  # COMMAND...: the seconds of one copy pinned to each core, all at once
  for c in $(seq 0 $((cores - 1))); do
    timed "bench/out/scale-core$c.txt" taskset -c "$c" "$@" &
  done
  wait
  for c in $(seq 0 $((cores - 1))); do cat "bench/out/scale-core$c.txt"; done
}
# ceiling ALONE TOGETHER: the work all cores did together, in units of the one run alone.
ceiling() { awk -v alone="$1" -v t="$2" 'BEGIN { n = split(t, v, " "); s = 0; for (i = 1; i <= n; i++) s += alone / v[i]; printf "%.2f", s }'; }

declare -A times=()
ceilings="" core_times="" stats_ceilings="" stats_core_times=""
for _ in $(seq "$repeat"); do
  for i in "${!commands[@]}"; do
    timed bench/out/scale-time.txt ${commands[$i]} ||
      { echo "failed: ${commands[$i]}" >&2; exit 1; }
    times[$i]+="$(cat bench/out/scale-time.txt) "
    [ "${labels[$i]}" = "floor|1" ] && alone=$(cat bench/out/scale-time.txt)
    [ "${labels[$i]}" = "stats|1" ] && stats_alone=$(cat bench/out/scale-time.txt)
  done
  together=$(on_every_core "$build/parse-floor" --fast "$trace" | tr '\n' ' ')
  ceilings+="$(ceiling "$alone" "$together") "
  core_times+="$together| "
  together=$(on_every_core "$build/jqtrace" stats -q -j 1 "$trace" | tr '\n' ' ')
  stats_ceilings+="$(ceiling "$stats_alone" "$together") "
  stats_core_times+="$together| "
done
median() { tr ' ' '\n' <<< "$1" | grep . | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf "\n%s (%s MB, 16 lanes, 24 layers), %s cores, seconds, median of %s interleaved runs\n\n" "$trace" \
  "$(( $(stat -c %s "$trace") / 1000000 ))" "$cores" "$repeat"
header="| command |"
rule="|---|"
for j in "${threads[@]}"; do header+=" -j$j |"; rule+="---:|"; done
echo "$header speedup -j$high |"
echo "$rule---:|"
for name in "floor" "validate" "stats" "gaps" "report" "window token 10"; do
  row="| $name |"
  first="" last=""
  for j in "${threads[@]}"; do
    cell=""
    for i in "${!labels[@]}"; do
      [ "${labels[$i]}" = "$name|$j" ] && cell=$(median "${times[$i]}")
    done
    row+=" $cell |"
    [ -n "$cell" ] && { [ -n "$first" ] || first=$cell; last=$cell; }
  done
  speedup=""
  [ "$name" != floor ] && [ -n "$first" ] && speedup=$(awk -v a="$first" -v b="$last" 'BEGIN { printf "%.2fx", a / b }')
  echo "$row $speedup |"
done

ceiling=$(median "$ceilings")
stats_ceiling=$(median "$stats_ceilings")
echo
echo "Machine ceiling: the floor on all $cores cores at once did ${ceiling}x the work of the floor alone"
echo "(median of $repeat; seconds a core, each run: ${core_times% | });"
echo "stats -j 1 on all $cores cores at once did ${stats_ceiling}x the work of stats -j 1 alone"
echo "(seconds a core, each run: ${stats_core_times% | })."
for name in validate stats; do
  first="" last=""
  for i in "${!labels[@]}"; do
    [ "${labels[$i]}" = "$name|$low" ] && first=$(median "${times[$i]}")
    [ "${labels[$i]}" = "$name|$high" ] && last=$(median "${times[$i]}")
  done
  own=""
  [ "$name" = stats ] && own=$stats_ceiling
  awk -v n="$name" -v a="$first" -v b="$last" -v c="$ceiling" -v o="$own" -v j="$high" \
    'BEGIN { printf "%s -j%s: %.2fx -j1, %.0f%% of the machine ceiling", n, j, a / b, 100 * a / b / c
             if (o != "") printf ", %.0f%% of its own", 100 * a / b / o
             printf "\n" }'
done
awk -v c="$stats_ceiling" -v n="$cores" 'BEGIN { printf "(%d copies of stats -j 1 that share nothing did %.2fx the work of one: the ceiling of this workload here)\n", n, c }'

echo
for command in stats validate; do
  for j in $low $high; do
    share=$("$build/jqtrace" $command -q -j "$j" --timings "$trace" 2>&1 > /dev/null | grep 'serial share')
    echo "$command -j $j --timings: ${share#  }"
  done
done
echo "(the parts are joined as they are read: their join is inside the parse phase)"
