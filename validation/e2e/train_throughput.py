#!/usr/bin/env python3
"""End-to-end training throughput on one GPU, for validation only (never used to fit roofplan's model).

Cases (issue 5):
  resnet50   torchvision ResNet-50, batch 256, channels-last, bf16 autocast, SGD (momentum 0.9), synthetic
             224x224 images and labels
  bert-qa    Hugging Face BERT-base question answering (BertForQuestionAnswering from the default BertConfig,
             random weights: nothing is downloaded), seq 128, batch 64, bf16 autocast, AdamW, synthetic tokens
Method: build the model on the GPU, run --warmup steps, then --steps timed steps, each timed with CUDA events
around forward + backward + optimizer step (zero_grad included); report the median step time and samples/s.
A first check before timing: the loss is finite and decreases over the warm-up steps on a fixed batch.
Data parallel: under torchrun (one process per GPU; WORLD_SIZE, LOCAL_RANK set) the model is wrapped in
DistributedDataParallel (NCCL, its default 25 MiB gradient buckets overlapped with backward) with the same batch
per GPU; a step's time is the slowest rank's (all-reduce MAX of each step's time), throughput = batch x GPUs /
median step time, and rank 0 writes the report.
Output: JSON with provenance (torch/CUDA/cuDNN/NCCL versions, GPU name, date, command line, git sha if given).
"""
import argparse
import datetime
import json
import statistics
import sys

import os

import torch
import torch.distributed as dist

WORLD = int(os.environ.get("WORLD_SIZE", "1"))
LOCAL_RANK = int(os.environ.get("LOCAL_RANK", "0"))


def wrap(model):
    if WORLD == 1:
        return model
    return torch.nn.parallel.DistributedDataParallel(model, device_ids=[LOCAL_RANK])


def resnet50_case(batch):
    import torchvision
    model = wrap(torchvision.models.resnet50().cuda().to(memory_format=torch.channels_last))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(batch, 3, 224, 224, device="cuda").to(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (batch,), device="cuda")
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return model, step


def bert_case(batch, seq):
    from transformers import BertConfig, BertForQuestionAnswering
    model = wrap(BertForQuestionAnswering(BertConfig()).cuda())
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    ids = torch.randint(0, 30522, (batch, seq), device="cuda")
    mask = torch.ones_like(ids)
    start = torch.randint(0, seq, (batch,), device="cuda")
    end = torch.randint(0, seq, (batch,), device="cuda")

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(input_ids=ids, attention_mask=mask, start_positions=start, end_positions=end)
        out.loss.backward()
        opt.step()
        return out.loss
    return model, step


def measure(step, warmup, steps):
    losses = [float(step().detach()) for _ in range(warmup)]
    if not all(map(lambda v: v == v and abs(v) < 1e30, losses)):
        sys.exit("loss is not finite: " + repr(losses))
    if not losses[-1] < losses[0]:
        sys.exit(f"loss did not decrease over the warm-up ({losses[0]:.4f} -> {losses[-1]:.4f})")
    torch.cuda.synchronize()
    times = []
    for _ in range(steps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        step()
        b.record()
        b.synchronize()
        t = a.elapsed_time(b) / 1e3
        if WORLD > 1:  # the step takes as long as its slowest rank
            v = torch.tensor([t], device="cuda", dtype=torch.float64)
            dist.all_reduce(v, op=dist.ReduceOp.MAX)
            t = float(v.item())
        times.append(t)
    return losses, times


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--case", choices=["resnet50", "bert-qa", "all"], default="all")
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--git-sha", default="unknown")
    p.add_argument("--json", default="-")
    a = p.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA device", file=sys.stderr)
        sys.exit(77)
    torch.backends.cudnn.benchmark = True
    if WORLD > 1:
        torch.cuda.set_device(LOCAL_RANK)
        dist.init_process_group("nccl")
    cases = ["resnet50", "bert-qa"] if a.case == "all" else [a.case]
    results = []
    for case in cases:
        if case == "resnet50":
            batch, extra = 256, {"image_size": 224, "optimizer": "sgd", "precision": "amp-bf16"}
            model, step = resnet50_case(batch)
        else:
            batch, extra = 64, {"seq": 128, "optimizer": "adam", "precision": "amp-bf16"}
            model, step = bert_case(batch, 128)
        losses, times = measure(step, a.warmup, a.steps)
        med = statistics.median(times)
        rec = {"case": case, "batch": batch, "gpus": WORLD, "params": sum(p.numel() for p in model.parameters()),
               "step_time_s_median": med, "step_time_s_min": min(times), "step_time_s_max": max(times),
               "throughput_samples_per_s": batch * WORLD / med, "warmup_losses": losses, "steps": len(times),
               "max_memory_allocated_bytes": torch.cuda.max_memory_allocated(), **extra}
        if LOCAL_RANK == 0:
            print(f"{case} x{WORLD}: median step {med*1e3:.2f} ms, {batch*WORLD/med:.1f} samples/s", file=sys.stderr)
        results.append(rec)
        del model, step
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    import torchvision
    try:
        import transformers
        tv = transformers.__version__
    except ImportError:
        tv = None
    doc = {"tool": "roofplan-e2e", "provenance": {
        "date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command_line": sys.argv, "git_sha": a.git_sha, "torch": torch.__version__,
        "torchvision": torchvision.__version__, "transformers": tv, "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(), "device": torch.cuda.get_device_name(0), "gpus": WORLD,
        "nccl": ".".join(map(str, torch.cuda.nccl.version())) if WORLD > 1 else None,
        "data_parallel": "DistributedDataParallel (torchrun), NCCL, bucket_cap_mb 25" if WORLD > 1 else None,
        "sm_count": torch.cuda.get_device_properties(0).multi_processor_count},
        "results": results}
    if WORLD > 1:
        dist.destroy_process_group()
        if int(os.environ.get("RANK", "0")) != 0:
            return
    text = json.dumps(doc, indent=2)
    if a.json == "-":
        print(text)
    else:
        with open(a.json, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
