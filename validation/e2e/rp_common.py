"""Shared helpers of roofplan's PyTorch measurement scripts (validation/e2e/*.py and validation/ops/op_bench.py).

- provenance(): GPU, driver, CUDA/cuDNN/cuBLAS/torch versions, clocks (nvidia-smi), host CPU, date, git sha,
  command line: the block every report carries.
- kernel_class(): the roofplan kernel class of a CUDA kernel (or memcpy/memset) from its name.
- device_events() / kernels_of(): the device-side events of a torch.profiler run, with class and duration.
- busy_union(): GPU busy time as the union of kernel intervals (concurrent kernels counted once).
- write_json(): strict JSON (NaN/inf become null, so the C++ reader accepts the file), written atomically.
- CONV_MODES, conv_shapes(): the precision modes as e2e_suite.py runs convolutions, and the distinct Conv2d of
  torchvision models (the single-convolution benchmarks: validation/ops/conv_bench.py,
  validation/memory/conv_workspace.py).

Nothing here is fitted: these are measurement helpers.
"""
import ctypes
import datetime
import json
import math
import os
import platform
import subprocess
import sys

import torch

# Kernel classes, in the order they are tested (first match wins).  The first eleven are issue 14's classes; the
# last three are kept apart because the eager lowering needs them apart (pooling windows, fused attention, and
# everything that matched nothing more specific).
KERNEL_CLASSES = ("memset", "copy/cast", "optimizer", "attention", "normalization", "loss", "softmax", "conv",
                  "gemm", "gather", "pooling", "reduction", "elementwise")

_RULES = (
    ("memset", ("memset", "fillfunctor", "fill_kernel", "zerofunctor")),
    ("copy/cast", ("memcpy", "copy_kernel", "catarraybatchedcopy", "cat_array", "nchwtonhwc", "nhwctonchw",
                   "copy_device_to_device", "addpadding")),
    ("attention", ("flash", "fmha", "attention", "mem_eff", "attn", "sdpa", "convert_dq_to_16bits",
                   "compute_dot_do_o")),  # the last two: cuDNN SDPA backward's pre/post kernels
    # cuDNN/CUTLASS convolution kernels whose (mangled) names also contain words of other classes
    ("conv", ("implicitgemmconvolution", "_fprop", "_dgrad", "_wgrad", "fprop_", "dgrad_", "wgrad_")),
    ("gemm", ("scal_kernel",)),  # cuBLAS's beta-scaling kernel, part of a GEMM call
    ("optimizer", ("multi_tensor_apply", "fused_adam", "fusedadam", "fused_sgd", "fusedsgd", "adam_", "adamw",
                   "sgd_", "lpnormfunctor", "amp_update_scale", "_amp_foreach")),
    ("normalization", ("batch_norm", "batchnorm", "bn_fw", "bn_bw", "bn_", "layer_norm", "layernorm",
                       "gammabeta", "rowwisemoments", "rms_norm", "group_norm", "cuapplylayernorm",
                       "cucomputegradinput", "cucomputepartgradgammabeta")),
    ("loss", ("nll_loss", "cross_entropy", "logsoftmax", "log_softmax", "mse_loss", "binary_cross")),
    ("softmax", ("softmax",)),
    ("conv", ("conv", "fprop", "dgrad", "wgrad", "winograd", "fft", "implicit_gemm", "implicit_convolve",
              "precomputed_convolve", "im2col", "col2im")),
    ("gemm", ("gemm", "gemv", "nvjet", "cublas", "cutlass", "xmma", "splitkreduce", "splitk", "dot_kernel",
              "matmul", "s16816", "s1688", "hmma", "wgmma")),
    ("gather", ("embedding", "index", "gather", "scatter", "radixsort", "radix_sort", "devicesegmentedsort",
                "cub::", "sort", "unique", "compute_grad_weight", "sum_and_scatter", "krn_partial",
                "segment_offsets", "partials_per_segment")),
    ("pooling", ("max_pool", "maxpool", "avg_pool", "avgpool", "adaptive_avg", "adaptive_max", "pool2d")),
    ("reduction", ("reduce_kernel", "reduceop", "reduce", "welford", "norm_kernel", "sum_kernel", "mean_kernel")),
)


