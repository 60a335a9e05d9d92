#!/usr/bin/env python3
"""Compare whatif's predictions with measured twins (issue 68's validation).

Usage: whatif_compare.py LABEL KIND PRED.json MEASURED.json [PRED.json MEASURED.json ...]
Each PRED is `whatif --scale ... --per-unit KIND --format json` of a base run, each MEASURED
`whatif --per-unit KIND --format json` of its changed twin (no change: its measured units).
Prints one Markdown row: units compared, the median and p90 of |predicted - measured| /
measured per unit, the median error of the change itself per unit (|predicted change -
measured change| / |measured change|), and the total change measured and predicted.
"""
import json
import statistics
import sys


def main():
    label, kind, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    errors, change_errors = [], []
    base_total = measured_total = predicted_total = 0.0
    for pred_file, meas_file in zip(files[0::2], files[1::2]):
        p, m = json.load(open(pred_file)), json.load(open(meas_file))
        measured = {u["idx"]: u["measured_us"] for u in m["units"]}
        for u in p["units"]:
            twin = measured.get(u["idx"])
            if twin is None or twin <= 0:
                continue
            errors.append(abs(u["predicted_us"] - twin) / twin)
            if twin != u["measured_us"]:
                change_errors.append(abs((u["predicted_us"] - u["measured_us"]) - (twin - u["measured_us"]))
                                     / abs(twin - u["measured_us"]))
        base_total += p["scope"]["measured_us"]
        predicted_total += p["scope"]["predicted_us"]
        measured_total += m["scope"]["measured_us"]
    errors.sort()
    p90 = errors[int(0.9 * (len(errors) - 1))] if errors else float("nan")
    median = statistics.median(errors) if errors else float("nan")
    change = statistics.median(change_errors) if change_errors else float("nan")
    print(f"| {label} | {kind} | {len(errors)} | {100 * median:.2f}% | {100 * p90:.2f}% | {100 * change:.1f}% "
          f"| {100 * (measured_total / base_total - 1):+.2f}% | {100 * (predicted_total / base_total - 1):+.2f}% |")


if __name__ == "__main__":
    main()
