#!/usr/bin/env bash
# export --append (issue 67): a fleet that grows a run at a time. Appending runs equals
# exporting them all at once, table by table (EXCEPT both ways with typeof, and counts); a
# file whose bytes are already in the database is skipped, saying so; a database export did
# not write, a missing one and -o with --append are refused (exit 2); a failed or
# interrupted append leaves the database byte for byte as it was and no temporary beside
# it. (A kill inside the SQLite transaction itself: sqlite_export_test.cc.)
source "$(dirname "$0")/lib/prelude.bash"
gen=$2
samples="$(dirname "$0")/../../samples"
command -v python3 > /dev/null || { echo "export_append: skipped: no python3"; exit 77; }
python3 -c 'import sqlite3' 2> /dev/null || { echo "export_append: skipped: python3 has no sqlite3"; exit 77; }
a=$samples/decode-small.trace.json
b=$samples/legacy-small.trace.json.gz
c=$samples/ring-full.trace.json

same_tables() {  # same_tables NAME DB1 DB2
  python3 - "$2" "$3" << 'PY' || fail "$1: the databases differ"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("ATTACH ? AS other", (sys.argv[2],))
tables = [r[0] for r in db.execute("SELECT name FROM main.sqlite_schema WHERE type = 'table' ORDER BY name")]
assert tables == [r[0] for r in db.execute("SELECT name FROM other.sqlite_schema WHERE type = 'table' ORDER BY name")]
for t in tables:
    cols = [r[1] for r in db.execute(f"PRAGMA main.table_info({t})")]
    typed = ", ".join(f"typeof({c}), {c}" for c in cols)
    for x, y in (("main", "other"), ("other", "main")):
        extra = db.execute(f"SELECT {typed} FROM {x}.{t} EXCEPT SELECT {typed} FROM {y}.{t} LIMIT 3").fetchall()
        assert not extra, (t, x, "has", extra)
    n = [db.execute(f"SELECT count(*) FROM {s}.{t}").fetchone()[0] for s in ("main", "other")]
    assert n[0] == n[1] and n[0] > 0, (t, n)
assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
assert db.execute("PRAGMA foreign_key_check").fetchall() == []
PY
}
runs() { python3 -c 'import sqlite3, sys; print(",".join(str(r[0]) for r in sqlite3.connect(sys.argv[1]).execute("SELECT run FROM runs ORDER BY run")))' "$1"; }
leftovers() { ls -A "$tmp" | grep -c 'jqtrace-append' || true; }

# Two appends of one run each (one of them gzip) equal the three-file export.
"$jqtrace" export -q "$a" "$b" "$c" -o "$tmp/all.db" || fail "three-file export failed"
"$jqtrace" export -q "$a" -o "$tmp/grown.db" || fail "one-file export failed"
"$jqtrace" export -q --append "$tmp/grown.db" "$b" || fail "append of $b failed"
"$jqtrace" export -q --append "$tmp/grown.db" "$c" || fail "append of $c failed"
same_tables "two appends" "$tmp/grown.db" "$tmp/all.db"
[ "$(runs "$tmp/grown.db")" = "1,2,3" ] || fail "runs after two appends: $(runs "$tmp/grown.db")"
# Two runs in one append alike.
"$jqtrace" export -q "$a" -o "$tmp/two.db" && "$jqtrace" export -q --append "$tmp/two.db" "$b" "$c" ||
  fail "a two-run append failed"
same_tables "a two-run append" "$tmp/two.db" "$tmp/all.db"

# The same bytes again (under another name, too) are skipped, saying so; exit 0, nothing changed.
cp "$c" "$tmp/copy.json"
before=$(md5sum < "$tmp/grown.db")
"$jqtrace" export --append "$tmp/grown.db" "$tmp/copy.json" "$b" 2> "$tmp/err"
status=$?
[ $status -eq 0 ] || fail "appending files already in the database: exit $status"
grep -q "copy.json: skipped: its bytes are run 3 of $tmp/grown.db already" "$tmp/err" || fail "no skip warning: $(cat "$tmp/err")"
grep -q "legacy-small.trace.json.gz: skipped: its bytes are run 2" "$tmp/err" || fail "no skip warning for $b"
[ "$before" = "$(md5sum < "$tmp/grown.db")" ] || fail "an append of nothing new changed the database"
# A file given twice in one append counts once.
"$jqtrace" export -q "$a" -o "$tmp/twice.db"
"$jqtrace" export --append "$tmp/twice.db" "$b" "$b" 2> "$tmp/err" || fail "append of a file given twice failed"
[ "$(runs "$tmp/twice.db")" = "1,2" ] || fail "a file given twice added twice: $(runs "$tmp/twice.db")"
grep -q "skipped: the same bytes as" "$tmp/err" || fail "no warning for a file given twice: $(cat "$tmp/err")"

