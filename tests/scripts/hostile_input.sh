#!/usr/bin/env bash
# Hostile input, round 3 (issue 52): epoch clocks keep their nanoseconds, an output never
# destroys its input or leaves half a file, an index cannot lie, sidecar FIFOs do not hang,
# compressed files with padding or skippable frames read whole, a profile too large to read
# says so, a closed pipe is not a crash. Every case here failed before its fix.
source "$(dirname "$0")/lib/prelude.bash"
gen=$2
export XDG_CACHE_HOME=$tmp/cache

# expect_status WHAT WANT ACTUAL
expect_status() { [ "$3" -eq "$2" ] || fail "$1: exit $3 (want $2)"; }

# --- Epoch-based microseconds (1.7e15 µs) keep their ns digits ---------------------------
cat > "$tmp/epoch.json" << 'EOF'
{"traceEvents":[
{"ph":"X","pid":1,"tid":1,"name":"a","ts":1733400000000000.100,"dur":0.003},
{"ph":"X","pid":1,"tid":1,"name":"b","ts":1733400000000000.107,"dur":0.004}
]}
EOF
out=$("$jqtrace" stats --format json "$tmp/epoch.json")
grep -q '"busy_us": 0.007' <<< "$out" || fail "epoch: busy is not 0.007 us"
grep -q '"idle_pct": 36.36' <<< "$out" || fail "epoch: idle is not 36.36%"
csv=$("$jqtrace" window --us 1733400000000000 1733400000000001 --format csv "$tmp/epoch.json" 2> /dev/null)
grep -q '^1:1,1733400000000000.107,0.004,' <<< "$csv" || fail "epoch: window csv lost the ns digits: $csv"

# --- An output that is the input is refused (exit 2), the trace untouched ----------------
"$gen" --workers 2 --tokens 3 --layers 4 --seed 3 -o "$tmp/t.json"
cp "$tmp/t.json" "$tmp/t.orig"
ln -s "$tmp/t.json" "$tmp/link.json"
for args in "window --us 0 1000" "stats" "markers --kind token" "gaps" "latency"; do
  for target in t.json link.json; do
    # shellcheck disable=SC2086  # args are several words
    "$jqtrace" $args "$tmp/t.json" -o "$tmp/$target" > /dev/null 2> "$tmp/err"
    expect_status "$args -o $target" 2 $?
    grep -q "that is the trace being read" "$tmp/err" || fail "$args -o $target: no reason given"
    cmp -s "$tmp/t.json" "$tmp/t.orig" || { fail "$args -o $target changed the trace"; cp "$tmp/t.orig" "$tmp/t.json"; }
  done
done
# timeline and report write SVG and HTML: a trace named so, written over itself.
cp "$tmp/t.json" "$tmp/t.svg"
"$jqtrace" timeline "$tmp/t.svg" -o "$tmp/t.svg" > /dev/null 2> "$tmp/err"
expect_status "timeline -o its input" 2 $?
grep -q "that is the trace being read" "$tmp/err" || fail "timeline -o its input: no reason given"
cmp -s "$tmp/t.svg" "$tmp/t.orig" || fail "timeline -o its input changed the trace"
cp "$tmp/t.json" "$tmp/t.html"
"$jqtrace" report "$tmp/t.html" -o "$tmp/t.html" > /dev/null 2> "$tmp/err"
expect_status "report -o its input" 2 $?
cmp -s "$tmp/t.html" "$tmp/t.orig" || fail "report -o its input changed the trace"
# validate opens its table before reading its files: checked again before the rename.
"$jqtrace" validate "$tmp/t.json" -o "$tmp/link.json" > /dev/null 2>&1
expect_status "validate -o its input" 2 $?
cmp -s "$tmp/t.json" "$tmp/t.orig" || fail "validate -o its input changed the trace"
"$jqtrace" diff "$tmp/t.json" "$tmp/link.json" -o "$tmp/t.json" > /dev/null 2>&1
expect_status "diff -o its input" 2 $?
cmp -s "$tmp/t.json" "$tmp/t.orig" || fail "diff -o its input changed the trace"
ls -a "$tmp" | grep -q 'jqtrace-' && fail "a temporary output file was left behind"
# -o through a link writes the file the link names and keeps the link.
"$jqtrace" stats "$tmp/t.json" -o "$tmp/stats.txt" > /dev/null 2>&1
ln -s "$tmp/stats.txt" "$tmp/stats-link.txt"
echo old > "$tmp/stats.txt"
"$jqtrace" stats "$tmp/t.json" -o "$tmp/stats-link.txt" > /dev/null 2>&1
[ -L "$tmp/stats-link.txt" ] || fail "-o through a link replaced the link"
grep -q "^events " "$tmp/stats.txt" || fail "-o through a link did not write the file it names"

