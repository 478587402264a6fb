#!/usr/bin/env python3
"""End-to-end validation set for roofplan's eager and compiled runtimes (issue 14 item 7; memory figures for
issue 15).  Validation only: nothing measured here is ever fitted into roofplan.

Each case (CASES below: id, model, task, batch, seq, precision, optimizer, runtime, layout, and the roofplan
command that predicts it) builds its model locally with random weights (torchvision CNNs; Hugging Face BERT and
GPT-2 from their Config: nothing is downloaded), runs warm-up steps (training: the loss must stay finite), then:
  - step time: median (and p10/p90) of >= 20 steps, each timed with CUDA events and synchronised (the host
    starts every step with an idle GPU, as a loop that reads the loss each step does); throughput = batch /
    median; host_s: the wall time the host spent inside step() (it includes any wait the step itself forces,
    e.g. GradScaler's inf check); pipelined_step_s: 20 steps back to back with no synchronisation, per step;
  - torch.profiler, one step at a time over 3 steps: kernels per step (kernels + memcpy + memset), GPU busy
    time (union of kernel intervals), GPU window (first kernel start to last kernel end), GPU idle share
    = 1 - busy / step time, GPU time per kernel class (rp_common.kernel_class), the top kernels;
  - memory: bytes of weights, gradients and optimizer state, memory_allocated at the start of a step,
    max_memory_allocated / max_memory_reserved over the timed steps (peaks reset after warm-up) and over the
    whole case, and the CUDA context + library handles (NVML used - torch reserved) where NVML answers.
Output: JSON (tool "roofplan-e2e-suite"; schema in docs/report-schemas.md), rewritten after every case.

  python3 validation/e2e/e2e_suite.py --json e2e.json --git-sha SHA [--cases id,id|--runtime eager] [--deadline-s N]
  python3 validation/e2e/e2e_suite.py --smoke --json /tmp/e2e_smoke.json     # CPU, tiny models
  python3 validation/e2e/e2e_suite.py --list                                  # the case table (markdown)
"""
import argparse
import contextlib
import gc
import statistics
import sys
import time
import traceback

import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import rp_common as rc  # noqa: E402


def C(id_, model, task, batch, precision, optimizer=None, seq=None, runtime="eager", compile_mode=None):
    layout = None
    if model in ("resnet50", "resnet18", "alexnet", "vgg16"):
        layout = "channels_last" if precision.startswith("amp") else "nchw"
    zoo = {"bert-qa": "bert-squad", "bert-squad": "bert-squad", "bert-swag": "bert-swag"}.get(model, model)
    cmd = f"roofplan predict -m {zoo} -d h200 -b {batch} -p {precision} --mode {task}"
    if seq:
        cmd += f" -s {seq}"
    if task == "train":
        cmd += f" --optimizer {'adam' if optimizer == 'adamw' else optimizer}"
    cmd += f" --runtime {runtime}"
    if runtime == "compiled" and compile_mode != "reduce-overhead":  # only reduce-overhead replays CUDA graphs
        cmd += " --cuda-graphs off"
    return {"id": id_, "model": model, "task": task, "batch": batch, "seq": seq, "precision": precision,
            "optimizer": optimizer, "runtime": runtime, "compile_mode": compile_mode, "layout": layout,
            "roofplan_model": zoo, "roofplan_command": cmd}


