#!/usr/bin/env bash
# Hostile input, round 4 (issue 66): no output destroys a file (an existing database in a
# folder that cannot be written, a log, a gate file or a redirected stdin named as the
# output, a file that is no database under export), no death by SIGXFSZ, a closed pipe
# stops the writing, --junit never shares stdout with the data, a FIFO index is named, and
# names that differ only in a bad byte stay apart. Every case here failed before its fix.
source "$(dirname "$0")/lib/prelude.bash"
gen=$2

# expect WHAT WANT_STATUS ACTUAL_STATUS
expect() { [ "$3" -eq "$2" ] || fail "$1: exit $3 (want $2)"; }
# unchanged WHAT FILE COPY: FILE still holds what COPY holds.
unchanged() { cmp -s "$2" "$3" || fail "$1: $2 was changed ($(stat -c %s "$2") bytes)"; }

"$gen" --workers 2 --tokens 3 --layers 4 --seed 3 -o "$tmp/t.json"
cp "$tmp/t.json" "$tmp/t.orig"

# --- 1. export never empties an existing database -----------------------------------------
mkdir "$tmp/locked"
"$jqtrace" export -q "$tmp/t.json" -o "$tmp/locked/db.sqlite" || fail "export: the first database not written"
cp "$tmp/locked/db.sqlite" "$tmp/db.orig"
locked=""
if [ "$(id -u)" -eq 0 ] && chattr +i "$tmp/locked" 2> /dev/null; then  # root: an immutable folder
  locked=chattr
  "$jqtrace" export -q "$tmp/t.json" -o "$tmp/locked/db.sqlite" 2> "$tmp/err"
  status=$?
  chattr -i "$tmp/locked"
elif [ "$(id -u)" -ne 0 ]; then  # a user: a folder without write permission
  locked=chmod
  chmod a-w "$tmp/locked"
  "$jqtrace" export -q "$tmp/t.json" -o "$tmp/locked/db.sqlite" 2> "$tmp/err"
  status=$?
  chmod u+w "$tmp/locked"
fi
if [ -n "$locked" ]; then
  expect "export into a folder that cannot be written ($locked)" 3 "$status"
  unchanged "export into a folder that cannot be written ($locked)" "$tmp/locked/db.sqlite" "$tmp/db.orig"
  grep -q "cannot make a temporary file beside it" "$tmp/err" || fail "export into a locked folder: $(cat "$tmp/err")"
else
  echo "hostile_round4: the locked-folder export as root skipped: chattr +i is not supported here"
fi
# The same as an unprivileged user, in a folder of root's with a database that user may write.
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
if [ "$(id -u)" -eq 0 ] && command -v setpriv > /dev/null && ! as_nobody "$jqtrace" --version > /dev/null 2>&1; then
  echo "hostile_round4: the export as an unprivileged user skipped: nobody cannot run $jqtrace (a folder above it is private)"
elif [ "$(id -u)" -eq 0 ] && command -v setpriv > /dev/null; then
  mkdir "$tmp/theirs"
  cp "$tmp/db.orig" "$tmp/theirs/db.sqlite"
  chmod 755 "$tmp/theirs" "$tmp"
  chmod 666 "$tmp/theirs/db.sqlite"
  chmod 644 "$tmp/t.json"
  as_nobody "$jqtrace" export -q "$tmp/t.json" \
    -o "$tmp/theirs/db.sqlite" 2> "$tmp/err"
  expect "export as nobody into a folder of root's" 3 $?
  unchanged "export as nobody into a folder of root's" "$tmp/theirs/db.sqlite" "$tmp/db.orig"
  # Other commands write such a file only once their data is complete (spooled elsewhere).
  as_nobody "$jqtrace" stats -q --format csv "$tmp/t.json" \
    -o "$tmp/theirs/db.sqlite" 2> "$tmp/err"
  expect "stats -o a writable file in a folder of root's, as nobody" 0 $?
  "$jqtrace" stats -q --format csv "$tmp/t.json" | cmp -s - "$tmp/theirs/db.sqlite" ||
    fail "stats -o a writable file in a folder of root's: not the data"
  chmod 700 "$tmp"
else
  echo "hostile_round4: the export as an unprivileged user skipped (not root, or no setpriv)"
