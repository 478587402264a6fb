#!/usr/bin/env python3
"""Where the memory of one steady step goes (diagnosis for the memory model, issue 15; nothing here is fitted).

For each end-to-end case (built, warmed and stepped exactly as validation/e2e/e2e_suite.py does, in one process and
in the suite's order, so the cuBLAS handles of earlier cases exist as they do there), the allocator's own history of
one steady step (torch.cuda.memory._record_memory_history, Python stacks) reduced to:
  * the allocated peak, and the blocks live at it: size, and the Python frames that allocated them (blocks made
    before the step are "before the step"; the autograd engine's thread has no Python frames);
  * every segment the step added (cudaMalloc) and freed, with its size and the allocation that caused it;
  * the segments held at the end (size, allocated part, pool) — what memory_reserved sums;
  * the largest allocations of the step;
  * for inference cases, each leaf module's transient: its peak allocated during the call less what was allocated
    on entry and the bytes of its output (library workspaces, temporaries).
Output: JSON with provenance.
"""
import argparse
import json
import sys
import time

import torch

sys.path.insert(0, __file__.rsplit("/", 2)[0] + "/e2e")
import e2e_suite as es  # noqa: E402
import rp_common as rc  # noqa: E402

MIB = 1 << 20


def site(frames, depth=4):
    """The innermost frames worth reading: library and model code, file basename:line:function."""
    out = []
    for f in frames or []:
        fn = f.get("filename", "")
        if "memory_trace.py" in fn or fn.endswith("/e2e_suite.py") and f.get("name") == "step":
            continue
        if "/torch/utils/" in fn or "/torch/_dynamo/" in fn or "/contextlib.py" in fn:
            continue
        out.append(f"{fn.rsplit('/', 1)[-1]}:{f.get('line')}:{f.get('name')}")
        if len(out) == depth:
            break
    return " < ".join(out) if out else "(no Python frames: autograd engine or C++)"


def out_bytes(o):
    if torch.is_tensor(o):
        return o.numel() * o.element_size()
    if isinstance(o, (tuple, list)):
        return sum(out_bytes(x) for x in o)
    if isinstance(o, dict):
        return sum(out_bytes(x) for x in o.values())
    if hasattr(o, "to_tuple"):
        return out_bytes(o.to_tuple())
    return 0


def module_transients(model, step):
    rows = []
    state = {}

    def pre(name):
        def f(_m, _inp):
            torch.cuda.synchronize()
            state[name] = torch.cuda.memory_allocated()
            torch.cuda.reset_peak_memory_stats()
        return f

    def post(name):
        def f(_m, _inp, out):
            torch.cuda.synchronize()
            peak = torch.cuda.max_memory_allocated()
            rows.append({"module": name, "type": type(_m).__name__, "entry_bytes": state[name],
                         "output_bytes": out_bytes(out),
                         "transient_bytes": peak - state[name] - out_bytes(out)})
        return f
    hooks = []
    for name, m in model.named_modules():
        if len(list(m.children())) == 0:
            hooks.append(m.register_forward_pre_hook(pre(name)))
            hooks.append(m.register_forward_hook(post(name)))
    try:
        step()
        torch.cuda.synchronize()
    finally:
        for h in hooks:
            h.remove()
    return rows


