#!/usr/bin/env bash
# Windows in a real viewer: Catapult's Trace Viewer (chrome://tracing's importer, built
# from its sources with trace2html) in headless chromium imports plain, --view and
# --view --rebase windows of samples and generated traces with 0 import warnings; a --view
# window's model holds its category-named slices, unit tracks and flows (counted against
# the file), and every lane's slices keep the plain window's nesting depths, rebased or not.
# Needs a Catapult checkout (JQTRACE_CATAPULT, else ../catapult; CI has no network to fetch
# one) and chromium: skipped, saying so, without either.
source "$(dirname "$0")/lib/prelude.bash"
gen=$2
catapult=${JQTRACE_CATAPULT:-../catapult}
if [ ! -f "$catapult/tracing/bin/trace2html" ]; then
  echo "viewer import: skipped: no Catapult checkout at $catapult (set JQTRACE_CATAPULT to one)"
  exit 77
fi
chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium" ]; then
  echo "viewer import: skipped: chromium is not installed"
  exit 77
fi

# The importer's model, summarised into the page: trace2html's own import waits for
# animation frames that headless chromium's --dump-dom does not give, so the probe imports
# the same traces with the same importer synchronously.
cat > "$tmp/probe.html" << 'EOF'
<script>
(function () {
  function summary(m) {
    const out = {warnings: m.importWarnings.map(w => w.type + ': ' + w.message), flows: m.flowEvents.length, threads: []};
    for (const p of Object.values(m.processes)) {
      for (const t of Object.values(p.threads)) {
        const depths = [];
        const names = {};
        for (const s of t.sliceGroup.slices) {
          let d = 0;
          for (let q = s.parentSlice; q; q = q.parentSlice) ++d;
          depths.push(d);
          names[s.title] = (names[s.title] || 0) + 1;
        }
        out.threads.push({tid: String(p.pid) + ':' + String(t.tid), name: t.name || '', slices: depths.length,
                          depths: depths.join(','), names: names});
      }
    }
    return out;
  }
  function probe() {
    if (typeof tr === 'undefined' || !tr.importer) { setTimeout(probe, 50); return; }
    const traces = [];
    const els = Polymer.dom(document).querySelectorAll('#viewer-data');
    for (let k = 0; k < els.length; k++) traces.push(tr.b.Base64.atob(Polymer.dom(els[k]).textContent.replace(/^\n+/, '')));
    let result;
    try {
      const model = new tr.Model();
      new tr.importer.Import(model).importTraces(traces);
      result = summary(model);
    } catch (e) {
      result = {error: String(e)};
    }
    const pre = document.createElement('pre');
    pre.textContent = 'JQPROBE' + JSON.stringify(result) + 'JQPROBE';
    document.body.appendChild(pre);
  }
  document.addEventListener('DOMContentLoaded', () => setTimeout(probe, 50));
})();
</script>
EOF

# model WINDOW OUT: the viewer's model of a window, as JSON in OUT.
model() {
  python3 "$catapult/tracing/bin/trace2html" "$1" --output "$tmp/page.html" > /dev/null 2>&1 ||
    { fail "trace2html $1"; return 1; }
  cat "$tmp/probe.html" >> "$tmp/page.html"
  timeout 120 "$chromium" --headless=new --no-sandbox --disable-gpu --virtual-time-budget=30000 --dump-dom \
    "file://$tmp/page.html" 2> /dev/null | grep -o 'JQPROBE{.*}JQPROBE' | sed 's/^JQPROBE//; s/JQPROBE$//' > "$2"
  [ -s "$2" ] || { fail "the viewer did not load $1"; return 1; }
}

"$gen" --tokens 4 --layers 6 --seed 41 --ring 1=200 -o "$tmp/ring.json"
imported=0
check() {
  local file=$1; shift
  "$jqtrace" window -q "$@" "$file" -o "$tmp/plain.json" &&
    "$jqtrace" window -q --view "$@" "$file" -o "$tmp/view.json" &&
    "$jqtrace" window -q --view --rebase "$@" "$file" -o "$tmp/rebased.json" || { fail "window $* $file"; return; }
  model "$tmp/plain.json" "$tmp/plain.model" && model "$tmp/view.json" "$tmp/view.model" &&
    model "$tmp/rebased.json" "$tmp/rebased.model" || return
  python3 - "$tmp" "$*" << 'PY' || fail "window $* of $file in the viewer (above)"
import json, sys
tmp, what = sys.argv[1], sys.argv[2]
models = {k: json.load(open(f"{tmp}/{k}.model")) for k in ("plain", "view", "rebased")}
view_file = json.load(open(f"{tmp}/view.json"))
for k, m in models.items():
    assert "error" not in m, (k, m)
    assert m["warnings"] == [], (k, m["warnings"][:5])
events = view_file["traceEvents"]
renamed = sum(1 for e in events if "jqtrace_name" in e.get("args", {}))
units = sum(1 for e in events if e.get("args", {}).get("jqtrace_view") == "unit")
flows = sum(1 for e in events if e.get("ph") == "s")
not_recorded = sum(1 for e in events if e.get("name") == "not recorded")
view = models["view"]
category_named = sum(n for t in view["threads"] for name, n in t["names"].items() if " \u00b7 " in name
                     or name in ("wake", "fifo job"))
tracks = {t["name"]: t for t in view["threads"] if t["name"] in ("token", "layer", "step")}
assert category_named == renamed, (category_named, renamed)
assert sum(t["slices"] for t in tracks.values()) == units, (tracks.keys(), units)
assert "token" in tracks and tracks["token"]["slices"] >= 1
assert view["flows"] == flows > 0, (view["flows"], flows)
assert models["plain"]["flows"] == 0
# Every lane's slices nest as in the plain window (the view adds only not-recorded
# stretches, after a lane's last slice), rebased or not.
plain = {t["tid"]: t for t in models["plain"]["threads"]}
for k in ("view", "rebased"):
    for t in models[k]["threads"]:
        if t["name"] in tracks:
            continue
        p = plain[t["tid"]]
        depths = t["depths"].split(",")
        assert depths[:p["slices"]] == p["depths"].split(","), (k, t["tid"])
        assert t["slices"] - p["slices"] == t["names"].get("not recorded", 0), (k, t["tid"])
print(f"{what}: {renamed} category-named slices, {units} unit slices, {flows} flows, {not_recorded} not recorded")
PY
  imported=$((imported + 1))
}

check samples/decode-small.trace.json --marker token 1
check samples/decode-small.trace.json --marker layer 5
check "$tmp/ring.json" --marker token 2
check "$tmp/ring.json"
if [ -f ../shared/corpus/jobque/decode-t12-l32-w2.trace.json.gz ]; then
  check ../shared/corpus/jobque/decode-t12-l32-w2.trace.json.gz --marker token 3
  check ../shared/corpus/jobque/decode-t8-l16-w2-spin0.trace.json.gz --marker layer 20..21
else
  echo "note: ../shared/corpus is absent: the corpus's windows are skipped"
fi

echo "viewer import: $imported scopes imported, $failures failed"
[ $failures -eq 0 ]
