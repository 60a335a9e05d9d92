#!/usr/bin/env bash
# whatif (issue 68, SPEC §2 "What-if"): the replay with no change gives back every recorded
# time (the trace's length and every unit of every kind, on the samples and generated
# traces: 3, 8 and 32 lanes, a full ring); on generator twins (one seed with and without a
# group's chunks halved) it predicts each token within 5% at the median and the total
# change within 20%; the rank (the causal profile) is largest first, monotone in the
# speedup, and names first the group whose halving saved most in the twins; bad changes
# are refused with exit 2.
source "$(dirname "$0")/lib/prelude.bash"
gen=$2
command -v python3 > /dev/null || { echo "whatif: skipped: no python3"; exit 77; }

identity() {  # identity NAME FILE: no change, every unit of every kind as recorded
  local kinds
  kinds=$("$jqtrace" markers -q --format json "$2" | python3 -c 'import json, sys; print(" ".join(k["kind"] for k in json.load(sys.stdin)["kinds"]))')
  for kind in "" $kinds; do
    "$jqtrace" whatif -q --format json ${kind:+--per-unit "$kind"} "$2" > "$tmp/w.json" || { fail "$1: whatif exit $?"; return; }
    python3 - "$tmp/w.json" << 'PY' || fail "$1 ${kind:-(scope)}: the replay with no change moved something"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["replay"]["identity_error_us"] == 0, d["replay"]
assert d["scope"]["measured_us"] == d["scope"]["predicted_us"], d["scope"]
for k in d["kinds"]:
    for q in ("p50", "p90", "max"):
        assert k[f"measured_{q}_us"] == k[f"predicted_{q}_us"], k
for u in d.get("units", []):
    assert u["measured_us"] == u["predicted_us"], u
PY
  done
}
for f in decode-small.trace.json legacy-small.trace.json ring-full.trace.json single-lane.trace.json tiny.trace.json; do
  identity "$f" "samples/$f"
