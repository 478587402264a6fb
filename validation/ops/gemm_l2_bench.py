#!/usr/bin/env python3
"""Linear-layer GEMMs with their weights in L2 or not (validation question, issue 14; nothing here is fitted).

gemm_bench.py times each linear shape by calling it again and again on one set of tensors, so its weights stay in
the GPU's L2 cache (50 MB on an H100/H200; a BERT-base FP32 weight is 2.4-9.4 MB).  In a step every layer's weights
are read once, after the other layers have been through L2.  This script times the forward addmm(bias, x, W^T) of
the suite's transformer shapes both ways: "warm", one set of tensors called back to back; "cold", a rotation
through as many distinct sets as fill four times the L2, so that each call's weights were evicted since their last
use.  Both are CUDA-event times of calls queued behind a sleep kernel (the GPU, not the host, sets the pace).
Before timing, each mode's output is checked against float64 on the same inputs.

Usage (on a GPU machine): python3 gemm_l2_bench.py --json OUT.json [--git-sha SHA]
"""
import argparse
import math
import statistics
import sys
import time

import torch

sys.path.insert(0, __file__.rsplit("/", 2)[0] + "/e2e")
import rp_common as rc  # noqa: E402  (provenance and JSON writing shared with the other benchmarks)

SHAPES = [(768, 768, True), (768, 3072, True), (3072, 768, True), (768, 2304, True)]  # BERT-base / GPT-2 linears
MODES = {"fp32": (torch.float32, "highest", 1e-5), "bf16": (torch.bfloat16, "high", 2e-2)}
ROWS = [1, 16, 128, 512, 2048]


def rel_error(out, ref):
    return float((out.double() - ref).norm() / ref.norm().clamp_min(1e-30))


def make_set(fin, fout, rows, dt, gen):
    x = torch.randn(rows, fin, device="cuda", dtype=dt, generator=gen)
    w = torch.randn(fout, fin, device="cuda", dtype=dt, generator=gen) / fin ** 0.5
    b = torch.randn(fout, device="cuda", dtype=dt, generator=gen)
    return x, w, b


def timed(sets, calls_per_rep=32, reps=25):
    """Median GPU seconds per call of addmm over `sets`, taken in rotation, calls queued behind a sleep kernel."""
    n = len(sets)
    for i in range(2 * n):  # warm-up: cuBLAS heuristics and handles, every set touched
        x, w, b = sets[i % n]
        torch.addmm(b, x, w.t())
    torch.cuda.synchronize()
    per_call, k = [], 0
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(int(2e9 * 400e-6))  # the host queues every call before the GPU reaches them
        start.record()
        for _ in range(calls_per_rep):
            x, w, b = sets[k % n]
            torch.addmm(b, x, w.t())
            k += 1
        end.record()
        end.synchronize()
        per_call.append(start.elapsed_time(end) / 1e3 / calls_per_rep)
    return statistics.median(per_call), min(per_call), max(per_call)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", required=True)
    ap.add_argument("--git-sha", default="unknown")
    ap.add_argument("--rows", default=",".join(map(str, ROWS)))
    a = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("gemm_l2_bench: needs a CUDA GPU")
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    doc = {"tool": "roofplan-gemm-l2", "provenance": rc.provenance(a.git_sha, {"l2_bytes": l2}),
           "method": "forward addmm(b, x, W^T), CUDA events over 32 queued calls x 25 reps (median per call); warm: one "
                     "tensor set; cold: a rotation through sets filling 4x the L2", "cases": []}
    t0 = time.monotonic()
    for mode, (dt, precision, tol) in MODES.items():
        torch.set_float32_matmul_precision(precision)
        for fin, fout, bias in SHAPES:
            for rows in [int(r) for r in a.rows.split(",")]:
                gen = torch.Generator(device="cuda").manual_seed(rows * 7 + fin)
                one = make_set(fin, fout, rows, dt, gen)
                set_bytes = sum(t.numel() * t.element_size() for t in one)
                n_cold = max(2, math.ceil(4 * l2 / set_bytes))
                cold = [one] + [make_set(fin, fout, rows, dt, gen) for _ in range(n_cold - 1)]
                # correctness: the first and the last set against float64
                errors = []
                for x, w, b in (cold[0], cold[-1]):
                    errors.append(rel_error(torch.addmm(b, x, w.t()), torch.addmm(b.double(), x.double(), w.double().t())))
                ok = max(errors) <= tol
                warm_s = timed([one])
                cold_s = timed(cold)
                rec = {"mode": mode, "in_features": fin, "out_features": fout, "bias": bias, "rows": rows,
                       "set_bytes": set_bytes, "cold_sets": n_cold, "rel_error": max(errors), "verified": ok,
                       "warm_s": warm_s[0], "warm_min_s": warm_s[1], "warm_max_s": warm_s[2],
                       "cold_s": cold_s[0], "cold_min_s": cold_s[1], "cold_max_s": cold_s[2],
                       "cold_over_warm": cold_s[0] / warm_s[0]}
                doc["cases"].append(rec)
                print(f"{mode} {fin}x{fout} rows {rows}: warm {warm_s[0] * 1e6:.2f} us, cold {cold_s[0] * 1e6:.2f} us "
                      f"(x{cold_s[0] / warm_s[0]:.2f}, {n_cold} sets), err {max(errors):.1e}{'' if ok else ' FAILED'}",
                      flush=True)
                del cold, one
                torch.cuda.empty_cache()
    doc["wall_s"] = time.monotonic() - t0
    rc.write_json(a.json, doc)


if __name__ == "__main__":
    main()