def kernel_class(name):
    """roofplan kernel class of a device event, from its name (case-insensitive substring rules above)."""
    n = name.lower()
    for cls, keys in _RULES:
        if any(k in n for k in keys):
            return cls
    return "elementwise"


def _run(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None


def nvidia_smi_state():
    """GPU state from nvidia-smi (None where it is not there)."""
    q = ("name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,power.limit,power.draw,"
         "temperature.gpu,memory.total,memory.used,ecc.mode.current,persistence_mode,compute_mode")
    out = _run(["nvidia-smi", f"--query-gpu={q}", "--format=csv,noheader"])
    if not out:
        return None
    vals = [v.strip() for v in out.splitlines()[0].split(",")]
    return dict(zip(q.split(","), vals))


def cublas_version():
    """cuBLAS version of the library the process loaded (cublasGetProperty), or None."""
    if not torch.cuda.is_available():
        return None
    try:
        a = torch.ones(8, 8, device="cuda")
        (a @ a).sum().item()  # loads cuBLAS
        path = None
        with open("/proc/self/maps") as f:
            for line in f:
                if "libcublas.so" in line and "Lt" not in line:
                    path = line.split()[-1]
                    break
        if path is None:
            return None
        lib = ctypes.CDLL(path)
        v = []
        for prop in range(3):  # MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL
            x = ctypes.c_int()
            if lib.cublasGetProperty(prop, ctypes.byref(x)) != 0:
                return None
            v.append(x.value)
        return ".".join(map(str, v)) + f" ({os.path.basename(path)})"
    except Exception:  # noqa: BLE001 - provenance must not stop a run
        return None


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def provenance(git_sha="unknown", extra=None):
    """The provenance block of a report."""
    cuda = torch.cuda.is_available()
    p = {
        "date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command_line": [sys.executable] + sys.argv,
        "git_sha": git_sha,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version() if cuda else None,
        "cublas": cublas_version(),
        "device": torch.cuda.get_device_name(0) if cuda else "cpu",
        "sm_count": torch.cuda.get_device_properties(0).multi_processor_count if cuda else None,
        "l2_cache_bytes": getattr(torch.cuda.get_device_properties(0), "L2_cache_size", None) if cuda else None,
        "gpu_memory_bytes": torch.cuda.get_device_properties(0).total_memory if cuda else None,
        "nvidia_smi": nvidia_smi_state() if cuda else None,
        "host_cpu": cpu_model(),
        "host_cpus": os.cpu_count(),
        "torch_num_threads": torch.get_num_threads(),
        "tf32_matmul_default": torch.backends.cuda.matmul.allow_tf32,
        "tf32_cudnn_default": torch.backends.cudnn.allow_tf32,
    }
    for mod in ("torchvision", "transformers"):
        try:
            p[mod] = __import__(mod).__version__
        except Exception:  # noqa: BLE001
            p[mod] = None
    if extra:
        p.update(extra)
    return p


def _clean(x):
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x


# How validation/e2e/e2e_suite.py runs convolutions in each precision mode: (dtype, memory format, TF32 allowed).
# fp32 and tf32 on NCHW tensors; bf16 and fp16 on channels-last tensors of that dtype, as autocast hands them to cuDNN.
CONV_MODES = {"fp32": (torch.float32, torch.contiguous_format, False),
              "tf32": (torch.float32, torch.contiguous_format, True),
              "bf16": (torch.bfloat16, torch.channels_last, True),
              "fp16": (torch.float16, torch.channels_last, True)}


def conv_shapes(names):
    """The distinct Conv2d of the torchvision models `names` (shapes from a forward pass at 224x224), in order of
    first use: {(in, out, kernel, stride, padding, dilation, groups, bias, input hw): [models using it]}."""
    import torchvision
    shapes = {}
    for name in names:
        model = getattr(torchvision.models, name)(weights=None).eval()
        seen = []

        def hook(m, inp, _out):
            seen.append((m.in_channels, m.out_channels, tuple(m.kernel_size), tuple(m.stride), tuple(m.padding),
                         tuple(m.dilation), m.groups, m.bias is not None, tuple(inp[0].shape[2:])))
        hs = [m.register_forward_hook(hook) for m in model.modules() if isinstance(m, torch.nn.Conv2d)]
        with torch.no_grad():
            model(torch.randn(1, 3, 224, 224))
        for h in hs:
            h.remove()
        for k in seen:
            shapes.setdefault(k, []).append(name)
    return shapes


def write_json(path, doc):
    """Strict JSON (no NaN), written to a temporary file and renamed, so a run killed mid-write leaves the last
    complete report."""
    text = json.dumps(_clean(doc), indent=1, allow_nan=False)
    if path == "-":
        print(text)
        return
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text + "\n")
    os.replace(tmp, path)


