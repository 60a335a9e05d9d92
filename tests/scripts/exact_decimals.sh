#!/usr/bin/env bash
# Times from whole ns are written as their exact decimals of µs (issue 65): no JSON or CSV
# value of any command carries a double's noise (7.305000000022119, 7953.00100000002,
# -0.0979999999981374), on a sample, a generated trace, and a trace on an epoch clock whose
# µs have sub-µs digits (where float µs arithmetic loses them). gaps computes on whole ns
# too: its values on the epoch trace are the same as on the same trace moved to 0.
source "$(dirname "$0")/lib/prelude.bash"
gen=$2
"$gen" --tokens 4 --layers 6 --seed 51 -o "$tmp/gen.json"
# The generated trace on an epoch clock: every ts plus 1733400000000000.001 µs.
python3 - "$tmp/gen.json" "$tmp/epoch.json" << 'PY'
import re, sys
text = open(sys.argv[1]).read()
def shift(m):
    whole, _, frac = m.group(1).partition(".")
    frac = (frac + "000")[:3]
    ns = int(whole) * 1000 + int(frac) + 1733400000000000001
    return '"ts":%d.%03d' % (ns // 1000, ns % 1000)
open(sys.argv[2], "w").write(re.sub(r'"ts":([0-9.]+)', shift, text))
PY
# A double's noise: a run of six 0s or 9s after the point, then more digits.
noisy='[0-9]\.[0-9]*(0{6,}[1-9]|9{6,}[0-8])'
for file in samples/decode-small.trace.json "$tmp/gen.json" "$tmp/epoch.json"; do
  for command in stats markers latency gaps phases whatif; do
    for format in json csv; do
      out=$("$jqtrace" "$command" -q --format "$format" "$file" 2> /dev/null) || continue
      if grep -qE "$noisy" <<< "$out"; then
        fail "$command --format $format $file writes a double's noise: $(grep -oE "$noisy[0-9]*" <<< "$out" | head -3 | tr '\n' ' ')"
      fi
    done
  done
done
# gaps on whole ns: a shift of the clock changes none of its values (float µs at 1.7e15 kept
# only a quarter µs).
a=$("$jqtrace" gaps -q --format csv "$tmp/gen.json")
b=$("$jqtrace" gaps -q --format csv "$tmp/epoch.json")
[ -n "$a" ] && [ "$a" = "$b" ] || { fail "gaps on an epoch clock differs from gaps of the same trace at 0"; diff <(echo "$a") <(echo "$b") | head -4; }
a=$("$jqtrace" gaps -q --format json "$tmp/gen.json" | grep -v '"file"\|range_us\|"lo_us"\|"hi_us"\|ts_us')
b=$("$jqtrace" gaps -q --format json "$tmp/epoch.json" | grep -v '"file"\|range_us\|"lo_us"\|"hi_us"\|ts_us')
[ "$a" = "$b" ] || { fail "gaps --format json on an epoch clock differs from the same trace at 0"; diff <(echo "$a") <(echo "$b") | head -6; }

echo "exact decimals: $failures failed"
[ $failures -eq 0 ]
