#!/usr/bin/env python3
"""Host dispatch cost per module call, by layer kind, and end-to-end host time per step, in ONE process (one host
CPU, one lease), so that the micro-benchmarks that calibrate roofplan's host timeline and the end-to-end steps that
validate it share the same host.  Only the micro-benchmarks may calibrate; the steps are for validation only.

Micro-benchmarks ("modules"): for each layer kind the zoo uses, a chain of N modules (nn.Sequential) on tiny
tensors (every kernel a few microseconds of GPU, far below the host's cost per call: the GPU is never the
bottleneck), fp32 (NCHW; no TF32) and under autocast bf16 (CNN kinds channels-last), timed on the host's wall clock
with torch.cuda.synchronize only between repetitions (outside the timed region):
  infer    forward under no_grad (eval mode), per module
  fwd      forward in grad mode (parameters and the chain's input require grad: autograd records), per module
  fwdbwd   forward + out.float().sum().backward(), per module (bwd = fwdbwd - fwd)
Kinds that cannot be chained (embedding, the loss) are called N times on the same input and their outputs summed
(N - 1 adds, whose own cost is measured as the kind "add" and reported beside them, not subtracted here).
Kernels per module call come from one profiled repetition (torch.profiler device events / N).
Also: optimizer steps (SGD momentum and AdamW, foreach, PyTorch's defaults) over 16, 64, 161, 256 tensors of 256
elements; zero_grad(set_to_none=True); composite blocks (torchvision Bottleneck, Hugging Face BertLayer and
GPT2Block at tiny widths) as a check of the per-kind sum.
End to end ("steps"): cases of validation/e2e/e2e_suite.py, built and stepped exactly as there (its builders are
imported), host_s = wall time inside step() per synchronised step, median over the timed steps.

  python3 validation/e2e/host_bench.py --json host.json --git-sha SHA [--cases id,id] [--reps 25] [--chain 50]
"""
import argparse
import gc
import json
import statistics
import sys
import time
import traceback

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import e2e_suite as es  # noqa: E402  (the same models, precisions, optimizers and step closures)
import rp_common as rc  # noqa: E402

DEV = "cuda"
E2E_CASES = [c["id"] for c in es.CASES if c["runtime"] == "eager"]


class Add(nn.Module):
    """A residual add: x + a fixed tensor (the add's backward passes the gradient to x)."""

    def __init__(self, shape):
        super().__init__()
        self.register_buffer("other", torch.randn(shape))

    def forward(self, x):
        return x + self.other


class SDPA(nn.Module):
    def forward(self, x):
        return F.scaled_dot_product_attention(x, x, x)


class Fan(nn.Module):
    """N calls of a module on the same input, outputs summed (for kinds whose output cannot feed the next call)."""

    def __init__(self, make, n):
        super().__init__()
        self.mods = nn.ModuleList(make() for _ in range(n))

    def forward(self, *args):
        acc = None
        for m in self.mods:
            y = m(*args)
            acc = y if acc is None else acc + y
        return acc


class Loss(nn.Module):
    def __init__(self, target):
        super().__init__()
        self.register_buffer("target", target)
        self.f = nn.CrossEntropyLoss()

    def forward(self, x):
        return self.f(x, self.target)