CASES = [
    C("resnet50-train-b256-amp-bf16", "resnet50", "train", 256, "amp-bf16", "sgd"),
    C("resnet50-train-b128-amp-fp16", "resnet50", "train", 128, "amp-fp16", "sgd"),
    C("resnet50-train-b64-tf32", "resnet50", "train", 64, "tf32", "sgd"),
    C("resnet50-train-b32-fp32", "resnet50", "train", 32, "fp32", "sgd"),
    C("resnet50-infer-b1-fp32", "resnet50", "infer", 1, "fp32"),
    C("resnet50-infer-b256-amp-bf16", "resnet50", "infer", 256, "amp-bf16"),
    C("resnet18-train-b256-amp-bf16", "resnet18", "train", 256, "amp-bf16", "sgd"),
    C("resnet18-infer-b16-amp-fp16", "resnet18", "infer", 16, "amp-fp16"),
    C("alexnet-train-b256-tf32", "alexnet", "train", 256, "tf32", "sgd"),
    C("vgg16-train-b64-amp-bf16", "vgg16", "train", 64, "amp-bf16", "sgd"),
    C("vgg16-infer-b32-fp32", "vgg16", "infer", 32, "fp32"),
    C("bert-squad-train-s384-b32-amp-bf16", "bert-squad", "train", 32, "amp-bf16", "adamw", seq=384),
    C("bert-qa-train-s128-b64-amp-bf16", "bert-qa", "train", 64, "amp-bf16", "adamw", seq=128),
    C("bert-swag-train-s80-b16-amp-fp16", "bert-swag", "train", 16, "amp-fp16", "adamw", seq=80),
    C("bert-qa-infer-s128-b1-fp32", "bert-qa", "infer", 1, "fp32", seq=128),
    C("bert-squad-infer-s384-b64-amp-bf16", "bert-squad", "infer", 64, "amp-bf16", seq=384),
    C("gpt2-train-s1024-b8-amp-bf16", "gpt2", "train", 8, "amp-bf16", "adamw", seq=1024),
    C("gpt2-train-s512-b8-tf32", "gpt2", "train", 8, "tf32", "adamw", seq=512),
    C("gpt2-infer-s128-b1-amp-bf16", "gpt2", "infer", 1, "amp-bf16", seq=128),
    C("resnet50-infer-b256-amp-bf16-compiled", "resnet50", "infer", 256, "amp-bf16", runtime="compiled",
      compile_mode="default"),
    C("resnet18-infer-b1-amp-bf16-compiled-cudagraphs", "resnet18", "infer", 1, "amp-bf16", runtime="compiled",
      compile_mode="reduce-overhead"),
    C("bert-qa-train-s128-b64-amp-bf16-compiled", "bert-qa", "train", 64, "amp-bf16", "adamw", seq=128,
      runtime="compiled", compile_mode="default"),
]


def set_precision(precision):
    """fp32: no TF32 anywhere (PyTorch's default lets cuDNN convolutions use TF32; roofplan's fp32 means none);
    tf32: TF32 in matmuls and convolutions; amp-*: PyTorch's defaults (matmul fp32 'highest', cuDNN TF32 on)."""
    if precision == "fp32":
        torch.set_float32_matmul_precision("highest")
        torch.backends.cudnn.allow_tf32 = False
    elif precision == "tf32":
        torch.set_float32_matmul_precision("high")
        torch.backends.cudnn.allow_tf32 = True
    else:
        torch.set_float32_matmul_precision("highest")
        torch.backends.cudnn.allow_tf32 = True
    return {"float32_matmul_precision": torch.get_float32_matmul_precision(),
            "cudnn_allow_tf32": torch.backends.cudnn.allow_tf32}


def amp_dtype(precision):
    return {"amp-bf16": torch.bfloat16, "amp-fp16": torch.float16}.get(precision)


def autocast(dev, dt):
    return torch.autocast(dev, dtype=dt) if dt is not None else contextlib.nullcontext()


def build_model(spec, dev, smoke=False):
    """The model of a case, on `dev`, random weights; returns (model, make_batch, loss_of(out, batch))."""
    m, B, seq = spec["model"], spec["batch"], spec["seq"]
    if m in ("resnet50", "resnet18", "alexnet", "vgg16"):
        import torchvision
        ctor = getattr(torchvision.models, m)
        try:
            with torch.device(dev):
                model = ctor(weights=None)
        except (TypeError, AttributeError):  # older torch/torchvision: no device context or no weights=
            model = ctor().to(dev)
        res = 224 if not smoke else (32 if m != "alexnet" else 64)
        if smoke:
            B = min(B, 2)
        if spec.get("layout") == "channels_last":
            model = model.to(memory_format=torch.channels_last)
        x = torch.randn(B, 3, res, res, device=dev)
        if spec.get("layout") == "channels_last":
            x = x.contiguous(memory_format=torch.channels_last)
        y = torch.randint(0, 1000, (B,), device=dev)
        lossf = torch.nn.CrossEntropyLoss()
        return model, (lambda: ((x,), {})), (lambda out: lossf(out, y)), B
    import transformers as tf
    if smoke:
        B, seq = min(B, 2), min(seq, 32)
    if m in ("bert-qa", "bert-squad", "bert-swag"):
        cfg = tf.BertConfig() if not smoke else tf.BertConfig(num_hidden_layers=2, hidden_size=64,
                                                             num_attention_heads=2, intermediate_size=128)
        cls = tf.BertForMultipleChoice if m == "bert-swag" else tf.BertForQuestionAnswering
    else:
        cfg = tf.GPT2Config() if not smoke else tf.GPT2Config(n_layer=2, n_embd=64, n_head=2)
        cls = tf.GPT2LMHeadModel
    try:
        with torch.device(dev):
            model = cls(cfg)
    except (TypeError, AttributeError, RuntimeError):
        model = cls(cfg).to(dev)
    V = cfg.vocab_size
    if m == "bert-swag":
        ids = torch.randint(0, V, (B, 4, seq), device=dev)
        kw = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
        labels = {"labels": torch.randint(0, 4, (B,), device=dev)}
    elif m == "gpt2":
        ids = torch.randint(0, V, (B, seq), device=dev)
        kw = {"input_ids": ids}
        labels = {"labels": ids}
    else:
        ids = torch.randint(0, V, (B, seq), device=dev)
        kw = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
        labels = {"start_positions": torch.randint(0, seq, (B,), device=dev),
                  "end_positions": torch.randint(0, seq, (B,), device=dev)}
    train = spec["task"] == "train"
    return model, (lambda: ((), dict(kw, **labels) if train else kw)), (lambda out: out.loss), B


