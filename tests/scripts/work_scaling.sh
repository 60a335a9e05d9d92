#!/usr/bin/env bash
# Work grows linearly with hostile inputs: each shape is run at N and 2N events under
# callgrind, whose instruction count is a counter, not a timer (the same on a busy machine),
# and the count must roughly double (at most 2.4x; a quadratic pass would give ~4x).
# Shapes that were once quadratic: distinct process ids, distinct instant names (every one a
# marker kind), many chains in gaps, many lanes, distinct span names in a timeline, many
# lanes with many units (each unit's stats walked every lane), a window of many names (each
# event read back checked every name), a report of many instant names (each kind's section
# listed every kind), units under deep nesting (each unit walked every span open across it).
# build.sh installs valgrind for the tests.
source "$(dirname "$0")/lib/prelude.bash"
if ! command -v valgrind > /dev/null; then
  echo "work_scaling: skipped: valgrind is not installed (bash build.sh test installs it)"
  exit 77
fi

measure_plain_build work_scaling

# instructions ARGS...: what jqtrace ARGS executes, from callgrind's "Collected" line.
instructions() {
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$jqtrace" "$@" 2>&1 > /dev/null |
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
# scaled NAME GENERATOR ARGS...: GENERATOR N writes a trace of N items to stdout.
scaled() {
  local name=$1 generator=$2; shift 2
  "$generator" 20000 > "$tmp/n.json"
  "$generator" 40000 > "$tmp/2n.json"
  doubles_at_most "$name" "$(instructions "$@" "$tmp/n.json")" "$(instructions "$@" "$tmp/2n.json")"
}
# doubles_at_most NAME ONE TWO: the work at N and at 2N must grow at most 2.4 times.
doubles_at_most() {
  local name=$1 one=$2 two=$3
  if [ -z "$one" ] || [ -z "$two" ]; then fail "$name: no instruction count"; return; fi
  local ratio
  ratio=$(awk -v a="$one" -v b="$two" 'BEGIN { printf "%.2f", b / a }')
  echo "$name: $one -> $two instructions (x$ratio for twice the input)"
  awk -v r="$ratio" 'BEGIN { exit !(r <= 2.4) }' || fail "$name: twice the input cost x$ratio the work"
}

processes() {
  awk -v n="$1" 'BEGIN { printf "["; for (i = 0; i < n; i++) printf "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"args\":{\"name\":\"p\"}},\n", i;
                         print "{\"ph\":\"X\",\"name\":\"a\",\"pid\":0,\"tid\":0,\"ts\":0,\"dur\":1}]" }'
}
kinds() {
  awk -v n="$1" 'BEGIN { printf "["; for (i = 0; i < n; i++) printf "{\"ph\":\"i\",\"name\":\"k%d\",\"pid\":0,\"tid\":0,\"ts\":%d},\n", i, i;
                         print "{\"ph\":\"X\",\"name\":\"a\",\"pid\":0,\"tid\":0,\"ts\":0,\"dur\":1}]" }'
}
chains() {
  awk -v n="$1" 'BEGIN { printf "{\"traceEvents\":[\n";
    for (c = 1; c <= n; c++) printf "{\"ph\":\"X\",\"name\":\"publish\",\"pid\":0,\"tid\":3,\"ts\":%d,\"dur\":1,\"args\":{\"stage\":2,\"arg\":2,\"chain\":%d}},\n{\"ph\":\"X\",\"name\":\"chunk\",\"pid\":0,\"tid\":%d,\"ts\":%d,\"dur\":1,\"args\":{\"stage\":0,\"arg\":0,\"chain\":%d}},\n{\"ph\":\"X\",\"name\":\"chunk\",\"pid\":0,\"tid\":%d,\"ts\":%d,\"dur\":1,\"args\":{\"stage\":1,\"arg\":0,\"chain\":%d}},\n", 4 * c, c, c % 3, 4 * c + 1, c, (c + 1) % 3, 4 * c + 2, c;
    print "{\"ph\":\"X\",\"name\":\"a\",\"pid\":0,\"tid\":0,\"ts\":0,\"dur\":1}]}" }'
}
names() {
  awk -v n="$1" 'BEGIN { printf "["; for (i = 0; i < n; i++) printf "{\"ph\":\"X\",\"name\":\"s%d\",\"pid\":0,\"tid\":0,\"ts\":%d,\"dur\":1},\n", i, 2 * i;
                         print "{\"ph\":\"X\",\"name\":\"a\",\"pid\":0,\"tid\":0,\"ts\":0,\"dur\":1}]" }'
}
lanes() {
  awk -v n="$1" 'BEGIN { printf "["; for (i = 0; i < n; i++) printf "{\"ph\":\"X\",\"name\":\"n%d\",\"pid\":0,\"tid\":%d,\"ts\":%d,\"dur\":1},\n", i % 4000, i, i;
                         print "{\"ph\":\"X\",\"name\":\"a\",\"pid\":0,\"tid\":0,\"ts\":0,\"dur\":1}]" }'
}
# Half the items lanes of one span, half token markers: twice the input is twice the lanes
# and twice the units.
lanes_and_units() {
  awk -v n="$1" 'BEGIN { printf "["; for (i = 0; i < n / 2; i++) printf "{\"ph\":\"X\",\"name\":\"n%d\",\"pid\":0,\"tid\":%d,\"ts\":%d,\"dur\":1},\n{\"ph\":\"i\",\"name\":\"token\",\"pid\":0,\"tid\":0,\"ts\":%d,\"s\":\"t\"},\n", i % 40, i, i, 2 * i;
                         print "{\"ph\":\"X\",\"name\":\"a\",\"pid\":0,\"tid\":0,\"ts\":0,\"dur\":1}]" }'
}
# One lane nested N/2 deep (B... then E...), and a tick marker every 200 events: twice the
# input is twice the depth and twice the units, every one inside every span.
nested() {
  awk -v n="$1" 'BEGIN { h = n / 2; printf "[";
    for (i = 0; i < h; i++) printf "{\"ph\":\"B\",\"name\":\"d%d\",\"cat\":\"c%d\",\"pid\":0,\"tid\":0,\"ts\":%d},\n", i % 100, i % 10, i;
    for (i = 0; i < h; i++) printf "{\"ph\":\"E\",\"pid\":0,\"tid\":0,\"ts\":%d},\n", h + i;
    for (i = 0; i < n / 200; i++) printf "{\"ph\":\"i\",\"name\":\"tick\",\"s\":\"t\",\"pid\":0,\"tid\":0,\"ts\":%d},\n", i * 200;
    print "{\"ph\":\"X\",\"name\":\"a\",\"pid\":0,\"tid\":0,\"ts\":0,\"dur\":1}]" }'
}