def reduce_trace(snap, base_allocated):
    trace = snap["device_traces"][0]
    live = {}
    alloc = base_allocated
    peak, peak_i, peak_live = alloc, -1, dict(live)
    seg_events, big = [], []
    last_alloc = None
    for i, e in enumerate(trace):
        a = e["action"]
        if a == "alloc":
            live[e["addr"]] = (e["size"], site(e.get("frames")), i)
            alloc += e["size"]
            last_alloc = e
            big.append((e["size"], site(e.get("frames")), i))
            if alloc > peak:
                peak, peak_i, peak_live = alloc, i, dict(live)
        elif a == "free_completed":
            if e["addr"] in live:
                alloc -= live.pop(e["addr"])[0]
            else:  # made before the step
                alloc -= e["size"]
        elif a in ("segment_alloc", "segment_free", "oom"):
            seg_events.append({"i": i, "action": a, "size_mib": round(e["size"] / MIB, 3),
                               "allocated_mib": round(alloc / MIB, 1),
                               "cause": site(e.get("frames"))})
    groups = {}
    for size, where, _ in peak_live.values():
        g = groups.setdefault(where, [0, 0])
        g[0] += size
        g[1] += 1
    before = peak - sum(s for s, _, _ in peak_live.values())
    live_rows = [{"where": w, "mib": round(s / MIB, 2), "blocks": n} for w, (s, n) in groups.items()]
    live_rows.sort(key=lambda r: -r["mib"])
    big.sort(key=lambda t: -t[0])
    segs = [{"mib": round(s["total_size"] / MIB, 3), "allocated_mib": round(s["allocated_size"] / MIB, 3),
             "pool": s.get("segment_type"), "pool_id": str(s.get("segment_pool_id"))} for s in snap["segments"]]
    segs.sort(key=lambda r: -r["mib"])
    return {"events": len(trace), "peak_allocated_mib": round(peak / MIB, 2), "peak_event": peak_i,
            "events_total": len(trace), "before_the_step_live_at_peak_mib": round(before / MIB, 2),
            "live_at_peak": live_rows[:40],
            "segment_events": seg_events[:200],
            "largest_allocations": [{"mib": round(s / MIB, 2), "where": w, "i": i} for s, w, i in big[:30]],
            "segments_at_end": segs, "reserved_at_end_mib": round(sum(r["mib"] for r in segs), 2)}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", required=True)
    p.add_argument("--git-sha", default="unknown")
    p.add_argument("--cases", required=True, help="comma-separated e2e case ids (run in the suite's order)")
    p.add_argument("--warmup", type=int, default=3)
    a = p.parse_args()
    want = set(a.cases.split(","))
    unknown = want - {c["id"] for c in es.CASES}
    if unknown:
        sys.exit(f"memory_trace.py: unknown case ids {sorted(unknown)}; see e2e_suite.py --list")
    torch.backends.cudnn.benchmark = True  # as e2e_suite.py runs its cases
    doc = {"tool": "memory_trace.py", "provenance": rc.provenance(a.git_sha, {"cudnn_benchmark": True}), "cases": []}
    for spec in es.CASES:
        if spec["id"] not in want:
            continue
        t0 = time.monotonic()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        model, step, opt = es.warmed_step(spec, "cuda", a.warmup)[1:]
        if opt is not None:
            opt.zero_grad(set_to_none=True)
        base = torch.cuda.memory_allocated()
        reserved0 = torch.cuda.memory_reserved()
        torch.cuda.reset_peak_memory_stats()
        torch.cuda.memory._record_memory_history(max_entries=2_000_000, stacks="python")
        step()
        torch.cuda.synchronize()
        snap = torch.cuda.memory._snapshot()
        torch.cuda.memory._record_memory_history(enabled=None)
        rec = {"id": spec["id"], "allocated_at_step_start_mib": round(base / MIB, 2),
               "reserved_at_step_start_mib": round(reserved0 / MIB, 2),
               "max_allocated_mib": round(torch.cuda.max_memory_allocated() / MIB, 2),
               "max_reserved_mib": round(torch.cuda.max_memory_reserved() / MIB, 2)}
        rec.update(reduce_trace(snap, base))
        if spec["task"] == "infer" and spec["runtime"] == "eager":
            rows = module_transients(model, step)
            rows.sort(key=lambda r: -r["transient_bytes"])
            rec["module_transients"] = rows[:40]
        rec["wall_s"] = round(time.monotonic() - t0, 1)
        doc["cases"].append(rec)
        print(spec["id"], rec["max_allocated_mib"], rec["peak_allocated_mib"], rec["max_reserved_mib"],
              f"{rec['wall_s']}s", flush=True)
        with open(a.json, "w") as f:
            json.dump(doc, f, indent=1)
        del step, opt, model
    with open(a.json, "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