def device_events(prof):
    """Device-side events (kernels, memcpy, memset) of a finished torch.profiler run: list of dicts with name,
    class, start_us, dur_us (profiler clock)."""
    out = []
    for e in prof.events():
        if e.device_type != torch.autograd.DeviceType.CUDA:
            continue
        tr = e.time_range
        out.append({"name": e.name, "class": kernel_class(e.name), "start_us": float(tr.start),
                    "dur_us": float(tr.end - tr.start)})
    out.sort(key=lambda k: k["start_us"])
    return out


def busy_union(events):
    """Union of the events' intervals, microseconds."""
    total, end = 0.0, -math.inf
    for e in sorted(events, key=lambda k: k["start_us"]):
        s, t = e["start_us"], e["start_us"] + e["dur_us"]
        if s > end:
            total += t - s
            end = t
        elif t > end:
            total += t - end
            end = t
    return total


def summarize_kernels(events, calls=1):
    """Per call: kernel count, names with counts and mean durations, time per class."""
    per = {}
    by_class = {}
    for e in events:
        d = per.setdefault(e["name"], {"name": e["name"], "class": e["class"], "count": 0, "time_us": 0.0})
        d["count"] += 1
        d["time_us"] += e["dur_us"]
        by_class[e["class"]] = by_class.get(e["class"], 0.0) + e["dur_us"]
    kernels = sorted(per.values(), key=lambda d: -d["time_us"])
    for d in kernels:
        d["count"] = d["count"] / calls
        d["time_us"] = d["time_us"] / calls
    return {"count": len(events) / calls, "kernels": kernels,
            "class_time_us": {k: v / calls for k, v in sorted(by_class.items(), key=lambda kv: -kv[1])},
            "busy_us": busy_union(events) / calls}


def profile_device(fn, calls=1, sync=None):
    """Run fn() `calls` times under torch.profiler (device activity only where there is a GPU) and return the
    device events (on CPU: the top-level CPU ops instead, so smoke runs exercise the same path)."""
    acts = [torch.profiler.ProfilerActivity.CUDA] if torch.cuda.is_available() else \
        [torch.profiler.ProfilerActivity.CPU]
    with torch.profiler.profile(activities=acts) as prof:
        for _ in range(calls):
            fn()
        if sync:
            sync()
    if torch.cuda.is_available():
        return device_events(prof)
    out = []
    for e in prof.events():
        if e.cpu_parent is None:
            tr = e.time_range
            out.append({"name": e.name, "class": kernel_class(e.name), "start_us": float(tr.start),
                        "dur_us": float(tr.end - tr.start)})
    return out
