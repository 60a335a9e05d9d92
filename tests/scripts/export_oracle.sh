#!/usr/bin/env bash
# SQLite as the oracle of export's page writer (issue 67): every database export writes is
# rebuilt by SQLite itself, through its own INSERTs (ATTACH, INSERT ... SELECT in one
# transaction, into the schema export declared), and the two must hold the same rows,
# table by table (EXCEPT both ways, each value with its typeof, and the counts), and the
# same entries in every index and primary key, in the same order (an ordered scan of each
# through that index); each key found again by a lookup through its index's interior pages;
# and PRAGMA integrity_check and foreign_key_check clean. The values themselves are checked
# against the commands (stats, markers, gaps, latency) by export.sh.
source "$(dirname "$0")/lib/prelude.bash"
gen=$2
command -v python3 > /dev/null || { echo "export_oracle: skipped: no python3"; exit 77; }
python3 -c 'import sqlite3' 2> /dev/null || { echo "export_oracle: skipped: python3 has no sqlite3"; exit 77; }

oracle() {  # oracle NAME DB
  python3 - "$2" << 'PY' || fail "$1: SQLite's own database differs from export's"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
assert db.execute("PRAGMA foreign_key_check").fetchall() == []
schema = db.execute("SELECT type, name, tbl_name, sql FROM sqlite_schema WHERE sql IS NOT NULL ORDER BY rowid").fetchall()
db.execute("ATTACH ':memory:' AS ref")
for kind, name, table, sql in schema:  # the same declarations, in ref
    db.execute(sql.replace("CREATE TABLE " + name, "CREATE TABLE ref." + name, 1)
                  .replace("CREATE INDEX " + name, "CREATE INDEX ref." + name, 1)
                  .replace("CREATE VIEW " + name, "CREATE VIEW ref." + name, 1))
tables = [name for kind, name, _, _ in schema if kind == "table"]
db.execute("BEGIN")
for t in tables:
    db.execute(f"INSERT INTO ref.{t} SELECT * FROM main.{t}")
db.execute("COMMIT")
def columns(t):
    return [r[1] for r in db.execute(f"PRAGMA main.table_info({t})")]
for t in tables:
    cols = columns(t)
    typed = ", ".join(f"typeof({c}), {c}" for c in cols)
    for a, b in (("main", "ref"), ("ref", "main")):
        extra = db.execute(f"SELECT {typed} FROM {a}.{t} EXCEPT SELECT {typed} FROM {b}.{t} LIMIT 3").fetchall()
        assert not extra, (t, a, "has rows", b, "lacks", extra)
    n = [db.execute(f"SELECT count(*) FROM {s}.{t}").fetchone()[0] for s in ("main", "ref")]
    assert n[0] == n[1], (t, n)
# Every index and every WITHOUT ROWID primary key: its entries in its order, both sides.
keyed = []
def primary_key(t):
    return [c for _, c in sorted((r[5], r[1]) for r in db.execute(f"PRAGMA main.table_info({t})") if r[5])]
without_rowid = {name for kind, name, _, sql in schema if kind == "table" and "WITHOUT ROWID" in sql}
for kind, name, table, sql in schema:
    if kind == "index":
        # An index's entries end in its row's rowid, or a WITHOUT ROWID table's primary key.
        tail = primary_key(table) if table in without_rowid else ["rowid"]
        keyed.append((table, name, [r[2] for r in db.execute(f"PRAGMA main.index_info({name})")], tail))
    elif name in without_rowid:
        keyed.append((name, None, primary_key(name), []))
for table, index, cols, tail in keyed:
    order = ", ".join(cols + [c for c in tail if c not in cols])
    by = "" if index is None else f" INDEXED BY {index}"
    scans = [db.execute(f"SELECT {order} FROM {s}.{table}{by} ORDER BY {order}").fetchall()
             for s in ("main", "ref")]
    assert scans[0] == scans[1], (table, index, "ordered scans differ")
    # Each distinct key found by an equality lookup through the tree (its interior pages).
    where = " AND ".join(f"{c} IS ?" for c in cols)
    keys = sorted(set(tuple(r[:len(cols)]) for r in scans[0]), key=lambda k: tuple((v is None, str(type(v)), v if v is not None else 0) for v in k))
    step = max(1, len(keys) // 400)
    for k in keys[::step]:
        got = db.execute(f"SELECT count(*) FROM main.{table}{by} WHERE {where}", k).fetchone()[0]
        want = sum(1 for r in scans[0] if tuple(r[:len(cols)]) == k)
        assert got == want, (table, index, k, got, want)
print(len(tables), "tables,", len(keyed), "keyed trees")
PY
}

export_and_check() {  # export_and_check NAME FILE...
  local name=$1; shift
  "$jqtrace" export -q "$@" -o "$tmp/$name.sqlite" || { fail "$name: export exit $?"; return; }
  oracle "$name" "$tmp/$name.sqlite" > /dev/null
}

export_and_check decode-small samples/decode-small.trace.json
export_and_check legacy-small samples/legacy-small.trace.json
export_and_check ring-full samples/ring-full.trace.json
export_and_check chrome-small samples/chrome-small.json
export_and_check array-form samples/array-form.json
"$gen" --workers 7 --tokens 6 --layers 6 --seed 5 -o "$tmp/g8.json"
"$gen" --workers 31 --tokens 3 --layers 4 --seed 6 -o "$tmp/g32.json"
export_and_check generated-8-lanes "$tmp/g8.json"
export_and_check fleet samples/decode-small.trace.json samples/chrome-small.json "$tmp/g8.json" "$tmp/g32.json"
# Names of 1 to 4 KiB (the longest the model keeps) in every tree that holds them: span,
# thread and marker kind names, cats; a few cells to a page. (Export's 64 KiB pages keep
# such keys whole: the overflow paths are swept in sqlite_pages_test, at 512 B to 64 KiB.)
python3 - "$tmp/long.json" << 'PY'
import json, sys
events, t = [], 0
for k, n in enumerate([1000, 3000, 4000, 4090]):
    name = ("n%d" % k) + "x" * n
    events.append({"ph": "M", "name": "thread_name", "pid": 1, "tid": k, "args": {"name": "t" * n}})
    for j in range(30):
        events.append({"ph": "X", "pid": 1, "tid": k, "name": name, "cat": "c" * (n - j), "ts": t, "dur": 5})
        events.append({"ph": "i", "s": "t", "pid": 1, "tid": k, "name": "m" * n, "ts": t + 1})
        t += 10
json.dump({"traceEvents": events}, open(sys.argv[1], "w"))
PY
export_and_check long-names "$tmp/long.json"
corpus=../shared/corpus
if [ -d "$corpus" ]; then
  for f in "$corpus"/jobque/*.trace.json.gz "$corpus"/chrome/big_trace.json; do
    [ -e "$f" ] && export_and_check "corpus-$(basename "$f")" "$f"
  done
else
  echo "export_oracle: ../shared/corpus absent, corpus traces skipped"
fi
echo "export_oracle: $failures failed"
[ $failures -eq 0 ]
