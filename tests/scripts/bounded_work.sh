#!/usr/bin/env bash
# Hostile shapes must cost work linear in their size (or n log n): each command below runs
# under a CPU-time limit (ulimit -t: CPU seconds, not wall time, so a busy machine does not
# trip it) about 20 times what the linear code needs even with sanitizers; the quadratic
# code these shapes once hit needed minutes.
source "$(dirname "$0")/lib/prelude.bash"

# run LIMIT NAME ARGS...: jqtrace ARGS within LIMIT CPU seconds, exit 0
run() {
  local limit=$1 name=$2; shift 2
  (ulimit -t "$limit"; "$jqtrace" "$@" > /dev/null 2> "$tmp/err")
  local status=$?
  [ $status -eq 0 ] || { echo "FAIL: $name: exit $status (137 or 152: over $limit CPU s)"; head -3 "$tmp/err"; failures=$((failures + 1)); }
}

# 400,000 process_name events with distinct pids (a scan per event was quadratic).
awk 'BEGIN { printf "["; for (i = 0; i < 400000; i++) printf "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"args\":{\"name\":\"p\"}},\n", i;
             print "{\"ph\":\"X\",\"name\":\"a\",\"pid\":0,\"tid\":0,\"ts\":0,\"dur\":1}]" }' > "$tmp/processes.json"
run 20 "stats, 400k process names" stats -q -j 1 "$tmp/processes.json"
# 200,000 instants with distinct names: without a profile every name is a marker kind
# (a pass per kind was quadratic).
awk 'BEGIN { printf "["; for (i = 0; i < 200000; i++) printf "{\"ph\":\"i\",\"name\":\"k%d\",\"pid\":0,\"tid\":0,\"ts\":%d},\n", i, i;
             print "{\"ph\":\"X\",\"name\":\"a\",\"pid\":0,\"tid\":0,\"ts\":0,\"dur\":1}]" }' > "$tmp/kinds.json"
run 20 "markers, 200k kinds" markers -q -j 1 "$tmp/kinds.json"
run 20 "stats with a unit gate, 200k kinds" stats -q -j 1 --fail-if 'units(k5) > 5' "$tmp/kinds.json"
# diff of a trace with itself: 100,000 names grouped by name, and marker kinds (a scan of
# the other side's list for every name was quadratic: 10.85 s for the names).
awk 'BEGIN { printf "["; for (i = 0; i < 100000; i++) printf "{\"ph\":\"X\",\"name\":\"n%d\",\"pid\":0,\"tid\":0,\"ts\":%d,\"dur\":1},\n", i, i;
             print "{\"ph\":\"X\",\"name\":\"a\",\"pid\":0,\"tid\":0,\"ts\":0,\"dur\":1}]" }' > "$tmp/names.json"
run 20 "diff --by name, 100k names" diff -q -j 1 --by name "$tmp/names.json" "$tmp/names.json"
# 50,000 kinds: a kind's units cost diff ~0.3 ms in the sanitized build (~15 s here);
# the quadratic scan needed 64 s for 100,000 in a plain one.
head -n 50000 "$tmp/kinds.json" > "$tmp/kinds50k.json"
echo '{"ph":"X","name":"a","pid":0,"tid":0,"ts":0,"dur":1}]' >> "$tmp/kinds50k.json"
run 40 "diff, 50k kinds" diff -q -j 1 "$tmp/kinds50k.json" "$tmp/kinds50k.json"
# gaps: one chain with 200,000 chunks of distinct stages on 1,000 lanes, and 100,000
# chains of 2 chunks (a search per chunk through the chain's stages, the stage's lanes and
# the class's stages was quadratic).
awk 'BEGIN { printf "{\"traceEvents\":[\n";
             for (i = 0; i < 200000; i++) printf "{\"ph\":\"X\",\"name\":\"chunk\",\"pid\":0,\"tid\":%d,\"ts\":%d,\"dur\":1,\"args\":{\"stage\":%d,\"arg\":0,\"chain\":1}},\n", i % 1000, i, i;
             for (c = 3; c < 200003; c += 2) printf "{\"ph\":\"X\",\"name\":\"chunk\",\"pid\":0,\"tid\":0,\"ts\":%d,\"dur\":1,\"args\":{\"stage\":%d,\"arg\":0,\"chain\":%d}},\n", c, c, c;
             for (c = 3; c < 200003; c += 2) printf "{\"ph\":\"X\",\"name\":\"publish\",\"pid\":0,\"tid\":1000,\"ts\":%d,\"dur\":1,\"args\":{\"stage\":1,\"arg\":1,\"chain\":%d}},\n", c, c;
             print "{\"ph\":\"X\",\"name\":\"publish\",\"pid\":0,\"tid\":1000,\"ts\":0,\"dur\":1,\"args\":{\"stage\":1,\"arg\":1,\"chain\":1}}]}" }' > "$tmp/stages.json"
# Two columns only: the bound is on the analysis; its full table here is 300k rows of
# distributions (69 MB of text, linear but ~4 CPU s of formatting, 3x that with sanitizers).
run 15 "gaps, a chain of 200k stages and 100k chains of stages of their own" \
  gaps -q -j 1 --format csv --columns class,stage "$tmp/stages.json"
# stats of a generic trace with 100,000 lanes of one span and 4,000 names: each lane's
# slice once got a tally array as long as the name table (1.7 GB here); its memory must
# follow what the slices see (250 MB here, more with sanitizers; it was 1.7 GB). Peak RSS by
# GNU time (build.sh installs it).
awk 'BEGIN { printf "["; for (i = 0; i < 100000; i++) printf "{\"ph\":\"X\",\"name\":\"n%d\",\"pid\":0,\"tid\":%d,\"ts\":%d,\"dur\":1},\n", i % 4000, i, i;
             print "{\"ph\":\"X\",\"name\":\"a\",\"pid\":0,\"tid\":0,\"ts\":0,\"dur\":1}]" }' > "$tmp/lanes.json"
if [ -x /usr/bin/time ]; then
  peak=$(/usr/bin/time -f %M "$jqtrace" stats -q -j 1 "$tmp/lanes.json" 2>&1 > /dev/null | tail -n 1)
  [ "$peak" -lt 1200000 ] || { echo "FAIL: stats of 100k lanes x 4k names peaked at $peak KB"; failures=$((failures + 1)); }
else
  echo "note: /usr/bin/time not installed: the memory bound of many lanes x many names is not checked"
fi
echo "bounded work: $failures failed"
[ $failures -eq 0 ]
