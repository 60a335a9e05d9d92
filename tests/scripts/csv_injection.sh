#!/usr/bin/env bash
# CSV and TSV that a spreadsheet opens as data, not as formulas (issue 45): names from a
# trace that begin with =, +, -, @, a tab or a carriage return are written with a leading
# ' in every delimited output (stats by cat, name and lane, markers, window rows, validate);
# numbers are never touched; --csv-raw writes them as they are. The CSV reads back through
# Python's csv module (when python3 is here) and LibreOffice Calc imports the guarded cells
# as text (when soffice is here); each check that lacks its program says it is skipped.
source "$(dirname "$0")/lib/prelude.bash"

cat > "$tmp/hostile.json" <<'JSON'
{"traceEvents":[
{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"=HYPERLINK(\"http://example.invalid\",\"x\")"}},
{"ph":"X","name":"+cmd","cat":"=1+1","pid":1,"tid":1,"ts":0,"dur":10},
{"ph":"X","name":"-","cat":"@SUM(A1:A2)","pid":1,"tid":1,"ts":20,"dur":5},
{"ph":"X","name":"\tindent","cat":"-2+3","pid":1,"tid":1,"ts":30,"dur":5},
{"ph":"X","name":"plain","cat":"a=b","pid":1,"tid":1,"ts":40,"dur":5},
{"ph":"i","name":"=mark","pid":1,"tid":1,"ts":5,"s":"g"},
{"ph":"i","name":"=mark","pid":1,"tid":1,"ts":35,"s":"g"}]}
JSON

csv=$("$jqtrace" stats -q --format csv "$tmp/hostile.json")
for cell in "'=1+1" "'@SUM(A1:A2)" "'-2+3"; do
  grep -q "^$cell," <<< "$csv" || fail "stats by cat: no guarded cell $cell in: $csv"
done
grep -q '^a=b,' <<< "$csv" || fail "stats by cat: a name that is no formula was changed: $csv"
grep -qE "^'?=1\+1,.*,-" <<< "$csv" && fail "stats by cat: a number was guarded: $csv"
csv=$("$jqtrace" stats -q --format csv --by name "$tmp/hostile.json")
for cell in "'+cmd" "'-" "'	indent"; do
  grep -qF "$cell," <<< "$csv" || fail "stats by name: no guarded cell $cell in: $csv"
done
csv=$("$jqtrace" stats -q --format csv --by lane "$tmp/hostile.json")
grep -qF "\"'=HYPERLINK(\"\"http://example.invalid\"\",\"\"x\"\")\"" <<< "$csv" ||
  fail "stats by lane: the thread name is not guarded: $csv"
tsv=$("$jqtrace" stats -q --format tsv "$tmp/hostile.json")
grep -q "^'=1+1	" <<< "$tsv" || fail "tsv: no guarded cell: $tsv"
csv=$("$jqtrace" markers -q --format csv "$tmp/hostile.json")
grep -q "^'=mark," <<< "$csv" || fail "markers: the kind is not guarded: $csv"
csv=$("$jqtrace" window -q --format csv --us 0 100 "$tmp/hostile.json" 2> /dev/null)
grep -qF ",'+cmd,'=1+1," <<< "$csv" || fail "window csv: name and category not guarded: $csv"
grep -qF ",0.000,10.000," <<< "$csv" || fail "window csv: numbers changed: $csv"
raw=$("$jqtrace" stats -q --format csv --csv-raw "$tmp/hostile.json")
grep -q "^=1+1," <<< "$raw" || fail "--csv-raw: the name is not as it is: $raw"
raw=$("$jqtrace" window -q --format csv --csv-raw --us 0 100 "$tmp/hostile.json" 2> /dev/null)
grep -qF ",+cmd,=1+1," <<< "$raw" || fail "window --csv-raw: the names are not as they are: $raw"
# Numbers stay numbers: a negative value in a numeric column is not guarded.
printf '[{"ph":"X","name":"n","pid":1,"tid":1,"ts":-50,"dur":10}]' > "$tmp/negative.json"
csv=$("$jqtrace" window -q --format csv --us -100 100 "$tmp/negative.json" 2> /dev/null)
grep -qF ",-50.000,10.000," <<< "$csv" || fail "a negative time was changed: $csv"

"$jqtrace" stats -q --format csv --by name "$tmp/hostile.json" > "$tmp/names.csv"
if command -v python3 > /dev/null; then
  python3 - "$tmp/names.csv" <<'PY' || fail "Python's csv module reads other names back"
import csv, sys
names = [row["name"] for row in csv.DictReader(open(sys.argv[1], newline=""))]
want = {"'+cmd", "'-", "'\tindent", "plain"}
missing = want - set(names)
if missing:
    print("missing after the round trip:", missing, "got", names)
    sys.exit(1)
PY
else
  echo "csv_injection: the Python round trip is skipped: python3 is not installed"
fi

if command -v soffice > /dev/null && command -v unzip > /dev/null; then
  # What a person gets: Calc opens the CSV (converted headless to xlsx); a formula would be
  # stored as <f>1+1</f> with the value 2, a guarded cell is a string.
  "$jqtrace" stats -q --format csv "$tmp/hostile.json" > "$tmp/cats.csv"
  (cd "$tmp" && HOME="$tmp" timeout 120 soffice --headless --convert-to xlsx --outdir "$tmp/calc" cats.csv \
     > /dev/null 2>&1)
  if [ -s "$tmp/calc/cats.xlsx" ] && (cd "$tmp/calc" && unzip -q -o cats.xlsx); then
    grep -q '<f' "$tmp/calc/xl/worksheets/sheet1.xml" && fail "Calc ran a guarded cell as a formula"
    grep -q '&apos;=1+1' "$tmp/calc/xl/sharedStrings.xml" || fail "Calc did not keep '=1+1 as text"
    "$jqtrace" stats -q --format csv --csv-raw "$tmp/hostile.json" > "$tmp/raw.csv"
    (cd "$tmp" && HOME="$tmp" timeout 120 soffice --headless --convert-to xlsx --outdir "$tmp/calc-raw" raw.csv \
       > /dev/null 2>&1)
    mkdir -p "$tmp/calc-raw/x" && (cd "$tmp/calc-raw/x" && unzip -q -o ../raw.xlsx)
    # The check can fail: the raw file's =1+1 is a formula to Calc.
    grep -q '<f' "$tmp/calc-raw/x/xl/worksheets/sheet1.xml" || fail "--csv-raw: Calc found no formula to run"
  else
    echo "csv_injection: the spreadsheet check is skipped: soffice wrote no xlsx"
  fi
else
  echo "csv_injection: the spreadsheet check is skipped: soffice (libreoffice-calc-nogui) or unzip is not installed"
fi

echo "csv_injection: $failures failed"
[ $failures -eq 0 ]
