#!/usr/bin/env python3
"""Where the GPU time of a real training step goes, by kernel category (validation only: it explains the gap
between roofplan's prediction and train_throughput.py's measurement; nothing here is fitted into the model).

Runs the cases of train_throughput.py (ResNet-50 batch 256 channels-last bf16 autocast SGD; BERT-base QA seq 128
batch 64 bf16 autocast AdamW) on one GPU, warms up, then records --steps steps with torch.profiler and sums the
device time of every CUDA kernel by a category read off its name:
  matmul-conv    GEMMs and convolutions (cuBLAS/cuBLASLt/cuDNN/CUTLASS kernels)
  normalization  batch/layer norm forward and backward
  elementwise    activations, adds, dropout, softmax, casts and other elementwise/reduction kernels
  optimizer      the optimizer's multi-tensor kernels
  memory         copies and fills
plus the step's wall time from CUDA events, so the idle time between kernels (launch gaps, host overhead) shows.
Output: JSON (per case: categories in seconds per step, kernel counts per step, the top kernels).
"""
import argparse
import collections
import datetime
import json
import sys

import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import rp_common as rc  # noqa: E402  (kernel classes shared with e2e_suite.py and op_bench.py)
import train_throughput as tt  # noqa: E402  (the same cases, built the same way)


COARSE = {"gemm": "matmul-conv", "conv": "matmul-conv", "attention": "matmul-conv",
          "normalization": "normalization", "optimizer": "optimizer", "memset": "memory", "copy/cast": "memory"}


def category(name):
    """This script's five coarse categories, folded from the finer kernel classes of rp_common.kernel_class
    (shared with e2e_suite.py and op_bench.py); everything else is 'elementwise'."""
    return COARSE.get(rc.kernel_class(name), "elementwise")


def run(case, warmup, steps):
    if case == "resnet50":
        batch = 256
        model, step = tt.resnet50_case(batch)
    else:
        batch = 64
        model, step = tt.bert_case(batch, 128)
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        a.record()
        for _ in range(steps):
            step()
        b.record()
        torch.cuda.synchronize()
    wall = a.elapsed_time(b) / 1e3 / steps
    per_cat = collections.Counter()
    count = collections.Counter()
    per_kernel = collections.Counter()
    for e in prof.events():
        if e.device_type != torch.autograd.DeviceType.CUDA:
            continue
        t = e.device_time_total / 1e6 if hasattr(e, "device_time_total") else e.cuda_time_total / 1e6
        c = category(e.name)
        per_cat[c] += t / steps
        count[c] += 1 / steps
        per_kernel[e.name] += t / steps
    busy = sum(per_cat.values())
    del model, step
    torch.cuda.empty_cache()
    return {"case": case, "batch": batch, "steps": steps, "step_wall_s": wall, "kernel_busy_s": busy,
            "idle_s": wall - busy, "by_category_s": dict(per_cat), "kernels_per_step": {k: round(v, 1) for k, v in count.items()},
            "top_kernels_s": dict(per_kernel.most_common(15))}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--case", choices=["resnet50", "bert-qa", "all"], default="all")
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--git-sha", default="unknown")
    p.add_argument("--json", default="-")
    a = p.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA device", file=sys.stderr)
        sys.exit(77)
    torch.backends.cudnn.benchmark = True
    cases = ["resnet50", "bert-qa"] if a.case == "all" else [a.case]
    results = [run(c, a.warmup, a.steps) for c in cases]
    for r in results:
        cats = ", ".join(f"{k} {v*1e3:.2f} ms" for k, v in sorted(r["by_category_s"].items(), key=lambda kv: -kv[1]))
        print(f"{r['case']}: step {r['step_wall_s']*1e3:.2f} ms, kernels {r['kernel_busy_s']*1e3:.2f} ms ({cats})",
              file=sys.stderr)
    doc = {"tool": "roofplan-e2e-breakdown", "provenance": {
        "date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command_line": sys.argv, "git_sha": a.git_sha, "torch": torch.__version__, "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(), "device": torch.cuda.get_device_name(0)}, "results": results}
    text = json.dumps(doc, indent=2)
    if a.json == "-":
        print(text)
    else:
        with open(a.json, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
