#!/usr/bin/env python3
"""Per-shape cuDNN convolution times as eager PyTorch runs them (issue 14, item 2: "when a calibrated profile holds
the exact GEMM/conv shape, use the measured time").  A single-operator micro-benchmark: one convolution pass at a
time, never a network.

For every distinct Conv2d of the given torchvision models (shapes from a forward pass at 224x224), in each
precision mode as validation/e2e/e2e_suite.py runs them (fp32: NCHW, TF32 off; tf32: NCHW, TF32 on; bf16 and
fp16: channels-last tensors of that dtype, as autocast hands them to cuDNN), with cudnn.benchmark on (as the
suite), at each batch, and for each pass PyTorch runs on its own operator:
  forward            aten.convolution without bias (eager adds the bias in a kernel of its own)
  backward-data      aten.convolution_backward, output mask (input)   -- skipped for 3-channel inputs (first layers
                     take no input gradient)
  backward-filter    aten.convolution_backward, output mask (weight)
Method (validation: METHOD.md):
  1. correctness: at batch 2, on fresh random non-zero inputs, each pass is compared with the same pass in float64
     (cuDNN's double kernels) by ||out - ref|| / ||ref|| (bounds per mode below); a failing pass is still timed and
     recorded with "verified": false.
  2. warm-up: two calls (the first runs PyTorch's engine search for the shape).
  3. time: CUDA events around each call with a spin kernel before it (the GPU waits for nothing from the host, so
     the time is the GPU's own: the call's kernels back to back); median of --reps.
  4. kernels: one torch.profiler pass per shape and mode over every batch and pass (3 calls each, spin kernels
     between them as separators), so each record lists its kernels per call and their device time by class
     (conv, gemm, copy/cast for the NCHW<->NHWC conversions of TF32, memset, reduction, ...).
Output: JSON (tool "roofplan-conv-shapes") with provenance; `roofplan calibrate` reads it.

  python3 validation/ops/conv_bench.py --json conv.json --modes fp32,tf32 --git-sha SHA [--deadline-s 500]
"""
import argparse
import statistics
import sys
import time

import torch

sys.path.insert(0, __file__.rsplit("/", 2)[0] + "/e2e")
import rp_common as rc  # noqa: E402

MODES = rc.CONV_MODES
TOL = {"fp32": 1e-4, "tf32": 5e-3, "bf16": 2e-2, "fp16": 4e-3}
PASSES = ("forward", "backward_data", "backward_filter")


def conv_shapes(names):
    """Distinct (in, out, kernel, stride, padding, dilation, groups, input hw) over the models, in order (the
    passes are measured without bias: rp_common.conv_shapes's key without it)."""
    shapes = {}
    for (cin, cout, ks, st, pad, dil, groups, _bias, hw), models in rc.conv_shapes(names).items():
        for m in models:
            shapes.setdefault((cin, cout, ks, st, pad, dil, groups, hw), []).append(m)
    return shapes


