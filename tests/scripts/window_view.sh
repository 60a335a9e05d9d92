#!/usr/bin/env bash
# window --view: a window for eyes that jqtrace still reads as the plain window.
#  - stats, markers and latency of a --view window (rebased too) equal those of the plain
#    window of the same scope, and so those of the original's scope (window_roundtrip.sh);
#  - validate reads it with the plain window's events, 0 errors, and says what --view added;
#  - what the file holds: every jobque span named "<category> · kind" with cat the category
#    and its own name in args.jqtrace_name; a slice per unit on a track per marker kind,
#    sorted above the lanes; flows in s/f pairs with distinct ids; "not recorded" where a
#    lane stopped;
#  - --view writes a trace: --format csv is refused.
# Samples and generated traces always; the corpus's jobque traces when present.
source "$(dirname "$0")/lib/prelude.bash"
gen=$2
"$gen" --tokens 5 --layers 6 --seed 31 -o "$tmp/gen.json"
"$gen" --tokens 4 --layers 6 --seed 32 --ring 1=150 -o "$tmp/ring.json"
files=("$tmp/gen.json" "$tmp/ring.json" samples/decode-small.trace.json samples/ring-full.trace.json)
if [ -d ../shared/corpus/jobque ]; then
  files+=(../shared/corpus/jobque/*.trace.json.gz)
else
  echo "note: ../shared/corpus is absent: the corpus's traces are skipped"
fi

# Each analysis's JSON of a window, without the file's name.
readings() {
  local file=$1
  for command in stats markers latency; do
    "$jqtrace" "$command" -q --format json "$file" 2>&1 | sed "s|$file|FILE|g"
  done
}

# check_content VIEW_WINDOW RING GROUPS WANT: the file's view, read by Python's json (GROUPS:
# stats' group names of the window, one a line: a span's cat is one of them; WANT: "token
# flows" when the window has token units and flows are due).
check_content() {
  python3 - "$1" "$2" "$3" "$4" << 'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ring = sys.argv[2] == "ring"
want = sys.argv[4].split()
events = d["traceEvents"]
cats = set(open(sys.argv[3]).read().splitlines())
jobque = {"publish", "chunk", "stage_wait", "wake", "fifo_job"}
kinds = {"publish": "publish", "chunk": "chunk", "stage_wait": "wait"}
renamed = 0
for e in events:
    args = e.get("args", {})
    if e.get("ph") == "X" and "jqtrace_name" in args:
        renamed += 1
        own = args["jqtrace_name"]
        assert own in jobque, e
        if own in kinds:
            assert e["name"] == e["cat"] + " \u00b7 " + kinds[own], e
        assert e["cat"] in cats, (e, cats)
        if own == "chunk":
            assert args["chunk"] == args["arg"], e
    elif e.get("ph") == "X" and "jqtrace_view" not in args and e.get("name") in jobque:
        raise AssertionError("a jobque span not renamed: %s" % e)
assert renamed > 0
tracks = {}
sort = {}
for e in events:
    if e.get("ph") == "M" and e["name"] == "thread_name" and e["args"].get("jqtrace_view") == "track":
        tracks[(e["pid"], e["tid"])] = e["args"]["name"]
    if e.get("ph") == "M" and e["name"] == "thread_sort_index":
        sort[(e["pid"], e["tid"])] = e["args"]["sort_index"]
assert "token" not in want or "token" in tracks.values(), tracks
lanes = {(e["pid"], e["tid"]) for e in events if e.get("ph") == "X" and "jqtrace_view" not in e.get("args", {})}
assert not tracks or max(sort[t] for t in tracks) < min(sort[l] for l in lanes if l in sort), (sort, tracks)
units = [e for e in events if e.get("args", {}).get("jqtrace_view") == "unit"]
assert all((e["pid"], e["tid"]) in tracks for e in units)
assert "token" not in want or any(tracks[(e["pid"], e["tid"])] == "token" for e in units)
starts = {e["id"] for e in events if e.get("ph") == "s"}
ends = [e["id"] for e in events if e.get("ph") == "f"]
assert len(starts) == len(ends) == len(set(ends)) and starts == set(ends), (len(starts), len(ends))
assert starts or "flows" not in want
for e in events:
    if e.get("ph") == "s":
        assert e["args"]["jqtrace_view"] == "flow"
    if e.get("ph") == "f":
        assert e["bp"] == "e" and list(e["args"]) == ["jqtrace_flow"]
not_recorded = [e for e in events if e.get("name") == "not recorded"]
assert not ring or not_recorded, "no not-recorded stretch on a ring trace"
assert d["jqtraceWindow"]["view"] is True
print(renamed, len(units), len(starts), len(not_recorded))
PY
}

check() {
  local file=$1; shift
  "$jqtrace" window -q "$@" "$file" -o "$tmp/plain.json" 2> /dev/null
  local status=$?
  [ $status -eq 2 ] && return  # a scope this trace has not
  [ $status -eq 0 ] || { fail "window $* $file: exit $status"; return; }
  "$jqtrace" window -q --view "$@" "$file" -o "$tmp/view.json" || { fail "window --view $* $file"; return; }
  "$jqtrace" window -q --view --rebase "$@" "$file" -o "$tmp/rebased.json" || { fail "window --view --rebase $* $file"; return; }
  local plain
  plain=$(readings "$tmp/plain.json")
  [ "$plain" = "$(readings "$tmp/view.json")" ] ||
    { fail "stats/markers/latency of window --view $* of $file differ from the plain window's"
      diff <(echo "$plain") <(readings "$tmp/view.json") | head -6; }
  # A rebase moves the clock: compare the rebased plain window.
  "$jqtrace" window -q --rebase "$@" "$file" -o "$tmp/plain_rebased.json"
  [ "$(readings "$tmp/plain_rebased.json")" = "$(readings "$tmp/rebased.json")" ] ||
    fail "stats/markers/latency of window --view --rebase $* of $file differ from the plain window's"
  local vp vv
  vp=$("$jqtrace" validate "$tmp/plain.json" | sed "s|$tmp/plain.json||")
  vv=$("$jqtrace" validate "$tmp/view.json" | sed "s|$tmp/view.json||" | grep -v 'added for the viewer')
  [ "$vp" = "$vv" ] || { fail "validate of window --view $* of $file differs from the plain window's"; diff <(echo "$vp") <(echo "$vv") | head -4; }
  "$jqtrace" validate "$tmp/view.json" | grep -q 'added for the viewer' || fail "validate does not say what --view added ($* $file)"
  local ring=no
  case $file in *ring*) ring=ring ;; esac
  # Only a scope that reaches past the stop has a stretch not recorded: the whole trace's does.
  [ $# -eq 0 ] || ring=no
  "$jqtrace" stats -q --format csv "$tmp/plain.json" | tail -n +2 | cut -d, -f1 > "$tmp/groups.txt"
  local want=""
  [ "$("$jqtrace" markers -q --kind token --format csv "$tmp/plain.json" 2> /dev/null | wc -l)" -gt 1 ] && want=token
  [ "${1:-}" = --marker ] && want="$want flows"
  check_content "$tmp/view.json" "$ring" "$tmp/groups.txt" "$want" > /dev/null || fail "window --view $* of $file: content (above)"
}

for f in "${files[@]}"; do
  check "$f" --marker token 1
  check "$f" --marker layer 3..4
  check "$f" --marker token 0..1 --unit-at start
  check "$f" --us 1000 1500.5
  check "$f"
done

# Spans written in every way JSON allows: empty args, none, a cat of their own, an escaped
# name, a name given twice, args that are not an object. The view is JSON that Python reads,
# and jqtrace reads it as the plain window.
cat > "$tmp/odd.json" << 'EOF'
{"traceEvents":[
{"ph":"X","pid":1,"tid":1,"ts":0,"dur":5,"name":"publish","args":{"stage":1,"arg":2,"chain":7}},
{"ph":"X","pid":1,"tid":1,"ts":6,"dur":3,"name":"chunk","args":{}},
{"ph":"X","pid":1,"tid":2,"ts":6,"dur":4,"name":"chunk"},
{"ph":"X","pid":1,"tid":2,"ts":11,"dur":2,"cat":"mine","name":"ch\u0075nk","args":{"stage":0,"arg":1,"chain":7}},
{"name":"x","ph":"X","pid":1,"tid":1,"ts":12,"dur":1,"name":"stage_wait","args":{"stage":0,"arg":0,"chain":7}},
{"ph":"X","pid":1,"tid":1,"ts":14,"dur":1,"name":"chunk","args":5},
{"ph":"i","s":"t","pid":1,"tid":1,"ts":0,"name":"token","args":{"arg":0}},
{"ph":"i","s":"t","pid":1,"tid":1,"ts":10,"name":"token","args":{"arg":1}}
]}
EOF
"$jqtrace" window -q --view "$tmp/odd.json" -o "$tmp/odd_view.json" || fail "window --view of odd spans"
"$jqtrace" window -q "$tmp/odd.json" -o "$tmp/odd_plain.json"
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$tmp/odd_view.json" || fail "window --view of odd spans is not JSON"
[ "$(readings "$tmp/odd_plain.json")" = "$(readings "$tmp/odd_view.json")" ] ||
  { fail "window --view of odd spans reads differently from the plain window"
    diff <(readings "$tmp/odd_plain.json") <(readings "$tmp/odd_view.json") | head -6; }
[ "$("$jqtrace" validate "$tmp/odd_plain.json" | sed "s|$tmp/odd_plain.json||")" = \
  "$("$jqtrace" validate "$tmp/odd_view.json" | sed "s|$tmp/odd_view.json||" | grep -v 'added for the viewer')" ] ||
  fail "validate of window --view of odd spans differs from the plain window's"
grep -q '"cat":"mine","name"' "$tmp/odd_view.json" && fail "a span's own cat was not replaced"
grep -q '"jqtrace_cat":"mine"' "$tmp/odd_view.json" || fail "a span's own cat is not kept in args"
grep -q '"jqtrace_name":"ch\\u0075nk"' "$tmp/odd_view.json" || fail "a span's own name is not kept as the file had it"
grep -q '"chunk":0' "$tmp/odd_view.json" && fail "a chunk without args.arg was given an index"

# --view writes a trace.
"$jqtrace" window -q --view --format csv --marker token 1 samples/decode-small.trace.json > /dev/null 2> "$tmp/err.txt"
[ $? -eq 2 ] && grep -q -- '--view writes a trace' "$tmp/err.txt" || fail "window --view --format csv was not refused with exit 2"

echo "window --view: $failures failed"
[ $failures -eq 0 ]
