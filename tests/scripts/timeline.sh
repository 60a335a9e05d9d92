#!/usr/bin/env bash
# jqtrace timeline: valid SVG (xmllint) for every sample and scope, hostile names escaped,
# 64 lanes, a whole trace within 2 MB, and in a real browser (chromium, headless) the
# share bar's colours in proportion to the groups' shares (within 2 points).
source "$(dirname "$0")/lib/prelude.bash"
source "$(dirname "$0")/lib/browser.bash"
gen=$2
png_colors=${3:-}

valid_svg() {  # valid_svg NAME FILE
  if command -v xmllint > /dev/null; then
    xmllint --noout "$2" 2> "$tmp/xmllint" || fail "$1: not valid XML: $(head -2 "$tmp/xmllint")"
  fi
  grep -q '^<svg xmlns="http://www.w3.org/2000/svg"' "$2" || fail "$1: no <svg> root"
}
command -v xmllint > /dev/null || echo "note: xmllint is not installed (bash build.sh test installs it): only the root is checked"

while read -r name args; do
  [ -n "$name" ] || continue
  # shellcheck disable=SC2086  # the arguments are split on purpose
  "$jqtrace" timeline -q $args -o "$tmp/$name.svg" || { fail "$name: exit $?"; continue; }
  valid_svg "$name" "$tmp/$name.svg"
done <<'CASES'
decode samples/decode-small.trace.json
decode_token --marker token 1 samples/decode-small.trace.json
legacy samples/legacy-small.trace.json.gz
chrome samples/chrome-small.json
chrome_by_name --by name samples/chrome-small.json
tiny samples/tiny.trace.json
single_lane samples/single-lane.trace.json
array_form samples/array-form.json
narrow --us 30.1 30.2 samples/tiny.trace.json
empty --us 500 501 samples/decode-small.trace.json
CASES
# A range narrower than one span still draws it (clipped), with its tooltip.
grep -q '<title>chunk' "$tmp/narrow.svg" || fail "a range inside one span drew no span"

# Names that are markup: escaped, still valid XML.
cat > "$tmp/hostile.json" <<'JSON'
{"traceEvents":[
{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"<lane & \"quoted\">"}},
{"ph":"X","name":"a<b&c\"d'e","cat":"</svg><script>","pid":1,"tid":1,"ts":0,"dur":10},
{"ph":"i","name":"<marker>","pid":1,"tid":1,"ts":5,"s":"g"}]}
JSON
"$jqtrace" timeline -q "$tmp/hostile.json" -o "$tmp/hostile.svg" || fail "hostile names: exit $?"
valid_svg hostile "$tmp/hostile.svg"
grep -q '<script' "$tmp/hostile.svg" && fail "a name became markup"
grep -qF 'a&lt;b&amp;c&quot;d&apos;e' "$tmp/hostile.svg" || fail "a span name was not escaped"

# 64 lanes, and a whole generated trace stays small.
"$gen" --workers 63 --size-mb 2 --seed 3 -o "$tmp/lanes64.json" 2> /dev/null
"$jqtrace" timeline -q "$tmp/lanes64.json" -o "$tmp/lanes64.svg" || fail "64 lanes: exit $?"
valid_svg lanes64 "$tmp/lanes64.svg"
[ "$(grep -c 'text-anchor="end">' "$tmp/lanes64.svg")" -ge 64 ] || fail "64 lanes: not a row per lane"
"$gen" --workers 7 --size-mb 40 --seed 5 -o "$tmp/big.json" 2> /dev/null
"$jqtrace" timeline -q "$tmp/big.json" -o "$tmp/big.svg" || fail "40 MB trace: exit $?"
size=$(stat -c %s "$tmp/big.svg")
[ "$size" -le 2000000 ] || fail "the whole of a 40 MB trace drew $size bytes (limit 2 MB)"
valid_svg big "$tmp/big.svg"

# Sizes: the default picture fits a 1400 px browser window; a few lanes fill the picture's
# height (rows of 36 px or more, not 16).
grep -q '^<svg [^>]*width="1400"' "$tmp/decode.svg" || fail "the default picture is not 1400 px wide"
"$gen" --workers 8 --layers 24 --tokens 6 --seed 9 -o "$tmp/lanes9.json" 2> /dev/null
"$jqtrace" timeline -q "$tmp/lanes9.json" -o "$tmp/lanes9.svg" || fail "9 lanes: exit $?"
for picture in decode lanes9; do
  low=$(grep -o '<rect class="lane" [^>]*height="[0-9]*"' "$tmp/$picture.svg" | sed 's/.*height="//; s/"//' | sort -n | head -1)
  [ -n "$low" ] && [ "$low" -ge 36 ] || fail "$picture: a lane row of ${low:-no} px (a few lanes fill the picture: 36 or more)"
done


