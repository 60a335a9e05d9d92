#!/usr/bin/env bash
# --junit FILE: the gates as JUnit XML (a testcase a gate) for a CI's test view, on every
# command with gates; well-formed (xmllint when installed), a failure a tripped gate, an
# error a gate that was not checked, exit 3 when it cannot be written, exit 2 (and nothing
# written) when it names the trace being read.
source "$(dirname "$0")/lib/prelude.bash"
small=samples/decode-small.trace.json
well_formed() {  # well_formed NAME FILE
  [ -s "$2" ] || { fail "$1: no JUnit file"; return; }
  if command -v xmllint > /dev/null; then xmllint --noout "$2" 2> /dev/null || fail "$1: not well-formed XML"; fi
}
# jqtrace ARGS... with --junit $tmp/NAME.xml; want status.
gated() {
  local name=$1 want=$2; shift 2
  "$jqtrace" "$@" -q --junit "$tmp/$name.xml" > /dev/null 2> "$tmp/$name.err"
  local got=$?
  [ $got -eq "$want" ] || fail "$name: exit $got, want $want: $(cat "$tmp/$name.err")"
  well_formed "$name" "$tmp/$name.xml"
}
gated stats 1 stats --fail-if 'share(moe experts) > 40' --fail-if 'idle < 10' "$small"
grep -q '<testsuite name="jqtrace stats" tests="2" failures="1" errors="0" skipped="0">' "$tmp/stats.xml" || fail "stats: the suite's counts"
grep -q '<testcase classname="jqtrace.stats" name="share(moe experts) &gt; 40"><failure message="gate failed: share(moe experts) = 41.8 &gt; 40">' \
  "$tmp/stats.xml" || fail "stats: the tripped gate is not a failure"
grep -q '<testcase classname="jqtrace.stats" name="idle &lt; 10"><system-out>passed: idle = 66.6 (fails when idle &lt; 10)' \
  "$tmp/stats.xml" || fail "stats: the gate that passed"
gated markers 0 markers --fail-if 'units(layer) < 5' "$small"
grep -q 'tests="1" failures="0" errors="0"' "$tmp/markers.xml" || fail "markers: the suite's counts"
gated phases 1 phases --fail-if 'share(verify) > 60' tests/data/phases.log
grep -q '<testsuite name="jqtrace phases" tests="1" failures="1"' "$tmp/phases.xml" || fail "phases: the suite's counts"
# diff's gates pass, fail or cannot judge: 12 layers a side (3 of each arg, compared arg by
# arg) leave the interval [-3.5, 3.6] about no change, which rules 5 out but not 2; a gate
# that cannot judge is a skipped test case with the reason (exit 2), or what --inconclusive says.
gated diff 0 diff --fail-if 'slower(layer) > 5' "$small" "$small"
grep -q '<testcase classname="jqtrace.diff" name="slower(layer) &gt; 5"><system-out>passed: slower(layer) = 0' "$tmp/diff.xml" ||
  fail "diff: the gate's testcase"
gated undecided 2 diff --fail-if 'slower(layer) > 2' --fail-if 'slower(layer) > 5' "$small" "$small"
grep -q 'tests="2" failures="0" errors="0" skipped="1"' "$tmp/undecided.xml" || fail "diff: an undecided gate is not counted skipped"
grep -q '<testcase classname="jqtrace.diff" name="slower(layer) &gt; 2"><skipped message="cannot judge: slower(layer) = 0 \[-3.5, 3.6\] &gt; 2 (layer/(unit): x1.000, p_adj 1 over 1 gated row, within 4 strata): its 95% interval \[-3.5, 3.6\] straddles 2"/>' \
  "$tmp/undecided.xml" || fail "diff: the undecided gate's testcase: $(cat "$tmp/undecided.xml")"
gated inconclusive 0 diff --inconclusive pass --fail-if 'slower(layer) > 2' "$small" "$small"
grep -q '<system-out>passed (--inconclusive pass): slower(layer)' "$tmp/inconclusive.xml" || fail "diff: --inconclusive pass in JUnit"
gated latency 0 latency --fail-if 'latency(outside) > 90' "$small"
gated report 0 report --fail-if 'idle > 99' -o "$tmp/report.html" "$small"
# A cut-off trace: the gates are not checked (exit 1), each an error saying why.
gated truncated 1 stats --fail-if 'idle < 10' samples/truncated.trace.json
grep -q 'errors="1"' "$tmp/truncated.xml" && grep -q '<error message="not checked: the trace is cut off' "$tmp/truncated.xml" ||
  fail "a cut-off trace's gates are not errors"
# No gates, no file; a file that cannot be written is an output error (3).
"$jqtrace" stats -q --junit "$tmp/none.xml" "$small" > /dev/null || fail "no gates: exit $?"
[ ! -e "$tmp/none.xml" ] || fail "a JUnit file without gates"
"$jqtrace" stats -q --fail-if 'idle < 10' --junit /nonexistent/dir/j.xml "$small" > /dev/null 2> "$tmp/err"
status=$?
[ $status -eq 3 ] && grep -q "jqtrace: /nonexistent/dir/j.xml: cannot write: No such file or directory" "$tmp/err" ||
  fail "unwritable --junit: exit $status: $(cat "$tmp/err")"
# Written as -o is: never over the trace being read (it overwrote it with the XML, exit 0).
cp samples/tiny.trace.json "$tmp/victim.json"
"$jqtrace" stats -q --fail-if 'idle < 1' --junit "$tmp/victim.json" "$tmp/victim.json" > /dev/null 2> "$tmp/err"
status=$?
[ $status -eq 2 ] && grep -q "jqtrace: --junit $tmp/victim.json: that is the trace being read; refusing to overwrite it" "$tmp/err" ||
  fail "--junit over its input: exit $status: $(cat "$tmp/err")"
cmp -s samples/tiny.trace.json "$tmp/victim.json" || fail "--junit overwrote the trace it read"
echo "junit: $failures failed"
[ "$failures" -eq 0 ]
