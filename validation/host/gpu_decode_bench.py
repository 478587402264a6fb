#!/usr/bin/env python3
"""Input-pipeline micro-benchmark, GPU side: what it costs to turn ImageNet-like JPEGs into a model's input on the
GPU (nvJPEG through torchvision, as DALI-style GPU decoding does), per image, in wall time, GPU time and CPU time.

Images: the same deterministic JPEGs as decode_bench.py (its make_images: 500x375, quality 90, about 92 kB),
`--images` of them (default 256, seed 1) in a temporary folder, read once into uint8 CPU tensors
(torchvision.io.read_file), so the figure is the decode and the augmentation, not the disk.

Pipeline, per batch of B different files (cycling through the images):
  torchvision.io.decode_jpeg(list of B CPU tensors, device='cuda', mode=RGB)   one batched nvJPEG call
  per image: RandomResizedCrop to 224x224 on the GPU (torchvision's box: scale 0.08-1, ratio 3/4-4/3, from a
             seeded random.Random; resized_crop, bilinear, antialias=True), horizontal flip with p = 0.5
  stack, to float32, /255, normalise with ImageNet's mean and standard deviation -> (B, 3, 224, 224) on the GPU

Checks before any timing: 8 images decoded on the GPU and on the CPU (decode_jpeg, libjpeg-turbo) and with
Pillow: the mean absolute difference of the uint8 pixels is recorded with diagnostics (per RGB channel, luma,
after 2x2 average pooling, PSNR), and the same for 4 of them re-encoded without chroma subsampling (4:4:4), where
no chroma upsampling is left to differ in.  Under 3 levels is expected (decode_within_bar, recorded); 10 levels or
more stops the run (a wrong decode, not rounding: on the first H100 run nvJPEG's 4:2:0 output differed from
libjpeg-turbo's by 3.19 levels).  One crop made on the GPU and on the CPU from the same box is compared too; the
final batch must have the right shape and dtype, be finite and have its mean within [-3, 3].

Timing, per batch size (default 32, 128, 256), after a warm-up of 3 batches, 10 repetitions, medians:
  wall      time.perf_counter around the pipeline, torch.cuda.synchronize() before and after
  gpu       CUDA events recorded on the current stream before and after the pipeline
  cpu       time.process_time deltas: the CPU time of every thread of this process (nvJPEG's host work:
            header parsing, and on its software backends the Huffman decoding; the launches of the augmentation).
            Under CUDA's default scheduling a thread that waits for the GPU spins on its core, so this includes
            the waits; with --blocking-sync the context blocks instead, and this is the host's own work
The decode call alone is timed the same way.  Afterwards the full pipeline runs back to back for a few seconds
(one synchronize at the end) while `nvidia-smi -q -d UTILIZATION` is read once, to see whether the JPEG engines
(NVJPG, used by nvJPEG's hardware backend on A100/H100-class GPUs) were busy.  Nothing else runs on the GPU.

  python3 validation/host/gpu_decode_bench.py --json out.json [--git-sha SHA] [--images 256] [--seed 1]
      [--batches 32,128,256] [--reps 10] [--warmup 3] [--device cuda] [--blocking-sync]

If torchvision is missing, or cannot decode on the GPU, the report says so (status "unavailable") and the
program exits 0 without timing anything.
"""
import argparse
import datetime
import io
import json
import math
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from rp_common import cpu_model  # noqa: E402  (the provenance helpers of the framework scripts)
try:  # the same JPEGs as the CPU benchmark (it needs NumPy and Pillow)
    from decode_bench import make_images  # noqa: E402  (same folder)
    DECODE_BENCH_ERROR = None
except Exception as _e:  # recorded in the report, which then says "unavailable"
    make_images = None
    DECODE_BENCH_ERROR = f"{_e.__class__.__name__}: {_e}"

SIZE = 224
MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)
WIDTH, HEIGHT, QUALITY = 500, 375, 90
BAR_LEVELS = 3  # the expected bound on nvJPEG vs libjpeg: recorded (decode_within_bar), not fatal
GROSS_LEVELS = 10  # fatal: a decode this far off is wrong (colour order, size, garbage), not rounding


def now_utc():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def command_line():
    return " ".join([os.path.basename(sys.executable)] + sys.argv)


def nvidia_smi(*args):
    try:
        r = subprocess.run(["nvidia-smi", *args], capture_output=True, text=True, timeout=30)
        return r.stdout.strip() if r.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


