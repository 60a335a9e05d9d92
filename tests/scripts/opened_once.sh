#!/usr/bin/env bash
# One input, opened once (issue 44): every command opens its trace exactly once, whatever
# it reads of it — parts on several threads, a compressed stream, an index's blocks, the
# second read of window, validation's line positions, report's validation — counted with
# strace on plain, gzip and zstd traces, with and without an index. Before, a path was
# opened up to 13 times (validate --index -j 2), so a file replaced mid-run was read half
# old, half new.
source "$(dirname "$0")/lib/prelude.bash"
gen=$2
if ! command -v strace > /dev/null || ! strace -qq -o /dev/null true 2> /dev/null; then
  echo "opened_once: skipped: strace is not installed or cannot trace here (build.sh test installs it)"
  exit 77
fi
checked=0

# opens FILE ARGS...: how many times jqtrace ARGS opens FILE (the index beside it is
# another file: FILE.jqx).
opens() {
  local file=$1
  shift
  JQTRACE_MIN_PART_BYTES=2048 JQTRACE_INDEX_BLOCK_BYTES=1024 strace -f -qq -e trace=open,openat -o "$tmp/strace" \
    "$jqtrace" "$@" > /dev/null 2>&1
  grep -c "\"$file\"" "$tmp/strace"
}
once() {
  local file=$1 n
  shift
  n=$(opens "$file" "$@")
  checked=$((checked + 1))
  [ "$n" = 1 ] || fail "jqtrace $* opened $file $n times"
}

"$gen" --workers 3 --tokens 4 --layers 6 --seed 3 -o "$tmp/t.json"
gzip -c "$tmp/t.json" > "$tmp/t.json.gz"
zstd -q -c "$tmp/t.json" > "$tmp/t.json.zst"
cp samples/broken.trace.json "$tmp/broken.json"
for f in "$tmp/t.json" "$tmp/t.json.gz" "$tmp/t.json.zst" "$tmp/broken.json"; do
  # In parts on threads (the one-pass read of -j 1 opens once by its nature: two checks of it).
  once "$f" stats -j 1 "$f"
  once "$f" validate -j 1 --max-errors 0 "$f"
  once "$f" stats -j 2 "$f"
  once "$f" stats -j 2 --marker token 1 "$f"
  once "$f" validate -j 2 --max-errors 0 "$f"
  once "$f" gaps -j 2 "$f"
  once "$f" latency -j 2 "$f"
  once "$f" markers -j 2 "$f"
  once "$f" timeline -j 2 "$f"
  once "$f" window -j 2 --marker token 1 "$f"
  once "$f" window -j 2 --format csv --us 100 400 "$f"
  once "$f" report -j 2 -o "$tmp/r.html" "$f"
  once "$f" validate -j 2 --index "$f"  # validates along the index pass, positions from the same input
  rm -f "$f.jqx"
  once "$f" index "$f"
  # With the index: the blocks a scope needs are read from the input the index was checked against.
  once "$f" stats -j 2 --marker token 2 "$f"
  once "$f" window -j 2 --marker token 2 "$f"
  once "$f" markers "$f"
  rm -f "$f.jqx"
done
once "$tmp/t.json" diff "$tmp/t.json" "$tmp/t.json.gz"  # each of the two once
once "$tmp/t.json.gz" diff "$tmp/t.json" "$tmp/t.json.gz"

# window reads a stream twice through a copy made as its first pass reads: a pipe other
# than stdin gives the same window as the file (the copy was first made whole before the
# read: window of /dev/zero filled the disk), and a stream that is not a trace stops at its
# first byte, its copy removed.
export TMPDIR=$tmp/spool
mkdir -p "$TMPDIR"
a=$("$jqtrace" window -q --format csv --marker token 1 "$tmp/t.json")
for f in "$tmp/t.json" "$tmp/t.json.gz" "$tmp/t.json.zst"; do
  for j in 1 2; do
    b=$(cat "$f" | "$jqtrace" window -q -j $j --format csv --marker token 1 -)
    c=$("$jqtrace" window -q -j $j --format csv --marker token 1 <(cat "$f"))
    checked=$((checked + 2))
    [ "$a" = "$b" ] || fail "window -j $j of $(basename "$f") from stdin differs from the file's"
    [ "$a" = "$c" ] || fail "window -j $j of $(basename "$f") from a pipe differs from the file's"
  done
done
timeout 20 "$jqtrace" window --marker token 1 /dev/zero > /dev/null 2> "$tmp/err"
status=$?
checked=$((checked + 1))
[ $status -eq 3 ] && grep -q "NUL byte at offset 0" "$tmp/err" || fail "window of /dev/zero: status $status, $(head -c 200 "$tmp/err")"
[ -z "$(ls -A "$TMPDIR")" ] || fail "window left a copy behind: $(ls "$TMPDIR")"

echo "opened_once: $checked commands, $failures failed"
[ "$failures" -eq 0 ]
