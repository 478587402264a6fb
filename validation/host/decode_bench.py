#!/usr/bin/env python3
"""Input-pipeline micro-benchmark: how many images per second one CPU core turns from JPEG files into a model's
input, with Debian's Python imaging stack (Pillow, NumPy), as a PyTorch DataLoader worker does for ImageNet.

Images: `--images` JPEGs made here from a seed at ImageNet's typical size (500x375, quality 90, smooth content
with noise: about 100 KB each, close to ImageNet's mean file size), written once to a temporary folder and read
from the page cache, so the figure is the CPU's decode and augmentation, not the disk's.

Transforms (torchvision's ImageNet recipes, written with Pillow and NumPy so that no framework is needed):
  train  decode, RandomResizedCrop(224) (scale 0.08-1, ratio 3/4-4/3, bilinear), horizontal flip with p = 0.5,
         to float32 CHW in [0, 1], normalise by ImageNet's mean and standard deviation
  val    decode, resize the short side to 256 (bilinear), centre crop 224, to float32 CHW, normalise

Modes:
  --workers 1   one process: images/s per core (median of --rounds rounds over every image)
  --workers N   N worker processes (multiprocessing, as DataLoader's workers), each transforming its share of
                the images; the parent only waits: the pipeline's aggregate images/s, timed from the first start
                to the last finish, median of --rounds

Each transformed image is checked (shape 3x224x224, finite, the normalised mean within [-3, 3]) before any round is
timed; a wrong output stops the run.  The report (schema roofplan-host-decode/1) records the machine and versions.

  python3 validation/host/decode_bench.py --json out.json [--images 64] [--rounds 5] [--workers 1]
      [--transform train|val] [--seed 1] [--git-sha SHA]
"""
import argparse
import datetime
import io
import json
import multiprocessing
import os
import platform
import random
import statistics
import sys
import tempfile
import time

import numpy as np
from PIL import Image

MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32).reshape(3, 1, 1)
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32).reshape(3, 1, 1)
SIZE = 224


