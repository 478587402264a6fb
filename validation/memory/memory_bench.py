#!/usr/bin/env python3
"""Device-level memory figures and the largest batch that trains (validation of the memory model, issue 15;
nothing here is fitted into the model).

  context   a fresh Python process initialises CUDA, then cuBLAS (one fp32 and one bf16 matmul), then cuDNN (one
            convolution): device memory in use (torch.cuda.mem_get_info) after each step, minus what torch's
            caching allocator holds (memory_reserved) — the CUDA context and the libraries' handles/workspaces.
  max-batch for each case (built and stepped exactly as validation/e2e/e2e_suite.py does: forward, backward,
            optimizer; autocast; GradScaler for amp-fp16), the largest batch whose training step runs without a
            CUDA out-of-memory error: doubling from --start, then bisection to 2% (or 1 sample), each trial in a
            clean allocator state (empty_cache), two steps per trial (the optimizer state exists from the first).
  peaks     (--peaks) each case in a fresh process, as the memory model predicts it: built, warmed (--warmup steps)
            and stepped (--steps) as run_case in e2e_suite.py does (cudnn.benchmark on, as the suite sets it),
            torch.cuda's peaks of the steady steps.  The
            suite runs all its cases in one process, where the segments a case reserves depend on the cases before
            it (vgg16-infer-b32-fp32 reserved 5400 MiB there and 3932 MiB after other cases).
Output: JSON with provenance.
"""
import argparse
import gc
import json
import subprocess
import sys
import time

import torch

sys.path.insert(0, __file__.rsplit("/", 2)[0] + "/e2e")
import e2e_suite as es  # noqa: E402  (the same models, precisions, optimizers and step closures)
import rp_common as rc  # noqa: E402


CONTEXT_CHILD = r"""
import json, torch
def used():
    free, total = torch.cuda.mem_get_info()
    return total - free
out = {}
torch.cuda.init(); torch.zeros(1, device="cuda"); torch.cuda.synchronize()
out["after_init"] = used() - torch.cuda.memory_reserved()
a = torch.randn(1024, 1024, device="cuda"); (a @ a).sum().item()
out["after_cublas_fp32"] = used() - torch.cuda.memory_reserved()
b = a.bfloat16(); (b @ b).float().sum().item()
out["after_cublas_bf16"] = used() - torch.cuda.memory_reserved()
x = torch.randn(8, 64, 56, 56, device="cuda"); w = torch.randn(64, 64, 3, 3, device="cuda")
torch.nn.functional.conv2d(x, w, padding=1).sum().item()
out["after_cudnn_fp32"] = used() - torch.cuda.memory_reserved()
with torch.autocast("cuda", dtype=torch.bfloat16):
    torch.nn.functional.conv2d(x.to(memory_format=torch.channels_last), w, padding=1).float().sum().item()
out["after_cudnn_bf16"] = used() - torch.cuda.memory_reserved()
out["total_bytes"] = torch.cuda.mem_get_info()[1]
print(json.dumps(out))
"""


def context():
    r = subprocess.run([sys.executable, "-c", CONTEXT_CHILD], capture_output=True, text=True, timeout=120)
    if r.returncode:
        return {"error": r.stderr[-400:]}
    return json.loads(r.stdout.strip().splitlines()[-1])


def trial(spec, batch):
    """True when two training steps at `batch` run; False on CUDA out of memory."""
    s = dict(spec, batch=batch)
    model = step = None
    try:
        es.set_precision(s["precision"])
        torch.manual_seed(0)
        model, make_batch, loss_of, _ = es.build_model(s, "cuda")
        step, _, _ = es.make_step(s, model, make_batch, loss_of, "cuda")
        torch.cuda.reset_peak_memory_stats()
        for _ in range(2):
            step()
        torch.cuda.synchronize()
        return True, torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved()
    except torch.cuda.OutOfMemoryError:
        return False, None, None
    finally:
        del model, step
        gc.collect()
        torch.cuda.empty_cache()


PEAK_FIELDS = ("id", "model", "task", "batch", "seq", "precision", "optimizer", "runtime", "compile_mode",
               "roofplan_model", "roofplan_command")


def peaks_child(case_id, warmup, steps):
    """One case's steady-step peaks, in this (fresh) process; prints one JSON line."""
    spec = {c["id"]: c for c in es.CASES}[case_id]
    torch.backends.cudnn.benchmark = True  # as e2e_suite.py runs its cases
    rec = {k: spec[k] for k in PEAK_FIELDS}
    rec["cudnn_benchmark"] = True
    rec["precision_settings"], _, step, opt = es.warmed_step(spec, "cuda", warmup)
    mem = {"max_allocated_incl_warmup_bytes": torch.cuda.max_memory_allocated(),
           "max_reserved_incl_warmup_bytes": torch.cuda.max_memory_reserved()}
    if opt is not None:
        opt.zero_grad(set_to_none=True)
    mem["allocated_at_step_start_bytes"] = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    for _ in range(steps):
        step()
    torch.cuda.synchronize()
    mem["max_allocated_bytes"] = torch.cuda.max_memory_allocated()
    mem["max_reserved_bytes"] = torch.cuda.max_memory_reserved()
    rec["memory"] = mem
    rec["warmup"], rec["steps"] = warmup, steps
    print(json.dumps(rec), flush=True)


