#!/usr/bin/env python3
"""What the host does in one step of an end-to-end case: the operators Python dispatches, the autograd nodes the
backward engine runs, the kernels launched, and the Python function calls — counted, not timed per item — so that
the eager runtime's host model (docs/model.md §3a) can be checked item by item against what the framework runs.
Validation only: nothing here calibrates (the host costs per item come from validation/ops/op_bench.py and
validation/e2e/host_bench.py).

For each case (validation/e2e/e2e_suite.py's builders and step closures; default: the transformer cases, whose host
time the model under-predicts most), after the warm-up:
  * host_s: wall time of step() per synchronised step, median of --steps uninstrumented steps;
  * one step under torch.profiler (CPU and CUDA activities): the operators called from Python (aten ops without
    an enclosing operator, on the Python thread), all operators, autograd nodes (evaluate_function events), the
    cuda* runtime calls that launch work, and the device kernels — totals and per name;
  * one step under sys.setprofile: Python function calls and calls into C functions;
  * per-item host costs of this host from tiny micro-benchmarks in the same process: a Python function call,
    a view op, a tiny add under no_grad (so a count can be turned into time on the same host).

  python3 validation/e2e/host_ops.py --json host_ops.json --git-sha SHA [--cases id,id] [--steps 20]
"""
import argparse
import collections
import json
import statistics
import sys
import time
import traceback

import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import e2e_suite as es  # noqa: E402
import rp_common as rc  # noqa: E402

DEV = "cuda"
DEFAULT = ["bert-qa-infer-s128-b1-fp32", "gpt2-infer-s128-b1-amp-bf16", "bert-qa-train-s128-b64-amp-bf16",
           "bert-swag-train-s80-b16-amp-fp16", "resnet18-infer-b16-amp-fp16", "resnet50-infer-b1-fp32"]
LAUNCHES = ("cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx", "cudaMemsetAsync",
            "cudaMemcpyAsync", "cudaGraphLaunch")


def per_call_us(body, n=2000, rounds=5):
    best = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(n):
            body()
        best.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(best)


def micro():
    x = torch.randn(4, 4, device=DEV)

    def f(a):
        return a

    with torch.no_grad():
        out = {"python_call_us": per_call_us(lambda: f(x)),
               "view_us": per_call_us(lambda: x.view(16)),
               "transpose_us": per_call_us(lambda: x.transpose(0, 1)),
               "add_no_grad_us": per_call_us(lambda: x + x)}
    torch.cuda.synchronize()
    return out


def classify(prof):
    """Counts per step from one profiled step."""
    top, all_ops, nodes, runtime, kernels = (collections.Counter() for _ in range(5))
    for e in prof.events():
        dev = getattr(e, "device_type", None)
        if dev is not None and str(dev).endswith("CUDA"):
            kernels[e.name[:80]] += 1
            continue
        name = e.name
        if name.startswith("autograd::engine::evaluate_function:"):
            nodes[name.split(":", 4)[-1].strip()] += 1
        elif name.startswith("aten::"):
            all_ops[name] += 1
            parent = e.cpu_parent
            while parent is not None and not parent.name.startswith(("aten::", "autograd::engine")):
                parent = parent.cpu_parent
            if parent is None:
                top[name] += 1
        elif name in LAUNCHES:
            runtime[name] += 1
    return {"python_ops": sum(top.values()), "ops": sum(all_ops.values()), "autograd_nodes": sum(nodes.values()),
            "launch_calls": sum(runtime.values()), "kernels": sum(kernels.values()),
            "python_ops_by_name": dict(top.most_common(40)), "autograd_nodes_by_name": dict(nodes.most_common(40)),
            "launch_calls_by_name": dict(runtime)}


def python_calls(step):
    counts = collections.Counter()

    def hook(frame, event, arg):
        if event in ("call", "c_call"):
            counts[event] += 1

    sys.setprofile(hook)
    try:
        step()
    finally:
        sys.setprofile(None)
    torch.cuda.synchronize()
    return {"python_function_calls": counts["call"], "c_function_calls": counts["c_call"]}


def run_case(spec, steps, warmup):
    rec = {"id": spec["id"], "roofplan_command": spec["roofplan_command"]}
    rec["precision_settings"], model, step, _ = es.warmed_step(spec, DEV, warmup)
    host = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        host.append(time.perf_counter() - t0)
        torch.cuda.synchronize()
    rec["host_s_median"] = statistics.median(host)
    rec["host_s_p10"], rec["host_s_p90"] = es.rc_pct(host, 0.1), es.rc_pct(host, 0.9)
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        step()
        torch.cuda.synchronize()
    rec.update(classify(prof))
    rec.update(python_calls(step))
    del model, step
    torch.cuda.empty_cache()
    return rec


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", default="-")
    p.add_argument("--git-sha", default="unknown")
    p.add_argument("--cases", default=",".join(DEFAULT))
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=8)
    a = p.parse_args()
    t0 = time.monotonic()
    torch.backends.cudnn.benchmark = True
    specs = {c["id"]: c for c in es.CASES}
    doc = {"tool": "roofplan-host-ops", "schema": 1, "provenance": rc.provenance(a.git_sha),
           "method": {"steps": a.steps, "warmup": a.warmup,
                      "python_ops": "aten ops with no enclosing aten op or autograd node (called from Python)"},
           "micro": micro(), "cases": []}
    for cid in [c for c in a.cases.split(",") if c]:
        try:
            doc["cases"].append(run_case(specs[cid], a.steps, a.warmup))
        except Exception:  # noqa: BLE001
            doc["cases"].append({"id": cid, "error": traceback.format_exc()[-800:]})
        print(json.dumps({k: v for k, v in doc["cases"][-1].items() if not k.endswith("by_name")}), flush=True)
    doc["wall_s"] = time.monotonic() - t0
    text = json.dumps(doc, indent=1)
    if a.json == "-":
        print(text)
    else:
        with open(a.json, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
