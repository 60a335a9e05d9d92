#!/usr/bin/env bash
# The sidecar index (jqtrace index, TRACE.jqx): every scoped command gives byte-identical
# stdout, stderr and exit status with and without it, on samples, generated and corpus
# traces (blocks forced tiny with JQTRACE_INDEX_BLOCK_BYTES so that small files are cut in
# many), reads only some blocks when it can, and falls back to the whole trace with one
# warning when the index is stale, truncated, corrupt, of another version or of another
# file. Traces are copied to a scratch folder first: an index is written beside its trace.
source "$(dirname "$0")/lib/prelude.bash"
gen=$2
export XDG_CACHE_HOME=$tmp/cache
checked=0

# compare FILE ARGS...: the command with the index and with --no-index.
compare() {
  local file=$1 a b
  shift
  a=$(NO_COLOR=1 "$jqtrace" "$@" "$file" 2>&1; echo "status $?")
  b=$(NO_COLOR=1 "$jqtrace" "$@" --no-index "$file" 2>&1; echo "status $?")
  checked=$((checked + 1))
  if [ "$a" != "$b" ]; then
    fail "jqtrace $* $file: with and without the index differ"
    diff <(echo "$a") <(echo "$b") | head -6
  fi
}

scopes=("--marker token 0" "--marker token 1..2" "--marker layer 3" "--marker step 0" "--us 0 50" "--us 100 400"
        "--us 5 5" "--us -1000 -10" "--us 1e12 2e12" "--us -1e12 1e12" "--ms 0.01 0.2" "--marker nosuch 0")
# The test build has sanitizers (a command takes ~0.1 s): every scope on the generated
# traces, a few on the other layouts, samples and compressed copies.
few_scopes=("--marker token 1" "--us 100 400" "--us -1000 -10" "--us -1e12 1e12")
every_command() {
  local file=$1 scope
  local -a chosen=("${scopes[@]}")
  [ -n "${FEW:-}" ] && chosen=("${few_scopes[@]}")
  for scope in "${chosen[@]}"; do
    # shellcheck disable=SC2086  # a scope is several words
    {
      compare "$file" stats --by name --format json $scope
      compare "$file" timeline $scope
      compare "$file" window $scope
      compare "$file" window --format csv $scope
      [ -n "${FEW:-}" ] && continue
      compare "$file" stats $scope
      compare "$file" stats --by lane --format csv $scope
      compare "$file" window --format compact $scope
      compare "$file" window --rebase $scope
    }
  done
  compare "$file" markers
  compare "$file" markers --format json
}

index() { JQTRACE_INDEX_BLOCK_BYTES=${BLOCK:-300} "$jqtrace" index -q "$@"; }

