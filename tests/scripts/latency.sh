#!/usr/bin/env bash
# latency end to end (SPEC §2 "Latency"): the parts add up to every scope and unit exactly,
# on generated traces whose changes the generator knows (chunks of one tag made slower, a
# caller ring that fills up), and on the corpus its publish class is what the old
# trace_publish_tail.py summed and each listed wait ends where its stage's last chunk did.
source "$(dirname "$0")/lib/prelude.bash"
gen=$2

# Sums in integer ns: every µs figure has 3 decimals, so none of them is rounded.
sum_check() {  # sum_check WHAT FILE.csv TOTAL_COLUMN FIRST_PART LAST_PART: every row's parts add up
  python3 - "$@" << 'PY' || fail "$1"
import csv, sys
what, path, total, first, last = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
rows = list(csv.DictReader(open(path)))
assert rows, f"{what}: no rows"
cols = list(rows[0].keys())
parts = cols[cols.index(first):cols.index(last) + 1]
ns = lambda v: round(float(v) * 1000)
bad = [r for r in rows if sum(ns(r[c]) for c in parts) != ns(r[total])]
assert not bad, f"{what}: {len(bad)} of {len(rows)} rows whose parts do not add up, first {bad[0]}"
PY
}

# --- Every unit of every kind, and the scope, on generated traces of 3 and 9 lanes --------
for workers in 2 8; do
  "$gen" --workers "$workers" --tokens 6 --layers 8 --seed "$workers" -o "$tmp/g$workers.json"
  for kind in token layer step; do
    "$jqtrace" latency -q --per-unit "$kind" --unit-at start --format csv "$tmp/g$workers.json" > "$tmp/u.csv" ||
      fail "latency --per-unit $kind on $workers workers: exit $?"
    sum_check "$workers workers, units of $kind" "$tmp/u.csv" dur_us "class.work" "class.not recorded"
  done
  "$jqtrace" latency -q --format json "$tmp/g$workers.json" > "$tmp/l.json"
  python3 - "$tmp/l.json" << 'PY' || fail "$workers workers: the scope's classes do not add up to its length"
import json, sys
d = json.load(open(sys.argv[1]))
ns = lambda v: round(v * 1000)
assert sum(ns(c["us"]) for c in d["classes"]) == ns(d["length_us"]), d["classes"]
assert sum(ns(r["us"]) for r in d["rows"]) == ns(d["length_us"])
assert d["lane_reason"] == "the marker lane"
PY
done

# --- A known change: ffn chain's chunks (tag 3) cost 3x; the caller's ffn chain work per ---
# --- token grows about 3x, attn chain's (tag 1) does not move --------------------------------
"$gen" --workers 2 --tokens 6 --layers 8 --seed 5 -o "$tmp/base.json"
"$gen" --workers 2 --tokens 6 --layers 8 --seed 5 --scale 3=3 -o "$tmp/slow.json"
for f in base slow; do "$jqtrace" latency -q --format json "$tmp/$f.json" > "$tmp/$f.l.json"; done
python3 - "$tmp/base.l.json" "$tmp/slow.l.json" << 'PY' || fail "a 3x costlier ffn chain does not show as 3x its work"
import json, sys
def work(path, group):
    return sum(r["us"] for r in json.load(open(path))["rows"] if r["group"] == group and r["class"] == "work")
ffn = work(sys.argv[2], "ffn chain") / work(sys.argv[1], "ffn chain")
attn = work(sys.argv[2], "attn chain") / work(sys.argv[1], "attn chain")
assert 2.7 < ffn < 3.3, f"ffn chain work x{ffn:.2f}"
assert 0.95 < attn < 1.05, f"attn chain work x{attn:.2f}"
PY

# --- A caller whose ring fills: after its last event, not recorded --------------------------
"$gen" --workers 2 --tokens 4 --layers 6 --ring 2=300 -o "$tmp/ring.json"
"$jqtrace" latency -q --format json "$tmp/ring.json" > "$tmp/ring.l.json" || fail "latency of a ring-full trace: exit $?"
python3 - "$tmp/ring.l.json" << 'PY' || fail "a stopped caller's tail is not 'not recorded'"
import json, sys
d = json.load(open(sys.argv[1]))
c = {r["class"]: r["us"] for r in d["classes"]}
stop, (lo, hi) = d["lane_stopped_us"], d["range_us"]
assert abs(c["not recorded"] - (hi - stop)) < 0.0015, (c["not recorded"], hi - stop)
PY

# --- The corpus: the old scripts' publish sum, and each listed wait against the chunks -----
# The publishes trace_publish_tail.py summed (all on the caller) are its publish class; the
# chunk window's rows say ended last in each listed wait's stage (trace_tail.py's last lane)
# is the one latency names, and the wait's imbalance ends where it ended.
corpus=../shared/corpus/jobque
if [ -d "$corpus" ]; then
  for f in "$corpus"/*.trace.json.gz; do
    name=$(basename "$f")
    "$jqtrace" gaps -q --format json "$f" > "$tmp/gaps.json"
    "$jqtrace" latency -q --format json "$f" > "$tmp/lat.json"
    "$jqtrace" window -q --format csv "$f" > "$tmp/events.csv"
    python3 - "$tmp/gaps.json" "$tmp/lat.json" "$tmp/events.csv" << 'PY' || fail "$name: latency disagrees with gaps or the chunks"
import csv, json, sys
gaps, lat = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
p = gaps["publish"]["dur_us"]
publish = {c["class"]: c["us"] for c in lat["classes"]}["publish"]
assert abs(p["count"] * p["mean"] - publish) < 0.0005 * p["count"], (p["count"] * p["mean"], publish)
ns = lambda v: round(float(v) * 1000)
chunks = {}
for r in csv.DictReader(open(sys.argv[3])):
    if r["name"] == "chunk":
        chunks.setdefault((int(r["chain"]), int(r["stage"])), []).append(r)
assert lat["waits"], "no waits listed"
for w in lat["waits"]:
    rows = chunks[(w["chain"], w["stage"])]
    last = max(rows, key=lambda r: ns(r["ts_us"]) + ns(r["dur_us"]))
    end = ns(last["ts_us"]) + ns(last["dur_us"])
    assert ns(w["last_chunk_us"]) == ns(last["dur_us"]) and w["last_lane"] == last["lane"], (w, last)
    first = min(ns(r["ts_us"]) for r in rows)
    assert ns(w["last_start_after_first_us"]) == ns(last["ts_us"]) - first, (w, first)
    if w["wake_up_us"] > 0:
        assert ns(w["at_us"]) + ns(w["wait_us"]) == end, (w, end)
PY
  done
else
  echo "latency: ../shared/corpus absent, corpus checks skipped"
fi

echo "latency: $failures failed"
[ "$failures" -eq 0 ]
