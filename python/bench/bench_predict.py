#!/usr/bin/env python3
"""What a prediction costs from Python (issue 18, item 5), measured in one process so the figures compare:

* the C++ call: the library's one-GPU prediction (options resolved, the step predicted, the input pipeline), timed
  in C++ by roofplan._core.cpp_predict_seconds;
* roofplan.predict() from Python with a loaded model (headline figures; the JSON is made only when read);
* the same plus to_dict() (the whole of `predict --json`: every layer);
* roofplan.sweep() over 10,000 configurations (20 devices x 5 precisions x 2 modes x 50 batches; the library
  refuses the combinations a GPU lacks), and over 10,000 that all predict (5 Ampere/Hopper GPUs x 4 precisions x
  2 modes x 250 batches), with and without the memory estimate.

Medians of several rounds.  Prints a table, and with --json writes the figures with the machine and versions.

  PYTHONPATH=build/python python3 python/bench/bench_predict.py [--model resnet50] [--json out.json]
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import time

import roofplan


def median_seconds(call, calls, rounds):
    per_call = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        per_call.append((time.perf_counter() - start) / calls)
    return statistics.median(per_call)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="resnet50")
    ap.add_argument("--device", default="h100-sxm")
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args()

    model = roofplan.zoo(args.model)
    q = roofplan._core.Request()
    q.device, q.batch, q.precision = args.device, 256, "amp-bf16"
    options = dict(device=args.device, batch=256, precision="amp-bf16")
    roofplan.predict(model, **options)  # the predictor is made once per model
    figures = {
        "cpp_predict_s": roofplan._core.cpp_predict_seconds(model._core, q, args.calls, args.rounds),
        "python_predict_s": median_seconds(lambda: roofplan.predict(model, **options), args.calls, args.rounds),
        "python_predict_to_dict_s": median_seconds(lambda: roofplan.predict(model, **options).to_dict(),
                                                   max(1, args.calls // 10), args.rounds),
    }
    devices = [d["id"] for d in roofplan.devices()][:20]
    precisions = ["fp32", "tf32", "amp-fp16", "amp-bf16", "int8"]
    batches = list(range(1, 51))
    start = time.perf_counter()
    records = roofplan.sweep(model, devices=devices, batches=batches, precisions=precisions,
                             modes=["train", "infer"])
    figures["sweep_s"] = time.perf_counter() - start
    figures["sweep_configurations"] = len(records)
    figures["sweep_refused"] = sum("error" in r for r in records)
    # 10,000 configurations every one of which predicts (Ampere and Hopper: every precision but int8 in training).
    supported = ["a100-sxm4-80gb", "a100-pcie-80gb", "h100-sxm", "h100-pcie", "h200"]
    for memory in (True, False):
        start = time.perf_counter()
        records = roofplan.sweep(model, devices=supported, batches=list(range(1, 251)),
                                 precisions=["fp32", "tf32", "amp-fp16", "amp-bf16"], modes=["train", "infer"],
                                 memory=memory)
        key = "sweep_supported_s" if memory else "sweep_supported_no_memory_s"
        figures[key] = time.perf_counter() - start
        assert len(records) == 10_000 and not any("error" in r for r in records)
    figures["python_over_cpp"] = figures["python_predict_s"] / figures["cpp_predict_s"]
    for k, v in figures.items():
        print(f"{k:28s} {v * 1e6:12.1f} us" if k.endswith("_s") and not k.startswith("sweep") else f"{k:28s} {v:12.4g}")
    if args.json:
        sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                             cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
        provenance = {"date": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()), "git_sha": sha,
                      "python": platform.python_version(), "roofplan": roofplan.__version__,
                      "cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
                      "model": args.model, "device": args.device,
                      "command": "python3 python/bench/bench_predict.py " + " ".join(
                          f"--{k} {v}" for k, v in vars(args).items() if v is not None and k != "json")}
        with open(args.json, "w") as f:
            json.dump({"tool": "roofplan-python-bench", "provenance": provenance, "figures": figures}, f, indent=1)


if __name__ == "__main__":
    main()
