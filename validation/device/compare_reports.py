#!/usr/bin/env python3
"""Compare new reports of the CUDA validation programs with recorded ones (standard library only).

    compare_reports.py NEW.json RECORDED.json [NEW.json RECORDED.json ...]

For each pair (same tool: roofplan-gemm, roofplan-bandwidth, roofplan-nccl, roofplan-dp4a or roofplan-conv) it
matches the records case by case, prints new / recorded of each case's rate (TFLOPS, GB/s, busbw), and a summary:
cases matched, median |new / recorded - 1|, the largest, and the fields of the recorded report that the new one
lacks (none may be missing: docs/report-schemas.md).  Exit status 1 when a field is missing or a report cannot be
read, else 0 (a slower or faster run is a finding, not a failure).
"""

import json
import statistics
import sys

# tool -> (fields that identify a case, the rate compared, its unit)
TOOLS = {
    "roofplan-gemm": (("precision", "m", "n", "k", "count", "label"), "tflops", "T(FL)OPS"),
    "roofplan-bandwidth": (("kernel",), "gb_per_s", "GB/s"),
    "roofplan-nccl": (("op", "bytes", "ranks"), "busbw_GBps", "busbw GB/s"),
    "roofplan-dp4a": (("test", "m", "n", "k"), "tops", "TOPS"),
    "roofplan-conv": (("label", "pass", "precision", "layout"), "tflops", "TFLOPS"),
}


def load(path):
    with open(path, encoding="utf-8") as f:
        report = json.load(f)
    if report.get("tool") == "roofplan-bench":  # a suite report: the first program report inside
        report = report["reports"][0]
    return report


def missing_fields(new, old, where=""):
    """Keys of `old` (recursively in objects, and in the first record of arrays of records) absent from `new`."""
    missing = []
    if isinstance(old, dict) and isinstance(new, dict):
        for key, value in old.items():
            if key not in new:
                missing.append(where + key)
            elif key != "environment":  # which variables were set is not a schema
                missing += missing_fields(new[key], value, where + key + ".")
    elif isinstance(old, list) and isinstance(new, list) and old and new and isinstance(old[0], dict):
        keys = set().union(*(r.keys() for r in new if isinstance(r, dict)))
        for key in sorted(set().union(*(r.keys() for r in old if isinstance(r, dict))) - keys):
            missing.append(where + "[]." + key)
    return missing


def compare(new_path, old_path):
    new, old = load(new_path), load(old_path)
    tool = old.get("tool")
    if new.get("tool") != tool or tool not in TOOLS:
        print(f"  {new_path}: tool {new.get('tool')!r} does not match {old_path}'s {tool!r}")
        return False
    key_fields, rate, unit = TOOLS[tool]
    key = lambda r: tuple(r.get(f) for f in key_fields)
    recorded = {key(r): r for r in old.get("results", [])}
    print(f"\n{tool}: {new_path} vs {old_path}")
    print(f"  {'case':<58} {'new':>10} {'recorded':>10} {'ratio':>7}   ({unit})")
    deviations, unmatched = [], 0
    for r in new.get("results", []):
        o = recorded.pop(key(r), None)
        if o is None or not o.get(rate) or r.get(rate) is None:
            unmatched += 1
            continue
        ratio = r[rate] / o[rate]
        deviations.append(abs(ratio - 1))
        name = " ".join(str(v) for v in key(r) if v not in (None, ""))[:58]
        print(f"  {name:<58} {r[rate]:>10.2f} {o[rate]:>10.2f} {ratio:>7.3f}")
    missing = missing_fields(new, old)
    summary = (f"  {len(deviations)} cases matched ({unmatched} new ones unmatched, {len(recorded)} recorded ones not run)")
    if deviations:
        summary += f"; median |ratio - 1| {100 * statistics.median(deviations):.1f}%, largest {100 * max(deviations):.1f}%"
    print(summary)
    print("  fields of the recorded report missing from the new one: " + (", ".join(missing) if missing else "none"))
    return not missing


def main(argv):
    if len(argv) < 3 or len(argv) % 2 == 0:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    ok = True
    for new_path, old_path in zip(argv[1::2], argv[2::2]):
        try:
            ok = compare(new_path, old_path) and ok
        except (OSError, ValueError, KeyError, IndexError) as e:
            print(f"  cannot compare {new_path} with {old_path}: {e}")
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
