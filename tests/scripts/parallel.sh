#!/usr/bin/env bash
# -j 1 and -j 4 give identical results: stdout, stderr and exit status of every command on
# every sample, corpus file and generated trace, including layouts that make the cuts
# interesting: ragged lines, Windows line ends, events longer than a part, a pretty-printed
# trace (cuts land inside events: the parts must notice and fall back), one huge line (no
# cuts), broken and truncated files (the first error must be the same). Parts are forced
# small (JQTRACE_MIN_PART_BYTES) so that small files are cut too. The same for gzip, zstd
# and stdin, whose text is cut into parts as it is decoded.
set -u
jqtrace=$1
gen=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
checked=0

# compare FILE ARGS...: the command on FILE at -j 1 and -j 4 (parts of PART bytes); with
# STDIN set, FILE comes on standard input ("-").
compare() {
  local file=$1
  shift
  local input=("$file") from=/dev/null a b
  if [ -n "${STDIN:-}" ]; then input=(-); from=$file; fi
  a=$(NO_COLOR=1 "$jqtrace" "$@" -j 1 "${input[@]}" < "$from" 2>&1; echo "status $?")
  b=$(NO_COLOR=1 JQTRACE_MIN_PART_BYTES=${PART:-512} "$jqtrace" "$@" -j 4 "${input[@]}" < "$from" 2>&1; echo "status $?")
  checked=$((checked + 1))
  if [ "$a" != "$b" ]; then
    echo "FAIL: jqtrace $* ${input[*]} ${STDIN:+< $file}: -j 1 and -j 4 differ"
    diff <(echo "$a") <(echo "$b") | head -8
    failures=$((failures + 1))
  fi
}

every_command() {
  local file=$1
  compare "$file" stats
  compare "$file" stats --by name --format json
  compare "$file" stats --by lane --format csv
  compare "$file" markers --format json
  compare "$file" gaps --format json
  compare "$file" latency --per-unit token --format json
  compare "$file" window --format csv
  compare "$file" window --ms 0.01 0.2
  compare "$file" window --format compact --ms 0 0.5
  compare "$file" validate
}

# Layout variants of one generated trace.
"$gen" --workers 3 --tokens 3 --layers 6 --seed 5 -o "$tmp/gen.json"
sed 's/$/\r/' "$tmp/gen.json" > "$tmp/crlf.json"
awk 'NR % 3 == 0 { printf "%s", $0; next } { print }' "$tmp/gen.json" > "$tmp/ragged.json"  # some lines hold 2 events
awk '{ print } NR % 50 == 0 { print "" ; print "   " }' "$tmp/gen.json" > "$tmp/blank-lines.json"
tr -d '\n' < "$tmp/gen.json" > "$tmp/one-line.json"
# Pretty-printed: nested objects on lines of their own. In the first, the cut rule skips
# them (the line before ends in ':'); in the second they look like events (the line before
# ends in ','), so cuts land inside events and the parts must notice and fall back.
sed -e 's/,"args":{/,\n  "args":\n  {/' "$tmp/gen.json" > "$tmp/pretty.json"
sed -e 's/,"args":{/,"args":{"list":[\n{"a":1},\n{"b":2}],/' "$tmp/gen.json" > "$tmp/pretty-lists.json"
# An event far longer than a part.
{ head -n 5 "$tmp/gen.json"; printf '{"ph":"X","pid":0,"tid":0,"ts":1,"dur":1,"name":"%s"},\n' \
    "$(head -c 20000 /dev/zero | tr '\0' 'x')"; tail -n +6 "$tmp/gen.json"; } > "$tmp/long-event.json"