fi

# --- 2. phases never writes over its own log ----------------------------------------------
printf '[p] rounds=1 | a=1.0 b=2.0\n[p] rounds=1 | a=1.5 b=2.5\n' > "$tmp/log.txt"
cp "$tmp/log.txt" "$tmp/log.orig"
ln -s "$tmp/log.txt" "$tmp/log-link.txt"
for out in "-o $tmp/log.txt" "-o $tmp/log-link.txt" "--junit $tmp/log.txt -o $tmp/p.csv"; do
  # shellcheck disable=SC2086
  "$jqtrace" phases "$tmp/log.txt" --fail-if 'share(a) > 90' $out > /dev/null 2> "$tmp/err"
  expect "phases log.txt $out" 2 $?
  unchanged "phases log.txt $out" "$tmp/log.txt" "$tmp/log.orig"
  grep -q "that is the log being read" "$tmp/err" || fail "phases $out: $(cat "$tmp/err")"
done
"$jqtrace" phases -o "$tmp/log.txt" < "$tmp/log.txt" 2> /dev/null
expect "phases -o log.txt < log.txt" 2 $?
unchanged "phases -o log.txt < log.txt" "$tmp/log.txt" "$tmp/log.orig"

# --- 3. an output that is the redirected stdin --------------------------------------------
for command in "stats --format json" "window --marker token 1" "markers --kind token" "export -"; do
  cp "$tmp/t.orig" "$tmp/s.json"
  # shellcheck disable=SC2086
  "$jqtrace" $command -q -o "$tmp/s.json" < "$tmp/s.json" > /dev/null 2> "$tmp/err"
  expect "$command -o s.json < s.json" 2 $?
  unchanged "$command -o s.json < s.json" "$tmp/s.json" "$tmp/t.orig"
  grep -q "that is the trace being read" "$tmp/err" || fail "$command -o s.json < s.json: $(cat "$tmp/err")"
done

# --- 4. a gate file named as an output ------------------------------------------------------
echo 'share(attn chain) > 200' > "$tmp/gates"
cp "$tmp/gates" "$tmp/gates.orig"
for out in "-o $tmp/gates" "--junit $tmp/gates"; do
  # shellcheck disable=SC2086
  "$jqtrace" stats -q "$tmp/t.json" --gate-file "$tmp/gates" $out > /dev/null 2> "$tmp/err"
  expect "stats --gate-file G $out" 2 $?
  unchanged "stats --gate-file G $out" "$tmp/gates" "$tmp/gates.orig"
  grep -q "that is the gate file being read" "$tmp/err" || fail "stats --gate-file G $out: $(cat "$tmp/err")"
done
# A saved baseline is an input too.
"$jqtrace" stats -q --format json "$tmp/t.json" > "$tmp/base.json"
cp "$tmp/base.json" "$tmp/base.orig"
"$jqtrace" stats -q "$tmp/t.json" --baseline "$tmp/base.json" --max-share-delta 5 -o "$tmp/base.json" 2> /dev/null
expect "stats --baseline B -o B" 2 $?
unchanged "stats --baseline B -o B" "$tmp/base.json" "$tmp/base.orig"

# --- 5. export replaces only a database (or nothing) --------------------------------------
echo "my notes" > "$tmp/notes.txt"
cp "$tmp/notes.txt" "$tmp/notes.orig"
"$jqtrace" export -q "$tmp/t.json" -o "$tmp/notes.txt" 2> "$tmp/err"
expect "export -o notes.txt" 2 $?
unchanged "export -o notes.txt" "$tmp/notes.txt" "$tmp/notes.orig"
grep -q "is not a SQLite database" "$tmp/err" || fail "export -o notes.txt: $(cat "$tmp/err")"
"$jqtrace" export -q "$tmp/t.json" -o "$tmp/locked/db.sqlite" || fail "export over a database: refused"
: > "$tmp/empty.sqlite"
"$jqtrace" export -q "$tmp/t.json" -o "$tmp/empty.sqlite" || fail "export over an empty file: refused"
ls -a "$tmp" | grep -q jqtrace- && fail "export left a temporary file: $(ls -a "$tmp")"

