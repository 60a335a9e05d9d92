#!/usr/bin/env bash
# The trace generator writes what the tracer writes: valid traces in its layout, of the
# asked size, the same bytes for the same seed, and the ring-full and legacy variants.
set -u
jqtrace=$1
gen=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$gen" --size-mb 2 --seed 11 -o "$tmp/a.json" || fail "generator failed"
"$gen" --size-mb 2 --seed 11 -o "$tmp/b.json" || fail "generator failed"
cmp -s "$tmp/a.json" "$tmp/b.json" || fail "same seed, different output"
size=$(stat -c %s "$tmp/a.json")
[ "$size" -gt 1500000 ] && [ "$size" -lt 2600000 ] || fail "--size-mb 2 wrote $size bytes"
"$jqtrace" validate "$tmp/a.json" > "$tmp/out" || { cat "$tmp/out"; fail "generated trace is not valid"; }
grep -q "valid jobque trace" "$tmp/out" || fail "not recognised as a jobque trace"

# Layout: one event per line, lanes in order with the caller last, profile at the end.
head -1 "$tmp/a.json" | grep -qx '{"traceEvents":\[' || fail "first line"
tail -1 "$tmp/a.json" | grep -q '^\],"jobqueProfile":{"version":1,"lanes":3,' || fail "profile line"
lanes=$(grep -o '"tid":[0-9]*' "$tmp/a.json" | uniq | tr '\n' ' ')
[ "$lanes" = '"tid":0 "tid":1 "tid":2 ' ] || fail "lanes not grouped in order, caller last: $lanes"
for kind in publish chunk stage_wait wake fifo_job token layer step; do
  grep -q "\"name\":\"$kind\"" "$tmp/a.json" || fail "no $kind events"
done

# A full ring on the caller loses publishes: orphan chains and an early-stopping lane.
"$gen" --tokens 3 --layers 6 --ring 2=60 -o "$tmp/ring.json"
"$jqtrace" validate --max-errors 0 "$tmp/ring.json" > "$tmp/out"
grep -q "orphan-chain" "$tmp/out" || fail "ring-full trace has no orphan chains"
grep -q "lane-stopped-early" "$tmp/out" || fail "ring-full lane not noticed"

# Legacy: no profile, no markers, still a jobque trace.
"$gen" --tokens 2 --layers 4 --legacy --workers 5 -o "$tmp/legacy.json"
grep -q jobqueProfile "$tmp/legacy.json" && fail "legacy trace has a profile"
grep -q '"ph":"i"' "$tmp/legacy.json" && fail "legacy trace has markers"
"$jqtrace" validate "$tmp/legacy.json" | grep -q "valid jobque trace" || fail "legacy trace not valid"
# --scale names a category by its id or its name (a name aborted on an uncaught stoll):
# the same trace either way; a name or factor it cannot read is a usage error, not an abort.
"$gen" --tokens 2 --layers 3 --seed 4 --scale 3=1.25 -o "$tmp/by-id.json" || fail "--scale 3=1.25 failed"
"$gen" --tokens 2 --layers 3 --seed 4 --scale 'ffn chain=1.25' -o "$tmp/by-name.json" || fail "--scale 'ffn chain=1.25' failed"
cmp -s "$tmp/by-id.json" "$tmp/by-name.json" || fail "--scale by name and by id wrote different traces"
"$gen" --tokens 2 --layers 3 --seed 4 -o "$tmp/unscaled.json"
cmp -s "$tmp/by-id.json" "$tmp/unscaled.json" && fail "--scale 3=1.25 changed nothing"
for bad in 'no such=1.25' 'ffn chain=x' 'ffn chain' '3=-1'; do
  "$gen" --tokens 1 --scale "$bad" -o /dev/null 2> "$tmp/err"
  [ $? -eq 2 ] || fail "--scale '$bad': exit not 2"
  grep -q "wants TAG=F" "$tmp/err" || fail "--scale '$bad': $(cat "$tmp/err")"
done
# --ring likewise (std::stoi aborted on 'x=5').
for bad in 'x=5' '1=y' '1' '-1=5' '1=-5'; do
  "$gen" --tokens 1 --ring "$bad" -o /dev/null 2> "$tmp/err"
  [ $? -eq 2 ] || fail "--ring '$bad': exit not 2"
  grep -q "wants LANE=N" "$tmp/err" || fail "--ring '$bad': $(cat "$tmp/err")"
done
# --fixed-stream: lane twins. The same seed with 3 and 5 workers runs the same chunks, each
# as long in both (only which lane runs it, and when, differs); 63 workers is the most it
# draws for, 64 a usage error.
"$gen" --tokens 3 --layers 4 --seed 8 --fixed-stream --workers 3 -o "$tmp/w3.json" || fail "--fixed-stream --workers 3 failed"
"$gen" --tokens 3 --layers 4 --seed 8 --fixed-stream --workers 5 -o "$tmp/w5.json" || fail "--fixed-stream --workers 5 failed"
python3 - "$tmp/w3.json" "$tmp/w5.json" << 'PY' || fail "--fixed-stream: 3 and 5 workers ran different chunks"
import json, sys
def chunks(path):
    ev = json.load(open(path))["traceEvents"]
    return sorted((e["args"]["chain"], e["args"]["stage"], e["args"]["arg"], e["dur"]) for e in ev if e.get("name") == "chunk")
a, b = chunks(sys.argv[1]), chunks(sys.argv[2])
assert a and a == b, (len(a), len(b))
PY
cmp -s "$tmp/w3.json" "$tmp/w5.json" && fail "--fixed-stream: 3 and 5 workers wrote the same trace"
"$gen" --tokens 1 --layers 2 --fixed-stream --workers 63 -o /dev/null || fail "--fixed-stream --workers 63 failed"
"$gen" --tokens 1 --layers 2 --fixed-stream --workers 64 -o /dev/null 2> "$tmp/err"
[ $? -eq 2 ] || fail "--fixed-stream --workers 64: exit not 2"
grep -q "up to 63 workers" "$tmp/err" || fail "--fixed-stream --workers 64: $(cat "$tmp/err")"
echo "generator: ok"
