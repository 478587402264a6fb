#!/usr/bin/env python3
"""When the optimizer's kernels run against when the host issues them, in one end-to-end training step (issue 14:
the model's idle share for host-bound BERT training).  Validation only: nothing here calibrates.

For each case (validation/e2e/e2e_suite.py's builders and step closures, warmed up), a few steps under
torch.profiler with CPU and CUDA activity; per profiled step, on one clock (microseconds from the step's start: a
`roofplan_step_<i>` record_function around the step closure):
  - the host: the start of `Optimizer.step` (torch's record_function around every optimizer step), its end, the
    end of the step closure (the step's marker), and each kernel launch's host time (the runtime's launch calls,
    matched to their kernels by correlation id in the profiler's exported trace);
  - the GPU: the end of the last kernel launched before `Optimizer.step` (the backward's last), and the first start
    and last end of the kernels launched inside it (the optimizer's), their count and summed time;
  - the step's end on the GPU (its last kernel's end) against the host's end.
The step closure is e2e_suite's (zero_grad, autocast forward, backward, optimizer step); steps run back to back as
in the suite, each followed by a synchronisation, so the step's GPU tail is its own.

  python3 validation/e2e/optimizer_timeline.py --json out.json --git-sha SHA [--cases id,id] [--steps 3]
"""
import argparse
import json
import statistics
import sys

import torch

import e2e_suite as suite
import rp_common as rc

DEFAULT = "bert-qa-train-s128-b64-amp-bf16,bert-squad-train-s384-b32-amp-bf16,gpt2-train-s512-b8-tf32"


def timeline(step, steps):
    """Per profiled step, the figures of the module docstring, from the profiler's trace (Chrome format: kernels
    and runtime calls share a correlation id; CPU and GPU times on one clock)."""
    import os
    import tempfile
    from torch.profiler import ProfilerActivity, profile, record_function
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for i in range(steps):
            with record_function(f"roofplan_step_{i}"):
                step()
            torch.cuda.synchronize()
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    prof.export_chrome_trace(path)
    with open(path) as f:
        trace = json.load(f)
    os.unlink(path)
    evs = trace["traceEvents"] if isinstance(trace, dict) else trace
    launches, kernels, marks_step, marks_opt = {}, [], [], []
    for e in evs:
        if e.get("ph") != "X":
            continue
        cat, name, ts, dur = e.get("cat", ""), e.get("name", ""), float(e.get("ts", 0)), float(e.get("dur", 0))
        corr = (e.get("args") or {}).get("correlation")
        if cat == "kernel":
            kernels.append((corr, ts, ts + dur))
        elif cat == "cuda_runtime" and "LaunchKernel" in name:
            launches[corr] = ts
        elif cat == "user_annotation" and name.startswith("roofplan_step_"):
            marks_step.append((ts, ts + dur))
        elif name.startswith("Optimizer.step"):
            marks_opt.append((ts, ts + dur))
    out = []
    for t0, t1 in sorted(marks_step):
        opt = next(((o0, o1) for o0, o1 in sorted(marks_opt) if t0 <= o0 <= t1), None)
        if opt is None:
            continue
        o0, o1 = opt
        mine = [(launches[c], ks, ke) for c, ks, ke in kernels if c in launches and t0 <= launches[c] <= t1]
        before = [k for k in mine if k[0] < o0]
        inside = [k for k in mine if o0 <= k[0] <= o1]
        if not before or not inside:
            continue
        out.append({
            "host_step_us": t1 - t0,
            "host_optimizer_start_us": o0 - t0,
            "host_optimizer_end_us": o1 - t0,
            "gpu_last_before_optimizer_end_us": max(k[2] for k in before) - t0,
            "optimizer_first_launch_us": min(k[0] for k in inside) - t0,
            "optimizer_last_launch_us": max(k[0] for k in inside) - t0,
            "gpu_optimizer_first_start_us": min(k[1] for k in inside) - t0,
            "gpu_optimizer_last_end_us": max(k[2] for k in inside) - t0,
            "optimizer_kernels": len(inside),
            "optimizer_kernel_us": sum(k[2] - k[1] for k in inside),
            "gpu_step_end_us": max(k[2] for k in mine) - t0,
            "kernels": len(mine),
        })
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", required=True)
    ap.add_argument("--git-sha", default="unknown")
    ap.add_argument("--cases", default=DEFAULT)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=8)
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA device", file=sys.stderr)
        sys.exit(77)
    doc = {"tool": "roofplan-optimizer-timeline", "schema": 1, "provenance": rc.provenance(a.git_sha, {}), "cases": []}
    by_id = {c["id"]: c for c in suite.CASES}
    for cid in a.cases.split(","):
        spec = by_id[cid]
        try:
            _, _, step, _ = suite.warmed_step(spec, "cuda", a.warmup)
            marks = timeline(step, a.steps)
            med = {k: statistics.median(m[k] for m in marks) for k in marks[0]} if marks else {}
            doc["cases"].append({"id": cid, "steps": marks, "median": med})
            print(cid, json.dumps({k: round(v, 1) for k, v in med.items()}), file=sys.stderr)
        except Exception as e:  # noqa: BLE001
            doc["cases"].append({"id": cid, "error": f"{type(e).__name__}: {e}"[:400]})
            print(cid, "ERROR", e, file=sys.stderr)
        torch.cuda.empty_cache()
        with open(a.json, "w") as f:
            json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
