#!/usr/bin/env bash
# Tables fit a terminal and are never cut anywhere else: run through script(1) so that
# stdout is a pseudo-terminal COLUMNS wide, and through a pipe.
source "$(dirname "$0")/lib/prelude.bash"
if ! command -v script > /dev/null; then
  echo "terminal_width: skipped: script(1) (util-linux) is not installed"
  exit 77
fi
# on_tty COLUMNS ARGS...: jqtrace's stdout as a terminal of that width (stderr dropped).
on_tty() {
  local columns=$1; shift
  local command="COLUMNS=$columns NO_COLOR=1 LC_ALL=C.UTF-8 $(printf '%q ' "$jqtrace" "$@") 2>/dev/null"
  script -qec "$command" /dev/null | tr -d '\r'
}
widest() { LC_ALL=C.UTF-8 wc -L; }  # display columns of the widest line

# Every command's default table, and the widest ones (gaps, latency --per-unit, diff of units).
for args in "stats samples/decode-small.trace.json" "stats --by lane samples/decode-small.trace.json" \
            "markers samples/decode-small.trace.json" "markers --kind token samples/decode-small.trace.json" \
            "gaps samples/decode-small.trace.json" "latency samples/decode-small.trace.json" \
            "latency --per-unit token samples/decode-small.trace.json" "phases tests/data/phases.log" \
            "diff samples/decode-small.trace.json samples/legacy-small.trace.json" \
            "diff samples/decode-small.trace.json samples/decode-small.trace.json"; do
  # shellcheck disable=SC2086  # the argument strings are split on purpose
  fitted=$(on_tty 80 $args)
  [ -n "$fitted" ] || { fail "$args: no output on a terminal"; continue; }
  w=$(widest <<< "$fitted")
  [ "$w" -le 80 ] || fail "$args: a line of $w columns on an 80-column terminal"
  # shellcheck disable=SC2086
  piped=$(COLUMNS=80 LC_ALL=C.UTF-8 "$jqtrace" $args 2>/dev/null | widest)
  if [ "$piped" -gt 80 ]; then
    tr '\n' ' ' <<< "$fitted" | grep -q "to fit 80 columns" || fail "$args: columns hidden without saying so"
  fi
done
# markers at 100 columns keeps the units' distribution (count, rule, p50, p90, max): auto's
# evidence is a note under the table, not a column that took the width (issue 65).
shown=$(on_tty 100 markers samples/decode-small.trace.json)
header=$(grep -m1 '^kind' <<< "$shown")
for word in count unit_at p50_us p90_us max_us; do
  grep -qw "$word" <<< "$header" || fail "markers at 100 columns: no $word column: $header"
done
grep -q "^unit_at auto's evidence: token: head" <<< "$shown" || fail "markers at 100 columns: no evidence note"
# validate's table of rules fits; its verdicts and diagnostics are "FILE:LINE:COLUMN: ..."
# lines that editors and scripts parse, never wrapped.
validated=$(on_tty 80 validate samples/decode-small.trace.json samples/broken.trace.json | grep -v "^samples/")
[ -n "$validated" ] || fail "validate printed no table of rules"
[ "$(widest <<< "$validated")" -le 80 ] || fail "validate: a table line wider than 80 columns"
# The first column stays whole: the markers' durations table cut "unit duration" to "unit du…".
on_tty 80 markers --kind token samples/decode-small.trace.json | grep -q "^unit duration " ||
  fail "markers' unit-duration table lost its first column's header at 80 columns"
# gaps at 100 columns: every metric of the chain classes and stages, as p50, p90 and max,
# with no column hidden; a key equal to its name is shown once; --wide keeps every part.
gaps100=$(on_tty 100 gaps samples/decode-small.trace.json)
[ "$(widest <<< "$gaps100")" -le 100 ] || fail "gaps: a line wider than 100 columns"
for metric in wall_us publish_us first_claim_us "first_claim min" span_us busy_us eff_par lanes last_chunk_us \
              gap_from_prev_us; do
  grep -q "$metric" <<< "$gaps100" || fail "gaps at 100 columns does not show $metric"
done
grep -q "columns hidden" <<< "$gaps100" && fail "gaps at 100 columns hid columns"
grep -q "^name  *n  *chunks/chain  *wall_us p50  *p90  *max" <<< "$gaps100" ||
  fail "gaps' chain classes at 100 columns: not 'name n chunks/chain wall_us p50 p90 max'"
grep -q "^stages (continued)" <<< "$gaps100" || fail "gaps' stages were not split into blocks at 100 columns"
grep -q "distributions show p50, p90 and max" <<< "$gaps100" || fail "gaps did not say its distributions are cut"
wide=$(on_tty 100 gaps --wide samples/decode-small.trace.json)
grep -q "p95.*p99" <<< "$wide" || fail "gaps --wide lost p95 and p99"
[ "$(widest <<< "$wide")" -le 100 ] || fail "gaps --wide: a line wider than 100 columns"
# diff's changes table at 80 columns keeps what a person asks "is it slower?" for whole:
# group, medians, the change with its interval, p_adj (the interval was cut, p_adj dropped).
gen=$2
"$gen" --seed 1 -o "$tmp/same1.json" 2> /dev/null
"$gen" --seed 3 --scale 3=1.3 -o "$tmp/heavy3.json" 2> /dev/null
changes=$(on_tty 80 diff "$tmp/same1.json" "$tmp/heavy3.json" | sed -n '/^kind /,/^$/p')
grep -q "^kind  *group  *median_a_us  *median_b_us  *change  *p_adj$" <<< "$changes" ||
  fail "diff's changes at 80 columns: not 'kind group median_a_us median_b_us change p_adj': $(head -1 <<< "$changes")"
grep -qE "^layer +ffn chain +[0-9.]+ +[0-9.]+ +\+[0-9.]+% \[\+[0-9.]+, \+[0-9.]+\] +[0-9.e-]+$" <<< "$changes" ||
  fail "diff's changes at 80 columns: the ffn chain row's interval or p_adj is not whole"
# Piped, nothing is cut: the stats table keeps every distribution column.
COLUMNS=40 "$jqtrace" stats samples/decode-small.trace.json | grep -q "p95_us.*p99_us.*max_us" ||
  fail "a pipe got a table cut to COLUMNS"
# A wide terminal shows everything.
on_tty 300 stats samples/decode-small.trace.json | grep -q "hidden" && fail "a 300-column terminal hid columns"
echo "terminal_width: $failures failed"
[ "$failures" -eq 0 ]