# Refusals: exit 2, nothing touched.
refused() {  # refused WHAT ARGS...
  local what=$1
  shift
  "$jqtrace" export "$@" 2> "$tmp/err" > /dev/null
  local status=$?
  [ $status -eq 2 ] || fail "$what: exit $status, want 2"
  grep -q "^jqtrace: " "$tmp/err" || fail "$what: no message: $(cat "$tmp/err")"
}
python3 -c 'import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute("CREATE TABLE runs(run INTEGER PRIMARY KEY)")' "$tmp/other.db"
before=$(md5sum < "$tmp/other.db")
refused "a database export did not write" --append "$tmp/other.db" "$a"
grep -q "not the ones this jqtrace writes" "$tmp/err" || fail "other database: $(cat "$tmp/err")"
[ "$before" = "$(md5sum < "$tmp/other.db")" ] || fail "a refused append changed another database"
refused "a missing database" --append "$tmp/missing.db" "$a"
[ -e "$tmp/missing.db" ] && fail "a refused append created the database"
echo '{"not": "sqlite"}' > "$tmp/text.db"
refused "a text file" --append "$tmp/text.db" "$a"
refused "-o with --append" --append "$tmp/grown.db" -o "$tmp/x.db" "$a"

# A run that fails to load (after one that loads): the database as it was, no temporary left.
before=$(md5sum < "$tmp/grown.db")
echo 'not json' > "$tmp/cut.json"
"$jqtrace" export -q --append "$tmp/grown.db" "$samples/tiny.trace.json" "$tmp/cut.json" 2> "$tmp/err"
[ $? -ne 0 ] || fail "appending a broken trace succeeded"
[ "$before" = "$(md5sum < "$tmp/grown.db")" ] || fail "a failed append changed the database"
[ "$(leftovers)" = 0 ] || fail "a failed append left a temporary: $(ls -A "$tmp")"

# Interrupted while its runs are exported (a trace big enough to catch it at that): the
# same, for SIGTERM, SIGINT and SIGHUP. An append can finish between the temporary being
# seen and the signal (a fast build exports this trace in ~0.1 s, and the machine may be
# busy): then the database is put back and the signal tried again, up to 5 times.
"$gen" --workers 7 --tokens 120 --layers 8 --seed 3 -o "$tmp/big.json"
cp "$tmp/grown.db" "$tmp/kept.db"
for signal in TERM INT HUP; do
  interrupted=0
  for _ in 1 2 3 4 5; do
    "$jqtrace" export -q -j 1 --append "$tmp/grown.db" "$tmp/big.json" &
    append=$!
    for _ in $(seq 400); do [ "$(leftovers)" != 0 ] && break; sleep 0.01; done
    [ "$(leftovers)" != 0 ] && kill -"$signal" $append 2> /dev/null
    wait $append 2> /dev/null
    status=$?
    if [ $status -eq 0 ]; then  # done before the signal: not a test of an interruption
      cp "$tmp/kept.db" "$tmp/grown.db"
      continue
    fi
    interrupted=1
    [ "$before" = "$(md5sum < "$tmp/grown.db")" ] || fail "SIG$signal: an interrupted append changed the database"
    [ "$(leftovers)" = 0 ] || fail "SIG$signal: an interrupted append left a temporary: $(ls -A "$tmp")"
    break
  done
  [ $interrupted = 1 ] || fail "SIG$signal: 5 appends finished before the signal reached them"
done

[ $failures -eq 0 ] && echo "export_append: ok" || exit 1
