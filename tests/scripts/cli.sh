#!/usr/bin/env bash
# The command line behaves like the tools people keep: option typos get a "did you mean",
# `help CMD` and -V work, every command's help ends with examples and speaks no internal
# words, a missing trace argument reads a piped stdin (and says what is missing on a
# terminal), and -q hides warnings.
source "$(dirname "$0")/lib/prelude.bash"

# expect STATUS STDERR-SUBSTRING ARGS...
expect() {
  local want=$1 message=$2; shift 2
  local err status
  err=$("$jqtrace" "$@" 2>&1 > /dev/null < /dev/null)
  status=$?
  [ $status -eq "$want" ] && grep -qF -- "$message" <<< "$err" ||
    fail "jqtrace $*: exit $status (want $want), stderr: $(head -2 <<< "$err")"
}
expect 2 "unknown option '--fromat'; did you mean '--format'?" stats --fromat csv samples/tiny.trace.json
expect 2 "Run 'jqtrace stats --help' for usage." stats --fromat csv samples/tiny.trace.json
expect 2 "unknown option '--kidn'; did you mean '--kind'?" markers --kidn token samples/tiny.trace.json
expect 2 "unknown option '-x'" validate -x samples/tiny.trace.json
expect 2 "unknown command 'stast'; did you mean 'stats'?" stast samples/tiny.trace.json
"$jqtrace" stats --us -5 10 samples/tiny.trace.json > /dev/null || fail "a negative number was taken for an option"
"$jqtrace" stats -j1 -q samples/tiny.trace.json > /dev/null || fail "-j1 was taken for an unknown option"

# help and version
[ "$("$jqtrace" help stats)" = "$("$jqtrace" stats --help)" ] || fail "jqtrace help stats differs from stats --help"
"$jqtrace" help > /dev/null || fail "jqtrace help exited $?"
for flag in -V --version; do
  out=$("$jqtrace" $flag)
  grep -qE '^jqtrace [0-9]+\.[0-9]+\.[0-9]+( \(commit [0-9a-f]+\))?$' <<< "$(head -1 <<< "$out")" ||
    fail "$flag: first line '$(head -1 <<< "$out")'"
  grep -qE '^built with RapidJSON [0-9.]+, fmt [0-9.]+, zlib [0-9.]+' <<< "$out" || fail "$flag: no library versions"
done
grep -q "project(jqtrace VERSION $("$jqtrace" -V | head -1 | cut -d' ' -f2) " CMakeLists.txt ||
  fail "--version does not print CMakeLists.txt's version"
for cmd in $("$jqtrace" --help | awk '/^Subcommands:/{on=1; next} on && /^ +[a-z]/ {print $1}'); do
  help=$("$jqtrace" "$cmd" --help)
  grep -q '^Examples:' <<< "$help" || fail "$cmd --help has no examples"
  grep -q 'SPEC' <<< "$help" && fail "$cmd --help speaks of the SPEC"
done

# no trace argument: a piped stdin is read; a terminal gets told what is missing
[ "$("$jqtrace" stats < samples/tiny.trace.json | tail -n +2)" = "$("$jqtrace" stats samples/tiny.trace.json | tail -n +2)" ] ||
  fail "stats without FILE did not read the piped stdin"
"$jqtrace" validate < samples/tiny.trace.json > /dev/null || fail "validate without FILE did not read stdin"
if command -v script > /dev/null; then
  out=$(script -qec "'$jqtrace' stats" /dev/null)
  grep -q "stats: no trace given" <<< "$out" || fail "stats on a terminal without FILE: '$out'"
fi

# -q hides warnings: validate lists errors only (the summary still counts the warnings)
out=$("$jqtrace" validate -q samples/ring-full.trace.json)
grep -q ': warning: ' <<< "$out" && fail "validate -q printed warnings"
grep -q '29 warnings' <<< "$out" || fail "validate -q lost the warning count"
"$jqtrace" validate -q --strict samples/ring-full.trace.json | grep -q ': warning: ' ||
  fail "validate -q --strict hid the warnings that fail it"
[ -z "$("$jqtrace" stats -q samples/truncated.trace.json 2>&1 > /dev/null)" ] || fail "stats -q printed a warning"
# --timings: every command's phases on stderr, its stdout unchanged, at -j 1 and -j 2.
for j in 1 2; do
  for command in "validate" "stats" "stats --marker token 1" "gaps" "latency" "markers" "window --marker token 1" "timeline"; do
    # shellcheck disable=SC2086  # the command is several words
    plain=$("$jqtrace" $command -q -j $j samples/decode-small.trace.json 2> /dev/null | md5sum)
    # shellcheck disable=SC2086
    timed=$("$jqtrace" $command -q -j $j --timings samples/decode-small.trace.json 2> "$tmp/timings.txt" | md5sum)
    [ "$plain" = "$timed" ] || fail "$command -j $j: --timings changed standard output"
    grep -q '^  parse ' "$tmp/timings.txt" || fail "$command -j $j --timings: no parse phase"
    grep -q '^  serial share [0-9.]*% ' "$tmp/timings.txt" || fail "$command -j $j --timings: no serial share"
  done
done
"$jqtrace" stats -q --timings samples/decode-small.trace.json 2>&1 > /dev/null | grep -q 'analysis' ||
  fail "stats --timings: no analysis phase"

echo "cli: $failures failed"
[ $failures -eq 0 ]
