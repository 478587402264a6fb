#!/usr/bin/env python3
"""How well one GPU's measured shapes predict another's: the cross-GPU check of the shape-by-shape tables
(issue 14, item 5: "a profile fitted on one GPU applies to another: efficiencies are fractions of that GPU's own
peaks").

Both profiles are fitted by `roofplan calibrate` (one per GPU, each from its own conv_bench.py / gemm_bench.py
reports).  A table entry's efficiency is the pass's roofline on its GPU over the measured time, so predicting GPU B's
time of a point from GPU A's table gives  predicted / measured = efficiency_B / efficiency_A  at every point both
measured (same shape, math class, pass, part, batch or rows).  Prints, per table and math class, the number of
common points and the median, 10th and 90th percentile of predicted / measured - 1 (positive: A's table predicts B
slower than B ran), overall and by which roof bounds the point on B (compute or memory).

  python3 validation/ops/compare_shapes.py --roofplan build/tools/roofplan \\
      --a h200 A_REPORTS... --b h100-sxm B_REPORTS...
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def calibrate(roofplan, device, reports, tmp):
    out = os.path.join(tmp, device + ".json")
    run = subprocess.run([roofplan, "calibrate", *reports, "--device", device, "-o", out], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"roofplan calibrate --device {device} failed: {run.stderr.strip()}")
    with open(out) as f:
        return json.load(f)


def points(profile, table):
    """{point key: efficiency} of a profile's measured table ("measured_conv" or "measured_gemm")."""
    t = profile.get(table)
    if not t:
        return {}
    cols = t["columns"]
    coord = "batch" if table == "measured_conv" else "rows"
    out = {}
    for r in t["rows"]:
        row = dict(zip(cols, r))
        key = tuple((c, row[c]) for c in cols if c not in ("efficiency", "kernels"))
        out[key] = (row["efficiency"], row[coord], row["math"])
    return out


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--roofplan", required=True)
    ap.add_argument("--a", nargs="+", required=True, metavar="DEVICE_OR_REPORT",
                    help="the device id of the table's GPU, then its reports")
    ap.add_argument("--b", nargs="+", required=True, metavar="DEVICE_OR_REPORT",
                    help="the device id of the GPU it predicts, then its reports")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        pa = calibrate(a.roofplan, a.a[0], a.a[1:], tmp)
        pb = calibrate(a.roofplan, a.b[0], a.b[1:], tmp)
    print(f"{a.a[0]}'s tables predicting {a.b[0]}'s measurements: predicted / measured - 1 at the common points")
    print("| table | math class | points | median | p10 | p90 | median, small (batch <= 8 / rows <= 1024) | median, large |")
    print("|---|---|---|---|---|---|---|---|")
    for table in ("measured_conv", "measured_gemm"):
        ta, tb = points(pa, table), points(pb, table)
        by_math = {}
        for key, (eb, coord, math) in tb.items():
            if key in ta:
                small = coord <= (8 if table == "measured_conv" else 1024)
                by_math.setdefault(math, []).append((eb / ta[key][0] - 1, small))
        for math, xs in sorted(by_math.items()):
            errs = [x for x, _ in xs]
            small = [x for x, s in xs if s] or [float("nan")]
            large = [x for x, s in xs if not s] or [float("nan")]
            print(f"| {table} | {math} | {len(xs)} | {statistics.median(errs):+.1%} | {pct(errs, 0.1):+.1%} | "
                  f"{pct(errs, 0.9):+.1%} | {statistics.median(small):+.1%} | {statistics.median(large):+.1%} |")


if __name__ == "__main__":
    main()
