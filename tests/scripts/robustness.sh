#!/usr/bin/env bash
# Inputs that must fail cleanly: an exit status of 1 or 3 with a pointed message, never a
# signal, never a hang.
set -u
jqtrace=$1
gen=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

# expect NAME STATUS MESSAGE-SUBSTRING: runs validate on $tmp/NAME
expect() {
  local name=$1 want=$2 message=$3
  local out status
  out=$(timeout 30 "$jqtrace" validate "$tmp/$name" 2>&1)
  status=$?
  if [ $status -ne "$want" ] || ! grep -qF -- "$message" <<< "$out"; then
    echo "FAIL: $name: exit $status (want $want), output:"
    echo "$out" | head -5
    failures=$((failures + 1))
  fi
}

: > "$tmp/empty.json"
expect empty.json 3 "empty.json: error: empty input: no JSON value [not-a-trace]"
printf '\x7fELF\x02\x01\x01\x00\x00\x00\x00\xff\xfe\x00binary' > "$tmp/junk.bin"
expect junk.bin 3 "junk.bin:1:1: error: not JSON: invalid value [json-syntax]"
printf '{"traceEvents":[{"ph":"X","name":"a","ts":NaN,"dur":1}]}' > "$tmp/nan.json"
expect nan.json 3 "nan.json:1:43: error: invalid value [json-syntax]"
printf '{"traceEvents":[{"ph":"X","name":"a","ts":1e400,"dur":1}]}' > "$tmp/huge.json"
expect huge.json 3 "huge.json:1:43: error: number too big [json-syntax]"
head -c 300000 /dev/zero | tr '\0' '[' > "$tmp/nested.json"
expect nested.json 3 "nested.json:1:1002: error: JSON nested deeper than 1000 levels (more than jqtrace reads) [too-deep]"
printf '{"traceEvents":[1,"two",[3],null,true]}' > "$tmp/scalars.json"
expect scalars.json 1 "scalars.json: invalid trace (0 events, 5 errors, 0 warnings)"
"$gen" --tokens 2 --layers 4 | gzip -c > "$tmp/whole.json.gz"
head -c 3000 "$tmp/whole.json.gz" > "$tmp/cut.json.gz"
# A gzip stream cut short is a truncated trace, as a plain file cut short is (exit 1 here).
expect cut.json.gz 1 "complete events); the gzip stream ends early [truncated]"
# Damaged compressed data is unreadable (exit 3), named with the compressed byte it was found at.
cp "$tmp/whole.json.gz" "$tmp/damaged.json.gz"
size=$(stat -c %s "$tmp/damaged.json.gz")
printf 'QQQQQQQQ' | dd of="$tmp/damaged.json.gz" bs=1 seek=$((size / 2)) conv=notrunc status=none
expect damaged.json.gz 3 "error: corrupt gzip data at or after byte "
"$gen" --tokens 2 --layers 4 | zstd -q -c > "$tmp/whole.json.zst"
head -c 5 "$tmp/whole.json.zst" > "$tmp/stub.json.zst"
expect stub.json.zst 3 "error: the zstd stream ends before its first byte of text (the file is cut short) [unreadable]"
{ head -c 40 "$tmp/whole.json.zst"; head -c 2000 /dev/zero | tr '\0' 'Q'; tail -c +2041 "$tmp/whole.json.zst"; } > "$tmp/damaged.json.zst"
expect damaged.json.zst 3 "error: corrupt zstd data at or after byte "
printf '{"traceEvents":[{"ph":"X","name":"a","ts":1,"dur":1}' > "$tmp/cut.json"
expect cut.json 1 "cut.json:1:53: error: the trace is cut off at byte 52 (1 complete events) [truncated]"
printf '{"traceEvents":[{"ph":"X","name":"\xff\xfe","ts":1,"dur":1}]}' > "$tmp/latin1.json"
# Not UTF-8, as JSON text must be: an error (the analyses still run, with \xHH escapes).
expect latin1.json 1 "latin1.json:1:17: error: a string is not valid UTF-8 or holds a NUL; it is read with \\xHH escapes in place of its bad bytes [bad-string]"
{ printf '{"traceEvents":[{"ph":"X","name":"'; head -c 5000000 /dev/zero | tr '\0' 'x'; printf '","ts":1,"dur":1}]}'; } > "$tmp/long.json"
expect long.json 0 "long.json: valid trace (1 event, 0 errors, 0 warnings)"