# Shades follow the tag, not the order categories are met in: every category of both
# samples has one colour in the profile trace and the legacy one (attn chain was the darker
# of its pair in the legacy picture and the base colour in the profile's).
"$jqtrace" timeline -q samples/legacy-small.trace.json -o "$tmp/legacy-plain.svg" || fail "legacy: exit $?"
picture_legend "$tmp/decode.svg" | sed 's/ [0-9.]* / /' | sort -k2 > "$tmp/profile-colours.txt"
picture_legend "$tmp/legacy-plain.svg" | sed 's/ [0-9.]* / /' | sort -k2 > "$tmp/legacy-colours.txt"
grep -q " attn chain$" "$tmp/legacy-colours.txt" || fail "the legacy picture has no attn chain"
while read -r colour name; do
  other=$(awk -v n="$name" '{ c = $1; $1 = ""; if (substr($0, 2) == n) print c }' "$tmp/legacy-colours.txt")
  [ -z "$other" ] || [ "$other" = "$colour" ] || fail "'$name' is $colour in the profile trace's picture, $other in the legacy one's"
done < "$tmp/profile-colours.txt"

# A lane whose ring filled is drawn as not recorded from its stop (ring-full's caller), with
# a legend entry; lanes that did not stop have no band.
"$jqtrace" timeline -q samples/ring-full.trace.json -o "$tmp/ring.svg" || fail "ring-full: exit $?"
valid_svg ring "$tmp/ring.svg"
[ "$(grep -c '<rect class="unrecorded"' "$tmp/ring.svg")" = 1 ] || fail "ring-full: not one not-recorded band"
grep -q '<title>caller 2 stopped recording at [0-9.]* us (its ring filled)' "$tmp/ring.svg" ||
  fail "ring-full: the band does not say whose ring filled"
grep -q '>not recorded (a ring filled)</text>' "$tmp/ring.svg" || fail "ring-full: no legend entry for the band"
grep -q 'class="unrecorded"' "$tmp/decode.svg" && fail "decode-small (no lane stopped) has a not-recorded band"

# The four groups no tag names, each with time (and wake drawn) in one picture: their
# legend swatches, as rendered, at least 80 apart in RGB (they were four greys 20 apart).
cat > "$tmp/greys.json" <<'TRACE'
{"traceEvents":[
{"ph":"X","pid":0,"tid":0,"ts":10,"dur":20,"name":"chunk","args":{"stage":0,"arg":0,"chain":11}},
{"ph":"X","pid":0,"tid":0,"ts":35,"dur":10,"name":"fifo_job","args":{"stage":0,"arg":0,"chain":0}},
{"ph":"X","pid":0,"tid":0,"ts":50,"dur":10,"name":"wake","args":{"stage":0,"arg":1,"chain":0}},
{"ph":"X","pid":0,"tid":0,"ts":70,"dur":10,"name":"chunk","args":{"stage":0,"arg":0,"chain":12}},
{"ph":"X","pid":0,"tid":1,"ts":65,"dur":4,"name":"publish","args":{"stage":1,"arg":1,"chain":12}},
{"ph":"X","pid":0,"tid":1,"ts":70,"dur":12,"name":"chunk","args":{"stage":0,"arg":0,"chain":12}}
],"jobqueProfile":{"version":1,"lanes":2,"categories":[{"id":1,"name":"attn chain","color":"#5E96DE"}],"markers":[]}}
TRACE
"$jqtrace" timeline -q "$tmp/greys.json" -o "$tmp/greys.svg" || fail "greys: exit $?"
swatches() {  # "X Y NAME" of each legend swatch of a picture
  grep -o '<rect class="g[0-9]*" x="[0-9.]*" y="[0-9]*" width="10" height="10"/><text [^>]*>[^<]*</text>' "$1" |
    sed 's/^<rect class="g[0-9]*" x="\([0-9.]*\)" y="\([0-9]*\)".*<text [^>]*>\(.*\) [0-9.]*%<\/text>$/\1 \2 \3/'
}
swatches "$tmp/greys.svg" | grep -E " (unpublished chain|untagged|fifo job|wake)$" > "$tmp/grey-swatches.txt"
[ "$(wc -l < "$tmp/grey-swatches.txt")" = 4 ] || fail "greys: not the four groups in the legend: $(cat "$tmp/grey-swatches.txt")"
rendered_greys() {  # PNG: "#RRGGBB" rendered inside each of the four swatches
  while read -r x y name; do
    x=${x%.*}
    "$png_colors" "$1" $((x + 2)) $((y + 2)) $((x + 8)) $((y + 8)) | head -1 | cut -d' ' -f1
  done < "$tmp/grey-swatches.txt"
}
apart() {  # the colours on stdin pairwise at least 80 apart
  awk 'function hex(s) { return index("0123456789ABCDEF", substr(toupper(s), 1, 1)) * 16 + index("0123456789ABCDEF", substr(toupper(s), 2, 1)) - 17 }
       { r[NR] = hex(substr($1, 2, 2)); g[NR] = hex(substr($1, 4, 2)); b[NR] = hex(substr($1, 6, 2)) }
       END { for (i = 1; i <= NR; i++) for (j = i + 1; j <= NR; j++) {
               d = sqrt((r[i]-r[j])^2 + (g[i]-g[j])^2 + (b[i]-b[j])^2); if (d < 80) { print i, j, d; bad = 1 } }
             exit bad }'
}
if [ -n "$png_colors" ]; then
  "$jqtrace" timeline -q "$tmp/greys.json" -o "$tmp/greys.png" || fail "greys png: exit $?"
  rendered_greys "$tmp/greys.png" | apart || fail "greys: two of the four groups' swatches are too close (librsvg)"
  "$jqtrace" timeline -q samples/ring-full.trace.json -o "$tmp/ring-direct.png"
  "$png_colors" "$tmp/ring-direct.png" 700 190 1300 230 | grep -qi "^#FCE7EC" || fail "ring-full: no band in the PNG"