def make_step(spec, model, make_batch, loss_of, dev):
    """The step closure: training (zero_grad, autocast forward, backward, optimizer; GradScaler for amp-fp16) or
    inference (no_grad, autocast forward)."""
    ac = amp_dtype(spec["precision"])
    fwd = model
    info = {}
    if spec["runtime"] == "compiled":
        fwd = torch.compile(model, mode=spec.get("compile_mode") or "default")
    if spec["task"] == "infer":
        model.eval()
        args, kw = make_batch()

        def step():
            with torch.no_grad(), autocast(dev, ac):
                out = fwd(*args, **kw)
            return None if out is None else 0.0
        return step, None, info
    model.train()
    if spec["optimizer"] == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    info["optimizer_defaults"] = {k: v for k, v in opt.defaults.items() if isinstance(v, (bool, int, float, str,
                                                                                        type(None)))}
    scaler = None
    if spec["precision"] == "amp-fp16":
        scaler = torch.amp.GradScaler(dev) if hasattr(torch, "amp") and hasattr(torch.amp, "GradScaler") \
            else torch.cuda.amp.GradScaler()
        info["grad_scaler"] = True
    args, kw = make_batch()

    def step():
        opt.zero_grad(set_to_none=True)
        with autocast(dev, ac):
            loss = loss_of(fwd(*args, **kw))
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            opt.step()
        return loss.detach()
    return step, opt, info


def warmed_step(spec, dev, warmup):
    """A case's model and step closure as the host-side scripts (host_bench, host_ops, kernel_inventory) run it:
    the precision settings applied, seed 0, `warmup` steps run and synchronised.  Returns (precision settings,
    model, step, optimizer or None)."""
    settings = set_precision(spec["precision"])
    torch.manual_seed(0)
    model, make_batch, loss_of, _ = build_model(spec, dev)
    step, opt, _ = make_step(spec, model, make_batch, loss_of, dev)
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    return settings, model, step, opt


def tensor_bytes(ts):
    return sum(t.numel() * t.element_size() for t in ts if t is not None)


def nvml_used():
    try:
        import pynvml
        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(0)
        return pynvml.nvmlDeviceGetMemoryInfo(h).used
    except Exception:  # noqa: BLE001
        return None


def profile_step(step, cuda):
    """Kernels of one step (device events) and their summary."""
    sync = torch.cuda.synchronize if cuda else None
    if sync:
        sync()
    ev = rc.profile_device(step, calls=1, sync=sync)
    s = rc.summarize_kernels(ev, 1)
    window = (ev[-1]["start_us"] + ev[-1]["dur_us"] - ev[0]["start_us"]) if ev else 0.0
    by_kind = {"kernel": 0, "memcpy": 0, "memset": 0}
    for e in ev:
        n = e["name"].lower()
        by_kind["memcpy" if n.startswith("memcpy") else "memset" if n.startswith("memset") else "kernel"] += 1
    return {"count": s["count"], "busy_us": s["busy_us"], "window_us": window, "class_time_us": s["class_time_us"],
            "class_count": {c: sum(1 for e in ev if e["class"] == c) for c in s["class_time_us"]},
            "by_kind": by_kind, "kernels": s["kernels"]}


def host_probe(dev, rounds=5, iters=2000):
    """The host's speed now: the median over `rounds` of the time per call of a Python view op (`x.view(16)`, no
    kernel) in a loop of `iters` (microseconds).  The device hosts ran at two speeds (1.2-1.5 us or 2.3-2.8 us,
    validation/results/2026-11-24-h200-host-items) that switch within seconds."""
    x = torch.zeros(16, device=dev)
    per = []
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(iters):
            x.view(16)
        per.append((time.perf_counter() - t) / iters * 1e6)
    return statistics.median(per)