# --- A failed write leaves the old file as it was and no partial file (a full disk) -------
"$gen" --workers 3 --tokens 12 --layers 8 --seed 4 -o "$tmp/big.json"  # ~550 KB: more than the disk holds
if mkdir "$tmp/small" && mount -t tmpfs -o size=64k tmpfs "$tmp/small" 2> /dev/null; then
  trap 'umount "$tmp/small" 2> /dev/null; rm -rf "$tmp"' EXIT  # never leave the mount behind
  echo "previous" > "$tmp/small/w.json"
  "$jqtrace" window --us 0 1e9 "$tmp/big.json" -o "$tmp/small/w.json" > /dev/null 2> "$tmp/err"
  expect_status "window -o on a full disk" 3 $?
  [ "$(cat "$tmp/small/w.json")" = previous ] || fail "a failed window -o replaced the old file"
  [ "$(ls -A "$tmp/small" | wc -l)" -eq 1 ] || fail "a failed window -o left a partial file: $(ls -A "$tmp/small")"
  "$jqtrace" window --us 0 1e9 "$tmp/big.json" -o "$tmp/small/new.json" > /dev/null 2>&1
  [ -e "$tmp/small/new.json" ] && fail "a failed window -o left the new file half written"
  umount "$tmp/small"
else
  echo "hostile_input: full-disk case skipped (cannot mount a tmpfs here)"
fi

# --- An index rewritten in place with its mtime put back (cp -p, rsync -t) is stale -------
cp "$tmp/big.json" "$tmp/i.json"
size=$(stat -c %s "$tmp/i.json")
[ "$size" -gt 400000 ] || fail "the indexed trace is too small for an edit away from both ends"
"$jqtrace" index -q "$tmp/i.json" || fail "index failed"
expected=$("$jqtrace" stats --marker token 3 --no-index "$tmp/i.json" 2>&1)
touch -r "$tmp/i.json" "$tmp/stamp"
# An edit in the middle, more than 64 KiB from both ends: a "ts" digit becomes another.
at=$(grep -b -o '"ts":[0-9]' "$tmp/i.json" | awk -F: -v mid=$((size / 2)) '$1 > mid { print $1; exit }')
digit=$(dd if="$tmp/i.json" bs=1 skip=$((at + 5)) count=1 status=none)
printf '%s' $(( (digit + 5) % 10 )) | dd of="$tmp/i.json" bs=1 seek=$((at + 5)) conv=notrunc status=none
touch -r "$tmp/stamp" "$tmp/i.json"
[ "$(stat -c %s "$tmp/i.json")" -eq "$size" ] || fail "the edit changed the size"
changed=$("$jqtrace" stats --marker token 3 "$tmp/i.json" 2> "$tmp/err")
grep -q "stale" "$tmp/err" || fail "an in-place rewrite with its mtime put back was not called stale"
[ "$changed" = "$("$jqtrace" stats --marker token 3 --no-index "$tmp/i.json" 2> /dev/null)" ] ||
  fail "an in-place rewrite: the answer is not the full read's"
[ "$changed" != "$(grep -v '^warning' <<< "$expected")" ] || fail "the edit changed nothing (the test proves nothing)"

# --- A FIFO where the index would be does not hang a command ------------------------------
cp "$tmp/t.orig" "$tmp/f.json"
mkfifo "$tmp/f.json.jqx"
for args in "stats" "markers --kind token" "window --marker token 1"; do
  # shellcheck disable=SC2086
  timeout 20 "$jqtrace" $args "$tmp/f.json" > /dev/null 2>&1
  status=$?
  [ $status -eq 124 ] && fail "$args hangs on a FIFO named f.json.jqx"
