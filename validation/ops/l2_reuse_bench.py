#!/usr/bin/env python3
"""Does a memory-bound kernel run faster when it reads a tensor the previous kernel just wrote (still in L2)?
A micro-benchmark of producer -> consumer pairs, to tell whether roofplan's per-operator rates (measured cold:
op_bench.py rotates its inputs through about 3x L2) need an L2 term for chains of kernels in a step.

Cases (one GPU; each timed with CUDA events around the CONSUMER only, the producer enqueued just before it):
  chain    producer y = x + 1 (bf16, n elements), consumer z = clamp(y, min=0) (a ReLU written to a given output): hot (y just written) vs cold (the consumer
           reads a tensor of the same size from a rotating pool of 3x L2 after a 3x-L2 scrub), for tensors from
           1/16 to 8x the L2 size
  conv_bn  ResNet-50 inference shapes at batch 256, bf16 channels-last: producer = the convolution whose output
           the batch norm reads (cuDNN), consumer = F.batch_norm in eval mode; hot vs cold as above
Before timing, each consumer's output is compared with a float64 reference (relu: exact; batch norm: bf16
tolerance).  The report (tool "roofplan-l2-reuse", schema 1) has, per case, the bytes the consumer moves, its
median hot and cold times (20 repetitions after warm-up) and their ratio.  Validation only.

  python3 validation/ops/l2_reuse_bench.py --json out.json --git-sha SHA
"""
import argparse
import json
import statistics
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, __file__.rsplit("/", 2)[0] + "/e2e")
import rp_common as rc  # noqa: E402

DEV = "cuda"
REPS = 20


def l2_bytes():
    props = torch.cuda.get_device_properties(0)
    return int(getattr(props, "L2_cache_size", 50 << 20))


def scrub(buf):
    buf.add_(1)  # touches 3x L2: whatever was cached is evicted


def time_consumer(produce, consume, scrub_buf, hot):
    """Median GPU time of consume(), with produce() just before it (hot) or a scrub in between (cold)."""
    times = []
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for i in range(REPS + 3):
        produce()
        if not hot:
            scrub(scrub_buf)
        start.record()
        consume()
        end.record()
        torch.cuda.synchronize()
        if i >= 3:
            times.append(start.elapsed_time(end) * 1e-3)
    return statistics.median(times), min(times), max(times)


def chain_cases(l2, scrub_buf):
    out = []
    for frac in (1 / 16, 1 / 8, 1 / 4, 3 / 8, 1 / 2, 3 / 4, 1, 3 / 2, 2, 4, 8):
        n = int(l2 * frac) // 2  # bf16 elements of the tensor the consumer reads
        x = torch.randn(n, device=DEV, dtype=torch.bfloat16)
        y = torch.empty_like(x)
        z = torch.empty_like(x)
        torch.add(x, 1, out=y)
        torch.clamp(y, min=0, out=z)
        ok = torch.equal(z, torch.relu(x.double() + 1).to(torch.bfloat16)) or \
            float((z.double() - torch.relu(y.double())).abs().max()) == 0.0
        hot = time_consumer(lambda: torch.add(x, 1, out=y), lambda: torch.clamp(y, min=0, out=z), scrub_buf, True)
        cold = time_consumer(lambda: torch.add(x, 1, out=y), lambda: torch.clamp(y, min=0, out=z), scrub_buf, False)
        out.append({"case": "chain", "consumer": "clamp(min=0)", "dtype": "bf16", "tensor_bytes": 2 * n,
                    "fraction_of_l2": 2 * n / l2, "consumer_bytes": 4 * n, "verified": bool(ok),
                    "hot_s": hot[0], "cold_s": cold[0], "hot_min_s": hot[1], "cold_min_s": cold[1],
                    "cold_over_hot": cold[0] / hot[0]})
        print(f"chain {2 * n / 2**20:8.1f} MiB ({2 * n / l2:5.2f} L2): hot {hot[0] * 1e6:8.1f} us, "
              f"cold {cold[0] * 1e6:8.1f} us, cold/hot {cold[0] / hot[0]:.2f}", file=sys.stderr)
        del x, y, z
    return out


