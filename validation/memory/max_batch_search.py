#!/usr/bin/env python3
"""The largest batch whose training step runs without CUDA running out of memory (issue 15: validates
roofplan's memory::MemoryModel::max_batch; validation only, never fitted).

For each case, the step is validation/e2e/e2e_suite.py's own (its model builders and make_step, imported, not
copied): zero_grad(set_to_none=True), autocast forward, loss, backward, optimizer step; cudnn.benchmark on.  A
batch "fits" when `--steps` steps (2 by default: the first creates the optimizer state and runs cuDNN's searches,
the second is a steady step) finish without torch.cuda.OutOfMemoryError.  The search doubles from 1 until a batch
fails (or --max-batch), then bisects; each trial builds the model afresh and the cache is emptied between trials.
A case stops at its share of --deadline-s and reports the bracket it reached (largest fitting, smallest failing).

  python3 validation/memory/max_batch_search.py --json max_batch_h200.json --git-sha SHA [--cases id,id]
          [--deadline-s 1500] [--max-batch 8192]
  python3 validation/memory/max_batch_search.py --list
  python3 validation/memory/max_batch_search.py --smoke --json /tmp/mb.json    # CPU, tiny models: the flow only

Output JSON: tool "roofplan-max-batch", provenance (device, driver, torch/CUDA/cuDNN versions, date, command, git
sha), and per case: the case (as e2e_suite.py describes one, with roofplan's request), largest_fitting_batch,
smallest_failing_batch, complete (the bracket closed), and every trial (batch, ok, seconds, peaks, error).
"""
import argparse
import gc
import os
import sys
import time
import traceback

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
import e2e_suite as es  # noqa: E402
import rp_common as rc  # noqa: E402

CASES = [
    es.C("resnet50-train-amp-bf16-sgd", "resnet50", "train", 1, "amp-bf16", "sgd"),
    es.C("vgg16-train-amp-bf16-sgd", "vgg16", "train", 1, "amp-bf16", "sgd"),
    es.C("bert-squad-train-s384-amp-bf16-adamw", "bert-squad", "train", 1, "amp-bf16", "adamw", seq=384),
    es.C("gpt2-train-s1024-amp-bf16-adamw", "gpt2", "train", 1, "amp-bf16", "adamw", seq=1024),
]


def roofplan_request(spec):
    """What roofplan's MemoryModel::max_batch is asked for the case (the CLI wiring may differ)."""
    return {"model": spec["roofplan_model"], "seq": spec["seq"], "precision": spec["precision"], "mode": "train",
            "optimizer": "adam" if spec["optimizer"] == "adamw" else spec["optimizer"], "runtime": spec["runtime"]}


def release(cuda):
    gc.collect()
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()


def trial(spec, batch, steps, cuda, smoke):
    """Runs `steps` training steps at `batch`: (ok, record)."""
    dev = "cuda" if cuda else "cpu"
    spec = dict(spec, batch=batch)
    rec = {"batch": batch}
    t0 = time.monotonic()
    model = step = opt = make_batch = loss_of = None
    try:
        es.set_precision(spec["precision"])
        torch.manual_seed(0)
        model, make_batch, loss_of, _ = es.build_model(spec, dev, smoke)
        step, opt, _ = es.make_step(spec, model, make_batch, loss_of, dev)
        for _ in range(steps):
            step()
        if cuda:
            torch.cuda.synchronize()
            rec["max_allocated_bytes"] = torch.cuda.max_memory_allocated()
            rec["max_reserved_bytes"] = torch.cuda.max_memory_reserved()
        ok = True
    except torch.cuda.OutOfMemoryError as e:
        ok = False
        rec["error"] = "OutOfMemoryError: " + str(e).splitlines()[0][:300]
    except RuntimeError as e:  # cuDNN/cuBLAS report some allocation failures as RuntimeError
        text = str(e)
        if "out of memory" not in text.lower() and "CUBLAS_STATUS_ALLOC_FAILED" not in text:
            raise
        ok = False
        rec["error"] = "RuntimeError (out of memory): " + text.splitlines()[0][:300]
    finally:
        del model, step, opt, make_batch, loss_of  # the batch lives in these closures
        release(cuda)
    rec["ok"] = ok
    rec["seconds"] = round(time.monotonic() - t0, 2)
    return ok, rec