def kinds(n):
    """(name, build(n) -> module, input(dtype) -> tensor, channels_last under amp, chained)."""
    img = (2, 16, 8, 8)
    seq = (2, 16, 64)
    out = [
        ("conv2d 16->16 k3 (no bias)", lambda: nn.Sequential(*[nn.Conv2d(16, 16, 3, padding=1, bias=False) for _ in range(n)]), img, True),
        ("conv2d 16->16 k3 (bias)", lambda: nn.Sequential(*[nn.Conv2d(16, 16, 3, padding=1) for _ in range(n)]), img, True),
        ("batchnorm2d 16", lambda: nn.Sequential(*[nn.BatchNorm2d(16) for _ in range(n)]), img, True),
        ("relu", lambda: nn.Sequential(*[nn.ReLU() for _ in range(n)]), img, True),
        ("add", lambda: nn.Sequential(*[Add(img) for _ in range(n)]), img, True),
        ("maxpool2d k3 s1 p1", lambda: nn.Sequential(*[nn.MaxPool2d(3, 1, 1) for _ in range(n)]), img, True),
        ("adaptiveavgpool2d 8", lambda: nn.Sequential(*[nn.AdaptiveAvgPool2d(8) for _ in range(n)]), img, True),
        ("linear 64->64", lambda: nn.Sequential(*[nn.Linear(64, 64) for _ in range(n)]), seq, False),
        ("layernorm 64", lambda: nn.Sequential(*[nn.LayerNorm(64) for _ in range(n)]), seq, False),
        ("gelu", lambda: nn.Sequential(*[nn.GELU() for _ in range(n)]), seq, False),
        ("dropout 0.1", lambda: nn.Sequential(*[nn.Dropout(0.1) for _ in range(n)]), seq, False),
        ("sdpa 2x2x16x64", lambda: nn.Sequential(*[SDPA() for _ in range(n)]), (2, 2, 16, 64), False),
        ("embedding 1000x64 (fan)", lambda: Fan(lambda: nn.Embedding(1000, 64), n), "ids", False),
        ("cross_entropy 2x1000 (fan)", lambda: Fan(lambda: Loss(torch.randint(0, 1000, (2,))), n), (2, 1000), False),
    ]
    try:
        from transformers.activations import NewGELUActivation
        out.append(("gelu_tanh (HF NewGELU)", lambda: nn.Sequential(*[NewGELUActivation() for _ in range(n)]), seq, False))
    except Exception:  # noqa: BLE001
        pass
    return out


def make_input(shape, amp, channels_last):
    if shape == "ids":
        return torch.randint(0, 1000, (2, 16), device=DEV), False
    x = torch.randn(shape, device=DEV)
    if channels_last and amp and x.dim() == 4:
        x = x.contiguous(memory_format=torch.channels_last)
    return x, True


def timed(fn, reps, warm=5):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    torch.cuda.synchronize()
    return ts


def kernels_of(fn):
    torch.cuda.synchronize()
    ev = rc.profile_device(fn, calls=1, sync=torch.cuda.synchronize)
    return len(ev)


def bench_kind(name, build, shape, cl, n, reps, amp):
    dt = torch.bfloat16 if amp else None
    m = build().to(DEV)
    if cl and amp:
        m = m.to(memory_format=torch.channels_last)
    x, floating = make_input(shape, amp, cl)
    rec = {"kind": name, "precision": "amp-bf16" if amp else "fp32", "chain": n}
    ac = (lambda: es.autocast(DEV, dt))

    def infer():
        with torch.no_grad(), ac():
            return m(x)

    xg = x.detach().clone().requires_grad_(floating)
    keep = []

    def fwd():
        with ac():
            keep.append(m(xg))

    def fwdbwd():
        with ac():
            y = m(xg)
        y.float().sum().backward()

    m.eval()
    ts = timed(infer, reps)
    rec["infer_us"] = statistics.median(ts) / n * 1e6
    rec["infer_kernels"] = kernels_of(infer) / n
    m.train()
    ts = []
    for _ in range(5):
        fwd()
    keep.clear()
    for _ in range(reps):  # the graphs are freed outside the timed region
        torch.cuda.synchronize()
        t = time.perf_counter()
        fwd()
        ts.append(time.perf_counter() - t)
        keep.clear()
    rec["fwd_us"] = statistics.median(ts) / n * 1e6
    rec["fwd_kernels"] = kernels_of(fwd) / n
    keep.clear()
    ts = timed(fwdbwd, reps)
    m.zero_grad(set_to_none=True)
    rec["fwdbwd_us"] = statistics.median(ts) / n * 1e6
    rec["fwdbwd_kernels"] = kernels_of(fwdbwd) / n
    rec["bwd_us"] = rec["fwdbwd_us"] - rec["fwd_us"]
    rec["bwd_kernels"] = rec["fwdbwd_kernels"] - rec["fwd_kernels"]
    return rec