def base_provenance(git_sha):
    prov = {
        "cpu": cpu_model(),
        "logical_cpus": os.cpu_count(),
        "usable_cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "python": platform.python_version(),
        "date": now_utc(),
        "hostname": platform.node(),
        "git_sha": git_sha,
        "command": command_line(),
    }
    for name in ("numpy", "PIL", "torch", "torchvision"):
        try:
            mod = __import__(name)
            prov[{"PIL": "pillow"}.get(name, name)] = mod.__version__
        except Exception as e:  # recorded, not fatal here
            prov[{"PIL": "pillow"}.get(name, name)] = f"unavailable: {e.__class__.__name__}: {e}"
    return prov


def write(path, report):
    with open(path, "w") as f:
        json.dump(report, f, indent=1, allow_nan=False)


def unavailable(a, prov, reason):
    report = {"tool": "roofplan-gpu-decode", "schema": 1, "status": "unavailable", "reason": reason,
              "provenance": prov, "cases": []}
    write(a.json, report)
    print(f"gpu_decode_bench: unavailable: {reason}")
    sys.exit(0)


CU_CTX_SCHED_BLOCKING_SYNC = 0x04


def _libcuda():
    import ctypes
    return ctypes, ctypes.CDLL("libcuda.so.1")


def set_blocking_sync(ordinal):
    """Sets CU_CTX_SCHED_BLOCKING_SYNC on the device's primary context (which PyTorch uses); None when done."""
    try:
        ctypes, lib = _libcuda()
        if lib.cuInit(0) != 0:
            return "cuInit failed"
        d = ctypes.c_int()
        if lib.cuDeviceGet(ctypes.byref(d), ordinal) != 0:
            return f"cuDeviceGet({ordinal}) failed"
        fn = getattr(lib, "cuDevicePrimaryCtxSetFlags_v2", None) or lib.cuDevicePrimaryCtxSetFlags
        r = fn(d, CU_CTX_SCHED_BLOCKING_SYNC)
        return None if r == 0 else f"cuDevicePrimaryCtxSetFlags returned {r}"
    except Exception as e:
        return f"{e.__class__.__name__}: {e}"


def primary_context_flags(ordinal):
    """The primary context's flags and whether it is active, as the driver reports them (None if unreadable)."""
    try:
        ctypes, lib = _libcuda()
        d, flags, active = ctypes.c_int(), ctypes.c_uint(), ctypes.c_int()
        if lib.cuDeviceGet(ctypes.byref(d), ordinal) != 0:
            return None
        if lib.cuDevicePrimaryCtxGetState(d, ctypes.byref(flags), ctypes.byref(active)) != 0:
            return None
        return {"flags": flags.value, "blocking_sync": bool(flags.value & CU_CTX_SCHED_BLOCKING_SYNC),
                "active": bool(active.value)}
    except Exception:
        return None