done
rm "$tmp/f.json.jqx"

# --- index that cannot write its index exits 3 --------------------------------------------
cp "$tmp/t.orig" "$tmp/n.json"
mkdir "$tmp/n.json.jqx"  # not a file: the index cannot take its place
XDG_CACHE_HOME=/dev/null/nothing "$jqtrace" index "$tmp/n.json" > /dev/null 2> "$tmp/err"
expect_status "index that writes nothing" 3 $?
grep -q "no index written" "$tmp/err" || fail "index that writes nothing: no reason given"

# --- gzip with trailing zero bytes reads whole; other trailing bytes are refused ----------
gzip -c "$tmp/t.orig" > "$tmp/z.json.gz"
{ cat "$tmp/z.json.gz"; head -c 1000 /dev/zero; } > "$tmp/pad.json.gz"
gzip -t "$tmp/pad.json.gz" 2> /dev/null || true  # gzip reads past the padding (a warning at most)
want=$("$jqtrace" stats --format json "$tmp/t.orig" 2> /dev/null | grep -v '"file"')
for j in 1 2; do
  got=$(JQTRACE_MIN_PART_BYTES=4096 "$jqtrace" stats -j $j --format json "$tmp/pad.json.gz" 2> "$tmp/err" | grep -v '"file"')
  [ "$got" = "$want" ] || fail "gzip with zero padding (-j $j): not the trace's stats ($(head -2 "$tmp/err"))"
done
"$jqtrace" validate "$tmp/pad.json.gz" > /dev/null 2>&1
expect_status "validate gzip with zero padding" 0 $?
"$jqtrace" stats --fail-if 'idle > 99' "$tmp/pad.json.gz" > /dev/null 2>&1
expect_status "a gate on a gzip with zero padding" 0 $?
"$jqtrace" index -q "$tmp/pad.json.gz" || fail "index of a gzip with zero padding failed"
[ "$("$jqtrace" window --marker token 1 "$tmp/pad.json.gz" 2>&1)" = "$("$jqtrace" window --marker token 1 --no-index "$tmp/pad.json.gz" 2>&1)" ] ||
  fail "gzip with zero padding: window through the index differs"
{ cat "$tmp/z.json.gz"; head -c 100 /dev/zero; printf 'garbage'; } > "$tmp/garbage.json.gz"
"$jqtrace" validate "$tmp/garbage.json.gz" > /dev/null 2>&1
expect_status "gzip with garbage after its padding" 3 $?

# --- zstd beginning with a skippable frame (pzstd writes one) ------------------------------
if command -v zstd > /dev/null; then
  { printf '\x50\x2a\x4d\x18\x04\x00\x00\x00abcd'; zstd -q -c "$tmp/t.orig"; } > "$tmp/skip.json.zst"
  got=$("$jqtrace" stats --format json "$tmp/skip.json.zst" 2> "$tmp/err" | grep -v '"file"')
  [ "$got" = "$want" ] || fail "zstd after a skippable frame: $(head -2 "$tmp/err")"
  { zstd -q -c "$tmp/t.orig"; printf '\x5e\x2a\x4d\x18\x02\x00\x00\x00zz'; } > "$tmp/skip2.json.zst"
  got=$("$jqtrace" stats --format json "$tmp/skip2.json.zst" 2> "$tmp/err" | grep -v '"file"')
  [ "$got" = "$want" ] || fail "zstd with a skippable frame last: $(head -2 "$tmp/err")"
fi

