#!/usr/bin/env bash
# The documented queries of export's database (README, jqtrace-export(1); their plans are
# pinned by tests/scripts/export.sh) timed on big generated traces' databases, 3, 8 and 32
# lanes: the median of REPEAT runs of each, in ms, a fresh connection each time (the file in
# the page cache: the first run warms it and is not counted).
#
#   bash bench/export_queries.sh [SIZE_MB] [REPEAT]     (default 570 MB per trace, 7 runs)
# Needs a Release build in build/ (bash build.sh demo makes one) and python3's sqlite3.
set -euo pipefail
cd "$(dirname "$0")/.."
size_mb=${1:-570}
repeat=${2:-7}
build=${BUILD_DIR:-build}
out=bench/out
mkdir -p "$out"
cmake --build "$build" --target jqtrace jqtrace-gen >/dev/null
for lane_count in ${LANES:-3 8 32}; do
  workers=$((lane_count - 1))
  trace="$out/bench-${size_mb}mb-w${workers}.trace.json"
  [ -f "$trace" ] || "$build/jqtrace-gen" --workers "$workers" --size-mb "$size_mb" --seed 7 -o "$trace"
  db="$out/bench-${size_mb}mb-w${workers}.sqlite"
  "$build/jqtrace" export -q -o "$db" "$trace"
  python3 - "$db" "$repeat" "$lane_count" "$(stat -c %s "$trace")" "$(stat -c %s "$db")" << 'PY'
import sqlite3, statistics, sys, time
path, repeat, lanes, trace_bytes, db_bytes = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
db = sqlite3.connect(path)
# A 1 ms stretch in the middle of lane 2's spans, and a token in the middle of the run.
lo, hi = db.execute("SELECT min(ts_ns), max(ts_ns) FROM spans WHERE run = 1 AND lane = 2").fetchone()
mid = (lo + hi) // 2
token = db.execute("SELECT count(*) / 2 FROM units WHERE run = 1 AND kind = 'token'").fetchone()[0]
spans = db.execute("SELECT count(*) FROM spans").fetchone()[0]
db.close()
queries = [
    ("busy per category in token N", f"SELECT g.name, busy_ns / 1000.0 AS busy_us FROM unit_groups JOIN groups g USING(run, grp) WHERE run = 1 AND kind = 'token' AND idx = {token} ORDER BY busy_ns DESC LIMIT 3"),
    ("slowest chains of a category", "SELECT chain, wall_ns / 1000.0 AS wall_us, chunks FROM chains WHERE run = 1 AND grp = (SELECT grp FROM groups WHERE run = 1 AND name = 'moe experts') ORDER BY wall_ns DESC LIMIT 3"),
    ("slowest chains, through chain_view", "SELECT chain, wall_us, chunks FROM chain_view WHERE run = 1 AND grp_name = 'moe experts' ORDER BY wall_us DESC LIMIT 3"),
    ("share per run over the fleet", "SELECT r.file, round(100.0 * g.trace_busy_ns / (SELECT sum(trace_busy_ns) FROM groups WHERE run = g.run), 1) AS moe_pct FROM groups g JOIN runs r USING(run) WHERE g.name = 'moe experts'"),
    ("a lane's spans in a 1 ms range", f"SELECT name, ts_ns, dur_ns FROM spans WHERE run = 1 AND lane = 2 AND ts_ns BETWEEN {mid} AND {mid + 1000000}"),
    ("latency of the slowest token", "SELECT grp_name, class, us FROM latency_view WHERE run = 1 AND kind = 'token' AND idx = (SELECT idx FROM units WHERE run = 1 AND kind = 'token' ORDER BY dur_ns DESC LIMIT 1) ORDER BY us DESC"),
]
print(f"\n{lanes} lanes: {path} ({db_bytes / 1e6:.1f} MB database of a {trace_bytes / 1e6:.1f} MB trace, {spans} spans), median of {repeat} runs")
print("| query | rows | median ms | max ms |\n|---|---:|---:|---:|")
for label, sql in queries:
    times = []
    for k in range(repeat + 1):
        c = sqlite3.connect(path)
        t = time.perf_counter()
        rows = c.execute(sql).fetchall()
        times.append((time.perf_counter() - t) * 1000)
        c.close()
    times = times[1:]
    print(f"| {label} | {len(rows)} | {statistics.median(times):.2f} | {max(times):.2f} |")
PY
done
echo
echo "target (issue 67): each documented query under 50 ms on the 570 MB trace's database"