fi

# A unit picked by its duration says so in the title, as the report's pictures do.
"$jqtrace" timeline -q --marker token slowest samples/decode-small.trace.json > "$tmp/slowest.svg" || fail "slowest: exit $?"
grep -q '>samples/decode-small.trace.json: slowest token 1 (9714.579 us; --marker token slowest;' "$tmp/slowest.svg" ||
  fail "the slowest unit's picture does not say slowest in its title"

# -o x.png is a PNG (librsvg draws the same SVG): its magic bytes, the SVG's size, and the
# share bar's colours in their shares, as in the browser's screenshot.
"$jqtrace" timeline -q samples/decode-small.trace.json -o "$tmp/decode-direct.png" || fail "-o x.png: exit $?"
[ "$(head -c 8 "$tmp/decode-direct.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
  fail "-o x.png did not write a PNG"
svg_height=$(grep -o '^<svg [^>]*height="[0-9]*"' "$tmp/decode.svg" | sed 's/.*height="//; s/"//')
png_size=$(od -An -tu1 -j16 -N8 "$tmp/decode-direct.png" | awk '{ print $1*16777216+$2*65536+$3*256+$4 "x" $5*16777216+$6*65536+$7*256+$8 }')
[ "$png_size" = "1400x$svg_height" ] || fail "the PNG is $png_size, the SVG 1400x$svg_height"
if [ -n "$png_colors" ]; then
  "$png_colors" "$tmp/decode-direct.png" 190 26 1390 34 > "$tmp/png-bar.txt" || fail "the PNG is blank or unreadable"
  picture_legend "$tmp/decode.svg" > "$tmp/legend.txt"
  check_share_bar "$tmp/png-bar.txt" samples/decode-small.trace.json "$tmp/legend.txt"
fi
# --format png to stdout too; and a PNG is never written when the picture cannot be made.
"$jqtrace" timeline -q --format png samples/tiny.trace.json | head -c 4 | grep -q PNG || fail "--format png to stdout"
# In a browser: the share bar (y 24..36 across the plot) shows each colour in proportion
# to its share of busy time; attn chain and attn std, one colour in the profile, are two
# colours in the rendered pixels; the 9-lane picture fits the window's width.
if [ -z "$chromium" ] || [ -z "$png_colors" ]; then
  echo "timeline: browser check skipped: chromium is not installed (bash build.sh test installs it)"
else
  screenshot "$tmp/decode.svg" "$tmp/decode.png" 1400 400
  "$png_colors" "$tmp/decode.png" 190 26 1390 34 > "$tmp/bar.txt" || fail "the screenshot is blank or unreadable"
  picture_legend "$tmp/decode.svg" > "$tmp/legend.txt"
  check_share_bar "$tmp/bar.txt" samples/decode-small.trace.json "$tmp/legend.txt"
  check_pair_apart "$tmp/bar.txt" "$tmp/legend.txt" "attn chain" "attn std"
  check_pair_apart "$tmp/bar.txt" "$tmp/legend.txt" "shexp" "ple"
  # The greys and the not-recorded band as a browser draws them.
  screenshot "$tmp/greys.svg" "$tmp/greys-browser.png" 1400 300
  rendered_greys "$tmp/greys-browser.png" | apart || fail "greys: two of the four groups' swatches are too close (chromium)"
  screenshot "$tmp/ring.svg" "$tmp/ring-browser.png" 1400 300
  "$png_colors" "$tmp/ring-browser.png" 700 190 1300 230 | grep -qi "^#FCE7EC" || fail "ring-full: no band in the browser"
  screenshot "$tmp/lanes9.svg" "$tmp/lanes9.png" 1400 700
  # The plot's last pixel columns hold the lanes' rows (the picture is not cut at the right).
  "$png_colors" "$tmp/lanes9.png" 1380 130 1390 500 > "$tmp/edge.txt" || fail "9 lanes: the right edge is blank"
fi
echo "timeline: $failures failed"
[ "$failures" -eq 0 ]
