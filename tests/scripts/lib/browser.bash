# Sourced by the browser tests (after prelude.bash): headless chromium screenshots and the
# share-bar check. (Not a test itself.)

# The browser, or empty when none is installed.
chromium=$(command -v chromium || command -v chromium-browser || true)

# screenshot PAGE PNG WIDTH HEIGHT: chromium's picture of a local file; its console on
# $tmp/console.txt.
screenshot() {
  timeout 120 "$chromium" --headless=new --no-sandbox --disable-gpu --hide-scrollbars --enable-logging=stderr --v=0 \
    --screenshot="$2" --window-size="$3,$4" "file://$1" > /dev/null 2> "$tmp/console.txt"
  [ -s "$2" ] || { fail "chromium made no screenshot of $1"; tail -3 "$tmp/console.txt"; }
}

# picture_legend FILE [ID]: "#RRGGBB SHARE NAME" for each segment of a picture's share bar,
# from its own tooltips and classes: a timeline SVG (the one with id ID in a page, else
# the whole file), or with ID "sharebar" the report's summary bar.
picture_legend() {
  local file=$1 id=${2:-}
  if [ "$id" = sharebar ]; then
    awk '/<svg[^>]*class="sharebar"/ { on = 1 } on { print } on && /<\/svg>/ { exit }' "$file" |
      grep -o 'fill="#[0-9A-Fa-f]\{6\}"><title>[^<]*</title>' |
      sed 's/^fill="\(#[0-9A-Fa-f]*\)"><title>\(.*\) \([0-9.]*\)%<\/title>$/\1 \3 \2/' | awk '{ $1 = toupper($1); print }'
    return
  fi
  if [ -n "$id" ]; then
    awk -v id="$id" '/<svg/ && index($0, "id=\"" id "\"") { on = 1 } on { print } on && /<\/svg>/ { exit }' "$file"
  else
    cat "$file"
  fi > "$tmp/picture.svg"
  grep -o '\.g[0-9]*{fill:#[0-9A-Fa-f]\{6\}}' "$tmp/picture.svg" | sed 's/^\.g\([0-9]*\){fill:\(#[0-9A-Fa-f]*\)}$/\1 \2/' > "$tmp/classes.txt"
  grep -o '<rect class="g[0-9]*" x="[0-9.]*" y="24" width="[0-9.]*" height="12"><title>[^<]*</title>' "$tmp/picture.svg" |
    sed 's/^<rect class="g\([0-9]*\)".*<title>\(.*\) \([0-9.]*\)%<\/title>$/\1 \3 \2/' > "$tmp/segments.txt"
  awk 'NR == FNR { color[$1] = toupper($2); next } { c = $1; $1 = ""; print color[c] substr($0, 1) }' \
    "$tmp/classes.txt" "$tmp/segments.txt"
}

# check_bar BAR WANT: BAR is png-colors' count of a bar's pixels (white, the page around
# it, not counted), WANT "#RRGGBB SHARE ..." lines; each colour must cover its share
# (summed over its lines) within 2 points.
check_bar() {
  awk 'NR == FNR { want[$1] += $2; next } $1 != "#FFFFFF" { got[$1] = $2; total += $2 }
       END { bad = 0
             for (c in want) { pct = total ? 100 * got[c] / total : 0
               if (want[c] - pct > 2 || pct - want[c] > 2) { printf "%s: %.1f%% of the bar, share %.1f%%\n", c, pct, want[c]; bad = 1 } }
             exit bad }' "$2" "$1"
}

# check_share_bar BAR TRACE LEGEND: each colour of the bar must cover the shares stats gives
# the groups the picture's LEGEND (picture_legend's lines) draws in it, within 2 points.
check_share_bar() {
  "$jqtrace" stats -q --format csv --columns share_pct,name "$2" | tail -n +2 > "$tmp/shares.csv"
  awk -F, 'NR == FNR { split($0, f, " "); name = substr($0, length(f[1]) + length(f[2]) + 3); color[name] = f[1]; next }
           { share = $1; sub(/^[^,]*,/, ""); print (($0 in color) ? color[$0] : "missing:" $0), share }' \
    "$3" "$tmp/shares.csv" > "$tmp/want.txt"
  check_bar "$1" "$tmp/want.txt" || fail "the share bar's colours are not in proportion to the shares"
}

# check_pair_apart BAR LEGEND A B: groups A and B (of one colour in the profile) are drawn
# in two colours, each of them in the bar's rendered pixels.
check_pair_apart() {
  local a b
  a=$(awk -v n="$3" '{ c = $1; $1 = ""; $2 = ""; if (substr($0, 3) == n) print c }' "$2")
  b=$(awk -v n="$4" '{ c = $1; $1 = ""; $2 = ""; if (substr($0, 3) == n) print c }' "$2")
  [ -n "$a" ] && [ -n "$b" ] || { fail "no colour for '$3' or '$4' in the picture"; return; }
  [ "$a" != "$b" ] || fail "'$3' and '$4' are drawn in one colour ($a)"
  grep -q "^$a " "$1" || fail "'$3' ($a) is not in the rendered bar"
  grep -q "^$b " "$1" || fail "'$4' ($b) is not in the rendered bar"
}