# Broken in the middle (the first error decides), and cut off.
lines=$(wc -l < "$tmp/gen.json")
awk -v at=$((lines / 2)) 'NR == at { print "{\"ph\":\"X\",\"ts\":1,,}," ; next } { print }' "$tmp/gen.json" > "$tmp/broken-middle.json"
head -c $(( $(stat -c %s "$tmp/gen.json") * 3 / 4 )) "$tmp/gen.json" > "$tmp/cut.json"
# A raw newline inside a string (invalid JSON) right where a cut could go.
awk -v at=$((lines / 3)) 'NR == at { print "{\"ph\":\"X\",\"name\":\"a"; print "{\"b\"},"; next } { print }' "$tmp/gen.json" > "$tmp/newline-in-string.json"
# Rules that cross parts: a B closed by an E far later, a publish repeated far later, a
# chunk far after its publish with a stage out of range, an E closing nothing.
{
  echo '{"traceEvents":['
  echo '{"ph":"B","pid":1,"tid":1,"ts":1,"name":"outer"},'
  echo '{"ph":"X","pid":1,"tid":2,"ts":2,"dur":1,"name":"publish","args":{"stage":2,"arg":3,"chain":5}},'
  for i in $(seq 1 400); do echo "{\"ph\":\"X\",\"pid\":1,\"tid\":3,\"ts\":$((i * 10)),\"dur\":4,\"name\":\"work\"},"; done
  echo '{"ph":"X","pid":1,"tid":2,"ts":5000,"dur":1,"name":"chunk","args":{"stage":7,"arg":0,"chain":5}},'
  echo '{"ph":"X","pid":1,"tid":2,"ts":5001,"dur":1,"name":"publish","args":{"stage":2,"arg":3,"chain":5}},'
  echo '{"ph":"E","pid":1,"tid":1,"ts":6000},'
  echo '{"ph":"E","pid":1,"tid":4,"ts":6001}'
  echo ']}'
} > "$tmp/cross-parts.json"

# B/E pairs spanning parts (joined exactly, no second pass): two Bs early, three Es late.
{
  echo '{"traceEvents":['
  echo '{"ph":"B","pid":1,"tid":1,"ts":1,"name":"outer"},'
  echo '{"ph":"B","pid":1,"tid":1,"ts":2,"name":"inner"},'
  for i in $(seq 1 400); do echo "{\"ph\":\"X\",\"pid\":1,\"tid\":3,\"ts\":$((i * 10)),\"dur\":4,\"name\":\"work\"},"; done
  echo '{"ph":"B","pid":1,"tid":1,"ts":4500,"name":"late"},'
  echo '{"ph":"E","pid":1,"tid":1,"ts":4600},'
  for i in 1 2 3; do echo "{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":$((5000 + i))},"; done
  echo '{"ph":"X","pid":1,"tid":3,"ts":6000,"dur":1,"name":"last"}'
  echo ']}'
} > "$tmp/begin-end-across.json"

# Array form, and a legacy trace without a profile.
{ echo "["; sed -n '/^{"ph"/p' "$tmp/gen.json"; echo "]"; } > "$tmp/array.json"
"$gen" --workers 5 --tokens 2 --layers 4 --legacy --seed 9 -o "$tmp/legacy.json"

for f in "$tmp"/*.json samples/*.json; do every_command "$f"; done
PART=4096 every_command "$tmp/gen.json"

# The same layouts gzipped, in zstd, and from stdin: the decoded stream is cut into parts
# as it comes (a wrong cut cannot re-read the input, so the rest is read in one pass).
stream_commands() {
  local file=$1
  compare "$file" stats --by name --format json
  compare "$file" window --ms 0.01 0.2
  compare "$file" validate
}
# The layouts that test the stream's cuts (every command's joins are tested above).
for name in gen pretty-lists one-line long-event broken-middle cut cross-parts begin-end-across array; do
  f=$tmp/$name.json
  gzip -c "$f" > "$f.gz"
  zstd -q -c "$f" > "$f.zst"
  stream_commands "$f.gz"
  stream_commands "$f.zst"
  STDIN=1 stream_commands "$f"
  STDIN=1 stream_commands "$f.gz"
done

# A bigger file at the default part size: several real parts.
"$gen" --workers 4 --size-mb 12 --seed 3 -o "$tmp/big.json"
PART=4194304 compare "$tmp/big.json" stats --format json
PART=4194304 compare "$tmp/big.json" gaps
PART=4194304 compare "$tmp/big.json" markers --kind token --format csv
PART=4194304 compare "$tmp/big.json" window --marker token 2

# The corpus, when it is there (gzip files are read in one pass; unpacked, they are cut).
if [ -d ../shared/corpus ]; then
  for f in ../shared/corpus/*/*; do
    case "$f" in
      *.gz) gzip -dc "$f" > "$tmp/corpus.json"; every_command "$tmp/corpus.json" ;;
      *) every_command "$f" ;;
    esac
  done
else
  echo "note: ../shared/corpus not found; corpus files not compared"
fi

echo "parallel: $checked comparisons, $failures failed"
[ $failures -eq 0 ]