def run_case(spec, a, cuda):
    dev = "cuda" if cuda else "cpu"
    rec = dict(spec)
    t0 = time.monotonic()
    rec["precision_settings"] = set_precision(spec["precision"])
    torch.manual_seed(0)
    if cuda:
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    model, make_batch, loss_of, B = build_model(spec, dev, a.smoke)
    rec["batch_run"] = B
    rec["params"] = sum(p.numel() for p in model.parameters())
    if hasattr(model, "config"):
        rec["attn_implementation"] = getattr(model.config, "_attn_implementation", None)
    step, opt, info = make_step(spec, model, make_batch, loss_of, dev)
    rec.update(info)
    rec["build_s"] = time.monotonic() - t0
    sync = torch.cuda.synchronize if cuda else (lambda: None)

    # warm-up (the first step of a compiled model compiles it)
    t = time.monotonic()
    first = step()
    sync()
    rec["first_step_s"] = time.monotonic() - t
    losses = [float(first)] if first is not None and spec["task"] == "train" else []
    for _ in range(a.warmup - 1):
        v = step()
        if spec["task"] == "train":
            losses.append(float(v))
    sync()
    if losses:
        rec["warmup_losses"] = losses
        if not all(v == v and abs(v) < 1e30 for v in losses):
            raise RuntimeError(f"loss is not finite: {losses}")
    # memory at the start of a step
    mem = {"weights_bytes": tensor_bytes(model.parameters())}
    if spec["task"] == "train":
        mem["gradients_bytes"] = tensor_bytes(p.grad for p in model.parameters())
        mem["optimizer_state_bytes"] = tensor_bytes(v for st in opt.state.values() for v in st.values()
                                                    if torch.is_tensor(v) and v.dim() > 0)
        mem["grads_at_step_start"] = "none (zero_grad(set_to_none=True) frees them before the step)"
    if cuda:
        mem["max_allocated_incl_warmup_bytes"] = torch.cuda.max_memory_allocated()
        mem["max_reserved_incl_warmup_bytes"] = torch.cuda.max_memory_reserved()
        if spec["task"] == "train":
            opt.zero_grad(set_to_none=True)
        mem["allocated_at_step_start_bytes"] = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()

    # synchronised steps, between two probes of the host's speed, their wall-clock window recorded (to join with
    # a clock/power sampler running beside the suite: validation/e2e/clocks_per_case.py)
    rec["host_probe_us_before"] = host_probe(dev)
    rec["timed_steps_utc"] = [time.time()]
    steps = a.steps
    times, host = [], []
    for _ in range(steps):
        if cuda:
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
        h = time.perf_counter()
        step()
        host.append(time.perf_counter() - h)
        if cuda:
            e1.record()
            e1.synchronize()
            times.append(e0.elapsed_time(e1) / 1e3)
        else:
            times.append(time.perf_counter() - h)
    rec["timed_steps_utc"].append(time.time())
    rec["host_probe_us_after"] = host_probe(dev)
    med = statistics.median(times)
    rec.update({"steps": steps, "step_time_s_median": med, "step_time_s_p10": rc_pct(times, 0.1),
                "step_time_s_p90": rc_pct(times, 0.9), "throughput_samples_per_s": B / med,
                "host_s_median": statistics.median(host)})
    if cuda:
        mem["max_allocated_bytes"] = torch.cuda.max_memory_allocated()
        mem["max_reserved_bytes"] = torch.cuda.max_memory_reserved()
        used = nvml_used()
        if used is not None:
            mem["nvml_used_bytes"] = used
            mem["context_and_handles_bytes_est"] = used - torch.cuda.memory_reserved()
    rec["memory"] = mem

    # back to back, no synchronisation between steps
    sync()
    t = time.perf_counter()
    for _ in range(a.pipelined):
        step()
    sync()
    rec["pipelined_step_s"] = (time.perf_counter() - t) / a.pipelined

    # profiler, one step at a time
    profs = [profile_step(step, cuda) for _ in range(a.profile_steps)]
    n = len(profs)
    busy = sum(p["busy_us"] for p in profs) / n / 1e6
    rec["profile"] = {
        "steps": n,
        "kernels_per_step": sum(p["count"] for p in profs) / n,
        "kernels_per_step_each": [p["count"] for p in profs],
        "by_kind_per_step": {k: sum(p["by_kind"][k] for p in profs) / n for k in profs[0]["by_kind"]},
        "gpu_busy_s_per_step": busy,
        "gpu_window_s_per_step": sum(p["window_us"] for p in profs) / n / 1e6,
        "gpu_idle_share": max(0.0, 1 - busy / med) if cuda else None,
        "class_time_s_per_step": {c: sum(p["class_time_us"].get(c, 0) for p in profs) / n / 1e6
                                  for c in rc.KERNEL_CLASSES if any(c in p["class_time_us"] for p in profs)},
        "class_count_per_step": {c: sum(p["class_count"].get(c, 0) for p in profs) / n
                                 for c in rc.KERNEL_CLASSES if any(c in p["class_count"] for p in profs)},
        "kernels": [{"name": k["name"][:300], "class": k["class"], "count": k["count"],
                     "time_us": round(k["time_us"], 2)} for k in profs[-1]["kernels"]],
    }
    rec["wall_s"] = time.monotonic() - t0
    del step, opt, model
    return rec


