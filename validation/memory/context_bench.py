#!/usr/bin/env python3
"""The device memory outside PyTorch's caching allocator: the CUDA context and the libraries' handles (issue 15).

roofplan's memory model (include/roofplan/memory/context.hpp) predicts torch.cuda's `reserved` and adds a
device-level `context`: what the process holds outside the allocator (CUDA context, cuBLAS/cuBLASLt/cuDNN handles
and their modules) plus what the driver keeps out of sight (datasheet memory - NVML total).  This script measures
it on a fresh process, step by step, so the figure has a provenance:

  0. before CUDA is initialised (NVML only: what other processes and the driver hold);
  1. CUDA initialised (torch.cuda.init + one tiny tensor): the context;
  2. cuBLAS: one FP32 matmul (the cuBLAS handle; its workspace is allocated through torch's allocator);
  3. cuBLASLt / BF16: one BF16 matmul with a bias (addmm -> cublasLt epilogue);
  4. cuDNN: one FP32 convolution, then one BF16 channels-last convolution;
  5. fused attention: one BF16 scaled_dot_product_attention (flash / cuDNN attention modules);
  6. autograd: one backward through a linear layer (the autograd engine's thread gets its own cuBLAS handle and
     workspace).
After each step it records NVML used, cudaMemGetInfo (free, total), torch.cuda.memory_reserved and
memory_allocated; `outside_allocator_bytes` = NVML used - torch reserved (on an otherwise idle GPU this includes
what the driver holds before any process, `nvml_used_before_cuda_bytes`: run it alone on the GPU), and
`outside_allocator_mem_get_info_bytes` = total - free - torch reserved (the same seen by CUDA).
The workspaces torch allocated show in `allocated_bytes` (cuBLAS: 32 MiB per handle on sm_90).

  python3 validation/memory/context_bench.py --json context_h200.json --git-sha SHA
Output JSON: tool "roofplan-context-bench", provenance (device, driver, torch/CUDA/cuDNN/cuBLAS versions, date,
command, git sha), steps[], and the figure roofplan reads: context_bytes (after the last step) and hidden_bytes
(datasheet memory given by --datasheet-gib minus NVML total, when given).
"""
import argparse
import gc
import os
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import rp_common as rc  # noqa: E402


def nvml_memory():
    """(used, total) bytes of GPU 0 from NVML (pynvml), else from nvidia-smi, else (None, None)."""
    try:
        import pynvml
        pynvml.nvmlInit()
        info = pynvml.nvmlDeviceGetMemoryInfo(pynvml.nvmlDeviceGetHandleByIndex(0))
        return info.used, info.total
    except Exception:  # noqa: BLE001 - fall back to nvidia-smi
        pass
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used,memory.total", "--format=csv,noheader,nounits",
                              "-i", "0"], capture_output=True, text=True, timeout=20).stdout.strip()
        used, total = (int(v.strip()) << 20 for v in out.splitlines()[0].split(","))
        return used, total
    except Exception:  # noqa: BLE001
        return None, None


def record(name, note=""):
    torch.cuda.synchronize()
    used, total = nvml_memory()
    free, cuda_total = torch.cuda.mem_get_info()
    reserved = torch.cuda.memory_reserved()
    step = {"step": name, "note": note, "nvml_used_bytes": used, "nvml_total_bytes": total,
            "mem_get_info_free_bytes": free, "mem_get_info_total_bytes": cuda_total,
            "reserved_bytes": reserved, "allocated_bytes": torch.cuda.memory_allocated(),
            "outside_allocator_bytes": None if used is None else used - reserved,
            "outside_allocator_mem_get_info_bytes": cuda_total - free - reserved}
    print(f"{name:28s} NVML used {used and used / 2**20:10.1f} MiB  reserved {reserved / 2**20:8.1f} MiB  "
          f"allocated {step['allocated_bytes'] / 2**20:8.1f} MiB  outside the allocator "
          f"{(step['outside_allocator_bytes'] or 0) / 2**20:8.1f} MiB", file=sys.stderr)
    return step


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", default="-")
    p.add_argument("--git-sha", default="unknown")
    p.add_argument("--datasheet-gib", type=float, default=None,
                   help="the device's datasheet memory in GiB (roofplan's catalog: 141 for H200, 80 for H100)")
    a = p.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA device", file=sys.stderr)
        sys.exit(77)
    baseline_used, nvml_total = nvml_memory()
    steps = [{"step": "before CUDA", "nvml_used_bytes": baseline_used, "nvml_total_bytes": nvml_total,
              "note": "the driver's own (and any other process's) memory"}]
    t0 = time.monotonic()

    torch.cuda.init()
    x = torch.zeros(1, device="cuda")
    steps.append(record("CUDA context"))

    a32 = torch.randn(1024, 1024, device="cuda")
    (a32 @ a32).sum().item()
    steps.append(record("cuBLAS FP32 matmul", "cuBLAS handle; workspace in torch's allocator"))

    a16 = a32.to(torch.bfloat16)
    bias = torch.zeros(1024, device="cuda", dtype=torch.bfloat16)
    torch.addmm(bias, a16, a16).sum().item()
    steps.append(record("cuBLASLt BF16 addmm", "bias epilogue: cuBLASLt and its workspace"))

    img = torch.randn(8, 64, 56, 56, device="cuda")
    w = torch.randn(64, 64, 3, 3, device="cuda")
    torch.nn.functional.conv2d(img, w, padding=1).sum().item()
    steps.append(record("cuDNN FP32 convolution"))
    img16 = img.to(torch.bfloat16).contiguous(memory_format=torch.channels_last)
    w16 = w.to(torch.bfloat16).contiguous(memory_format=torch.channels_last)
    torch.nn.functional.conv2d(img16, w16, padding=1).sum().item()
    steps.append(record("cuDNN BF16 channels-last"))

    q = torch.randn(4, 12, 512, 64, device="cuda", dtype=torch.bfloat16)
    torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True).sum().item()
    steps.append(record("fused attention (SDPA)"))

    lin = torch.nn.Linear(1024, 1024, device="cuda")
    lin(a32).sum().backward()
    steps.append(record("autograd backward", "the autograd thread's cuBLAS handle and workspace"))

    del x, a32, a16, bias, img, w, img16, w16, q, lin
    gc.collect()
    torch.cuda.empty_cache()
    steps.append(record("after empty_cache", "workspaces stay: torch keeps them per handle"))

    last = steps[-2]
    doc = {"tool": "roofplan-context-bench", "schema": 1,
           "provenance": rc.provenance(a.git_sha, {"datasheet_gib": a.datasheet_gib}),
           "method": "one fresh process, the steps in order; outside_allocator = NVML used - torch reserved",
           "nvml_used_before_cuda_bytes": baseline_used,
           "steps": steps,
           "context_bytes": last.get("outside_allocator_bytes"),
           "context_mem_get_info_bytes": last.get("outside_allocator_mem_get_info_bytes"),
           "workspace_bytes_in_allocator": last.get("allocated_bytes"),
           "wall_s": time.monotonic() - t0}
    if a.datasheet_gib and nvml_total:
        doc["hidden_bytes"] = int(a.datasheet_gib * 2**30) - nvml_total
        if doc["context_bytes"] is not None:
            doc["roofplan_context_bytes"] = doc["context_bytes"] + doc["hidden_bytes"]
    rc.write_json(a.json, doc)


if __name__ == "__main__":
    main()