def crop_box(rng, height, width, scale=(0.08, 1.0), ratio=(3 / 4, 4 / 3)):
    """torchvision's RandomResizedCrop.get_params with a random.Random: (top, left, height, width)."""
    area = height * width
    log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
    for _ in range(10):
        target = area * rng.uniform(*scale)
        aspect = math.exp(rng.uniform(*log_ratio))
        w = int(round(math.sqrt(target * aspect)))
        h = int(round(math.sqrt(target / aspect)))
        if 0 < w <= width and 0 < h <= height:
            return rng.randint(0, height - h), rng.randint(0, width - w), h, w
    in_ratio = width / height
    if in_ratio < min(ratio):
        w, h = width, int(round(width / min(ratio)))
    elif in_ratio > max(ratio):
        h, w = height, int(round(height * max(ratio)))
    else:
        w, h = width, height
    return (height - h) // 2, (width - w) // 2, h, w


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", required=True)
    ap.add_argument("--git-sha", default="unknown")
    ap.add_argument("--images", type=int, default=256)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--batches", default="32,128,256")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--sustain-s", type=float, default=3.0, help="seconds of back-to-back pipeline at the end")
    ap.add_argument("--device", default="cuda", help="cuda (the measurement) or cpu (a smoke test of the script)")
    ap.add_argument("--blocking-sync", action="store_true",
                    help="make the CUDA context wait for the GPU by blocking (CU_CTX_SCHED_BLOCKING_SYNC) instead of "
                         "CUDA's default, which spins on a core while it waits; then the CPU time is the host's work")
    a = ap.parse_args()
    batches = [int(b) for b in a.batches.split(",") if b.strip()]
    if a.images < 1 or a.reps < 1 or a.warmup < 0 or not batches or min(batches) < 1:
        sys.exit("gpu_decode_bench: --images, --reps and the batch sizes must be >= 1, --warmup >= 0")

    prov = base_provenance(a.git_sha)
    if make_images is None:
        unavailable(a, prov, f"decode_bench.py could not be imported: {DECODE_BENCH_ERROR}")
    try:
        import numpy as np
        import torch
        import torchvision
        from torchvision.io import ImageReadMode, decode_jpeg, read_file
        from PIL import Image
    except Exception as e:
        unavailable(a, prov, f"import failed: {e.__class__.__name__}: {e}")
    try:
        from torchvision.transforms.v2 import functional as TF
        flip = TF.horizontal_flip
        tf_api = "torchvision.transforms.v2.functional"
    except Exception:
        from torchvision.transforms import functional as TF
        flip = TF.hflip
        tf_api = "torchvision.transforms.functional"
    from torchvision.transforms import InterpolationMode

    cuda = a.device.startswith("cuda")
    if cuda and not torch.cuda.is_available():
        unavailable(a, prov, "torch.cuda.is_available() is False")
    dev = torch.device(a.device)
    sync_mode = ("cuda default (auto: spins while waiting when the GPU's contexts are fewer than the cores)"
                 if cuda else "n/a (cpu)")
    if cuda and a.blocking_sync:
        err = set_blocking_sync(dev.index or 0)  # before torch creates the context
        if err:
            unavailable(a, prov, f"--blocking-sync: {err}")
        sync_mode = "blocking (CU_CTX_SCHED_BLOCKING_SYNC set on the primary context before its creation)"
    prov.update({
        "torch_cuda": torch.version.cuda,
        "torch_num_threads": torch.get_num_threads(),
        "transforms_api": tf_api,
        "device": a.device,
        "sync_mode": sync_mode,
    })
    if cuda:
        props = torch.cuda.get_device_properties(dev)
        prov.update({
            "gpu": torch.cuda.get_device_name(dev),
            "gpu_memory_bytes": props.total_memory,
            "sms": props.multi_processor_count,
            "driver": nvidia_smi("--query-gpu=driver_version", "--format=csv,noheader"),
            "nvidia_smi_state": nvidia_smi("--query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit,"
                                           "temperature.gpu,utilization.gpu,memory.used",
                                           "--format=csv,noheader"),
        })

    def sync():
        if cuda:
            torch.cuda.synchronize(dev)

    with tempfile.TemporaryDirectory(prefix="roofplan-gpu-decode-") as folder:
        t0 = time.perf_counter()
        paths = make_images(folder, a.images, a.seed)
        make_s = time.perf_counter() - t0
        sizes = [os.path.getsize(p) for p in paths]
        data = [read_file(p) for p in paths]  # uint8 CPU tensors
        pil_ref = [np.asarray(Image.open(p).convert("RGB")).transpose(2, 0, 1).copy() for p in paths[:8]]
    images = {"count": a.images, "width": WIDTH, "height": HEIGHT, "quality": QUALITY, "seed": a.seed,
              "mean_bytes": statistics.mean(sizes), "min_bytes": min(sizes), "max_bytes": max(sizes),
              "make_s": make_s}

    # --- the decode call: batched (a list) if this torchvision takes one, else one call per image ------------
    def decode_batched(tensors):
        return decode_jpeg(tensors, mode=ImageReadMode.RGB, device=dev)

    def decode_each(tensors):
        return [decode_jpeg(t, mode=ImageReadMode.RGB, device=dev) for t in tensors]

    decode = decode_batched
    decode_call = "decode_jpeg(list, device)"
    try:
        out = decode(data[:2])
        if not isinstance(out, (list, tuple)) or len(out) != 2:
            raise TypeError("no list back")
    except Exception as e:
        try:
            decode_each(data[:1])
        except Exception as e2:
            unavailable(a, prov, f"decode_jpeg(device={a.device!r}) failed: batched: {e.__class__.__name__}: {e}; "
                                 f"single: {e2.__class__.__name__}: {e2}")
        decode, decode_call = decode_each, f"decode_jpeg per image (the list form failed: {e.__class__.__name__}: {str(e).splitlines()[0]})"
    prov["decode_call"] = decode_call
    sync()

    mean = torch.tensor(MEAN, device=dev, dtype=torch.float32).view(1, 3, 1, 1)
    std = torch.tensor(STD, device=dev, dtype=torch.float32).view(1, 3, 1, 1)

    def augment(decoded, rng):
        crops = []
        for img in decoded:
            _, h, w = img.shape
            top, left, ch, cw = crop_box(rng, h, w)
            c = TF.resized_crop(img, top, left, ch, cw, [SIZE, SIZE],
                                interpolation=InterpolationMode.BILINEAR, antialias=True)
            if rng.random() < 0.5:
                c = flip(c)
            crops.append(c)
        x = torch.stack(crops).to(torch.float32).div_(255.0)
        return x.sub_(mean).div_(std)

    def pipeline(tensors, rng):
        return augment(decode(tensors), rng)

    # --- checks --------------------------------------------------------------------------------------------
    checks = {"bar_levels": BAR_LEVELS, "gross_bound_levels": GROSS_LEVELS}
    n_check = min(8, a.images)

    def compare(dev_imgs, cpu_imgs):
        """Mean |diff| of the uint8 pixels (per image, then averaged), and diagnostics of where it comes from."""
        raw, luma, pooled, chans, worst, mse = [], [], [], [], 0, []
        for g, r in zip(dev_imgs, cpu_imgs):
            if tuple(g.shape) != tuple(r.shape) or g.dtype != torch.uint8 or g.shape[0] != 3:
                sys.exit(f"gpu_decode_bench: decoded shape {tuple(g.shape)} {g.dtype}, CPU {tuple(r.shape)}")
            gf, rf = g.to(torch.float32), r.to(torch.float32)
            d = (gf - rf).abs()
            raw.append(float(d.mean()))
            chans.append([float(v) for v in d.mean(dim=(1, 2))])
            worst = max(worst, int(d.max()))
            mse.append(float(((gf - rf) ** 2).mean()))
            w = torch.tensor([0.299, 0.587, 0.114]).view(3, 1, 1)
            luma.append(float(((gf * w).sum(0) - (rf * w).sum(0)).abs().mean()))
            pooled.append(float((torch.nn.functional.avg_pool2d(gf[None], 2) -
                                 torch.nn.functional.avg_pool2d(rf[None], 2)).abs().mean()))
        m = statistics.mean(mse)
        return {"images": len(raw), "mean_abs": statistics.mean(raw), "mean_abs_worst_image": max(raw),
                "max_abs": worst, "mean_abs_rgb": [statistics.mean(c[i] for c in chans) for i in range(3)],
                "luma_mean_abs": statistics.mean(luma), "pooled_2x2_mean_abs": statistics.mean(pooled),
                "psnr_db": 10 * math.log10(255 ** 2 / m) if m > 0 else None}

    got = [t.cpu() for t in decode(data[:n_check])]
    ref = [decode_jpeg(t, mode=ImageReadMode.RGB) for t in data[:n_check]]  # CPU, libjpeg-turbo
    for g in got:
        if tuple(g.shape) != (3, HEIGHT, WIDTH):
            sys.exit(f"gpu_decode_bench: decoded shape {tuple(g.shape)}, expected (3, {HEIGHT}, {WIDTH})")
    checks["decode_vs_cpu_decode_jpeg"] = compare(got, ref)
    checks["decode_vs_pillow"] = compare(got, [torch.from_numpy(p) for p in pil_ref])
    # the same pixels re-encoded without chroma subsampling (4:4:4): no chroma upsampling left to differ in
    enc444 = []
    for r in ref[:4]:
        buf = io.BytesIO()
        Image.fromarray(r.permute(1, 2, 0).numpy()).save(buf, "JPEG", quality=QUALITY, subsampling=0)
        enc444.append(torch.frombuffer(bytearray(buf.getvalue()), dtype=torch.uint8))
    checks["decode_444_vs_cpu_decode_jpeg"] = compare([t.cpu() for t in decode(enc444)],
                                                      [decode_jpeg(t, mode=ImageReadMode.RGB) for t in enc444])
    raw = checks["decode_vs_cpu_decode_jpeg"]["mean_abs_worst_image"]
    checks["decode_within_bar"] = raw < BAR_LEVELS
    if raw >= GROSS_LEVELS or checks["decode_vs_pillow"]["mean_abs_worst_image"] >= GROSS_LEVELS:
        sys.exit(f"gpu_decode_bench: GPU decode differs from the CPU's by {raw:.3f} levels on average in one image: "
                 f"not under {GROSS_LEVELS} (a wrong decode, not rounding)")
    box = crop_box(random.Random(a.seed), HEIGHT, WIDTH)
    kw = dict(interpolation=InterpolationMode.BILINEAR, antialias=True)
    c_dev = TF.resized_crop(decode(data[:1])[0], *box, [SIZE, SIZE], **kw).cpu()
    c_cpu = TF.resized_crop(ref[0], *box, [SIZE, SIZE], **kw)
    checks["crop_box"] = list(box)
    checks["crop_vs_cpu_mean_abs"] = float((c_dev.to(torch.int16) - c_cpu.to(torch.int16)).abs().float().mean())
    if checks["crop_vs_cpu_mean_abs"] >= GROSS_LEVELS:
        sys.exit(f"gpu_decode_bench: the GPU crop differs from the CPU's by {checks['crop_vs_cpu_mean_abs']:.3f}")
    for b in batches:
        x = pipeline([data[i % a.images] for i in range(b)], random.Random(a.seed))
        sync()
        if tuple(x.shape) != (b, 3, SIZE, SIZE) or x.dtype != torch.float32 or x.device.type != dev.type:
            sys.exit(f"gpu_decode_bench: batch {b}: output {tuple(x.shape)} {x.dtype} {x.device}")
        m = float(x.mean())
        if not bool(torch.isfinite(x).all()) or not -3 <= m <= 3:
            sys.exit(f"gpu_decode_bench: batch {b}: output not finite or its mean {m} out of range")
        checks[f"batch_{b}_mean"] = m
    checks["passed"] = True
    c, c4 = checks["decode_vs_cpu_decode_jpeg"], checks["decode_444_vs_cpu_decode_jpeg"]
    print(f"checks: GPU vs CPU decode (4:2:0) mean |diff| {c['mean_abs']:.3f} levels (worst image "
          f"{c['mean_abs_worst_image']:.3f}, max {c['max_abs']}, RGB {[round(v, 3) for v in c['mean_abs_rgb']]}, "
          f"luma {c['luma_mean_abs']:.3f}, 2x2-pooled {c['pooled_2x2_mean_abs']:.3f}, PSNR {c['psnr_db']}); "
          f"vs Pillow {checks['decode_vs_pillow']['mean_abs']:.3f}; 4:4:4 re-encoded {c4['mean_abs']:.3f} "
          f"(luma {c4['luma_mean_abs']:.3f}); within {BAR_LEVELS} levels: {checks['decode_within_bar']}; "
          f"crop {checks['crop_vs_cpu_mean_abs']:.3f}; decode call: {decode_call}", flush=True)

    # --- timing --------------------------------------------------------------------------------------------
    def timed(fn):
        """(wall s, gpu s or None, cpu s) of fn(), synchronised before and after."""
        sync()
        if cuda:
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
        c0, w0 = time.process_time(), time.perf_counter()
        fn()
        if cuda:
            e1.record()
        sync()
        w1, c1 = time.perf_counter(), time.process_time()
        return w1 - w0, (e0.elapsed_time(e1) / 1e3 if cuda else None), c1 - c0

    cases = []
    for b in batches:
        rng = random.Random(a.seed + b)
        start = 0

        def next_batch():
            nonlocal start
            files = [data[(start + k) % a.images] for k in range(b)]
            start = (start + b) % a.images
            return files

        for _ in range(a.warmup):
            pipeline(next_batch(), rng)
        full = [timed(lambda f=next_batch(): pipeline(f, rng)) for _ in range(a.reps)]
        for _ in range(a.warmup):
            decode(next_batch())
        dec = [timed(lambda f=next_batch(): decode(f)) for _ in range(a.reps)]

        def med(rows, i):
            vals = [r[i] for r in rows]
            return None if vals[0] is None else statistics.median(vals)

        def per_image_ms(v):
            return None if v is None else 1e3 * v / b

        case = {
            "batch": b,
            "reps": a.reps,
            "wall_ms_per_image": per_image_ms(med(full, 0)),
            "gpu_ms_per_image": per_image_ms(med(full, 1)),
            "cpu_ms_per_image": per_image_ms(med(full, 2)),
            "images_per_s": b / med(full, 0),
            "decode_only": {
                "wall_ms_per_image": per_image_ms(med(dec, 0)),
                "gpu_ms_per_image": per_image_ms(med(dec, 1)),
                "cpu_ms_per_image": per_image_ms(med(dec, 2)),
                "images_per_s": b / med(dec, 0),
            },
            "wall_s_per_batch": [r[0] for r in full],
            "gpu_s_per_batch": [r[1] for r in full] if cuda else None,
            "cpu_s_per_batch": [r[2] for r in full],
            "decode_only_wall_s_per_batch": [r[0] for r in dec],
        }
        case["wall_ms_per_image_min"] = per_image_ms(min(case["wall_s_per_batch"]))
        case["wall_ms_per_image_max"] = per_image_ms(max(case["wall_s_per_batch"]))
        cases.append(case)
        g = case["gpu_ms_per_image"]
        print(f"batch {b:4d}: {case['images_per_s']:8.0f} images/s  wall {case['wall_ms_per_image']:.4f} ms/image "
              f"gpu {g if g is None else round(g, 4)} cpu {case['cpu_ms_per_image']:.4f} | decode only "
              f"{case['decode_only']['images_per_s']:.0f} images/s, wall {case['decode_only']['wall_ms_per_image']:.4f}"
              f" cpu {case['decode_only']['cpu_ms_per_image']:.4f} ms/image", flush=True)

    # --- back to back, with one reading of the engines' utilisation ------------------------------------------
    sustained = None
    if a.sustain_s > 0:
        b = max(batches)
        rng = random.Random(a.seed + 7)
        util = {}

        def probe():
            time.sleep(min(1.0, a.sustain_s / 2))
            util["text"] = nvidia_smi("-q", "-d", "UTILIZATION") if cuda else None

        th = threading.Thread(target=probe)
        sync()
        c0, w0 = time.process_time(), time.perf_counter()
        th.start()
        n = 0
        while time.perf_counter() - w0 < a.sustain_s or th.is_alive():
            pipeline([data[(n * b + k) % a.images] for k in range(b)], rng)
            n += 1
        sync()
        w1, c1 = time.perf_counter(), time.process_time()
        th.join()
        lines = [ln.strip() for ln in (util.get("text") or "").splitlines()
                 if any(k in ln for k in ("Gpu", "JPEG", "Jpeg", "Decoder", "Encoder", "OFA", "Memory"))]
        sustained = {"batch": b, "batches": n, "seconds": w1 - w0, "images_per_s": n * b / (w1 - w0),
                     "cpu_ms_per_image": 1e3 * (c1 - c0) / (n * b),
                     "nvidia_smi_utilization_lines": lines}
        print(f"back to back, batch {b}: {sustained['images_per_s']:.0f} images/s over {n} batches, "
              f"cpu {sustained['cpu_ms_per_image']:.4f} ms/image; nvidia-smi: {'; '.join(lines)}", flush=True)

    if cuda:
        prov["primary_context_flags"] = primary_context_flags(dev.index or 0)
    report = {
        "tool": "roofplan-gpu-decode",
        "schema": 1,
        "status": "ok",
        "provenance": prov,
        "images": images,
        "pipeline": {"decode": decode_call + ", mode RGB",
                     "augment": "per image: RandomResizedCrop box (scale 0.08-1, ratio 3/4-4/3), resized_crop to "
                                "224x224 bilinear antialias=True on the uint8 tensor, horizontal flip p=0.5; "
                                "stack, float32, /255, ImageNet mean/std",
                     "concurrent_gpu_work": "none"},
        "checks": checks,
        "cases": cases,
        "sustained": sustained,
    }
    write(a.json, report)
    print("\n| batch | images/s | wall ms/image | GPU-event ms/image | CPU ms/image | decode-only images/s |")
    print("|---:|---:|---:|---:|---:|---:|")
    for c in cases:
        g = "-" if c["gpu_ms_per_image"] is None else f"{c['gpu_ms_per_image']:.4f}"
        print(f"| {c['batch']} | {c['images_per_s']:.0f} | {c['wall_ms_per_image']:.4f} | {g} | "
              f"{c['cpu_ms_per_image']:.4f} | {c['decode_only']['images_per_s']:.0f} |")


if __name__ == "__main__":
    main()