def peaks(ids, warmup, steps, parallel, timeout):
    """Every case in its own process, `parallel` at a time (torch's peaks are per process)."""
    import concurrent.futures

    def one(cid):
        t = time.monotonic()
        r = subprocess.run([sys.executable, __file__, "--json", "-", "--peaks-child", cid, "--warmup", str(warmup),
                            "--steps", str(steps)], capture_output=True, text=True, timeout=timeout)
        if r.returncode:
            return {"id": cid, "error": r.stderr[-600:]}
        rec = json.loads(r.stdout.strip().splitlines()[-1])
        rec["process_s"] = round(time.monotonic() - t, 1)
        return rec
    with concurrent.futures.ThreadPoolExecutor(parallel) as pool:
        out = list(pool.map(one, ids))
    for r in out:
        print(r["id"], r.get("error", "")[-200:] or {k: round(v / 2**20, 1) for k, v in r["memory"].items()},
              flush=True)
    return out


def max_batch(spec, start, deadline):
    trials = []
    lo, hi = 0, None
    b = start
    while hi is None and time.monotonic() < deadline:
        ok, alloc, res = trial(spec, b)
        trials.append({"batch": b, "ok": ok, "max_allocated": alloc, "max_reserved": res})
        if ok:
            lo, b = b, b * 2
        else:
            hi = b
    while hi is not None and hi - lo > max(1, lo // 50) and time.monotonic() < deadline:
        b = (lo + hi) // 2
        ok, alloc, res = trial(spec, b)
        trials.append({"batch": b, "ok": ok, "max_allocated": alloc, "max_reserved": res})
        lo, hi = (b, hi) if ok else (lo, b)
    return {"largest_ok": lo, "smallest_failed": hi, "resolved": hi is not None and hi - lo <= max(1, lo // 50),
            "trials": trials}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", required=True)
    p.add_argument("--git-sha", default="unknown")
    p.add_argument("--cases", default="resnet50-train-b256-amp-bf16,vgg16-train-b64-amp-bf16,"
                   "bert-squad-train-s384-b32-amp-bf16,gpt2-train-s1024-b8-amp-bf16")
    p.add_argument("--deadline-s", type=float, default=420)
    p.add_argument("--peaks", action="store_true", help="steady-step peaks of --cases (default: every case), "
                   "each in a fresh process; no context or max-batch measurement")
    p.add_argument("--parallel", type=int, default=4, help="--peaks: processes at a time")
    p.add_argument("--warmup", type=int, default=8)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--peaks-child", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.peaks_child:
        return peaks_child(a.peaks_child, a.warmup, a.steps)
    t0 = time.monotonic()
    doc = {"tool": "memory_bench.py", "provenance": rc.provenance(a.git_sha),
        "context": None if a.peaks else context(), "max_batch": []}
    cases = {c["id"]: c for c in es.CASES}
    if a.peaks:
        ids = a.cases.split(",") if "--cases" in sys.argv else [c["id"] for c in es.CASES]
        unknown = [i for i in ids if i not in cases]
        if unknown:
            sys.exit(f"memory_bench.py: unknown case ids {unknown}; see e2e_suite.py --list")
        del doc["context"], doc["max_batch"]
        doc["process_per_case"] = True
        doc["warmup"], doc["steps"] = a.warmup, a.steps
        doc["peaks"] = peaks(ids, a.warmup, a.steps, a.parallel, timeout=a.deadline_s)
        with open(a.json, "w") as f:
            json.dump(doc, f, indent=1)
        return
    print("context", doc["context"], flush=True)
    ids = a.cases.split(",")
    for i, cid in enumerate(ids):
        share = (a.deadline_s - (time.monotonic() - t0)) / (len(ids) - i)
        spec = cases[cid]
        r = max_batch(spec, spec["batch"], time.monotonic() + share)
        r.update({"id": cid, "roofplan_command": spec["roofplan_command"]})
        doc["max_batch"].append(r)
        print(cid, r["largest_ok"], r["smallest_failed"], f"{time.monotonic() - t0:.0f}s", flush=True)
        with open(a.json, "w") as f:
            json.dump(doc, f, indent=1)
    with open(a.json, "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
