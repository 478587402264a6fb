#!/usr/bin/env python3
"""The eager runtime's kernels beside a recorded kernel inventory, per kernel class (validation only: it shows where
the lowering launches more or fewer kernels than PyTorch did; nothing here is fitted into the model).

Reads a kernel_inventory.py report (e.g. validation/results/2026-11-23-h100-inventory/inventory_h100.json), runs
each case's `roofplan_command` with `--kernels --json`, and prints per class the kernels a step and their GPU time,
measured and predicted, marking classes whose counts differ by more than --tolerance kernels.

The classes are compared by name after folding roofplan's finer ones into the inventory's (batch_norm and the layer
norm classes into normalization, the pooling kinds into pooling, copy_cast, widening_cast, layout_copy and concat into
copy/cast, a compiled
run's generated kernels into elementwise and its generated reductions into normalization, as the inventory names most
Triton kernels).  The inventory classes a kernel by its
name (rp_common.kernel_class), so a cuDNN convolution that runs a GEMM kernel (nvjet, xmma_gemm, FFT's complex
GEMMs) counts as gemm there and as conv here, and a split-K reduction as gemm there and as reduction here: compare
the totals of such pairs, and read kernel_inventory.py's per-operator rows for the attribution.

Usage: compare_inventory.py --roofplan build/tools/roofplan --inventory FILE [--case ID ...] [--device h100-sxm]
       [--profile PROFILE.json]
"""
import argparse
import collections
import json
import shlex
import subprocess
import sys

FOLD = {"batch_norm": "normalization", "batch_norm_nchw": "normalization", "batch_norm_backward": "normalization", "batch_norm_inference": "normalization", "layer_norm": "normalization",
        "layer_norm_backward": "normalization", "pooling_nhwc": "pooling", "pooling_backward": "pooling",
        "copy_cast": "copy/cast", "widening_cast": "copy/cast", "layout_copy": "copy/cast", "concat": "copy/cast",
        "generated": "elementwise", "generated_reduction": "normalization"}


def predicted(roofplan, command, device, profile=None):
    args = shlex.split(command)[1:]  # drop the program name
    if device:
        args[args.index("-d") + 1] = device
    if profile:
        args += ["--profile", profile]
    out = subprocess.run([roofplan, *args, "--kernels", "--json"], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"compare_inventory: {command!r} failed: {out.stderr.strip()}")
    return json.loads(out.stdout)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--roofplan", required=True, help="the roofplan binary")
    p.add_argument("--inventory", required=True, help="a kernel_inventory.py report")
    p.add_argument("--case", action="append", default=[], help="only these case ids (repeatable)")
    p.add_argument("--device", help="predict for this device instead of the command's")
    p.add_argument("--profile", help="predict with this efficiency profile (roofplan calibrate -o)")
    p.add_argument("--tolerance", type=float, default=2, help="count difference marked (default 2 kernels)")
    a = p.parse_args()
    with open(a.inventory) as f:
        inventory = json.load(f)
    for case in inventory["results"]:
        if (a.case and case["id"] not in a.case) or "kernels" not in case:
            continue
        d = predicted(a.roofplan, case["roofplan_command"], a.device, a.profile)
        count, time = collections.Counter(), collections.Counter()
        for k in d["kernels"]:
            c = FOLD.get(k["class"], k["class"])
            count[c] += 1
            time[c] += k["time_s"] * 1e3
        m_count, m_time = collections.Counter(), collections.Counter()
        for k in case["kernels"]:
            m_count[k["class"]] += k["count"]
            m_time[k["class"]] += k["time_us"] * 1e-3
        print(f"{case['id']}: {case['kernels_per_step']:.0f} kernels measured, {d['kernel_count']} predicted")
        print(f"  {'class':14s} {'measured':>8s} {'ms':>8s} {'predicted':>10s} {'ms':>8s}")
        for c in sorted(set(count) | set(m_count)):
            mark = "  <<" if abs(count[c] - m_count[c]) > a.tolerance else ""
            print(f"  {c:14s} {m_count[c]:8.0f} {m_time[c]:8.2f} {count[c]:10d} {time[c]:8.2f}{mark}")


if __name__ == "__main__":
    main()
