#!/usr/bin/env python3
"""Which operator launches which kernels in one step of an end-to-end case (validation only: it shows where the
eager runtime's kernel count differs from what PyTorch launches; nothing here is fitted into the model).

Builds the cases of e2e_suite.py the same way (same models, precisions, optimizers, step closures), warms up, then
records one step with torch.profiler (CPU and CUDA activities) and attributes every kernel, memset and memcpy to the
innermost ATen operator that launched it, together with that operator's parent (e.g. aten::copy_ under aten::to,
aten::fill_ under aten::zeros).  Also counts the operators dispatched from Python (top-level ATen ops) and the
autograd nodes that ran, which the host model of the eager runtime counts.

Output: JSON, per case: kernels per step, and a list of {op, parent, class, kernel, count, time_us} sorted by count.
"""
import argparse
import collections
import datetime
import json
import sys
import time

import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import e2e_suite as es  # noqa: E402  (the cases, built and stepped exactly as measured)
import rp_common as rc  # noqa: E402  (the kernel classes shared with e2e_suite.py)


def short(name, n=90):
    name = name.replace("void ", "").replace("at::native::", "")
    return name[:n]


def inventory(step, steps):
    torch.cuda.synchronize()
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
    rows = collections.Counter()
    times = collections.Counter()
    top_ops = collections.Counter()
    autograd_nodes = 0
    kernels = 0
    for e in prof.events():
        if e.device_type != torch.autograd.DeviceType.CPU:
            continue
        if e.name.startswith("autograd::engine::evaluate_function"):
            autograd_nodes += 1
        parent = e.cpu_parent
        if e.name.startswith("aten::") and (parent is None or not parent.name.startswith(("aten::", "autograd::"))):
            top_ops[e.name] += 1
        for k in getattr(e, "kernels", []) or []:
            key = (e.name, parent.name if parent is not None else "", rc.kernel_class(k.name), short(k.name))
            rows[key] += 1
            times[key] += k.duration
            kernels += 1
    out = [{"op": op, "parent": par, "class": cl, "kernel": kn, "count": c / steps, "time_us": times[(op, par, cl, kn)] / steps}
           for (op, par, cl, kn), c in rows.items()]
    out.sort(key=lambda r: (-r["count"], r["op"]))
    return {"kernels_per_step": kernels / steps, "autograd_nodes_per_step": autograd_nodes / steps,
            "python_ops_per_step": sum(top_ops.values()) / steps,
            "python_ops": {k: v / steps for k, v in top_ops.most_common()}, "kernels": out}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", required=True)
    p.add_argument("--cases", required=True, help="comma-separated case ids of e2e_suite.py")
    p.add_argument("--git-sha", default="unknown")
    p.add_argument("--warmup", type=int, default=4)
    p.add_argument("--steps", type=int, default=1)
    p.add_argument("--deadline-s", type=float, default=1e9)
    a = p.parse_args()
    t0 = time.monotonic()
    cases = {c["id"]: c for c in es.CASES}
    results = []
    for cid in a.cases.split(","):
        if time.monotonic() - t0 > a.deadline_s:
            results.append({"id": cid, "skipped": "deadline"})
            continue
        spec = cases[cid]
        _, model, step, _ = es.warmed_step(spec, "cuda", a.warmup)
        rec = {"id": cid, "roofplan_command": spec["roofplan_command"]}
        rec.update(inventory(step, a.steps))
        results.append(rec)
        print(cid, rec["kernels_per_step"], f"{time.monotonic() - t0:.0f}s", flush=True)
        del model, step
        torch.cuda.empty_cache()
    doc = {"tool": "kernel_inventory.py", "provenance": {
        "date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command_line": sys.argv, "git_sha": a.git_sha, "torch": torch.__version__, "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(), "device": torch.cuda.get_device_name(0)},
        "results": results}
    with open(a.json, "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