def make_images(folder, count, seed, width=500, height=375, quality=90):
    """Deterministic JPEGs: smooth gradients and blobs plus pixel noise, so that they compress as photos do."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    paths = []
    for i in range(count):
        base = np.zeros((height, width, 3), np.float32)
        for c in range(3):
            fx, fy, phase = rng.uniform(0.002, 0.03), rng.uniform(0.002, 0.03), rng.uniform(0, 6.3)
            base[..., c] = 128 + 90 * np.sin(fx * x + phase) * np.cos(fy * y + phase / 2)
        base += rng.normal(0, 18, base.shape).astype(np.float32)
        img = Image.fromarray(np.clip(base, 0, 255).astype(np.uint8), "RGB")
        path = os.path.join(folder, f"img{i:05d}.jpg")
        img.save(path, "JPEG", quality=quality)
        paths.append(path)
    return paths


def to_input(img):
    a = np.asarray(img, dtype=np.float32).transpose(2, 0, 1) / 255.0
    return (a - MEAN) / STD


def random_resized_crop(img, rng):
    w, h = img.size
    area = w * h
    for _ in range(10):
        target = area * rng.uniform(0.08, 1.0)
        ratio = np.exp(rng.uniform(np.log(3 / 4), np.log(4 / 3)))
        cw, ch = int(round((target * ratio) ** 0.5)), int(round((target / ratio) ** 0.5))
        if 0 < cw <= w and 0 < ch <= h:
            left, top = rng.randint(0, w - cw), rng.randint(0, h - ch)
            return img.resize((SIZE, SIZE), Image.BILINEAR, box=(left, top, left + cw, top + ch))
    side = min(w, h)  # torchvision's fallback: the centre crop
    left, top = (w - side) // 2, (h - side) // 2
    return img.resize((SIZE, SIZE), Image.BILINEAR, box=(left, top, left + side, top + side))


def train_transform(path, rng):
    with Image.open(path) as f:
        img = f.convert("RGB")
    img = random_resized_crop(img, rng)
    if rng.random() < 0.5:
        img = img.transpose(Image.FLIP_LEFT_RIGHT)
    return to_input(img)


def val_transform(path, rng):
    with Image.open(path) as f:
        img = f.convert("RGB")
    w, h = img.size
    scale = 256 / min(w, h)
    img = img.resize((max(256, round(w * scale)), max(256, round(h * scale))), Image.BILINEAR)
    w, h = img.size
    left, top = (w - SIZE) // 2, (h - SIZE) // 2
    return to_input(img.crop((left, top, left + SIZE, top + SIZE)))


TRANSFORMS = {"train": train_transform, "val": val_transform}


def check(out, path):
    if out.shape != (3, SIZE, SIZE) or out.dtype != np.float32:
        sys.exit(f"decode_bench: {path}: wrong output {out.shape} {out.dtype}")
    if not np.isfinite(out).all() or not -3 <= float(out.mean()) <= 3:
        sys.exit(f"decode_bench: {path}: output not finite or its mean out of range")


def run_share(args):
    paths, transform, seed = args
    rng = random.Random(seed)
    fn = TRANSFORMS[transform]
    total = 0.0
    for p in paths:
        total += float(fn(p, rng)[0, 0, 0])
    return total


def worker_round(paths, transform, workers, seed, pool):
    shares = [(paths[i::workers], transform, seed + i) for i in range(workers)]
    start = time.perf_counter()
    pool.map(run_share, shares)
    return len(paths) / (time.perf_counter() - start)


def cpu_model():
    """The CPU's name (as validation/e2e/rp_common.py's, which imports torch: this script needs only Pillow)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", required=True)
    ap.add_argument("--images", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--transform", choices=sorted(TRANSFORMS), default="train")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--git-sha", default="unknown")
    a = ap.parse_args()
    if a.images < 1 or a.rounds < 1 or a.workers < 1:
        sys.exit("decode_bench: --images, --rounds and --workers must be >= 1")
    with tempfile.TemporaryDirectory(prefix="roofplan-decode-") as folder:
        paths = make_images(folder, a.images, a.seed)
        sizes = [os.path.getsize(p) for p in paths]
        rng = random.Random(a.seed)
        for p in paths:  # correctness first, and the files into the page cache
            check(TRANSFORMS[a.transform](p, rng), p)
        rates = []
        if a.workers == 1:
            for r in range(a.rounds):
                rng = random.Random(a.seed + r)
                fn = TRANSFORMS[a.transform]
                start = time.perf_counter()
                for p in paths:
                    fn(p, rng)
                rates.append(len(paths) / (time.perf_counter() - start))
        else:
            with multiprocessing.get_context("fork").Pool(a.workers) as pool:
                pool.map(run_share, [(paths[:1], a.transform, 0)] * a.workers)  # start every worker
                for r in range(a.rounds):
                    rates.append(worker_round(paths, a.transform, a.workers, a.seed + 100 * r, pool))
    import PIL
    report = {
        "tool": "roofplan-host-decode",
        "schema": 1,
        "provenance": {
            "cpu": cpu_model(),
            "logical_cpus": os.cpu_count(),
            "usable_cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
            "python": platform.python_version(),
            "pillow": PIL.__version__,
            "numpy": np.__version__,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "hostname": platform.node(),
            "git_sha": a.git_sha,
            "command": " ".join([os.path.basename(sys.executable)] + sys.argv),
        },
        "images": {"count": a.images, "width": 500, "height": 375, "quality": 90,
                   "mean_bytes": statistics.mean(sizes), "seed": a.seed},
        "transform": a.transform,
        "workers": a.workers,
        "rounds": rates,
        "images_per_s": statistics.median(rates),
        "images_per_s_per_worker": statistics.median(rates) / a.workers,
    }
    with open(a.json, "w") as f:
        json.dump(report, f, indent=1)
    print(f"{a.transform}, {a.workers} worker(s): {report['images_per_s']:.1f} images/s "
          f"({report['images_per_s_per_worker']:.1f} per worker), mean file {report['images']['mean_bytes'] / 1e3:.0f} kB")


if __name__ == "__main__":
    main()