def robust(measure, rounds):
    """The measurement repeated `rounds` times (fresh modules each time); each timed figure is the median over
    rounds, and the rounds' spread is kept."""
    recs = []
    for _ in range(rounds):
        gc.collect()
        recs.append(measure())
    out = dict(recs[0])
    for key, value in recs[0].items():
        if key.endswith("_us"):
            vals = [r[key] for r in recs]
            out[key] = statistics.median(vals)
            out[key.replace("_us", "_us_rounds")] = vals
    out["rounds"] = rounds
    return out


def bench_optimizers(reps):
    out = []
    for opt_name in ("sgd", "adamw"):
        for tensors in (16, 64, 161, 256):
            ps = [torch.randn(256, device=DEV, requires_grad=True) for _ in range(tensors)]
            for p in ps:
                p.grad = torch.randn_like(p)
            opt = torch.optim.SGD(ps, lr=0.01, momentum=0.9) if opt_name == "sgd" else torch.optim.AdamW(ps, lr=1e-4)
            ts = timed(opt.step, reps)
            k = kernels_of(opt.step)
            out.append({"optimizer": opt_name, "implementation": "foreach (default)", "tensors": tensors,
                        "step_us": statistics.median(ts) * 1e6, "kernels": k})

            def zero(ps=ps):
                for p in ps:
                    p.grad = None
                opt.zero_grad(set_to_none=True)
            zs = timed(zero, reps)
            out.append({"optimizer": opt_name, "op": "zero_grad(set_to_none=True)", "tensors": tensors,
                        "step_us": statistics.median(zs) * 1e6})
    return out


def bench_blocks(n, reps):
    """Composite blocks (a check on the per-kind sum, not a calibration input)."""
    out = []
    builders = []
    import torchvision
    builders.append(("torchvision Bottleneck(64, 16)", lambda: nn.Sequential(
        *[torchvision.models.resnet.Bottleneck(64, 16) for _ in range(n)]), (2, 64, 8, 8), True))
    try:
        import transformers as tf
        bcfg = tf.BertConfig(hidden_size=64, num_attention_heads=2, intermediate_size=256)
        gcfg = tf.GPT2Config(n_embd=64, n_head=2)
        for cfg in (bcfg, gcfg):  # what the e2e models get from from_config / the constructor
            try:
                cfg._attn_implementation = "sdpa"
            except Exception:  # noqa: BLE001
                pass

        class Stack(nn.Module):
            """n blocks in a row; Hugging Face blocks may return a tuple whose first item is the hidden state."""

            def __init__(self, make):
                super().__init__()
                self.layers = nn.ModuleList(make(i) for i in range(n))

            def forward(self, x):
                for layer in self.layers:
                    y = layer(x)
                    x = y[0] if isinstance(y, tuple) else y
                return x

        BertFixed = lambda: Stack(lambda i: tf.models.bert.modeling_bert.BertLayer(bcfg))  # noqa: E731
        GPT = lambda: Stack(lambda i: tf.models.gpt2.modeling_gpt2.GPT2Block(gcfg, layer_idx=i))  # noqa: E731
        builders.append(("HF BertLayer(64, 2 heads)", BertFixed, (2, 16, 64), False))
        builders.append(("HF GPT2Block(64, 2 heads)", GPT, (2, 16, 64), False))
    except Exception as e:  # noqa: BLE001
        out.append({"error": repr(e)})
    for name, build, shape, cl in builders:
        for amp in (False, True):
            try:
                out.append(robust(lambda: bench_kind(name, build, shape, cl, n, reps, amp), 3))
            except Exception:  # noqa: BLE001
                out.append({"kind": name, "amp": amp, "error": traceback.format_exc()[-600:]})
    return out