# --- A profile too large to read is a warning and an attribution, in every command --------
python3 - "$tmp/big-profile.json" << 'EOF'
import json, sys
cats = [{"id": i, "name": "cat%d" % i, "color": "#112233"} for i in range(1, 300001)]
events = [
    {"ph": "X", "name": "publish", "pid": 0, "tid": 0, "ts": 0, "dur": 2, "args": {"stage": (1 << 8) | 1, "arg": 0, "chain": 1}},
    {"ph": "X", "name": "chunk", "pid": 0, "tid": 0, "ts": 2, "dur": 5, "args": {"stage": 0, "arg": 0, "chain": 1}},
]
json.dump({"jobqueProfile": {"version": 1, "categories": cats, "markers": []}, "traceEvents": events}, open(sys.argv[1], "w"))
EOF
out=$("$jqtrace" stats "$tmp/big-profile.json" 2> "$tmp/err")
grep -q "attribution: unread profile" <<< "$out" || fail "a profile too large: attribution does not say so"
grep -q "jobqueProfile is too large" "$tmp/err" || fail "a profile too large: no warning"
grep -q "attn chain" <<< "$out" && fail "a profile too large: tag 1 named by the legacy table"
grep -q "^tag 1 " <<< "$out" || fail "a profile too large: tag 1 is not 'tag 1'"
"$jqtrace" gaps "$tmp/big-profile.json" 2>&1 > /dev/null | grep -q "jobqueProfile is too large" ||
  fail "a profile too large: gaps does not warn"

# --- Long strings: refused at 64 MiB as they stream, names past 4 KiB cut --------------
sanitized() { ldd "$jqtrace" 2> /dev/null | grep -qE 'lib(asan|ubsan)'; }
# A 4.5 GB string in args, as gzip members of 100 MB each (made in a second): refused
# after 64 MiB of it, not after buffering it whole (49 s and 4.2 GB before).
printf '{"traceEvents":[{"ph":"X","pid":1,"tid":1,"name":"a","ts":1,"dur":2,"args":{"x":"' | gzip -c > "$tmp/head.gz"
head -c 100000000 /dev/zero | tr '\0' c | gzip -1 -c > "$tmp/mid.gz"
printf '"}}]}' | gzip -c > "$tmp/tail.gz"
{ cat "$tmp/head.gz"; for _ in $(seq 45); do cat "$tmp/mid.gz"; done; cat "$tmp/tail.gz"; } > "$tmp/huge-string.json.gz"
for j in 1 2; do
  (ulimit -t 60; /usr/bin/time -f %M -o "$tmp/rss" "$jqtrace" validate -j $j "$tmp/huge-string.json.gz" > "$tmp/out" 2>&1)
  expect_status "validate -j $j of a 4.5 GB string" 3 $?
  grep -q "is longer than jqtrace reads" "$tmp/out" || fail "a 4.5 GB string: $(head -2 "$tmp/out")"
  if ! sanitized && [ "$(tail -1 "$tmp/rss")" -gt 400000 ]; then fail "a 4.5 GB string took $(tail -1 "$tmp/rss") KB (-j $j)"; fi
done
# A 10 MB category name: kept as 4 KiB, with a warning, two long names stay two groups.
{ printf '{"traceEvents":[{"ph":"X","pid":1,"tid":1,"name":"a","cat":"'; head -c 10000000 /dev/zero | tr '\0' c
  printf '","ts":1,"dur":2},{"ph":"X","pid":1,"tid":1,"name":"b","cat":"'; head -c 10000000 /dev/zero | tr '\0' c
  printf 'd","ts":5,"dur":2}]}'; } > "$tmp/long-names.json"
"$jqtrace" stats --format csv "$tmp/long-names.json" > "$tmp/out" 2> "$tmp/err"
expect_status "stats of 10 MB names" 0 $?
grep -q "2 names longer than 4096 bytes were cut" "$tmp/err" || fail "10 MB names: no warning ($(cat "$tmp/err"))"
[ "$(stat -c %s "$tmp/out")" -lt 20000 ] || fail "10 MB names: the table is $(stat -c %s "$tmp/out") bytes"
[ "$(grep -c 'cut: 1000000' "$tmp/out")" -eq 2 ] || fail "10 MB names: not two groups, each marked cut"

# --- A second jobqueProfile or traceEvents array is a warning, at any -j -----------------
python3 - "$tmp/dup.json" << 'EOF'
import json, sys
events = [{"ph": "X", "pid": 1, "tid": 1, "name": "a%d" % (i % 5), "ts": i, "dur": 1} for i in range(3000)]
profile = json.dumps({"version": 1, "categories": [], "markers": []})
def array(evs): return "[" + ",\n".join(json.dumps(e) for e in evs) + "]"
open(sys.argv[1], "w").write('{"jobqueProfile":%s,"traceEvents":%s,\n"traceEvents":%s,\n"jobqueProfile":%s}'
                             % (profile, array(events), array(events[:100]), profile))