done
"$gen" --workers 2 --tokens 4 --layers 6 --seed 11 -o "$tmp/g3.json"
"$gen" --workers 7 --tokens 4 --layers 6 --seed 12 -o "$tmp/g8.json"
"$gen" --workers 31 --tokens 3 --layers 4 --seed 13 -o "$tmp/g32.json"
"$gen" --workers 3 --tokens 6 --layers 4 --seed 14 --ring 1=300 -o "$tmp/ring.json"
for g in g3 g8 g32 ring; do identity "generated $g" "$tmp/$g.json"; done
if [ -d ../shared/corpus/jobque ]; then
  for f in ../shared/corpus/jobque/*.json.gz; do identity "corpus $(basename "$f")" "$f"; done
else
  echo "whatif: corpus identity skipped: ../shared/corpus is absent"
fi

# Twins: a group's chunks at half the cost. Per token and in total, predicted against what
# the twin measured: ffn chain, and moe experts (5% of its chunks preempted: their work is
# the group's median, not the cap; the cap overstated their saving by a third).
twin=(--workers 3 --tokens 30 --layers 8 --seed 5 --noise additive --fixed-stream)
"$gen" "${twin[@]}" -o "$tmp/a.json"
for change in "3:ffn chain" "6:moe experts"; do
  "$gen" "${twin[@]}" --scale "${change%%:*}=0.5" -o "$tmp/b.json"
  "$jqtrace" whatif -q --scale "${change#*:}=0.5" --per-unit token --format json "$tmp/a.json" > "$tmp/p.json"
  "$jqtrace" whatif -q --per-unit token --format json "$tmp/b.json" > "$tmp/m.json"
  python3 - "$tmp/p.json" "$tmp/m.json" << 'PY' || fail "twins, ${change#*:} x0.5: the prediction misses the twin"
import json, statistics, sys
p, m = (json.load(open(f)) for f in sys.argv[1:3])
measured = {u["idx"]: u["measured_us"] for u in m["units"]}
errors = [abs(u["predicted_us"] - measured[u["idx"]]) / measured[u["idx"]] for u in p["units"]]
assert len(errors) == 30, len(errors)
assert statistics.median(errors) <= 0.05, statistics.median(errors)
# The change itself, token by token: the predicted saving against the twin's (the
# duration alone would hide a wrong graph behind a small change).
base_of = {u["idx"]: u["measured_us"] for u in p["units"]}
moved = [abs((u["predicted_us"] - base_of[u["idx"]]) - (measured[u["idx"]] - base_of[u["idx"]])) /
         abs(measured[u["idx"]] - base_of[u["idx"]]) for u in p["units"] if measured[u["idx"]] != base_of[u["idx"]]]
assert len(moved) >= 25 and statistics.median(moved) <= 0.1, statistics.median(moved)
base = p["scope"]["measured_us"]
want, got = m["scope"]["measured_us"] - base, p["scope"]["predicted_us"] - base
assert want < 0 and abs(got - want) <= 0.2 * abs(want), (want, got)
PY
done
# A factor of 1 changes nothing; halving two groups saves more than halving one.
"$jqtrace" whatif -q --scale 'ffn chain=1' --format json "$tmp/a.json" | python3 -c '
import json, sys; d = json.load(sys.stdin); assert d["scope"]["measured_us"] == d["scope"]["predicted_us"]' ||
  fail "a factor of 1 changed the replay"
one=$("$jqtrace" whatif -q --scale 'ffn chain=0.5' --format json "$tmp/a.json" | python3 -c 'import json, sys; print(json.load(sys.stdin)["scope"]["predicted_us"])')
two=$("$jqtrace" whatif -q --scale 'ffn chain=0.5' --scale 'attn chain=0.5' --format json "$tmp/a.json" | python3 -c 'import json, sys; print(json.load(sys.stdin)["scope"]["predicted_us"])')
python3 -c "import sys; sys.exit(0 if $two < $one else 1)" || fail "two groups halved ($two us) not shorter than one ($one us)"

# The rank: a row per (candidate, 25/50/100%), largest first, each candidate's saving
# growing with its speedup (the replay is monotone in every duration); and its first group
# the one whose halving saved most in the twins.
"$jqtrace" whatif -q --rank --format json "$tmp/a.json" > "$tmp/rank.json" || fail "rank: exit $?"
measured=""
for change in "3:ffn chain" "6:moe experts" "1:attn chain" "2:attn std"; do
  "$gen" "${twin[@]}" --scale "${change%%:*}=0.5" -o "$tmp/half.json"
  measured+="${change#*:}=$("$jqtrace" whatif -q --format json "$tmp/half.json" | python3 -c 'import json, sys; print(json.load(sys.stdin)["scope"]["measured_us"])');"
done
python3 - "$tmp/rank.json" "$measured" << 'PY' || fail "rank: $(head -c 600 "$tmp/rank.json")"
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["rank"]
savings = [r["saving_us"] for r in rows]
assert savings == sorted(savings, reverse=True), "not largest first"
by_group = {}
for r in rows:
    by_group.setdefault(r["group"], {})[r["speedup_pct"]] = r["saving_us"]
for g, s in by_group.items():
    assert sorted(s) == [25, 50, 100], (g, s)
    assert s[25] <= s[50] <= s[100], (g, s)
for special in ("publish", "wake-up", "imbalance"):
    assert special in by_group, special
assert d["unit_kind"] in ("token", "step") and d["unit_median_us"] > 0
base = d["scope"]["measured_us"]
twins = {kv.split("=")[0]: base - float(kv.split("=")[1]) for kv in sys.argv[2].strip(";").split(";")}
best_measured = max(twins, key=twins.get)
best_predicted = max(twins, key=lambda g: by_group[g][50])
assert best_measured == best_predicted, (twins, {g: by_group[g][50] for g in twins})
PY
"$jqtrace" whatif -q --rank --format csv "$tmp/a.json" | head -1 | grep -qx "group,speedup_pct,saving_us,saving_pct,unit_saving_us,unit_saving_pct" ||
  fail "rank: CSV header: $("$jqtrace" whatif -q --rank --format csv "$tmp/a.json" | head -1)"

# Work and span of a unit, known by hand: two chains in token 0, the second published after
# the first completed: each a 10 us publish, a stage of 30 and 50 us chunks on two lanes,
# then a 20 us chunk. Work 2 x 110 us; span 2 x (10 + 50 + 20) = 160 us; parallelism 1.375.
python3 - > "$tmp/ws.json" << 'PY'
import json
ev = [{"ph": "M", "pid": 1, "tid": t, "name": "thread_name", "args": {"name": n}} for t, n in ((0, "w0"), (1, "w1"), (2, "caller"))]
def x(tid, ts, dur, name, chain, stage=0, arg=0):
    ev.append({"ph": "X", "pid": 1, "tid": tid, "ts": ts, "dur": dur, "name": name, "args": {"chain": chain, "stage": stage, "arg": arg}})
for k, t0 in enumerate((0, 100)):
    chain = 2 * k + 2
    x(2, t0, 10, "publish", chain, 2 | (1 << 8), 3)
    x(0, t0 + 10, 30, "chunk", chain, 0, 0)
    x(1, t0 + 10, 50, "chunk", chain, 0, 1)
    x(2, t0 + 10, 50, "stage_wait", chain, 0)
    x(0, t0 + 60, 20, "chunk", chain, 1, 0)
    x(2, t0 + 60, 21, "stage_wait", chain, 1)
ev.append({"ph": "i", "s": "t", "pid": 1, "tid": 2, "ts": 0, "name": "token", "args": {"arg": 0}})
ev.append({"ph": "i", "s": "t", "pid": 1, "tid": 2, "ts": 190, "name": "token", "args": {"arg": 1}})
print(json.dumps({"traceEvents": ev, "jobqueProfile": {"categories": [{"id": 1, "name": "ffn chain", "color": "#ff0000"}], "markers": [{"id": 1, "name": "token"}]}}))
PY
"$jqtrace" whatif -q --unit-at start --per-unit token --format json "$tmp/ws.json" > "$tmp/ws-out.json" || fail "work/span: exit $?"
python3 - "$tmp/ws-out.json" << 'PY' || fail "work/span: $(cat "$tmp/ws-out.json" | head -c 1500)"
import json, sys
d = json.load(open(sys.argv[1]))
w = d["work_span"][0]
assert (w["chains"], w["work_us"], w["span_us"]) == (2, 220, 160), w
assert abs(w["parallelism"] - 1.375) < 1e-9, w
assert w["floor_us"] == 160 and w["floor_2x_us"] == 160, w  # 3 lanes: max(220 / 3, 160)
assert d["replay"]["identity_error_us"] == 0
PY
# Work never below span, a floor never below either bound, on generated tokens.
"$jqtrace" whatif -q --per-unit token --format json "$tmp/a.json" | python3 -c '
import json, sys
for w in json.load(sys.stdin)["work_span"]:
    assert w["span_us"] <= w["work_us"] and w["parallelism"] >= 1, w
    assert w["floor_us"] >= max(w["span_us"], w["work_us"] / 4 - 0.001) and w["floor_2x_us"] <= w["floor_us"], w' ||
  fail "work/span on generated tokens"

# A unit scope: its length measured and predicted, as the unit's row in --per-unit says.
"$jqtrace" whatif -q --scale 'ffn chain=0.5' --per-unit token --format json "$tmp/a.json" > "$tmp/all.json"
"$jqtrace" whatif -q --scale 'ffn chain=0.5' --marker token 7..8 --format json "$tmp/a.json" > "$tmp/scope.json"
python3 - "$tmp/all.json" "$tmp/scope.json" << 'PY' || fail "a unit scope: $(head -c 800 "$tmp/scope.json")"
import json, sys
a, s = (json.load(open(f)) for f in sys.argv[1:3])
units = {u["idx"]: u for u in a["units"]}
assert s["scope"]["label"].startswith("--marker token 7..8"), s["scope"]
# (the two tokens and the 0.05 us a step marker stands between them)
assert abs(s["scope"]["measured_us"] - units[7]["measured_us"] - units[8]["measured_us"]) < 0.1, s["scope"]
assert abs(s["scope"]["predicted_us"] - units[7]["predicted_us"] - units[8]["predicted_us"]) < 0.1, s["scope"]
assert [k["units"] for k in s["kinds"] if k["kind"] == "token"] == [2]
PY

# --lanes: at the recorded lanes with no change, the measured durations; fewer lanes never
# faster, more never slower; the model's own error at the recorded lanes under 5%.
lanes_of() { "$jqtrace" whatif -q --lanes "$1" --format json "$tmp/a.json" | python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["scope"]["predicted_us"], d["replay"]["model_error_pct"], d["replay"]["recorded_lanes"])'; }
read -r same error recorded <<< "$(lanes_of 4)"
[ "$recorded" = 4 ] || fail "--lanes: recorded lanes $recorded, want 4"
python3 -c "import sys; sys.exit(0 if abs($same - $(python3 -c 'import json; print(json.load(open("'"$tmp/rank.json"'"))["scope"]["measured_us"])')) < 0.002 and $error < 5 else 1)" ||
  fail "--lanes 4 on a 4-lane trace: $same us, model error $error%"
# The text says what the figure is: a bound (no contention modelled), beside its error.
"$jqtrace" whatif -q --lanes 6 "$tmp/a.json" | grep -q "on 6 lanes: a model of the claim rule with no contention" ||
  fail "--lanes: the text does not say the prediction is a bound"
previous=""
for n in 1 2 3 4 6 8 16; do
  read -r t _ _ <<< "$(lanes_of $n)"
  [ -z "$previous" ] || python3 -c "import sys; sys.exit(0 if $t <= $previous + 0.001 else 1)" || fail "--lanes $n ($t us) slower than fewer ($previous us)"
  previous=$t
done
# Lane twins (--fixed-stream: one seed with 3 and 5 workers, every chunk and every worker's
# claim latency alike): --lanes 6 on the 4-lane trace predicts the 6-lane twin's tokens,
# per-token error at most 0.15 % at the median (0.06 % here), the median token's change
# within 10 % of the twin's (-1.66 % predicted, -1.72 % measured). A marker lane that runs
# no chunks while it waits (the rule's second half) misses both: 0.26 %, -1.89 %.
lane_twin=(--tokens 40 --layers 8 --seed 21 --noise additive --fixed-stream)
"$gen" "${lane_twin[@]}" --workers 3 -o "$tmp/l4.json"
"$gen" "${lane_twin[@]}" --workers 5 -o "$tmp/l6.json"
"$jqtrace" whatif -q --lanes 6 --per-unit token --format json "$tmp/l4.json" > "$tmp/lp.json"
"$jqtrace" whatif -q --per-unit token --format json "$tmp/l6.json" > "$tmp/lm.json"
python3 - "$tmp/lp.json" "$tmp/lm.json" << 'PY' || fail "lane twins: --lanes 6 misses the 6-lane twin"
import json, statistics, sys
p, m = (json.load(open(f)) for f in sys.argv[1:3])
measured = {u["idx"]: u["measured_us"] for u in m["units"]}
units = [u for u in p["units"] if u["idx"] in measured]
assert len(units) == 40, len(units)
errors = [abs(u["predicted_us"] - measured[u["idx"]]) / measured[u["idx"]] for u in units]
assert statistics.median(errors) <= 0.0015, statistics.median(errors)
want = statistics.median(measured[u["idx"]] / u["measured_us"] - 1 for u in units)
got = statistics.median(u["predicted_us"] / u["measured_us"] - 1 for u in units)
assert want < 0 and abs(got - want) <= 0.1 * abs(want), (want, got)
PY

# The report's section: the rank's chart (a line per thing, at most 8) and its table, its
# median unit of the kind whatif --rank measures (the report took another before).
"$jqtrace" report -q -o "$tmp/r.html" "$tmp/a.json" || fail "report: exit $?"
kind=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["unit_kind"])' "$tmp/rank.json")
python3 - "$tmp/r.html" "$kind" << 'PY' || fail "report: no causal profile, or another unit kind than whatif --rank's ($kind)"
import re, sys
html = open(sys.argv[1]).read()
section = html[html.index('id="whatif"'):]
svg = section[section.index('<svg'):section.index('</svg>')]
assert 'class="rank"' in svg
lines = re.findall(r'<path d="M', svg)
assert 3 <= len(lines) <= 8, len(lines)
assert "imbalance" in svg and "ffn chain" in svg
assert "predicted saving if it cost less" in section
assert re.search(r"-25%: median " + re.escape(sys.argv[2]) + r"\b", section), sys.argv[2]
PY

# Shapes no tracer writes: stage numbers past 255 and negative, chain ids at the int64 edge,
# chunks with no publish, waits on stages without chunks, a chain published twice, a chunk
# before its publish and one nested in a span, all at one time: every mode runs, exit 0.
python3 - > "$tmp/odd.json" << 'PY'
import json
ev = []
def x(tid, ts, dur, name, chain, stage=0, arg=0):
    ev.append({"ph": "X", "pid": 1, "tid": tid, "ts": ts, "dur": dur, "name": name, "args": {"chain": chain, "stage": stage, "arg": arg}})
big = 9223372036854775807
x(2, 0, 5, "publish", big, 2 | (1 << 8)); x(0, 6, 3, "chunk", big, 0); x(0, 10, 3, "chunk", big, 1)
x(2, 5, 10, "stage_wait", big, 1)
x(2, 20, 5, "publish", -big - 1, 1 | (1 << 8)); x(1, 19, 4, "chunk", -big - 1, 0)   # before its publish
x(1, 30, 2, "chunk", 77, 300); x(1, 33, 2, "chunk", 77, 301); x(1, 36, 2, "chunk", 77, -5)  # no publish, odd stages
x(2, 40, 3, "stage_wait", 99, 0)                                              # a stage with no chunks
x(2, 50, 2, "publish", 5, 1 | (3 << 8)); x(0, 53, 1, "chunk", 5, 0)
x(2, 60, 2, "publish", 5, 1 | (3 << 8)); x(0, 63, 1, "chunk", 5, 0)            # published twice
x(0, 70, 10, "fifo_job", 0); x(0, 72, 2, "chunk", 5, 0)                         # nested in a span
x(0, 90, 0, "chunk", 8, 0); x(1, 90, 0, "chunk", 8, 0); x(2, 90, 0, "publish", 8, 1 | (1 << 8))  # all at once
for t, k in ((0, 0), (45, 1), (95, 2)):
    ev.append({"ph": "i", "s": "t", "pid": 1, "tid": 2, "ts": t, "name": "token", "args": {"arg": k}})
print(json.dumps({"traceEvents": ev, "jobqueProfile": {"categories": [{"id": 1, "name": "a"}, {"id": 3, "name": "b"}], "markers": [{"id": 1, "name": "token"}]}}))
PY
for args in "" "--scale a=0.5 --scale b=0" "--publish all=0 --no-wake --balance" "--rank" "--lanes 1" "--lanes 7 --scale a=2" \
            "--per-unit token --unit-at start" "--marker token 0 --unit-at start"; do
  # shellcheck disable=SC2086
  timeout 60 "$jqtrace" whatif -q $args --format json "$tmp/odd.json" > "$tmp/odd-out.json" 2> "$tmp/err"
  status=$?
  [ $status -eq 0 ] && python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$tmp/odd-out.json" ||
    fail "odd shapes, whatif $args: exit $status: $(head -c 400 "$tmp/err")"
done

# Cycles: the caller runs a chunk of a chain before it publishes it (the chunk waits on the
# publish, the publish follows the chunk on its lane) and a stage-1 chunk runs before its
# stage 0 on the lane that then runs stage 0. A replay reads what closes a cycle as
# recorded: with no change every recorded time comes back, and the cycles are counted.
python3 - > "$tmp/cycles.json" << 'PY'
import json
ev = []
def x(tid, ts, dur, name, chain, stage=0):
    ev.append({"ph": "X", "pid": 1, "tid": tid, "ts": ts, "dur": dur, "name": name, "args": {"chain": chain, "stage": stage, "arg": 0}})
x(2, 10, 2, "chunk", 4, 0); x(2, 15, 5, "publish", 4, 2 | (1 << 8)); x(0, 21, 3, "chunk", 4, 0); x(1, 22, 6, "chunk", 4, 1)
x(2, 20, 10, "stage_wait", 4, 0); x(0, 30, 4, "chunk", 4, 1); x(2, 31, 5, "stage_wait", 4, 1)
x(1, 40, 2, "publish", 6, 2 | (1 << 8)); x(0, 41, 2, "chunk", 6, 1); x(0, 44, 3, "chunk", 6, 0); x(1, 45, 4, "stage_wait", 6, 0)
for t, k in ((0, 0), (35, 1), (60, 2)):
    ev.append({"ph": "i", "s": "t", "pid": 1, "tid": 2, "ts": t, "name": "token", "args": {"arg": k}})
print(json.dumps({"traceEvents": ev, "jobqueProfile": {"categories": [{"id": 1, "name": "a"}], "markers": [{"id": 1, "name": "token"}]}}))
PY
"$jqtrace" whatif -q --per-unit token --format json "$tmp/cycles.json" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["replay"]["cycles"] >= 2 and d["replay"]["identity_error_us"] == 0, d["replay"]
assert d["scope"]["predicted_us"] == d["scope"]["measured_us"], d["scope"]
assert all(u["predicted_us"] == u["measured_us"] for u in d["units"]), d["units"]' ||
  fail "cycles: the replay with no change did not give the recording back"

# Refusals: exit 2 with a message.
refused() {  # refused WHAT WANT ARGS...
  local what=$1 want=$2
  shift 2
  "$jqtrace" whatif "$@" > /dev/null 2> "$tmp/err"
  local status=$?
  [ $status -eq 2 ] || fail "$what: exit $status, want 2"
  grep -q "$want" "$tmp/err" || fail "$what: message: $(cat "$tmp/err")"
}
refused "an unknown group" "did you mean 'ffn chain'" --scale 'ffn chian=0.5' samples/decode-small.trace.json
refused "a bad factor" "GROUP=F" --scale 'ffn chain=half' samples/decode-small.trace.json
refused "a negative factor" "GROUP=F" --scale 'ffn chain=-1' samples/decode-small.trace.json
refused "a generic trace" "not a jobque trace" samples/chrome-small.json
refused "an unknown kind" "token" --per-unit tokn samples/decode-small.trace.json
refused "--rank with a change" "alone" --rank --scale 'ffn chain=0.5' samples/decode-small.trace.json
refused "a time scope" "not a time range" --ms 1 2 samples/decode-small.trace.json
refused "--rank with a scope" "whole trace" --rank --marker token 1 samples/decode-small.trace.json
refused "--rank with --lanes" "alone" --rank --lanes 8 samples/decode-small.trace.json

[ $failures -eq 0 ] && echo "whatif: ok" || exit 1
