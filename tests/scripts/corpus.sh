#!/usr/bin/env bash
# Every trace in ../shared/corpus (real jobque tracer output and Chrome traces) must read
# without a crash and with the verdict below. The corpus is not part of the repo: when it
# is absent (a user's clone) this test is skipped, and says so.
set -u
jqtrace=$1
corpus=../shared/corpus
if [ ! -d "$corpus" ]; then
  echo "SKIP: $corpus not found (it ships beside the repo, not in it)"
  exit 77
fi
# file | expected summary line of `jqtrace validate` (after "FILE: ")
expected=$(cat <<'TABLE'
jobque/decode-t12-l32-w2.trace.json.gz|valid jobque trace (19374 events, 0 errors, 0 warnings)
jobque/decode-t16-l16-w4-legacy-tags.trace.json.gz|valid jobque trace (19004 events, 0 errors, 0 warnings)
jobque/decode-t8-l16-w2-spin0.trace.json.gz|valid jobque trace (7417 events, 0 errors, 0 warnings)
chrome/async_begin_end.json|valid trace (35 events, 0 errors, 0 warnings)
chrome/big_trace.json|valid trace (1866 events, 0 errors, 0 warnings)
chrome/flow_simple.json|valid trace (10 events, 0 errors, 0 warnings)
chrome/instance_counters.json|valid trace (12 events, 0 errors, 0 warnings)
chrome/instant_events.json|valid trace (5 events, 0 errors, 0 warnings)
chrome/main_thread_has_unclosed_slices.json|valid trace (3386 events, 0 errors, 4 warnings)
chrome/nanoseconds.json|valid trace (16 events, 0 errors, 0 warnings)
chrome/simple_trace.json|valid trace (37 events, 0 errors, 0 warnings)
chrome/simple_trace_gz.gz|valid trace (35 events, 0 errors, 0 warnings)
chrome/tall_trace.json|valid trace (39 events, 0 errors, 0 warnings)
chrome/trivial_trace.json|valid trace (4 events, 0 errors, 0 warnings)
chrome/x_event_trace.json|valid trace (4027 events, 0 errors, 0 warnings)
TABLE
)
failures=0
checked=0
while IFS='|' read -r file verdict; do
  path="$corpus/$file"
  if [ ! -f "$path" ]; then
    echo "FAIL: $path is missing from the corpus"
    failures=$((failures + 1))
    continue
  fi
  got=$(NO_COLOR=1 "$jqtrace" validate --max-errors 0 "$path")
  status=$?
  summary=$(printf '%s\n' "$got" | grep -F "$path: " | grep -v ": error: \|: warning: " | tail -n 1)
  if [ "$summary" != "$path: $verdict" ] || [ $status -ne 0 ]; then
    echo "FAIL: $file: exit $status, got '$summary', expected '$verdict'"
    failures=$((failures + 1))
  fi
  checked=$((checked + 1))
done <<< "$expected"
# Anything new in the corpus must at least not crash or hang.
for path in "$corpus"/*/*; do
  case "$path" in *.md) continue ;; esac
  timeout 60 "$jqtrace" validate -q "$path" > /dev/null
  status=$?
  if [ $status -gt 3 ]; then
    echo "FAIL: $path: exit status $status"
    failures=$((failures + 1))
  fi
done
echo "corpus: $checked files checked, $failures failed"
[ $failures -eq 0 ]
