# Sourced by the browser tests (after prelude.bash): headless chromium screenshots and the
# share-bar check. (Not a test itself.)

# The browser, or empty when none is installed.
chromium=$(command -v chromium || command -v chromium-browser || true)

# screenshot PAGE PNG WIDTH HEIGHT: chromium's picture of a local file; its console on
# $tmp/console.txt.
screenshot() {
  timeout 120 "$chromium" --headless=new --no-sandbox --disable-gpu --hide-scrollbars --enable-logging=stderr --v=0 \
    --screenshot="$2" --window-size="$3,$4" "file://$1" > /dev/null 2> "$tmp/console.txt"
  [ -s "$2" ] || fail "chromium made no screenshot of $1"
}

# check_share_bar BAR TRACE: BAR is png-colors' count of the bar's pixels; each colour must
# cover its share of busy time (stats' shares summed by colour, as categories may share
# one) within 2 points.
check_share_bar() {
  "$jqtrace" stats -q --format csv --columns color,share_pct "$2" | tail -n +2 |
    awk -F, '{ share[toupper($1)] += $2 } END { for (c in share) print c, share[c] }' > "$tmp/want.txt"
  awk 'NR == FNR { want[$1] = $2; next } { got[$1] = $2; total += $2 }
       END { bad = 0
             for (c in want) { pct = total ? 100 * got[c] / total : 0
               if (want[c] - pct > 2 || pct - want[c] > 2) { printf "%s: %.1f%% of the bar, share %.1f%%\n", c, pct, want[c]; bad = 1 } }
             exit bad }' "$tmp/want.txt" "$1" || fail "the share bar's colours are not in proportion to the shares"
}