# Unknown flags and files: usage and input errors, not crashes.
"$jqtrace" validate --max-errors -3 "$tmp/cut.json" > /dev/null 2>&1
[ $? -eq 2 ] || { echo "FAIL: negative --max-errors is not a usage error"; failures=$((failures + 1)); }
# Logs and gate files of any bytes: phases and gates end with 0..3, never a signal or a hang.
head -c 200000 /dev/urandom > "$tmp/random.bin"
{ printf '[t] rounds=1 | a=1\n[t] rounds=2 | (\n[t] rounds=99999999999999999999 | a=1e999\n'; cat "$tmp/random.bin"; } > "$tmp/noisy.log"
for args in "phases $tmp/random.bin" "phases $tmp/noisy.log" "stats --gate-file $tmp/random.bin $tmp/whole.json.gz" \
            "stats --baseline $tmp/random.bin --max-share-delta 1 $tmp/whole.json.gz" \
            "diff $tmp/random.bin $tmp/whole.json.gz" "diff $tmp/whole.json.gz $tmp/cut.json"; do
  # shellcheck disable=SC2086  # args are split on purpose
  timeout 30 "$jqtrace" $args > /dev/null 2>&1
  status=$?
  if [ $status -gt 3 ]; then
    echo "FAIL: jqtrace $args: exit $status"
    failures=$((failures + 1))
  fi
done
# Names with bytes that are not UTF-8 (ff fe, a lone c3, an encoded surrogate) or a NUL:
# every output of every format is valid UTF-8 without NUL bytes (iconv checks), and
# validate reports them (rule bad-string).
printf '{"traceEvents":[\n{"ph":"X","name":"a\xff\xfe","cat":"c\xc3","ts":1,"dur":2,"pid":0,"tid":"t\xed\xa0\x80"},\n{"ph":"X","name":"n\\u0000ul","cat":"ok","ts":2,"dur":2,"pid":0,"tid":1},\n{"ph":"M","name":"thread_name","pid":0,"tid":1,"args":{"name":"w\xc0\xaf"}},\n{"ph":"i","name":"m\xff","ts":3,"pid":0,"tid":1}\n]}\n' > "$tmp/bytes.json"
for args in "stats --by name" "stats --by cat" "stats --by lane" "markers" "markers --kind 'm\\\\xff'" "validate" "diff $tmp/bytes.json"; do
  for format in table csv tsv json; do
    # shellcheck disable=SC2086
    out=$(printf '%b' "$args" | xargs -d '\n' -I{} sh -c "\"$jqtrace\" {} --format $format \"$tmp/bytes.json\"" 2> /dev/null; echo "status=$?")
    if ! printf '%s' "$out" | iconv -f UTF-8 -t UTF-8 > /dev/null 2>&1 || printf '%s' "$out" | grep -qaP '\x00'; then
      echo "FAIL: jqtrace $args --format $format wrote bytes that are not UTF-8, or a NUL"
      failures=$((failures + 1))
    fi
  done