def rc_pct(xs, q):
    xs = sorted(xs)
    k = (len(xs) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def case_table():
    rows = ["| id | model | task | batch | seq | precision | optimizer | runtime | layout | roofplan |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for c in CASES:
        rows.append(f"| {c['id']} | {c['model']} | {c['task']} | {c['batch']} | {c['seq'] or ''} | "
                    f"{c['precision']} | {c['optimizer'] or ''} | {c['runtime']}"
                    f"{' (' + c['compile_mode'] + ')' if c['compile_mode'] else ''} | {c['layout'] or ''} | "
                    f"`{c['roofplan_command']}` |")
    return "\n".join(rows)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", default="-")
    p.add_argument("--git-sha", default="unknown")
    p.add_argument("--cases", default="", help="comma-separated case ids (default: all of --runtime)")
    p.add_argument("--runtime", choices=["eager", "compiled", "all"], default="all")
    p.add_argument("--warmup", type=int, default=8)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--pipelined", type=int, default=20)
    p.add_argument("--profile-steps", type=int, default=3)
    p.add_argument("--deadline-s", type=float, default=1e9, help="start no case after this many seconds")
    p.add_argument("--smoke", action="store_true", help="CPU, tiny models and batches: checks the script only")
    p.add_argument("--list", action="store_true", help="print the case table and exit")
    a = p.parse_args()
    if a.list:
        print(case_table())
        return
    cuda = torch.cuda.is_available() and not a.smoke
    if not cuda and not a.smoke:
        print("no CUDA device (use --smoke for a CPU check of the script)", file=sys.stderr)
        sys.exit(77)
    if cuda:
        torch.backends.cudnn.benchmark = True  # as train_throughput.py: what a training script sets
    sel = [c for c in CASES if (not a.cases or c["id"] in a.cases.split(","))
           and (a.runtime == "all" or c["runtime"] == a.runtime)]
    if a.smoke:
        sel = [c for c in sel if c["runtime"] == "eager"]
    doc = {"tool": "roofplan-e2e-suite", "schema": 1,
           "provenance": rc.provenance(a.git_sha, {"cudnn_benchmark": torch.backends.cudnn.benchmark,
                                                   "smoke": a.smoke}),
           "method": {"warmup": a.warmup, "steps": a.steps, "pipelined": a.pipelined,
                      "profile_steps": a.profile_steps, "data": "synthetic, fixed batch on the GPU",
                      "step_timing": "CUDA events around each step, synchronised after each"},
           "results": []}
    deadline = time.monotonic() + a.deadline_s
    for spec in sel:
        if time.monotonic() > deadline:
            doc["results"].append(dict(spec, skipped="deadline"))
            continue
        try:
            rec = run_case(spec, a, cuda)
            pr = rec["profile"]
            print(f"{spec['id']}: step {rec['step_time_s_median']*1e3:.2f} ms ({rec['throughput_samples_per_s']:.1f}"
                  f"/s), host {rec['host_s_median']*1e3:.2f} ms, kernels {pr['kernels_per_step']:.0f}, busy "
                  f"{pr['gpu_busy_s_per_step']*1e3:.2f} ms, idle {pr['gpu_idle_share']}, "
                  f"peak alloc {rec['memory'].get('max_allocated_bytes', 0)/2**30:.2f} GiB, {rec['wall_s']:.0f} s",
                  file=sys.stderr)
        except Exception as e:  # noqa: BLE001 - record and go on
            rec = dict(spec, error=f"{type(e).__name__}: {str(e)[:500]}", traceback=traceback.format_exc()[-1500:])
            print(f"{spec['id']}: ERROR {rec['error']}", file=sys.stderr)
        doc["results"].append(rec)
        gc.collect()
        if cuda:
            torch.cuda.empty_cache()
        rc.write_json(a.json, doc)
    rc.write_json(a.json, doc)


if __name__ == "__main__":
    main()