EOF
gzip -c "$tmp/dup.json" > "$tmp/dup.json.gz"
for file in dup.json dup.json.gz; do
  for j in 1 2; do
    out=$(JQTRACE_MIN_PART_BYTES=4096 "$jqtrace" validate -j $j "$tmp/$file" 2>&1)
    expect_status "validate -j $j $file with two profiles and two arrays" 0 $?
    if ! grep -q ":3001:15: warning: a second traceEvents array: its events are read as well \[duplicate-root-key\]" <<< "$out" ||
       ! grep -q ":3101:17: warning: a second jobqueProfile: it replaces the first \[duplicate-root-key\]" <<< "$out"; then
      fail "validate -j $j $file: the second traceEvents and jobqueProfile not warned of: $out"
    fi
  done
done
"$gen" --workers 2 --tokens 3 --layers 4 --seed 3 | JQTRACE_MIN_PART_BYTES=4096 "$jqtrace" validate -j 2 - 2>&1 |
  grep -q duplicate-root-key && fail "a generated trace read in parts: a prefix taken for a second traceEvents"

# --- X spans that overlap without nesting: a validate warning, the same at any -j ----------
# 40 lanes, every 7th span on a lane starting inside the one before and ending after it.
awk 'BEGIN { printf "{\"traceEvents\":[\n";
  for (i = 0; i < 4000; i++) { lane = i % 40; k = int(i / 40); ts = k * 100 + ((k % 7 == 3) ? -70 : 0);
    printf "{\"ph\":\"X\",\"name\":\"s\",\"cat\":\"c\",\"pid\":1,\"tid\":%d,\"ts\":%d,\"dur\":60},\n", lane, ts }
  printf "{\"ph\":\"X\",\"name\":\"s\",\"pid\":1,\"tid\":0,\"ts\":100000,\"dur\":1}]}\n" }' > "$tmp/overlaps.json"
gzip -c "$tmp/overlaps.json" > "$tmp/overlaps.json.gz"
serial=$("$jqtrace" validate -j 1 "$tmp/overlaps.json" 2>&1)
[ "$(grep -c 'X spans on lane .* start inside the span before them and end after it' <<< "$serial")" -eq 40 ] ||
  fail "overlapping X spans: not one warning a lane: $(head -3 <<< "$serial")"
grep -q "^$tmp/overlaps.json:[0-9]*:1: warning: 14 X spans on lane 1:0 " <<< "$serial" ||
  fail "overlapping X spans: lane 1:0 does not count 14: $(grep '1:0 ' <<< "$serial")"
for file in overlaps.json overlaps.json.gz; do
  for j in 2 3; do
    got=$(JQTRACE_MIN_PART_BYTES=4096 "$jqtrace" validate -j $j "$tmp/$file" 2>&1)
    [ "$(sed 's/\.gz:/:/' <<< "$got")" = "$serial" ] || fail "overlapping X spans: validate -j $j $file differs from -j 1"
  done
done
"$jqtrace" validate -q samples/chrome-small.json > /dev/null 2>&1 || fail "chrome-small.json is no longer valid"

# --- A closed pipe ends jqtrace quietly, not by SIGPIPE -----------------------------------
"$gen" --workers 3 --tokens 20 --layers 20 --seed 5 -o "$tmp/p.json"
"$jqtrace" window --us 0 1e9 "$tmp/p.json" 2> "$tmp/err" | head -c 10 > /dev/null
status=${PIPESTATUS[0]}
expect_status "window into a closed pipe" 0 "$status"
grep -q "write failed" "$tmp/err" && fail "window into a closed pipe complained: $(cat "$tmp/err")"
"$jqtrace" stats --fail-if 'idle >= 0' "$tmp/p.json" 2> /dev/null | head -c 1 > /dev/null
expect_status "a tripped gate into a closed pipe" 1 "${PIPESTATUS[0]}"

[ $failures -eq 0 ] || exit 1
echo "hostile input: ok"