done
"$jqtrace" validate "$tmp/bytes.json" | grep -q "bad-string" || { echo "FAIL: validate does not flag bad strings"; failures=$((failures + 1)); }
# Times at the edges of 64 bits: out-of-range ts and dur are flagged where they enter, and
# durations adding up past 2^62 ns are refused (exit 3); never a negative span.
printf '{"traceEvents":[{"ph":"X","name":"a","ts":-4500000000000000,"dur":1,"pid":0,"tid":0},{"ph":"X","name":"b","ts":4500000000000000,"dur":4500000000000000,"pid":0,"tid":0},{"ph":"X","name":"c","ts":5,"dur":1,"pid":0,"tid":0}]}' > "$tmp/edges.json"
out=$("$jqtrace" stats --format json "$tmp/edges.json" 2> /dev/null)
grep -qE -- '": -[0-9]' <<< "$out" && { echo "FAIL: a negative number from times at the edges"; failures=$((failures + 1)); }
"$jqtrace" validate "$tmp/edges.json" | grep -q "ts is out of range \[bad-ts\]" || { echo "FAIL: ts beyond 2^61 ns not flagged"; failures=$((failures + 1)); }
span='{"ph":"X","name":"a","ts":0,"dur":2000000000000000,"pid":0,"tid":0}'
printf '{"traceEvents":[%s,%s,%s]}' "$span" "$span" "$span" > "$tmp/sum.json"
"$jqtrace" stats "$tmp/sum.json" > /dev/null 2> "$tmp/err"
status=$?
[ $status -eq 3 ] && grep -q "durations add up past 2^62 ns" "$tmp/err" || { echo "FAIL: huge duration sums: exit $status"; failures=$((failures + 1)); }
"$jqtrace" stats --us 0 9000000000000000 "$tmp/edges.json" > /dev/null 2>&1; status=$?
[ $status -eq 2 ] || { echo "FAIL: a --us bound beyond 2^61 ns gave exit $status"; failures=$((failures + 1)); }
# Out of memory is an error and a status, not an abort (it was SIGABRT): under an
# address-space limit too small for a trace's model, exit 3 with a message.
# Sanitizer builds reserve terabytes of address space, so they take the plain build/ beside
# them or skip this check.
memory_jqtrace=$jqtrace
if ldd "$jqtrace" 2> /dev/null | grep -qE 'lib(asan|ubsan)'; then
  memory_jqtrace="$(cd "$(dirname "$0")/../.." && pwd)/build/jqtrace"
  if [ ! -x "$memory_jqtrace" ] || ldd "$memory_jqtrace" 2> /dev/null | grep -qE 'lib(asan|ubsan)'; then
    echo "robustness: out-of-memory check skipped: a sanitizer build and no plain build/jqtrace"
    memory_jqtrace=
  fi
