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
Output: JSON with provenance.
"""
import argparse
import datetime
import gc
import json
import subprocess
import sys
import time

import torch

sys.path.insert(0, __file__.rsplit("/", 2)[0] + "/e2e")
import e2e_suite as es  # noqa: E402  (the same models, precisions, optimizers and step closures)


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
    a = p.parse_args()
    t0 = time.monotonic()
    doc = {"tool": "memory_bench.py", "provenance": {
        "date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command_line": sys.argv, "git_sha": a.git_sha, "torch": torch.__version__, "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(), "device": torch.cuda.get_device_name(0),
        "gpu_memory_bytes": torch.cuda.get_device_properties(0).total_memory},
        "context": context(), "max_batch": []}
    print("context", doc["context"], flush=True)
    cases = {c["id"]: c for c in es.CASES}
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
