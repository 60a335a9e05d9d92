#!/usr/bin/env bash
# Redraws the README's pictures from a build of jqtrace (run from the repository's root):
#   bash docs/pictures/redraw.sh [JQTRACE] [JQTRACE_GEN] [CORPUS]
# Timelines are jqtrace's own PNGs (timeline -o x.png); the report's top is chromium's
# screenshot of its page. The t12 and w4 pictures need the real traces of CORPUS (default
# ../shared/corpus/jobque); without it they are left as they are.
set -euo pipefail
jqtrace=$(realpath "${1:-build/jqtrace}")
gen=$(realpath "${2:-build/jqtrace-gen}")
corpus=${3:-../shared/corpus/jobque}
out=$(realpath "$(dirname "$0")")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# draw NAME TRACE [SCOPE...]: a timeline of TRACE (named by its file name alone in the title).
draw() {
  local name=$1 trace=$2; shift 2
  (cd "$(dirname "$trace")" && "$jqtrace" timeline -q "$@" "$(basename "$trace")" -o "$out/$name.png")
  echo "redraw: $name.png"
}

if [ -d "$corpus" ]; then
  cp "$corpus/decode-t12-l32-w2.trace.json.gz" "$corpus/decode-t16-l16-w4-legacy-tags.trace.json.gz" "$work/"
  draw t12-whole "$work/decode-t12-l32-w2.trace.json.gz"
  draw t12-token-slowest "$work/decode-t12-l32-w2.trace.json.gz" --marker token slowest
  draw t12-layer-median "$work/decode-t12-l32-w2.trace.json.gz" --marker layer median
  draw w4-legacy-whole "$work/decode-t16-l16-w4-legacy-tags.trace.json.gz"
  draw w4-legacy-18ms "$work/decode-t16-l16-w4-legacy-tags.trace.json.gz" --ms 100 118
  draw w4-legacy-200us "$work/decode-t16-l16-w4-legacy-tags.trace.json.gz" --us 100000 100200
  if command -v chromium > /dev/null; then
    (cd "$work" && "$jqtrace" report -q decode-t12-l32-w2.trace.json.gz -o report.html)
    chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars --screenshot="$out/t12-report-top.png" \
      --window-size=1400,1000 "file://$work/report.html" > /dev/null 2>&1
    echo "redraw: t12-report-top.png"
  fi
else
  echo "redraw: no $corpus: the t12 and w4 pictures are left as they are" >&2
fi
"$gen" --workers 8 --layers 24 --tokens 6 --seed 9 -o "$work/gen9.trace.json" 2> /dev/null
draw gen9-whole "$work/gen9.trace.json"
draw gen9-token-slowest "$work/gen9.trace.json" --marker token slowest
draw gen9-layer-median "$work/gen9.trace.json" --marker layer median
cp samples/ring-full.trace.json "$work/"
draw ring-full-not-recorded "$work/ring-full.trace.json"
cp samples/decode-small.trace.json "$work/"
draw ../timeline-decode-small "$work/decode-small.trace.json"