# --- 6. SIGXFSZ: past ulimit -f, an output error (exit 3), not a signal -------------------
"$gen" --workers 3 --size-mb 2 --seed 1 -o "$tmp/big.json"
for command in "window --us 0 1e12 -o $tmp/w.json" "export -o $tmp/x.sqlite" "window --us 0 1e12"; do
  # shellcheck disable=SC2086
  (ulimit -f 64; exec "$jqtrace" $command -q "$tmp/big.json" > "$tmp/stdout" 2> "$tmp/err")
  expect "ulimit -f 64: $command" 3 $?
  grep -q "File too large\|disk I/O error\|too large" "$tmp/err" || fail "ulimit -f: $command: $(cat "$tmp/err")"
done
ls -a "$tmp" | grep -q "jqtrace-" && fail "ulimit -f: a temporary output was left: $(ls -a "$tmp" | grep jqtrace-)"
[ -e "$tmp/w.json" ] && fail "ulimit -f: window left a partial -o file"
[ -e "$tmp/x.sqlite" ] && fail "ulimit -f: export left a partial database"

# --- 7. a closed pipe stops the writing ---------------------------------------------------
if command -v strace > /dev/null; then
  strace -f -e trace=write -o "$tmp/trace" "$jqtrace" window -j 1 --us 0 1e12 "$tmp/big.json" 2> "$tmp/err" |
    head -c 10 > /dev/null
  failed=$(grep -c EPIPE "$tmp/trace")
  [ "$failed" -le 1 ] || fail "window | head -c 10: $failed writes failed with EPIPE (want 1)"
  grep -q "the reader closed the pipe after" "$tmp/err" || fail "window | head -c 10 said: $(cat "$tmp/err")"
else
  echo "hostile_round4: the closed pipe skipped: no strace"
fi

# --- 8. --junit -: only when the data goes elsewhere; --junit '': a usage error -----------
"$jqtrace" stats -q "$tmp/t.json" --fail-if 'share(attn chain) > 200' --junit - > "$tmp/out" 2> "$tmp/err"
expect "stats --junit - (data on stdout)" 2 $?
grep -q "standard output carries the data" "$tmp/err" || fail "--junit -: $(cat "$tmp/err")"
"$jqtrace" stats -q "$tmp/t.json" --fail-if 'share(attn chain) > 200' --junit '' > /dev/null 2> "$tmp/err"
expect "stats --junit ''" 2 $?
"$jqtrace" stats -q "$tmp/t.json" --fail-if 'share(attn chain) > 200' --junit - -o "$tmp/s.csv" > "$tmp/out"
expect "stats --junit - -o s.csv" 0 $?
grep -q "<testsuites>" "$tmp/out" || fail "--junit - -o s.csv: no XML on stdout"
grep -q "<testsuites>" "$tmp/s.csv" && fail "--junit - -o s.csv: XML in the data file"

# --- 9. a FIFO under an index's name is named, as every unusable index is -----------------
cp "$tmp/t.orig" "$tmp/f.json"
mkfifo "$tmp/f.json.jqx"
timeout 20 "$jqtrace" window --marker token 1 "$tmp/f.json" > /dev/null 2> "$tmp/err"
expect "window beside a FIFO index" 0 $?
grep -q "f.json.jqx: not a regular file (a FIFO); ignored" "$tmp/err" || fail "FIFO index: no warning: $(cat "$tmp/err")"

# --- 10. names that differ only in a bad byte stay apart ----------------------------------
printf '{"traceEvents":[\n{"ph":"X","name":"x\\u0000","ts":1,"dur":1,"pid":1,"tid":1},\n{"ph":"X","name":"x\xff","ts":3,"dur":1,"pid":1,"tid":1},\n{"ph":"X","name":"x\xfe","ts":5,"dur":1,"pid":1,"tid":1}\n]}\n' > "$tmp/bytes.json"
rows=$("$jqtrace" stats -q --by name --format csv "$tmp/bytes.json" | grep -c '^x')
[ "$rows" -eq 3 ] || fail "names x\\0, x\\xff, x\\xfe: $rows groups (want 3)"
"$jqtrace" stats -q --by name --format csv "$tmp/bytes.json" | grep -q '^x\\xff,' || fail "x\\xff is not shown as its escape"

echo "hostile_round4: $failures failed"
[ "$failures" -eq 0 ]
