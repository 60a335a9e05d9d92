#!/usr/bin/env bash
# Benchmark of the sidecar index (jqtrace index, issue 16): on a big generated trace (8
# lanes) and its gzip -6 copy, interleaved in one run: a validate pass, building the index,
# and with the index window/stats for a token in the middle and at the end, and markers.
# Medians of REPEAT runs, peak RSS, the index's size against the trace.
#
#   bash bench/index.sh [SIZE_MB] [REPEAT]      (default 4096 MB, 5 runs)
# Traces are generated into bench/out (gitignored) unless present.
set -euo pipefail
cd "$(dirname "$0")/.."
size_mb=${1:-4096}
repeat=${2:-5}
build=${BUILD_DIR:-build}
out=bench/out
mkdir -p "$out"
cmake --build "$build" --target jqtrace jqtrace-gen > /dev/null
jq=$build/jqtrace
trace=$out/index-${size_mb}mb.trace.json
if [ ! -f "$trace" ]; then
  echo "generating $trace ..." >&2
  "$build/jqtrace-gen" --workers 7 --size-mb "$size_mb" --seed 11 -o "$trace"
fi
[ -f "$trace.gz" ] || gzip -6 -k "$trace"
cat "$trace" "$trace.gz" > /dev/null  # from the page cache, as a second look at a trace is
"$jq" index -q "$trace"
"$jq" index -q "$trace.gz"
tokens=$("$jq" markers --format csv "$trace" 2> /dev/null | awk -F, '$1 == "token" { print $2 }')
mid=$((tokens / 2))
last=$((tokens - 1))

labels=() commands=()
row() { labels+=("$1"); commands+=("$2"); }
for f in "$trace" "$trace.gz"; do
  kind=plain; [[ $f == *.gz ]] && kind=gzip
  row "$kind: validate -j 2" "$jq validate -q -j 2 $f"
  row "$kind: index -j 2 (build)" "$jq index -q -j 2 $f"
  row "$kind: window --marker token $mid (index)" "$jq window -q --marker token $mid $f -o /dev/null"
  row "$kind: window --marker token $last (index)" "$jq window -q --marker token $last $f -o /dev/null"
  row "$kind: stats --marker token $mid (index)" "$jq stats -q --marker token $mid $f"
  row "$kind: markers (index)" "$jq markers -q $f"
  row "$kind: window --marker token $mid --no-index" "$jq window -q --no-index --marker token $mid $f -o /dev/null"
done

declare -A times rss
for ((round = 0; round < repeat; round++)); do
  for i in "${!commands[@]}"; do
    /usr/bin/time -f "%e %M" -o "$out/time.txt" sh -c "${commands[$i]} > /dev/null 2>&1"
    read -r t m < "$out/time.txt"
    times[$i]+="$t "
    rss[$i]+="$m "
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }
bytes=$(stat -L -c %s "$trace")
printf '%s: %d bytes, %d tokens; .gz %d bytes\n' "$trace" "$bytes" "$tokens" "$(stat -L -c %s "$trace.gz")"
for f in "$trace" "$trace.gz"; do
  index=$f.jqx
  printf '%s: %d bytes = %.3f%% of the trace text, %.3f%% of the file\n' "$index" "$(stat -L -c %s "$index")" \
    "$(echo "100 * $(stat -L -c %s "$index") / $bytes" | bc -l)" "$(echo "100 * $(stat -L -c %s "$index") / $(stat -L -c %s "$f")" | bc -l)"
done
printf '%-48s %10s %12s\n' "row (median of $repeat)" "seconds" "peak RSS MB"
for i in "${!commands[@]}"; do
  t=$(median <<< "${times[$i]}")
  m=$(median <<< "${rss[$i]}")
  printf '%-48s %10.3f %12.1f\n' "${labels[$i]}" "$t" "$(echo "$m / 1024" | bc -l)"
done
