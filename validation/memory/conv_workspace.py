#!/usr/bin/env python3
"""The workspace cuDNN takes from PyTorch's allocator for one convolution (a single-operator micro-benchmark for
the memory model, issue 15).

For every distinct Conv2d of the given torchvision models (shapes taken from a forward pass at 224x224), in each
precision mode as validation/e2e/e2e_suite.py runs them (fp32: NCHW, TF32 off; tf32: NCHW, TF32 on; bf16 and
fp16: channels-last tensors of that dtype, as autocast hands them to cuDNN), at several batches, with PyTorch's
cudnn.benchmark off (cuDNN's heuristics choose the engine) and on (PyTorch times the engines on the first call of
a shape and keeps the fastest), PyTorch allocating the chosen engine's workspace for each call:
  forward_ws   peak allocated during the forward (no_grad) - allocated before it - the output's bytes
  backward_ws  peak allocated during the backward - allocated before it - the gradients' bytes (input, weight, bias)
  with cudnn.benchmark on, the same for the first call of the shape, which runs the search (forward_search_ws,
  backward_search_ws), and the segments the search added (forward_search_reserved, backward_search_reserved)
  forward kernels (torch.profiler, one call at --profile-batch) and the forward's time (CUDA events, median of 5).
Output: JSON with provenance.  Nothing here is fitted to end-to-end runs.
"""
import argparse
import json
import statistics
import sys
import time

import torch

sys.path.insert(0, __file__.rsplit("/", 2)[0] + "/e2e")
import rp_common as rc  # noqa: E402

MODES = rc.CONV_MODES
conv_shapes = rc.conv_shapes


def nbytes(*ts):
    return sum(t.numel() * t.element_size() for t in ts if t is not None)


def measure(key, mode, batch, profile, benchmark):
    cin, cout, ks, st, pad, dil, groups, bias, hw = key
    dt, fmt, tf32 = MODES[mode]
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cudnn.benchmark = benchmark
    conv = torch.nn.Conv2d(cin, cout, ks, st, pad, dil, groups, bias, device="cuda", dtype=dt)
    conv = conv.to(memory_format=fmt)
    x = torch.randn(batch, cin, *hw, device="cuda", dtype=dt).contiguous(memory_format=fmt)
    row = {"batch": batch, "mode": mode, "cudnn_benchmark": benchmark}
    with torch.no_grad():
        if benchmark:  # the first call of this shape runs PyTorch's engine search (timing candidate plans)
            torch.cuda.synchronize()
            base, held = torch.cuda.memory_allocated(), torch.cuda.memory_reserved()
            torch.cuda.reset_peak_memory_stats()
            y = conv(x)
            torch.cuda.synchronize()
            row["forward_search_ws"] = torch.cuda.max_memory_allocated() - base - nbytes(y)
            row["forward_search_reserved"] = torch.cuda.max_memory_reserved() - held
            del y
        for _ in range(2):
            conv(x)
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        y = conv(x)
        torch.cuda.synchronize()
        row["forward_ws"] = torch.cuda.max_memory_allocated() - base - nbytes(y)
        row["output_bytes"] = nbytes(y)
        row["input_bytes"] = nbytes(x)
        times = []
        for _ in range(5):
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            conv(x)
            e1.record()
            e1.synchronize()
            times.append(e0.elapsed_time(e1) * 1e-3)
        row["forward_s"] = statistics.median(times)
        if profile:
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
                conv(x)
                torch.cuda.synchronize()
            row["forward_kernels"] = [e.name[:160] for e in prof.events()
                                      if e.device_type == torch.autograd.DeviceType.CUDA]
        del y
    x.requires_grad_(True)
    y = conv(x)
    g = torch.randn_like(y)
    if benchmark:  # the first backward searches the data- and filter-gradient engines
        torch.cuda.synchronize()
        base, held = torch.cuda.memory_allocated(), torch.cuda.memory_reserved()
        torch.cuda.reset_peak_memory_stats()
    y.backward(g)
    if benchmark:
        torch.cuda.synchronize()
        grads = nbytes(x.grad, conv.weight.grad, conv.bias.grad if bias else None)
        row["backward_search_ws"] = torch.cuda.max_memory_allocated() - base - grads
        row["backward_search_reserved"] = torch.cuda.max_memory_reserved() - held
    x.grad = None
    conv.zero_grad(set_to_none=True)
    del y
    torch.cuda.synchronize()
    y = conv(x)
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    y.backward(g)
    torch.cuda.synchronize()
    grads = nbytes(x.grad, conv.weight.grad, conv.bias.grad if bias else None)
    row["backward_ws"] = torch.cuda.max_memory_allocated() - base - grads
    del x, y, g, conv
    torch.cuda.empty_cache()
    return row


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", required=True)
    p.add_argument("--git-sha", default="unknown")
    p.add_argument("--models", default="vgg16,resnet50,resnet18,alexnet")
    p.add_argument("--modes", default="fp32,tf32,bf16")
    p.add_argument("--batches", default="1,8,16,32,64,128,256")
    p.add_argument("--profile-batch", type=int, default=32)
    p.add_argument("--benchmark", default="off", choices=["off", "on"],
                   help="cudnn.benchmark (one setting per process: PyTorch caches a shape's plan for the process)")
    p.add_argument("--deadline-s", type=float, default=300)
    a = p.parse_args()
    t0 = time.monotonic()
    shapes = conv_shapes(a.models.split(","))
    doc = {"tool": "conv_workspace.py", "provenance": rc.provenance(a.git_sha), "convolutions": []}
    for key, models in shapes.items():
        cin, cout, ks, st, pad, dil, groups, bias, hw = key
        rec = {"in_channels": cin, "out_channels": cout, "kernel": list(ks), "stride": list(st), "padding": list(pad),
               "dilation": list(dil), "groups": groups, "bias": bias, "input_hw": list(hw), "models": models,
               "runs": []}
        for bench in (a.benchmark == "on",):
            for mode in a.modes.split(","):
                for b in (int(v) for v in a.batches.split(",")):
                    if time.monotonic() - t0 > a.deadline_s:
                        break
                    try:
                        rec["runs"].append(measure(key, mode, b, b == a.profile_batch, bench))
                    except torch.cuda.OutOfMemoryError:
                        rec["runs"].append({"batch": b, "mode": mode, "cudnn_benchmark": bench,
                                            "error": "out of memory"})
                        torch.cuda.empty_cache()
        doc["convolutions"].append(rec)
        print(models[0], cin, cout, ks, st, hw, f"{time.monotonic() - t0:.0f}s",
              [(r["mode"], r["batch"], round(r.get("forward_ws", -1) / 2**20, 1),
                round(r.get("backward_ws", -1) / 2**20, 1)) for r in rec["runs"] if r["batch"] == a.profile_batch and r["cudnn_benchmark"]],
              flush=True)
    with open(a.json, "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