class Conv:
    """One convolution shape in one mode at one batch: its tensors and its three passes as callables."""

    def __init__(self, key, mode, batch, dtype=None, seed=0):
        cin, cout, ks, st, pad, dil, groups, hw = key
        dt, fmt, _ = MODES[mode]
        dt = dtype or dt
        g = torch.Generator(device="cuda").manual_seed(seed)
        self.x = torch.randn(batch, cin, *hw, device="cuda", dtype=dt, generator=g).contiguous(memory_format=fmt)
        self.w = (torch.randn(cout, cin // groups, *ks, device="cuda", dtype=dt, generator=g) /
                  (cin // groups * ks[0] * ks[1]) ** 0.5).contiguous(memory_format=fmt)
        self.args = (list(st), list(pad), list(dil), False, [0, 0], groups)
        y = self.forward()
        self.gy = torch.randn(y.shape, device="cuda", dtype=dt, generator=g).contiguous(memory_format=fmt)
        self.out_hw = tuple(y.shape[2:])

    def forward(self):
        return torch.ops.aten.convolution(self.x, self.w, None, *self.args)

    def backward_data(self):
        return torch.ops.aten.convolution_backward(self.gy, self.x, self.w, None, *self.args, [True, False, False])[0]

    def backward_filter(self):
        return torch.ops.aten.convolution_backward(self.gy, self.x, self.w, None, *self.args, [False, True, False])[1]

    def run(self, p):
        return getattr(self, p)()


def rel_error(out, ref):
    return float((out.double() - ref).norm() / ref.norm())


def verify(key, mode, p):
    """The pass at batch 2 against float64 on the same inputs."""
    c = Conv(key, mode, 2, seed=1234)
    ref = Conv(key, mode, 2, dtype=torch.float64, seed=1234)
    ref.x.copy_(c.x.double())
    ref.w.copy_(c.w.double())
    ref.gy.copy_(c.gy.double())
    err = rel_error(c.run(p), ref.run(p))
    return err, err <= TOL[mode]


def time_pass(c, p, reps):
    times = []
    for _ in range(reps):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(200_000)  # ~0.1 ms of spin: the call is enqueued before the GPU reaches it
        e0.record()
        c.run(p)
        e1.record()
        e1.synchronize()
        times.append(e0.elapsed_time(e1) * 1e-3)
    return statistics.median(times), min(times), max(times)


def spin_name():
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        torch.cuda._sleep(1000)
        torch.cuda.synchronize()
    names = {e["name"] for e in rc.device_events(prof)}
    assert len(names) == 1, names
    return names.pop()


def profile_segments(calls, spin):
    """Runs each callable 3 times under the profiler with a spin kernel before each group; returns, per callable,
    its device events (the spin kernels split the stream)."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for fn in calls:
            torch.cuda._sleep(1000)
            for _ in range(3):
                fn()
        torch.cuda._sleep(1000)
        torch.cuda.synchronize()
    segments, cur = [], None
    for e in rc.device_events(prof):
        if e["name"] == spin:
            if cur is not None:
                segments.append(cur)
            cur = []
        elif cur is not None:
            cur.append(e)
    return segments


def measure_runs(make, points, coordinate, passes, reps, spin, extra=lambda c: {}):
    """Every pass of the op `make(point)` builds, at every point: two warm-up calls, the CUDA-event times
    (time_pass), then one profiler pass over all of them for the kernels per call, their device time by class and
    the four longest kernels' names.  Returns the runs: {coordinate: point, "pass", "median_s", "min_s", "max_s",
    **extra(op), "kernels_per_call", "class_time_s", "kernel_names"}, or {coordinate: point, "error": "out of
    memory"} for a point that did not fit."""
    calls, runs = [], []
    for point in points:
        try:
            c = make(point)
            for p in passes:
                for _ in range(2):
                    c.run(p)
                torch.cuda.synchronize()
                med, lo, hi = time_pass(c, p, reps)
                runs.append({coordinate: point, "pass": p, "median_s": med, "min_s": lo, "max_s": hi, **extra(c)})
                calls.append((lambda c=c, p=p: c.run(p)))
        except torch.cuda.OutOfMemoryError:
            runs.append({coordinate: point, "error": "out of memory"})
            torch.cuda.empty_cache()
    timed = [r for r in runs if "error" not in r]
    for r, seg in zip(timed, profile_segments(calls, spin)):
        s = rc.summarize_kernels(seg, calls=3)
        r["kernels_per_call"] = s["count"]
        r["class_time_s"] = {k: v * 1e-6 for k, v in s["class_time_us"].items()}
        r["kernel_names"] = [k["name"][:120] for k in s["kernels"][:4]]
    del calls
    torch.cuda.empty_cache()
    return runs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", required=True)
    ap.add_argument("--git-sha", default="unknown")
    ap.add_argument("--models", default="resnet50,resnet18,vgg16,alexnet")
    ap.add_argument("--modes", default="fp32,tf32,bf16,fp16")
    ap.add_argument("--batches", default="1,8,16,32,64,128,256")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--limit", type=int, default=0, help="only the first N shapes (a quick check)")
    ap.add_argument("--deadline-s", type=float, default=500)
    a = ap.parse_args()
    t0 = time.monotonic()
    torch.backends.cudnn.benchmark = True
    shapes = list(conv_shapes(a.models.split(",")).items())
    if a.limit:
        shapes = shapes[:a.limit]
    batches = [int(b) for b in a.batches.split(",")]
    spin = spin_name()
    doc = {"tool": "roofplan-conv-shapes",
           "provenance": rc.provenance(a.git_sha, {"cudnn_benchmark": True, "reps": a.reps}),
           "convolutions": []}
    for mode in a.modes.split(","):
        torch.backends.cudnn.allow_tf32 = MODES[mode][2]
        torch.backends.cuda.matmul.allow_tf32 = MODES[mode][2]
        for key, models in shapes:
            if time.monotonic() - t0 > a.deadline_s:
                doc["incomplete"] = f"stopped at the deadline ({a.deadline_s:.0f} s)"
                break
            cin, cout, ks, st, pad, dil, groups, hw = key
            rec = {"mode": mode, "layout": "nchw" if MODES[mode][1] == torch.contiguous_format else "nhwc",
                   "in_channels": cin, "out_channels": cout, "kernel": list(ks), "stride": list(st),
                   "padding": list(pad), "dilation": list(dil), "groups": groups, "input_hw": list(hw),
                   "models": models, "verified": {}, "rel_error": {}, "runs": []}
            passes = [p for p in PASSES if not (p == "backward_data" and cin == 3)]
            for p in passes:
                err, ok = verify(key, mode, p)
                rec["rel_error"][p], rec["verified"][p] = err, ok
            rows = measure_runs(lambda b: Conv(key, mode, b), batches, "batch", passes, a.reps, spin,
                                extra=lambda c: {"output_hw": list(c.out_hw)})
            rec["runs"] = rows
            doc["convolutions"].append(rec)
            rc.write_json(a.json, doc)
            b32 = [r for r in rows if r.get("batch") == 32 and "error" not in r]
            print(mode, models[0], cin, cout, ks, st, hw, f"{time.monotonic() - t0:.0f}s",
                  {r["pass"]: round(r["median_s"] * 1e6, 1) for r in b32},
                  {p: f"{rec['rel_error'][p]:.1e}" for p in passes}, flush=True)
    rc.write_json(a.json, doc)


if __name__ == "__main__":
    main()
