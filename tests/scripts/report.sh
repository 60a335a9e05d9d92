#!/usr/bin/env bash
# jqtrace report: one offline page for every sample and scope, names escaped, the gates'
# exit statuses as stats has them, and in a real browser (chromium, headless) no console
# errors and the share bar's colours in proportion to the shares (within 2 points).
source "$(dirname "$0")/lib/prelude.bash"
source "$(dirname "$0")/lib/browser.bash"
gen=$2
png_colors=${3:-}

offline() {  # offline NAME FILE: a whole page that needs nothing from outside
  head -c 15 "$2" | grep -q '<!DOCTYPE html>' || fail "$1: not an HTML page"
  grep -q '</html>' "$2" || fail "$1: the page is not complete"
  if grep -oE '(src|href)="[a-z]+:[^"]*"|url\(http|@import' "$2" | grep -q .; then
    fail "$1: refers to something outside the file: $(grep -oE '(src|href)="[a-z]+:[^"]*"' "$2" | head -1)"
  fi
}

while read -r name status args; do
  [ -n "$name" ] || continue
  # shellcheck disable=SC2086  # the arguments are split on purpose
  "$jqtrace" report -q $args -o "$tmp/$name.html"
  got=$?
  [ "$got" -eq "$status" ] || { fail "$name: exit $got (want $status)"; continue; }
  [ "$status" -eq 2 ] || offline "$name" "$tmp/$name.html"
done <<'CASES'
decode 0 samples/decode-small.trace.json
decode_token 0 --marker token 1 samples/decode-small.trace.json
legacy 0 samples/legacy-small.trace.json.gz
chrome 0 samples/chrome-small.json
tiny 0 samples/tiny.trace.json
single_lane 0 samples/single-lane.trace.json
empty 0 --us 500 501 samples/decode-small.trace.json
narrow 0 --us 30.1 30.2 samples/tiny.trace.json
gate_tripped 1 --fail-if events>600 samples/decode-small.trace.json
gate_held 0 --fail-if idle>90 samples/decode-small.trace.json
gate_malformed 2 --fail-if share(moe)=>40 samples/decode-small.trace.json
CASES
# 64 lanes: a row each in the summary's lane table.
"$2" --workers 63 --size-mb 2 --seed 3 -o "$tmp/lanes64.json" 2> /dev/null
"$jqtrace" report -q "$tmp/lanes64.json" -o "$tmp/lanes64.html" || fail "64 lanes: exit $?"
offline lanes64 "$tmp/lanes64.html"
[ "$(grep -c '<td>0:[0-9]*</td>' "$tmp/lanes64.html")" -ge 64 ] || fail "64 lanes: not a row per lane"

# 600 one-span lanes: the lane table keeps the 512 busiest (a million lanes made a 133 MB
# page), and says so; lane 7's span is the longest, lane 0's the shortest.
{
  echo '{"traceEvents":['
  for ((k = 0; k < 600; k++)); do
    dur=$(( k == 7 ? 5000 : (k == 0 ? 1 : 10 + k % 50) ))
    echo "{\"ph\":\"X\",\"pid\":1,\"tid\":$k,\"ts\":0,\"dur\":$dur,\"name\":\"x\"},"
  done
  echo '{"ph":"i","pid":1,"tid":0,"ts":1,"name":"m","s":"g"}]}'
} > "$tmp/lanes600.json"
"$jqtrace" report -q "$tmp/lanes600.json" -o "$tmp/lanes600.html" || fail "600 lanes: exit $?"
offline lanes600 "$tmp/lanes600.html"
grep -q 'the 512 busiest of the 600 lanes' "$tmp/lanes600.html" || fail "600 lanes: no note of the lanes left out"
rows=$(grep -c '<td>1:[0-9]*</td>' "$tmp/lanes600.html")
[ "$rows" -eq 512 ] || fail "600 lanes: $rows lane rows (want 512)"
grep -q '<td>1:7</td>' "$tmp/lanes600.html" || fail "600 lanes: the busiest lane is not listed"
if grep -q '<td>1:0</td>' "$tmp/lanes600.html"; then fail "600 lanes: the idlest lane is listed"; fi

# 600 instant kinds (no profile: a kind per name) and 600 categories: the page keeps its
# size (4,000 kinds made a 2.9 GB page: each kind's section repeated the table of all
# kinds, and a unit's bar and row had a part and a column per category).
{
  echo '{"traceEvents":['
  for ((k = 0; k < 600; k++)); do
    echo "{\"ph\":\"X\",\"pid\":1,\"tid\":$((k % 4)),\"ts\":$((k * 3)),\"dur\":2,\"name\":\"x\",\"cat\":\"c$k\"},"
    echo "{\"ph\":\"i\",\"pid\":1,\"tid\":0,\"ts\":$((k * 3 + 1)),\"name\":\"k$k\",\"s\":\"g\"},"
  done
  echo '{"ph":"i","pid":1,"tid":0,"ts":2,"name":"k7","s":"g"}]}'
} > "$tmp/kinds600.json"
"$jqtrace" report -q "$tmp/kinds600.json" -o "$tmp/kinds600.html" || fail "600 kinds: exit $?"
offline kinds600 "$tmp/kinds600.html"
size=$(wc -c < "$tmp/kinds600.html")
[ "$size" -lt 1500000 ] || fail "600 kinds and categories: a page of $size bytes"
grep -q 'The table lists the 512 kinds of 600 with the most markers; the 16 with the most markers are charted' \
  "$tmp/kinds600.html" || fail "600 kinds: no note of the kinds left out"
charts=$(grep -c '<h3>k[0-9]*: ' "$tmp/kinds600.html")
[ "$charts" -eq 16 ] || fail "600 kinds: $charts kinds charted (want 16)"
grep -q '<h3>k7: 2 units' "$tmp/kinds600.html" || fail "600 kinds: the kind with the most markers is not charted"
grep -q 'the 512 busiest of the 600 categories and every lane (jqtrace stats lists all)' "$tmp/kinds600.html" ||
  fail "600 categories: no note of the categories left out"
grep -q '576 others' "$tmp/kinds600.html" || fail "600 categories: the charts do not fold the smallest into others"

# The same statuses as stats for the same gates.
for gate in 'share(moe experts) > 40' 'idle > 90'; do
  "$jqtrace" stats -q --fail-if "$gate" samples/decode-small.trace.json > /dev/null; want=$?
  "$jqtrace" report -q --fail-if "$gate" samples/decode-small.trace.json > /dev/null; got=$?
  [ "$got" -eq "$want" ] || fail "gate '$gate': report exit $got, stats exit $want"
done
grep -q 'class="tripped"' "$tmp/gate_tripped.html" || fail "a tripped gate is not marked in the page"
for section in summary markers gaps validate timelines; do
  grep -q "<section id=\"$section\">" "$tmp/decode.html" || fail "the report has no $section section"
done

# Each embedded timeline keeps its own colours: its style rules and pattern are scoped to
# its own id (issue 41: the second picture's ".g0" coloured the first; id="wait" twice).
[ "$(grep -c '<pattern id="wait"' "$tmp/decode.html")" -eq 0 ] || fail "an unscoped pattern id in the page"
[ "$(grep -o '<pattern id="[^"]*"' "$tmp/decode.html" | sort | uniq -d | wc -l)" -eq 0 ] || fail "a pattern id twice"
grep -q '<svg [^>]*id="timeline-0-slowest"' "$tmp/decode.html" || fail "the slowest unit's timeline has no id"
grep -q '#timeline-0-median \.g0{fill:' "$tmp/decode.html" || fail "the median unit's colours are not scoped to it"
# A timeline of the slowest and of the median unit of each kind, the ones --marker picks.
for kind in token layer; do
  for pick in slowest median; do
    index=$("$jqtrace" window --marker $kind $pick samples/decode-small.trace.json 2>&1 >/dev/null | sed -n "s/.* is unit \([0-9]*\) .*/\1/p")
    # Labelled by the marker's arg where it is not the index (layer 2 of token 1 is unit 6).
    grep -qE "<text [^>]*>$pick $kind ($index|-?[0-9]+ \(unit $index\)) \(" "$tmp/decode.html" ||
      fail "no timeline of the $pick unit ($index) of '$kind'"
  done
done
# The slowest units listed by duration, the slowest first: markers --sort dur's first.
first=$("$jqtrace" markers -q --kind token --sort dur --format csv samples/decode-small.trace.json | sed -n 2p | cut -d, -f1)
grep -q "<ol class=\"slowest\"><li>token $first: " "$tmp/decode.html" || fail "the slowest units' list does not start with token $first"
# Swatches mark the category rows only: two lanes and two cats, the lane table has none
# (a table was taken for the categories' by its row count).
printf '%s\n' '{"traceEvents":[' '{"ph":"X","name":"a","cat":"c1","pid":1,"tid":1,"ts":0,"dur":5},' \
  '{"ph":"X","name":"b","cat":"c2","pid":1,"tid":2,"ts":0,"dur":3}]}' > "$tmp/two.json"
"$jqtrace" report -q "$tmp/two.json" -o "$tmp/two.html" || fail "two lanes: exit $?"
[ "$(grep -c '<td><span class="sw"' "$tmp/two.html")" -eq 2 ] || fail "two lanes, two cats: not 2 swatched rows"
grep -q '<td><span class="sw"[^<]*</span>1:1</td>' "$tmp/two.html" && fail "a lane row has a category swatch"
# Unit charts have axes: durations up, unit indexes across.
grep -q 'token unit (index)</text>' "$tmp/decode.html" || fail "the token chart has no x axis"
grep -q 'unit duration</text>' "$tmp/decode.html" || fail "the unit charts have no y axis"
grep -qE '<style>\.g0\{' "$tmp/decode.html" && fail "a picture's colours apply to the whole page"
grep -q '<section id="warnings">' "$tmp/decode.html" && fail "warnings on a trace with nothing to warn of"
"$jqtrace" report -q -o "$tmp/ring.html" samples/ring-full.trace.json
grep -q '<section id="warnings">' "$tmp/ring.html" || fail "no warnings banner for a lane whose ring filled"

cat > "$tmp/hostile.json" <<'JSON'
{"traceEvents":[
{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"<lane & \"q\">"}},
{"ph":"X","name":"a<b&c\"d'e","cat":"</table><script>alert(1)</script>","pid":1,"tid":1,"ts":0,"dur":10},
{"ph":"i","name":"<marker>","pid":1,"tid":1,"ts":5,"s":"g"}]}
JSON
"$jqtrace" report -q "$tmp/hostile.json" -o "$tmp/hostile.html" || fail "hostile names: exit $?"
[ "$(grep -c '<script' "$tmp/hostile.html")" -eq 1 ] || fail "a name became markup (more than the page's own script)"

if [ -z "$chromium" ] || [ -z "$png_colors" ]; then
  echo "report: browser check skipped: chromium is not installed (bash build.sh test installs it)"
else
  screenshot "$tmp/decode.html" "$tmp/decode.png" 1300 600
  grep -iE 'CONSOLE.*(error|uncaught)|Uncaught' "$tmp/console.txt" && fail "console errors in the page"
  "$png_colors" "$tmp/decode.png" 24 0 1224 600 --first-solid-row > "$tmp/bar.txt" || fail "the screenshot is blank or unreadable"
  picture_legend "$tmp/decode.html" sharebar > "$tmp/legend.txt"
  check_share_bar "$tmp/bar.txt" samples/decode-small.trace.json "$tmp/legend.txt"
  check_pair_apart "$tmp/bar.txt" "$tmp/legend.txt" "attn chain" "attn std"
  # The category table's swatches are the bar's colours.
  for name in "attn chain" "attn std"; do
    color=$(awk -v n="$name" '{ c = $1; $1 = ""; $2 = ""; if (substr($0, 3) == n) print c }' "$tmp/legend.txt")
    grep -qi "<td><span class=\"sw\" style=\"background:$color\"></span>$name</td>" "$tmp/decode.html" ||
      fail "the category table's swatch of '$name' is not $color"
  done
  # Each embedded picture keeps its colours: the page with everything but that picture
  # hidden (the other pictures' style rules still apply), its share bar against its legend.
  for id in $(grep -o '<svg [^>]*id="timeline-[^"]*"' "$tmp/decode.html" | sed 's/.*id="//; s/"$//'); do
    sed "s|</body>|<script>var p=document.getElementById('$id');document.body.prepend(p);\
Array.prototype.forEach.call(document.body.children,function(e){if(e!==p\&\&e.tagName!=='SCRIPT')e.style.display='none'});</script></body>|" \
      "$tmp/decode.html" > "$tmp/only.html"
    # Wide enough to draw it unscaled: the page's margin (24) left of it and above, its bar
    # at y 24..36 and x 190..1390 of the picture; the box around the bar holds it and white.
    screenshot "$tmp/only.html" "$tmp/only.png" 1500 300
    "$png_colors" "$tmp/only.png" 215 42 1413 66 > "$tmp/only_bar.txt" || { fail "$id: blank"; continue; }
    picture_legend "$tmp/decode.html" "$id" > "$tmp/only_legend.txt"
    check_bar "$tmp/only_bar.txt" "$tmp/only_legend.txt" || fail "$id: its share bar is not in its own colours"
  done
fi
# The latency section comes first after the summary: a bar a token by class, the slowest
# token's parts, and the scope's classes (issue 53).
"$jqtrace" report -q samples/decode-small.trace.json -o "$tmp/latency.html" || fail "report for latency: exit $?"
sections=$(grep -o '<h2[^>]*>[^<]*' "$tmp/latency.html" | sed 's/<h2[^>]*>//' | tr '\n' '|')
[[ $sections == *"Summary and category shares|Latency: where the marker lane"* ]] ||
  fail "the latency section does not follow the summary: $sections"
grep -q "<h3>Each unit of &apos;token&apos; by class (3 units)" "$tmp/latency.html" || fail "no latency bars of the tokens"
grep -q '<h3>The slowest token 1: 9714.579 us' "$tmp/latency.html" || fail "no slowest token in the latency section"
# Units are named by their markers' args (issue 65: "slowest layer 6" was the program's layer 2).
grep -q '>slowest layer 2 (unit 6) (7243.963 us; --marker layer slowest' "$tmp/decode.html" ||
  fail "the slowest layer is not named by its arg"
# The latency bars' legend gives the drawn units' shares (each class's time over theirs, as
# latency --per-unit measures it), not the scope's: 300 ms of a plain job after the last
# token are the whole trace's "outside" (~97%), and none of the tokens'.
"$gen" --tokens 6 --layers 2 --seed 1 --tail-us 300000 -o "$tmp/tail.json"
"$jqtrace" report -q "$tmp/tail.json" -o "$tmp/tail.html" || fail "report of a trace with a tail: exit $?"
for class in work outside; do
  want=$("$jqtrace" latency -q --per-unit token --format csv "$tmp/tail.json" | awk -F, -v c="class.$class" '
    NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
    { part += $col[c]; all += $col["dur_us"] } END { printf "%.1f", 100 * part / all }')
  grep -q "></span>$class $want%<" "$tmp/tail.html" ||
    fail "the latency legend's $class is not the drawn units' $want%: $(grep -o "></span>$class [0-9.]*%<" "$tmp/tail.html")"
done
echo "report: $failures failed"
[ "$failures" -eq 0 ]