fi
if [ -n "$memory_jqtrace" ]; then
  awk 'BEGIN { printf "{\"traceEvents\":[\n";
    for (i = 0; i < 10000; i++) {
      printf "{\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%d,\"dur\":2,\"name\":\"n\",\"cat\":\"c%d\"},\n", i % 4, i * 3, i % 5000;
      printf "{\"ph\":\"i\",\"pid\":1,\"tid\":0,\"ts\":%d,\"name\":\"tok\",\"s\":\"g\"},\n", i * 3 + 1 }
    printf "{\"ph\":\"i\",\"pid\":1,\"tid\":0,\"ts\":0,\"name\":\"tok\",\"s\":\"g\"}]}\n" }' > "$tmp/wide_units.json"
  # A table, CSV and JSON of these units keep only the shares that are not 0%, CSV and JSON
  # write as they go, and a table shows 25 share columns (every row whole took 5.4 GB for
  # 20,000 units, a table 4 GB): they fit in 600 MB.
  for format in table csv json; do
    (ulimit -v 600000; timeout 120 "$memory_jqtrace" markers --kind tok --format $format -j 2 "$tmp/wide_units.json" > "$tmp/units.$format" 2> "$tmp/err")
    status=$?
    if [ $status -ne 0 ]; then
      echo "FAIL: markers --kind --format $format of 10,000 units by 5,000 categories under 600 MB: exit $status"
      head -3 "$tmp/err"; failures=$((failures + 1))
    fi
  done
  rows=$(wc -l < "$tmp/units.csv")
  columns=$(head -1 "$tmp/units.csv" | tr ',' '\n' | grep -c '^share_pct\.')
  if [ "$rows" -ne 10002 ] || [ "$columns" -ne 5000 ]; then
    echo "FAIL: the units' CSV has $rows lines (want 10,002) and $columns share columns (want 5,000)"; failures=$((failures + 1))
  fi
  grep -q "Shares of the 25 busiest of 5000 categories" "$tmp/units.table" ||
    { echo "FAIL: the units' table does not say it shows 25 of 5000 share columns"; failures=$((failures + 1)); }
  # gaps over one class of 20,000 chains whose chunks carry stages no other chain has
  # (60,000 stages): a stage's samples are as many as its chains, never room reserved for
  # every chain of the class (that took ~21 GB of address space). It fits in 600 MB.
  awk 'BEGIN { printf "{\"traceEvents\":[\n";
    for (c = 1; c <= 20000; c++) {
      printf "{\"ph\":\"X\",\"pid\":0,\"tid\":9,\"ts\":%d,\"dur\":1,\"name\":\"publish\",\"args\":{\"stage\":3,\"arg\":3,\"chain\":%d}},\n", c * 10, c;
      for (s = 0; s < 3; s++)
        printf "{\"ph\":\"X\",\"pid\":0,\"tid\":%d,\"ts\":%d,\"dur\":2,\"name\":\"chunk\",\"args\":{\"stage\":%d,\"arg\":0,\"chain\":%d}},\n", s, c * 10 + 2 + s, 3 * c + s, c }
    printf "{\"ph\":\"X\",\"pid\":0,\"tid\":9,\"ts\":0,\"dur\":1,\"name\":\"fifo_job\"}]}\n" }' > "$tmp/many_stages.json"
  (ulimit -v 600000; timeout 120 "$memory_jqtrace" gaps -q -j 2 --format csv "$tmp/many_stages.json" > "$tmp/stages.csv" 2> "$tmp/err")
  status=$?
  stage_rows=$(grep -c '^attn(3st),' "$tmp/stages.csv")
  if [ $status -ne 0 ] || [ "$stage_rows" -ne 60000 ]; then
    echo "FAIL: gaps of 20,000 chains of 60,000 stages under 600 MB: exit $status, $stage_rows stage rows (want 60,000)"
    head -3 "$tmp/err"; failures=$((failures + 1))
  fi
  # 200,000 one-span lanes take ~70 MB of address space (a tiny trace 30): under a 50 MB
  # limit, exit 3 and the message; and while a compressed copy is read by a decoding thread and parsing threads,
  # whichever thread runs out, exit 3.
  awk 'BEGIN { printf "{\"traceEvents\":[\n";
    for (i = 0; i < 200000; i++) printf "{\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%d,\"dur\":2,\"name\":\"n%d\"},\n", i, i, i % 4000;
    printf "{\"ph\":\"X\",\"pid\":1,\"tid\":0,\"ts\":0,\"dur\":1,\"name\":\"n\"}]}\n" }' > "$tmp/lanes.json"
  (ulimit -v 50000; timeout 120 "$memory_jqtrace" stats -q -j 1 "$tmp/lanes.json" > /dev/null 2> "$tmp/err")
  status=$?
  if [ $status -ne 3 ] || ! grep -q "out of memory" "$tmp/err"; then
    echo "FAIL: out of memory: exit $status (want 3), output:"; head -3 "$tmp/err"; failures=$((failures + 1))
  fi
  gzip -1 < "$tmp/lanes.json" > "$tmp/lanes.json.gz"
  for limit in 100000 150000 200000; do
    (ulimit -v $limit; timeout 120 "$memory_jqtrace" stats -q -j 2 "$tmp/lanes.json.gz" > /dev/null 2> "$tmp/err")
    status=$?
    if [ $status -ne 0 ] && { [ $status -ne 3 ] || ! grep -q "out of memory" "$tmp/err"; }; then
      echo "FAIL: out of memory reading a .gz in parts (ulimit -v $limit): exit $status, output:"; head -3 "$tmp/err"
      failures=$((failures + 1))
    fi
  done
fi
echo "robustness: $failures failed"
[ $failures -eq 0 ]