def search(spec, a, cuda, deadline):
    """Doubling then bisection, within `deadline` (a monotonic time)."""
    out = {"case": spec, "roofplan_request": roofplan_request(spec), "trials": [], "largest_fitting_batch": 0,
           "smallest_failing_batch": None, "complete": False}
    cap = 4 if a.smoke else a.max_batch

    def fits(b):
        if a.smoke and b > cap:  # the CPU has no out-of-memory to find: the cap stands in for it
            out["trials"].append({"batch": b, "ok": False, "seconds": 0, "error": "smoke: over the cap"})
            return False
        ok, rec = trial(spec, b, a.steps, cuda, a.smoke)
        out["trials"].append(rec)
        print(f"  {spec['id']} batch {b}: {'fits' if ok else 'out of memory'} ({rec['seconds']} s)", file=sys.stderr)
        return ok

    lo, hi = 0, None
    b = 1
    while b <= cap:
        if time.monotonic() > deadline:
            out["stopped"] = "deadline"
            break
        if fits(b):
            lo = b
            b *= 2
        else:
            hi = b
            break
    if hi is None and lo >= cap:
        out["stopped"] = f"cap: batch {cap} fits (raise --max-batch)"
    while hi is not None and hi - lo > 1:
        if time.monotonic() > deadline:
            out["stopped"] = "deadline"
            break
        mid = (lo + hi) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid
    out["largest_fitting_batch"] = lo
    out["smallest_failing_batch"] = hi
    out["complete"] = hi is not None and hi - lo == 1
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", default="-")
    p.add_argument("--git-sha", default="unknown")
    p.add_argument("--cases", default="", help="comma-separated case ids (default: all)")
    p.add_argument("--steps", type=int, default=2, help="training steps a batch must survive")
    p.add_argument("--max-batch", type=int, default=8192, help="largest batch tried")
    p.add_argument("--deadline-s", type=float, default=1500, help="total time; each case gets an equal share")
    p.add_argument("--smoke", action="store_true", help="CPU, tiny models, a cap of 4 instead of out of memory")
    p.add_argument("--list", action="store_true", help="print the cases and exit")
    a = p.parse_args()
    if a.list:
        for c in CASES:
            print(c["id"], roofplan_request(c))
        return
    cuda = torch.cuda.is_available() and not a.smoke
    if not cuda and not a.smoke:
        print("no CUDA device (use --smoke for a CPU check of the script)", file=sys.stderr)
        sys.exit(77)
    if cuda:
        torch.backends.cudnn.benchmark = True  # as e2e_suite.py
    selected = [c for c in CASES if not a.cases or c["id"] in a.cases.split(",")]
    if not selected:
        print(f"no case matches {a.cases!r}; --list shows them", file=sys.stderr)
        sys.exit(2)
    doc = {"tool": "roofplan-max-batch", "schema": 1,
           "provenance": rc.provenance(a.git_sha, {"cudnn_benchmark": torch.backends.cudnn.benchmark,
                                                   "smoke": a.smoke}),
           "method": {"steps": a.steps, "max_batch": a.max_batch, "deadline_s": a.deadline_s,
                      "search": "doubling from 1, then bisection; a fresh model per trial, cache emptied between"},
           "results": []}
    start = time.monotonic()
    for i, spec in enumerate(selected):
        share = (a.deadline_s - (time.monotonic() - start)) / (len(selected) - i)
        print(f"{spec['id']}: up to {share:.0f} s", file=sys.stderr)
        try:
            rec = search(spec, a, cuda, time.monotonic() + max(share, 0))
        except Exception as e:  # noqa: BLE001 - record and go on
            rec = {"case": spec, "error": f"{type(e).__name__}: {str(e)[:500]}",
                   "traceback": traceback.format_exc()[-1500:]}
            release(cuda)
        doc["results"].append(rec)
        rc.write_json(a.json, doc)
        print(f"{spec['id']}: largest fitting batch {rec.get('largest_fitting_batch')}, smallest failing "
              f"{rec.get('smallest_failing_batch')}", file=sys.stderr)
    doc["wall_s"] = time.monotonic() - start
    rc.write_json(a.json, doc)


if __name__ == "__main__":
    main()
