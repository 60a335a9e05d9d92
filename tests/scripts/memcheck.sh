#!/usr/bin/env bash
# Every command under valgrind's memcheck on a sample: no read of an unset value, no
# invalid access, no leak of note (the plain Release build: the sanitizer build CI tests
# cannot run under valgrind). A jump on an empty optional's unset value in the choice of
# output format was found so (-o with no extension). build.sh installs valgrind for the
# tests.
source "$(dirname "$0")/lib/prelude.bash"
if ! command -v valgrind > /dev/null; then
  echo "memcheck: skipped: valgrind is not installed (bash build.sh test installs it)"
  exit 77
fi
measure_plain_build memcheck

sample=samples/tiny.trace.json
while IFS= read -r command; do
  # shellcheck disable=SC2086  # the command's words
  valgrind --error-exitcode=99 --leak-check=no -q "$jqtrace" $command -q -j 2 > /dev/null 2> "$tmp/err"
  status=$?
  if [ $status -eq 99 ] || grep -q '^==[0-9]*==' "$tmp/err"; then
    fail "memcheck: jqtrace $command (exit $status):"
    grep -m 8 '^==' "$tmp/err"
  fi
done << COMMANDS
validate $sample
stats $sample
stats --by lane --hist --format json $sample
stats --by name --format md $sample
markers $sample
markers --kind token --format csv $sample
gaps --format json $sample
latency --per-unit layer --format json $sample
window --rebase --marker token 1 $sample
window --format csv --us 0 1e9 $sample
timeline $sample -o $tmp/t.svg
report $sample -o $tmp/r.html
diff $sample $sample
COMMANDS
echo "memcheck: $failures failed"
[ "$failures" -eq 0 ]