def bench_steps(ids, steps, warmup, deadline):
    out = []
    torch.backends.cudnn.benchmark = True
    specs = {c["id"]: c for c in es.CASES}
    for cid in ids:
        if time.monotonic() > deadline:
            out.append({"id": cid, "skipped": "deadline"})
            continue
        spec = specs[cid]
        rec = {"id": cid, "roofplan_command": spec["roofplan_command"]}
        model = step = None
        try:
            t0 = time.monotonic()
            rec["precision_settings"], model, step, _ = es.warmed_step(spec, DEV, warmup)
            host, times = [], []
            for _ in range(steps):
                e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                e0.record()
                h = time.perf_counter()
                step()
                host.append(time.perf_counter() - h)
                e1.record()
                e1.synchronize()
                times.append(e0.elapsed_time(e1) / 1e3)
            rec.update({"steps": steps, "host_s_median": statistics.median(host),
                        "host_s_p10": sorted(host)[len(host) // 10], "host_s_p90": sorted(host)[(9 * len(host)) // 10],
                        "step_time_s_median": statistics.median(times),
                        "kernels_per_step": kernels_of(step), "wall_s": time.monotonic() - t0})
        except Exception:  # noqa: BLE001
            rec["error"] = traceback.format_exc()[-800:]
        out.append(rec)
        del model, step
        gc.collect()
        torch.cuda.empty_cache()
    torch.backends.cudnn.benchmark = False
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", required=True)
    p.add_argument("--git-sha", default="unknown")
    p.add_argument("--chain", type=int, default=50)
    p.add_argument("--reps", type=int, default=30)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--cases", default=",".join(E2E_CASES))
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--deadline-s", type=float, default=420)
    a = p.parse_args()
    start = time.monotonic()
    torch.backends.cudnn.benchmark = False
    torch.set_float32_matmul_precision("highest")
    torch.backends.cudnn.allow_tf32 = False
    doc = {"tool": "roofplan-host-bench", "schema": 1,
           "provenance": rc.provenance(a.git_sha, {"cudnn_benchmark_modules": False, "cudnn_benchmark_steps": True}),
           "method": {"chain": a.chain, "reps": a.reps, "rounds": a.rounds, "statistic": "median wall time per repetition / chain",
                      "steps": a.steps, "warmup": a.warmup}, "modules": [], "optimizers": [], "blocks": [],
           "steps": []}

    def save():
        with open(a.json, "w") as f:
            json.dump(doc, f, indent=1)
    # the end-to-end steps first and last would bracket drift; steps once, in the middle, keeps the budget
    for name, build, shape, cl in kinds(a.chain):
        for amp in (False, True):
            try:
                r = robust(lambda: bench_kind(name, build, shape, cl, a.chain, a.reps, amp), a.rounds)
                print(f"{name:32s} {r['precision']:8s} infer {r['infer_us']:6.1f} ({r['infer_kernels']:.2f} k)  "
                      f"fwd {r['fwd_us']:6.1f} ({r['fwd_kernels']:.2f} k)  bwd {r['bwd_us']:6.1f} "
                      f"({r['bwd_kernels']:.2f} k)", flush=True)
            except Exception:  # noqa: BLE001
                r = {"kind": name, "precision": "amp-bf16" if amp else "fp32", "error": traceback.format_exc()[-600:]}
                print(r, flush=True)
            doc["modules"].append(r)
        save()
    doc["optimizers"] = bench_optimizers(a.reps)
    for r in doc["optimizers"]:
        print(r, flush=True)
    save()
    doc["steps"] = bench_steps(a.cases.split(","), a.steps, a.warmup, start + a.deadline_s - 60)
    for r in doc["steps"]:
        print({k: r.get(k) for k in ("id", "host_s_median", "step_time_s_median", "kernels_per_step", "error")}, flush=True)
    save()
    torch.set_float32_matmul_precision("highest")
    torch.backends.cudnn.allow_tf32 = False
    doc["blocks"] = bench_blocks(max(4, a.chain // 5), a.reps)
    for r in doc["blocks"]:
        print(r, flush=True)
    doc["wall_s"] = time.monotonic() - start
    save()


if __name__ == "__main__":
    main()
