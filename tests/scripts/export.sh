#!/usr/bin/env bash
# export (issue 56): the database reproduces what the commands print — stats' busy per
# category (whole trace and a token), markers' units, gaps' chain walls and first claims,
# latency's parts — with the sqlite3 shell and README's queries; a fleet of runs is one
# database; a failed or interrupted export leaves nothing at -o.
source "$(dirname "$0")/lib/prelude.bash"
gen=$2
command -v sqlite3 > /dev/null || { echo "export: skipped: no sqlite3 shell (apt-get install sqlite3)"; exit 77; }

# busy_by_category FILE.sqlite [KIND IDX]: "name,busy_us" a category, as stats prints them,
# over the whole trace or one unit (README's first query).
busy_by_category() {
  if [ $# -eq 1 ]; then
    sqlite3 -list -separator , "$1" "SELECT g.name, printf('%.3f', sum(s.dur_ns) / 1000.0) FROM spans s JOIN groups g USING(run, grp)
                       WHERE s.name IN ('chunk', 'publish', 'fifo_job') GROUP BY g.name ORDER BY g.name"
  else
    sqlite3 -list -separator , "$1" "SELECT g.name, printf('%.3f', sum(min(s.end_ns, u.end_ns) - max(s.ts_ns, u.start_ns)) / 1000.0)
                       FROM units u JOIN spans s ON s.run = u.run AND s.ts_ns <= u.end_ns AND s.end_ns >= u.start_ns
                       JOIN groups g ON g.run = s.run AND g.grp = s.grp
                       WHERE u.kind = '$2' AND u.idx = $3 AND s.name IN ('chunk', 'publish', 'fifo_job')
                       GROUP BY g.name ORDER BY g.name"
  fi
}
stats_busy() {  # stats_busy TRACE [SCOPE...]: the categories with busy time, by name
  "$jqtrace" stats -q --format csv --columns name,busy_us "$@" | tail -n +2 | grep -v ',0.000$' | LC_ALL=C sort
}

# intact FILE.sqlite: SQLite's own check of every page, tree and index (export writes the
# pages itself, lib/export/sqlite_pages.h), and that a query by each index finds what a
# scan finds.
intact() {
  local verdict
  verdict=$(sqlite3 "$1" "PRAGMA integrity_check" 2>&1)
  [ "$verdict" = ok ] || fail "$1: integrity_check: $(echo "$verdict" | head -3)"
  [ "$(sqlite3 "$1" "SELECT count(*) FROM spans INDEXED BY spans_by_chain WHERE run = 1 AND chain IS (SELECT max(chain) FROM spans)")" = \
    "$(sqlite3 "$1" "SELECT count(*) FROM spans NOT INDEXED WHERE run = 1 AND chain IS (SELECT max(chain) FROM spans)")" ] ||
    fail "$1: spans_by_chain finds other spans than a scan"
  [ "$(sqlite3 "$1" "SELECT count(*) FROM latency INDEXED BY latency_by_unit WHERE run = 1 AND kind = (SELECT max(kind) FROM units) AND idx = 1")" = \
    "$(sqlite3 "$1" "SELECT count(*) FROM latency NOT INDEXED WHERE run = 1 AND kind = (SELECT max(kind) FROM units) AND idx = 1")" ] ||
    fail "$1: latency_by_unit finds other rows than a scan"
}

check_jobque() {  # check_jobque NAME TRACE
  local name=$1 trace=$2 db="$tmp/$1.sqlite"
  "$jqtrace" export -q "$trace" -o "$db" || { fail "$name: export exit $?"; return; }
  intact "$db"
  [ "$(busy_by_category "$db" | LC_ALL=C sort)" = "$(stats_busy "$trace")" ] ||
    fail "$name: busy per category differs from stats: $(diff <(busy_by_category "$db" | LC_ALL=C sort) <(stats_busy "$trace") | head -4)"
  [ "$(sqlite3 -list -separator , "$db" "SELECT name, printf('%.3f', trace_busy_ns / 1000.0) FROM groups WHERE trace_busy_ns > 0" |
       LC_ALL=C sort)" = "$(stats_busy "$trace")" ] || fail "$name: groups.trace_busy_ns differs from stats"
  if "$jqtrace" markers -q --format csv --columns kind,count "$trace" | grep -qE '^token,([2-9]|[1-9][0-9]+)$'; then
    [ "$(busy_by_category "$db" token 1 | LC_ALL=C sort)" = "$(stats_busy --marker token 1 "$trace")" ] ||
      fail "$name: token 1's busy per category differs from stats --marker token 1"
    [ "$(sqlite3 -list -separator , "$db" "SELECT idx, arg, printf('%.3f', start_us), printf('%.3f', end_us), printf('%.3f', dur_us)
                             FROM unit_view WHERE kind = 'token' ORDER BY idx")" = \
      "$("$jqtrace" markers -q --kind token --format csv --columns index,arg,start_us,end_us,dur_us "$trace" | tail -n +2)" ] ||
      fail "$name: the token units differ from markers --kind token"
  fi
  # unit_groups is markers --kind, unit by unit: the busy time its groups add up to, each
  # group's share of it, and the events.
  for kind in $("$jqtrace" markers -q --format csv --columns kind "$trace" | tail -n +2); do
    "$jqtrace" markers -q --kind "$kind" --format json "$trace" > "$tmp/units.json"
    python3 - "$db" "$tmp/units.json" "$kind" << 'PY' || fail "$name: unit_groups of $kind differ from markers --kind"
import json, math, sqlite3, sys
db, units, kind = sqlite3.connect(sys.argv[1]), json.load(open(sys.argv[2]))["units"], sys.argv[3]
rows = {}
for idx, name, busy, events in db.execute(
        "SELECT idx, g.name, busy_ns, events FROM unit_groups u JOIN groups g USING(run, grp) WHERE kind = ?", (kind,)):
    rows.setdefault(idx, {})[name] = (busy, events)
assert len(units) == db.execute("SELECT count(*) FROM units WHERE kind = ?", (kind,)).fetchone()[0]
for u in units:
    got = rows.get(u["index"], {})
    total = sum(b for b, _ in got.values())
    assert total == round(u["busy_us"] * 1000), (kind, u["index"], total, u["busy_us"])
    assert sum(e for _, e in got.values()) == u["events"], (kind, u["index"], u["events"])
    for name, share in u["share_pct"].items():
        busy = got.get(name, (0, 0))[0]
        assert math.isclose(100.0 * busy / total if total else 0.0, share, rel_tol=1e-9, abs_tol=1e-12), (kind, u["index"], name)
PY
  done
  # gaps' chain classes (by category): the chains, the longest wall and the smallest first
  # claim exactly (gaps computes on whole ns too), the mean wall to the thousandth of a ns
  # JSON writes a mean to; the parts of every unit add up to it, exactly; every latency row has its
  # group; every relation holds; the clocks are integers.
  "$jqtrace" gaps -q --by category --format json "$trace" > "$tmp/gaps.json"
  python3 - "$db" "$tmp/gaps.json" << 'PY' || fail "$name: chains or latency disagree with gaps or the units"
import json, math, sqlite3, sys
db, gaps = sqlite3.connect(sys.argv[1]), json.load(open(sys.argv[2]))
# gaps names chains itself: a guess that shares the trace's own name ("classifier*", SPEC
# §1.4) is one class with it there.
rows = {}
for name, n, wall_max, wall_sum, claim_min in db.execute(
        "SELECT g.name, count(*), max(wall_ns) / 1000.0, sum(wall_ns) / 1000.0, min(first_claim_ns) / 1000.0"
        " FROM chains c JOIN groups g USING(run, grp) WHERE publish_ts_ns IS NOT NULL GROUP BY g.name"):
    key = name.rstrip("*")
    m, top, total, low = rows.get(key, (0, -math.inf, 0.0, None))
    low = claim_min if low is None else (low if claim_min is None else min(low, claim_min))
    rows[key] = (m + n, max(top, wall_max), total + wall_sum, low)
rows = {k: (n, top, total / n, low) for k, (n, top, total, low) in rows.items()}
for c in gaps["classes"]:
    n, wall_max, wall_mean, claim_min = rows[c["name"]]
    assert n == c["n"] == c["wall_us"]["count"], (c["name"], n, c["n"])
    assert wall_max == c["wall_us"]["max"], (c["name"], wall_max, c["wall_us"]["max"])
    assert abs(wall_mean - c["wall_us"]["mean"]) <= 1e-6, (c["name"], wall_mean, c["wall_us"]["mean"])
    if c["first_claim_min_us"] is not None:
        assert claim_min == c["first_claim_min_us"], (c["name"], claim_min, c["first_claim_min_us"])
assert len(rows) == len(gaps["classes"]), (sorted(rows), [c["name"] for c in gaps["classes"]])
bad = db.execute("SELECT u.kind, u.idx, u.dur_ns, sum(l.ns) FROM units u JOIN latency l USING(run, kind, idx)"
                 " GROUP BY u.run, u.kind, u.idx HAVING u.dur_ns != sum(l.ns)").fetchall()
assert not bad, bad[:3]
rows, joined = (db.execute(q).fetchone()[0] for q in (
    "SELECT count(*) FROM latency", "SELECT count(*) FROM latency JOIN groups USING(run, grp)"))
assert rows == joined, ("latency rows without their group", rows, joined)
assert not db.execute("PRAGMA foreign_key_check").fetchall()
types = db.execute("SELECT DISTINCT typeof(ts_ns) || typeof(dur_ns) || typeof(end_ns) FROM spans").fetchall()
assert types == [("integerintegerinteger",)], types
PY
}

check_jobque decode-small samples/decode-small.trace.json
check_jobque legacy-small samples/legacy-small.trace.json
check_jobque ring-full samples/ring-full.trace.json
"$gen" --workers 7 --tokens 5 --layers 6 --seed 9 -o "$tmp/g8.json"
check_jobque generated-8-lanes "$tmp/g8.json"
corpus=../shared/corpus/jobque
if [ -d "$corpus" ]; then
  for f in "$corpus"/*.trace.json.gz; do check_jobque "$(basename "$f" .trace.json.gz)" "$f"; done
else
  echo "export: ../shared/corpus absent, corpus traces skipped"
fi

# latency's parts of a token are the latency command's.
"$jqtrace" export -q samples/decode-small.trace.json -o "$tmp/d.sqlite"
got=$(sqlite3 -list -separator , "$tmp/d.sqlite" "SELECT grp_name, class, printf('%.3f', us) FROM latency_view
                                     WHERE kind = 'token' AND idx = 1 ORDER BY us DESC, grp_name, class")
want=$("$jqtrace" latency -q --marker token 1 --format csv --columns group,class,us samples/decode-small.trace.json | tail -n +2)
[ "$got" = "$want" ] || fail "token 1's latency parts differ from latency --marker token 1: $(diff <(echo "$got") <(echo "$want") | head -4)"

# A generic trace: spans by cat, instants as markers; each cat's total time is stats'.
"$jqtrace" export -q samples/chrome-small.json -o "$tmp/c.sqlite" || fail "generic: export exit $?"
intact "$tmp/c.sqlite"
got=$(sqlite3 -list -separator , "$tmp/c.sqlite" "SELECT grp_name, printf('%.3f', sum(dur_us)) FROM span_view
                                    GROUP BY grp_name ORDER BY grp_name")
want=$("$jqtrace" stats -q --format csv --columns name,total_us samples/chrome-small.json | tail -n +2 | LC_ALL=C sort)
[ "$got" = "$want" ] || fail "generic: total per cat differs from stats: $got / $want"
[ "$(sqlite3 "$tmp/c.sqlite" "SELECT count(*) FROM markers")" -gt 0 ] || fail "generic: no markers"

# An epoch clock: the sub-µs digits survive, to the ns (REAL µs kept ...456.75 of ...456.789).
cat > "$tmp/epoch.json" << 'EOF2'
{"traceEvents":[{"ph":"X","pid":1,"tid":1,"name":"a","ts":1700000000123456.789,"dur":0.001},
{"ph":"X","pid":1,"tid":1,"name":"b","ts":1700000000123457.001,"dur":12.345},
{"ph":"i","s":"t","pid":1,"tid":1,"name":"tick","ts":1700000000123456.999}]}
EOF2
"$jqtrace" export -q "$tmp/epoch.json" -o "$tmp/e.sqlite" || fail "epoch: export exit $?"
[ "$(sqlite3 -list -separator , "$tmp/e.sqlite" "SELECT name, ts_ns, dur_ns, end_ns FROM spans ORDER BY ts_ns")" = \
  "$(printf 'a,1700000000123456789,1,1700000000123456790\nb,1700000000123457001,12345,1700000000123469346')" ] ||
  fail "epoch: the spans' clocks are not exact: $(sqlite3 "$tmp/e.sqlite" "SELECT name, ts_ns, dur_ns, end_ns FROM spans")"
[ "$(sqlite3 "$tmp/e.sqlite" "SELECT ts_ns FROM markers")" = 1700000000123456999 ] || fail "epoch: the marker's clock is not exact"

# A fleet: three runs in one database, each as exported alone; a share per run.
"$jqtrace" export -q samples/decode-small.trace.json samples/legacy-small.trace.json "$tmp/g8.json" -o "$tmp/fleet.sqlite" ||
  fail "fleet: export exit $?"
intact "$tmp/fleet.sqlite"
[ "$(sqlite3 "$tmp/fleet.sqlite" "SELECT group_concat(run || ':' || file, ' ') FROM runs")" = \
  "1:samples/decode-small.trace.json 2:samples/legacy-small.trace.json 3:$tmp/g8.json" ] || fail "fleet: runs table"
[ "$(sqlite3 "$tmp/fleet.sqlite" "SELECT count(*) FROM spans WHERE run = 3")" = \
  "$(sqlite3 "$tmp/generated-8-lanes.sqlite" "SELECT count(*) FROM spans")" ] || fail "fleet: run 3 is not its file's spans"
share=$(sqlite3 -list -separator , "$tmp/fleet.sqlite" "SELECT run, printf('%.1f', 100.0 * sum(CASE WHEN g.name = 'moe experts' THEN s.dur_ns END) / sum(s.dur_ns))
                                          FROM spans s JOIN groups g USING(run, grp) WHERE s.name IN ('chunk', 'publish', 'fifo_job')
                                          GROUP BY run ORDER BY run" | head -1)
[ "$share" = "1,$("$jqtrace" stats -q --format csv --columns name,share_pct samples/decode-small.trace.json |
                  awk -F, '$1 == "moe experts" { printf "%.1f", $2 }')" ] || fail "fleet: run 1's moe experts share: $share"
# The same from groups (README's fleet query: a lookup a run, not a scan of the spans).
shares=$(sqlite3 -list -separator , "$tmp/fleet.sqlite" "SELECT run, printf('%.3f', 100.0 * g.trace_busy_ns / (SELECT sum(trace_busy_ns) FROM groups WHERE run = g.run))
                                           FROM groups g WHERE g.name = 'moe experts' ORDER BY run")
want=$(n=0; for f in samples/decode-small.trace.json samples/legacy-small.trace.json "$tmp/g8.json"; do n=$((n + 1))
         "$jqtrace" stats -q --format json "$f" | python3 -c "import json, sys
g = [g for g in json.load(sys.stdin)['groups'] if g['name'] == 'moe experts']
print('$n,%.3f' % g[0]['share_pct'])"; done)
[ "$shares" = "$want" ] || fail "fleet: the shares from groups: $shares, want $want"

# The documented queries (README, jqtrace-export(1)) search their trees by key: no plan
# scans a table that grows with the trace (their plans, as the man page shows them).
while IFS= read -r query; do
  plan=$(sqlite3 "$tmp/fleet.sqlite" "EXPLAIN QUERY PLAN $query" 2>&1)
  if grep -qE 'SCAN (spans|chains|c|latency|l|unit_groups|units|markers|s)( |$)' <<< "$plan" || grep -q 'rror' <<< "$plan"; then
    fail "a documented query scans: $query: $plan"
  fi
done << 'QUERIES'
SELECT g.name, busy_ns / 1000.0 AS busy_us FROM unit_groups JOIN groups g USING(run, grp) WHERE run = 1 AND kind = 'token' AND idx = 1 ORDER BY busy_ns DESC LIMIT 3
SELECT chain, wall_ns / 1000.0 AS wall_us, chunks FROM chains WHERE run = 1 AND grp = (SELECT grp FROM groups WHERE run = 1 AND name = 'moe experts') ORDER BY wall_ns DESC LIMIT 3
SELECT r.file, round(100.0 * g.trace_busy_ns / (SELECT sum(trace_busy_ns) FROM groups WHERE run = g.run), 1) AS moe_pct FROM groups g JOIN runs r USING(run) WHERE g.name = 'moe experts'
SELECT name, ts_ns, dur_ns FROM spans WHERE run = 1 AND lane = 2 AND ts_ns BETWEEN 1000000 AND 2000000
SELECT grp_name, class, us FROM latency_view WHERE run = 1 AND kind = 'token' AND idx = (SELECT idx FROM units WHERE run = 1 AND kind = 'token' ORDER BY dur_ns DESC LIMIT 1) ORDER BY us DESC
QUERIES

# Nothing at -o unless complete: bad input (exit 3), no -o or an -o that is an input (exit
# 2), an interrupted export; and no temporary file left beside it.
mkdir "$tmp/out"
expect() {  # expect STATUS ARGS...: the exit status, and nothing left in $tmp/out
  local want=$1; shift
  "$jqtrace" export -q "$@" 2> "$tmp/err"
  local got=$?
  [ "$got" -eq "$want" ] || fail "export $*: exit $got, want $want: $(cat "$tmp/err")"
  [ -z "$(ls -A "$tmp/out")" ] || fail "export $*: left $(ls -A "$tmp/out")"
}
printf '{"traceEvents":[{"ph":"X",' > "$tmp/cut.json"
printf 'not a trace' > "$tmp/text.json"
expect 3 samples/decode-small.trace.json "$tmp/text.json" -o "$tmp/out/x.sqlite"
expect 3 "$tmp/missing.json" -o "$tmp/out/x.sqlite"
expect 2 samples/decode-small.trace.json
cp samples/tiny.trace.json "$tmp/out/in.json"
"$jqtrace" export -q "$tmp/out/in.json" -o "$tmp/out/in.json" 2> /dev/null
[ $? -eq 2 ] && cmp -s "$tmp/out/in.json" samples/tiny.trace.json || fail "export -o its own input: not refused or input changed"
rm "$tmp/out/in.json"
# Killed mid-export: the input is a pipe that stalls, so the export is surely under way
# (its temporary database made, the trace being read) whatever the machine's speed.
"$gen" --workers 3 --size-mb 4 --seed 4 -o "$tmp/big.json"
"$jqtrace" export -q - -o "$tmp/out/big.sqlite" < <(cat "$tmp/big.json"; sleep 3) &
pid=$!
sleep 0.5
[ -n "$(ls -A "$tmp/out")" ] || fail "an export under way has no temporary database (the kill below tests nothing)"
kill -TERM "$pid" 2> /dev/null
wait "$pid" 2> /dev/null
[ -z "$(ls -A "$tmp/out")" ] || fail "an export killed with SIGTERM left $(ls -A "$tmp/out")"

echo "export: $failures failed"
[ "$failures" -eq 0 ]