mkdir -p "$tmp/t"
cp samples/*.json "$tmp/t/"
"$gen" --workers 3 --tokens 3 --layers 6 --seed 5 -o "$tmp/t/gen.json"
"$gen" --workers 5 --tokens 2 --layers 4 --legacy --seed 9 -o "$tmp/t/legacy.json"
{ echo "["; sed -n '/^{"ph"/p' "$tmp/t/gen.json"; echo "]"; } > "$tmp/t/array.json"
head -c $(( $(stat -c %s "$tmp/t/gen.json") * 3 / 4 )) "$tmp/t/gen.json" > "$tmp/t/cut.json"
awk 'NR % 3 == 0 { printf "%s", $0; next } { print }' "$tmp/t/gen.json" > "$tmp/t/ragged.json"
for f in "$tmp"/t/*.json; do
  index "$f" 2> /dev/null  # a file that is not a trace gets no index: the commands say why
  case "$(basename "$f")" in
    gen.json) every_command "$f" ;;
    *) FEW=1 every_command "$f" ;;
  esac
done
BLOCK=4096 index -j 4 "$tmp/t/gen.json" && FEW=1 every_command "$tmp/t/gen.json"  # blocks cut in parts
# Compressed traces: blocks decoded from the stream (gzip and zstd; a gzip stream cut short).
mkdir -p "$tmp/z"
for name in gen legacy cut; do
  gzip -c "$tmp/t/$name.json" > "$tmp/z/$name.json.gz"
  zstd -q -c "$tmp/t/$name.json" > "$tmp/z/$name.json.zst"
done
head -c $(( $(stat -c %s "$tmp/z/gen.json.gz") * 2 / 3 )) "$tmp/z/gen.json.gz" > "$tmp/z/cut-stream.json.gz"
for f in "$tmp"/z/*; do
  index "$f" 2> /dev/null
  FEW=1 every_command "$f"
done

# It is used: a unit reads some blocks, markers none.
shown() { JQTRACE_SHOW_INDEX=1 "$jqtrace" "$@" 2>&1 > /dev/null | grep -o "index: [0-9]* of [0-9]* blocks read"; }
index "$tmp/t/gen.json"
read_some=$(shown stats --marker token 1 "$tmp/t/gen.json")
[[ "$read_some" =~ index:\ ([0-9]+)\ of\ ([0-9]+) ]] && [ "${BASH_REMATCH[1]}" -lt "${BASH_REMATCH[2]}" ] ||
  fail "stats --marker token 1 did not read part of the blocks ($read_some)"
[[ "$(shown markers "$tmp/t/gen.json")" == "index: 0 of "* ]] || fail "markers read blocks"
[ -z "$(shown stats --marker token 1 --no-index "$tmp/t/gen.json")" ] || fail "--no-index read the index"
[ -z "$(shown stats "$tmp/t/gen.json")" ] || fail "the whole trace read through the index"

# --index on a full pass writes it (and the output is what it is without).
cp "$tmp/t/gen.json" "$tmp/side.json"
a=$("$jqtrace" stats "$tmp/side.json" 2> /dev/null)
b=$("$jqtrace" stats --index "$tmp/side.json" 2> "$tmp/err")
[ "$a" = "$b" ] || fail "stats --index changed the output"
grep -q "index of .*side.json written to .*side.json.jqx" "$tmp/err" || fail "stats --index did not say what it wrote"
[ -s "$tmp/side.json.jqx" ] || fail "stats --index wrote no index"
compare "$tmp/side.json" window --marker token 1

# Every way an index goes wrong: one warning, then the whole trace, same answers.
broken() {  # broken WHAT EXPECTED-WORDS: after breaking it, window and stats fall back
  local what=$1 words=$2 err
  err=$("$jqtrace" window --marker token 1 "$tmp/w.json" 2>&1 > "$tmp/out")
  grep -q "$words" <<< "$err" || fail "$what: no warning saying '$words' (got: $err)"
  [ "$(grep -c "jqx" <<< "$err")" -eq 1 ] || fail "$what: not exactly one warning"
  "$jqtrace" window --marker token 1 --no-index "$tmp/w.json" > "$tmp/expected" 2> /dev/null
  cmp -s "$tmp/out" "$tmp/expected" || fail "$what: the fallback's window differs"
  [ -z "$(shown stats --marker token 1 "$tmp/w.json")" ] || fail "$what: the index was used"
}
fresh() { cp "$tmp/t/gen.json" "$tmp/w.json" && index "$tmp/w.json"; }
fresh; echo '{}' >> "$tmp/w.json"; broken "the trace grew" stale
fresh; sed -i 's/"ts":1\([0-9]\)/"ts":2\1/' "$tmp/w.json"; broken "the trace changed, same size" stale
fresh; touch -d '2001-01-01' "$tmp/w.json"; broken "the trace touched" stale
fresh; "$gen" --workers 3 --tokens 3 --layers 6 --seed 6 -o "$tmp/w.json"; broken "another trace, same name" stale
fresh; head -c 100 "$tmp/w.json.jqx" > "$tmp/x" && mv "$tmp/x" "$tmp/w.json.jqx"; broken "a truncated index" "truncated or corrupt"
fresh; printf '\x07' | dd of="$tmp/w.json.jqx" bs=1 seek=8 conv=notrunc status=none; broken "another version" "index format 7"
fresh; size=$(stat -c %s "$tmp/w.json.jqx")
printf '\xff' | dd of="$tmp/w.json.jqx" bs=1 seek=$((size / 2)) conv=notrunc status=none; broken "a corrupt byte" "corrupt"
fresh; echo "not an index" > "$tmp/w.json.jqx"; broken "not an index" "not a jqtrace index"

# Where the directory cannot be written, the index goes to the cache ($XDG_CACHE_HOME/jqtrace).
if [ "$(id -u)" -ne 0 ]; then
  mkdir -p "$tmp/ro" && cp "$tmp/t/gen.json" "$tmp/ro/" && chmod a-w "$tmp/ro"
  index "$tmp/ro/gen.json" || fail "index in a read-only directory failed"
  ls "$XDG_CACHE_HOME"/jqtrace/gen.json-*.jqx > /dev/null 2>&1 || fail "no index in the cache"
  [[ "$(shown window --marker token 1 "$tmp/ro/gen.json")" == "index: "* ]] || fail "the cached index was not used"
  compare "$tmp/ro/gen.json" stats --marker token 2
  chmod u+w "$tmp/ro"
else
  echo "note: running as root (every directory is writable): the cache location is not tested"
fi
# Standard input is never indexed.
"$jqtrace" index - < "$tmp/t/gen.json" 2> /dev/null
[ $? -eq 2 ] || fail "index - did not exit 2"

# validate --index validates along the index pass: the same problems, counts and exit
# status as validate (valid, cut-off, broken, not a trace, gzip; in parts or in one pass),
# and the index jqtrace index writes.
for f in gen.json cut.json ragged.json broken.trace.json truncated.trace.json; do
  for j in 1 4; do
    for format in table json; do
      cp "$tmp/t/$f" "$tmp/v.json"
      rm -f "$tmp/v.json.jqx"
      a=$(JQTRACE_MIN_PART_BYTES=2048 "$jqtrace" validate -j $j --max-errors 0 --format $format "$tmp/v.json" 2> "$tmp/err"; echo "status $?"; cat "$tmp/err")
      b=$(JQTRACE_MIN_PART_BYTES=2048 "$jqtrace" validate -j $j --index --max-errors 0 --format $format "$tmp/v.json" 2> "$tmp/err"; echo "status $?"; grep -v "^jqtrace: index of" "$tmp/err")
      checked=$((checked + 1))
      [ "$a" = "$b" ] || { fail "validate --index -j $j --format $format $f differs from validate"; diff <(echo "$a") <(echo "$b") | head -6; }
    done
  done
done
cp "$tmp/t/gen.json" "$tmp/v.json" && rm -f "$tmp/v.json.jqx"
"$jqtrace" validate -q --index "$tmp/v.json" > /dev/null && mv "$tmp/v.json.jqx" "$tmp/by-validate.jqx"
"$jqtrace" index -q "$tmp/v.json"
cmp -s "$tmp/v.json.jqx" "$tmp/by-validate.jqx" || fail "validate --index wrote another index than jqtrace index"
gzip -c "$tmp/t/gen.json" > "$tmp/v.json.gz"
[ "$("$jqtrace" validate --index -q "$tmp/v.json.gz")" = "$("$jqtrace" validate "$tmp/v.json.gz" 2> /dev/null)" ] &&
  [ -s "$tmp/v.json.gz.jqx" ] || fail "validate --index on a gzip trace"
"$jqtrace" validate --index - < "$tmp/t/gen.json" 2>&1 > /dev/null | grep -q "standard input is not indexed" ||
  fail "validate --index from stdin did not say it writes no index"

# The corpus, when it is there (copied: it is read-only; gzip traces unpacked).
if [ -d ../shared/corpus ]; then
  for f in ../shared/corpus/*/*; do
    case "$f" in
      *.gz) gzip -dc "$f" > "$tmp/corpus.json" ;;
      *) cp "$f" "$tmp/corpus.json" ;;
    esac
    rm -f "$tmp/corpus.json.jqx"
    BLOCK=65536 index "$tmp/corpus.json" 2> /dev/null
    compare "$tmp/corpus.json" stats --marker token 2
    compare "$tmp/corpus.json" window --marker layer 1..2
    compare "$tmp/corpus.json" timeline --us 1000 3000
    compare "$tmp/corpus.json" markers
  done
else
  echo "note: ../shared/corpus not found; corpus traces not compared"
fi

echo "sidecar_index: $checked comparisons, $failures failed"
[ "$failures" -eq 0 ]
