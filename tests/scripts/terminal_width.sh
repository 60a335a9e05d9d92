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

for args in "stats samples/decode-small.trace.json" "markers --kind token samples/decode-small.trace.json" \
            "gaps samples/decode-small.trace.json" "latency samples/decode-small.trace.json" \
            "latency --per-unit token samples/decode-small.trace.json" "diff samples/decode-small.trace.json samples/legacy-small.trace.json" \
            "diff samples/decode-small.trace.json samples/decode-small.trace.json"; do
  # shellcheck disable=SC2086  # the argument strings are split on purpose
  fitted=$(on_tty 80 $args)
  [ -n "$fitted" ] || { fail "$args: no output on a terminal"; continue; }
  w=$(widest <<< "$fitted")
  [ "$w" -le 80 ] || fail "$args: a line of $w columns on an 80-column terminal"
  # shellcheck disable=SC2086
  piped=$(COLUMNS=80 LC_ALL=C.UTF-8 "$jqtrace" $args 2>/dev/null | widest)
  if [ "$piped" -gt 80 ]; then
    grep -q "hidden to fit 80 columns" <<< "$fitted" || fail "$args: columns hidden without saying so"
  fi
done
# Piped, nothing is cut: the stats table keeps every distribution column.
COLUMNS=40 "$jqtrace" stats samples/decode-small.trace.json | grep -q "p95_us.*p99_us.*max_us" ||
  fail "a pipe got a table cut to COLUMNS"
# A wide terminal shows everything.
on_tty 300 stats samples/decode-small.trace.json | grep -q "hidden" && fail "a 300-column terminal hid columns"
echo "terminal_width: $failures failed"
[ "$failures" -eq 0 ]