scaled "stats, distinct process ids" processes stats -q -j 1
scaled "markers, distinct instant names" kinds markers -q -j 1
scaled "gaps, many chains" chains gaps -q -j 1
scaled "validate, many chains" chains validate -q -j 1
scaled "stats --by name, many lanes" lanes stats -q -j 1 --by name
scaled "timeline --by name, distinct names" names timeline -q -j 1 --by name -o /dev/null
scaled "markers --kind, many lanes and many units" lanes_and_units markers -q -j 1 --kind token
scaled "window, distinct names" names window -q -j 1 --us 0 1000000
scaled "report, distinct instant names" kinds report -q -j 1 -o /dev/null
scaled "timeline, distinct instant names" kinds timeline -q -j 1 -o /dev/null
scaled "markers --kind, units under deep nesting" nested markers -q -j 1 --kind tick
# diff of generic traces whose every instant name is a kind (issue 54): each kind's units
# were measured by a walk of their own over the spans (200,000 spans and 20,000 names: 279
# s), now every kind's units in one walk, and kinds of too few units not at all.
spans_and_kinds() {
  awk -v n="$1" 'BEGIN { printf "["; for (i = 0; i < n; i++) { printf "{\"ph\":\"X\",\"name\":\"s\",\"cat\":\"c%d\",\"pid\":0,\"tid\":0,\"ts\":%d,\"dur\":1},\n", i % 5, 2 * i;
                           if (i % 4 == 0) printf "{\"ph\":\"i\",\"name\":\"k%d\",\"pid\":0,\"tid\":0,\"ts\":%d},\n", i, 2 * i }
                         print "{\"ph\":\"X\",\"name\":\"a\",\"pid\":0,\"tid\":0,\"ts\":0,\"dur\":1}]" }'
}
spans_and_kinds 20000 > "$tmp/kinds-n.json"
spans_and_kinds 40000 > "$tmp/kinds-2n.json"
doubles_at_most "diff, distinct instant names among spans" \
  "$(instructions diff -q -j 1 "$tmp/kinds-n.json" "$tmp/kinds-n.json")" \
  "$(instructions diff -q -j 1 "$tmp/kinds-2n.json" "$tmp/kinds-2n.json")"