def conv_bn_cases(scrub_buf, batch):
    # (in channels, out channels, spatial, kernel, stride) of ResNet-50 convolutions feeding a batch norm
    shapes = [(64, 64, 56, 1, 1), (64, 256, 56, 1, 1), (128, 128, 28, 3, 1), (256, 256, 14, 3, 1), (512, 512, 7, 3, 1),
              (512, 2048, 7, 1, 1)]
    out = []
    torch.backends.cudnn.benchmark = False
    for cin, cout, hw, k, s in shapes:
        x = torch.randn(batch, cin, hw, hw, device=DEV, dtype=torch.bfloat16).contiguous(memory_format=torch.channels_last)
        w = (torch.randn(cout, cin, k, k, device=DEV, dtype=torch.bfloat16) * 0.05).contiguous(memory_format=torch.channels_last)
        rm = torch.randn(cout, device=DEV) * 0.1
        rv = torch.rand(cout, device=DEV) + 0.5
        g = torch.rand(cout, device=DEV) + 0.5
        b = torch.randn(cout, device=DEV) * 0.1
        y = F.conv2d(x, w, stride=s, padding=k // 2)
        box = {"y": y}

        def produce():
            box["y"] = F.conv2d(x, w, stride=s, padding=k // 2)

        def consume():
            return F.batch_norm(box["y"], rm, rv, g, b, training=False, eps=1e-5)
        z = consume()
        shape = (1, -1, 1, 1)
        ref = (y.double() - rm.view(shape).double()) / torch.sqrt(rv.view(shape).double() + 1e-5) * \
            g.view(shape).double() + b.view(shape).double()
        err = float((z.double() - ref).norm() / ref.norm())
        hot = time_consumer(produce, consume, scrub_buf, True)
        cold = time_consumer(produce, consume, scrub_buf, False)
        tensor = y.numel() * 2
        out.append({"case": "conv_bn", "consumer": "batch_norm eval (native, bf16 channels-last)",
                    "shape": list(y.shape), "tensor_bytes": tensor, "fraction_of_l2": tensor / l2_bytes(),
                    "consumer_bytes": 2 * tensor, "check_error": err, "verified": err < 2e-2,
                    "hot_s": hot[0], "cold_s": cold[0], "hot_min_s": hot[1], "cold_min_s": cold[1],
                    "cold_over_hot": cold[0] / hot[0]})
        print(f"conv->bn {list(y.shape)} {tensor / 2**20:7.1f} MiB: hot {hot[0] * 1e6:8.1f} us, cold {cold[0] * 1e6:8.1f} us, "
              f"cold/hot {cold[0] / hot[0]:.2f} (err {err:.1e})", file=sys.stderr)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", required=True)
    ap.add_argument("--git-sha", default="unknown")
    ap.add_argument("--batch", type=int, default=256)
    a = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("l2_reuse_bench: needs a CUDA GPU")
    l2 = l2_bytes()
    scrub_buf = torch.zeros(3 * l2 // 4, device=DEV, dtype=torch.float32)
    cases = chain_cases(l2, scrub_buf) + conv_bn_cases(scrub_buf, a.batch)
    report = {"tool": "roofplan-l2-reuse", "schema": 1,
              "provenance": rc.provenance(a.git_sha, {"l2_bytes": l2, "reps": REPS}),
              "method": "CUDA events around the consumer only; hot: the producer ran just before it; cold: a write "
                        "of 3x L2 in between; median of the repetitions after 3 warm-up pairs",
              "cases": cases}
    with open(a.json, "w") as f:
        json.dump(report, f, indent=1)
    bad = [c for c in cases if not c["verified"]]
    if bad:
        sys.exit(f"l2_reuse_bench: {len(bad)} case(s) failed their check")


if __name__ == "__main__":
    main()