# Pooled diff (--vs) of kinds whose units overlap every other kind's spans (issue 66): a
# unit's busy time came from a walk of its own spans, a span once for every unit over it,
# and the kinds' joint rules were searched kind by kind (10,000 -> 20,000 kinds took 3.5x).
# Now the units' edges cut the trace into pieces measured once, a unit summing its pieces.
overlapping_kinds() {  # $1 kinds, $2 seed: three rounds of a marker and a span each
  awk -v n="$1" -v seed="$2" 'BEGIN { srand(seed); printf "["; t = 0;
    for (r = 0; r < 3; r++) for (k = 0; k < n; k++) {
      printf "{\"ph\":\"i\",\"name\":\"k%d\",\"pid\":0,\"tid\":0,\"ts\":%d},\n", k, t;
      printf "{\"ph\":\"X\",\"name\":\"s\",\"cat\":\"c%d\",\"pid\":0,\"tid\":1,\"ts\":%d,\"dur\":%d},\n", k % 5, t + 1, 1 + int(rand() * 3);
      t += 5 }
    print "{\"ph\":\"X\",\"name\":\"a\",\"pid\":0,\"tid\":0,\"ts\":0,\"dur\":1}]" }'
}
for n in 1000 2000; do
  for seed in 1 2 3 4; do overlapping_kinds $n $seed > "$tmp/pool-$n-$seed.json"; done
done
doubles_at_most "pooled diff --vs, kinds overlapping every other kind" \
  "$(instructions diff -q -j 1 "$tmp"/pool-1000-{1,2}.json --vs "$tmp"/pool-1000-{3,4}.json)" \
  "$(instructions diff -q -j 1 "$tmp"/pool-2000-{1,2}.json --vs "$tmp"/pool-2000-{3,4}.json)"
# A window of a whole trace writes each event's own text, counting its lanes from the index:
# about the work of reading the trace once (validate), not a second parse of every event
# (which made it 3.47x validate's work on 40,000 chains; now 1.22x).
chains 40000 > "$tmp/whole.json"
read_once=$(instructions validate -q -j 1 "$tmp/whole.json")
whole=$(instructions window -q -j 1 --us 0 1000000000 -o /dev/null "$tmp/whole.json")
if [ -z "$read_once" ] || [ -z "$whole" ]; then
  fail "window of the whole trace: no instruction count"
else
  ratio=$(awk -v a="$read_once" -v b="$whole" 'BEGIN { printf "%.2f", b / a }')
  echo "window of the whole trace: $whole instructions, x$ratio validate's ($read_once)"
  awk -v r="$ratio" 'BEGIN { exit !(r <= 1.5) }' || fail "window of the whole trace: x$ratio validate's work"
fi
echo "work_scaling: $failures failed"
[ "$failures" -eq 0 ]
