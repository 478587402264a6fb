#!/usr/bin/env python3
"""Sustained SM clock and power under long compute- and memory-bound runs (issue 16, item 5 "Sustained clocks").

Phases, in this order, with nvidia-smi sampling the GPU every 200 ms in the background the whole time:
  idle       --idle-seconds (10) with the CUDA context up and nothing running (baseline);
  checks     correctness of every workload on fresh random non-zero inputs (fails loudly);
  bf16_gemm  torch.matmul 8192x8192 @ 8192x8192, bf16, back-to-back for --seconds (60);
  fp32_gemm  the same in fp32 with TF32 off (torch.backends.cuda.matmul.allow_tf32 = False);
  d2d_copy   dst.copy_(src) on 2 GiB tensors, back-to-back, for --seconds.
A --gap-seconds (3) idle pause separates the workloads.

Clocks, power limit and every other setting of the card are only *queried*: this script never passes a setting
to nvidia-smi (no -lgc/-ac/-pl/-rgc/-pm/-r).

For each workload the report has the iterations, the achieved rate (TFLOP/s = 2*M*N*K*iters/s for the GEMMs,
GB/s = 2*bytes*iters/s for the copy, read + write, timed with CUDA events), the same over the window after the
warm-up, per-second rates, and from the samples inside the window after --warmup-seconds (5): median, p10 and p90
of the SM clock, power draw and temperature, and the clock-event (throttle) reasons seen, as hex masks with the
bits decoded.

Bit meanings of clocks_event_reasons.active (NVML's nvmlClocksEventReasons / nvmlClocksThrottleReasons, which
nvidia-smi prints as a hex mask): NVML API Reference, group nvmlClocksEventReasons,
https://docs.nvidia.com/deploy/nvml-api/group__nvmlClocksEventReasons.html (0x1 .. 0x100), and for the two newer
bits (0x200 board limit, 0x400 reliability) cuda-python's cuda.bindings.nvml.ClocksEventReasons,
https://nvidia.github.io/cuda-python/ (EVENT_REASON_BOARD_LIMIT = 512, EVENT_REASON_RELIABILITY = 1024).

Usage (on the device machine, from the repository root):
  python3 validation/power/clock_bench.py --json OUT.json --csv OUT.csv --git-sha SHA [--seconds 60]
"""
import argparse
import datetime
import json
import math
import os
import platform
import signal
import socket
import subprocess
import sys
import threading
import time

SCHEMA = 1
TOOL = "roofplan-clock-bench"

# The fields asked of the sampler, in this order; the ones the driver refuses are dropped (and recorded).
SAMPLER_FIELDS = ("timestamp", "clocks.sm", "clocks.mem", "clocks.max.sm", "power.draw", "power.limit",
                  "enforced.power.limit", "temperature.gpu", "utilization.gpu", "clocks_event_reasons.active")
# Older drivers name the event reasons "clocks_throttle_reasons.active".
FIELD_FALLBACKS = {"clocks_event_reasons.active": "clocks_throttle_reasons.active"}

PROVENANCE_FIELDS = ("name", "driver_version", "vbios_version", "pci.bus_id", "power.limit",
                     "enforced.power.limit", "power.default_limit", "power.max_limit", "clocks.max.sm",
                     "clocks.max.mem", "clocks.applications.graphics", "clocks.default_applications.graphics",
                     "clocks.sm", "clocks.mem", "temperature.gpu", "pstate", "persistence_mode", "compute_mode",
                     "ecc.mode.current", "memory.total")

# Bit meanings: NVML nvmlClocksEventReasons (see the module docstring for the sources).
EVENT_REASON_BITS = (
    (0x1, "GpuIdle"),
    (0x2, "ApplicationsClocksSetting"),
    (0x4, "SwPowerCap"),
    (0x8, "HwSlowdown"),
    (0x10, "SyncBoost"),
    (0x20, "SwThermalSlowdown"),
    (0x40, "HwThermalSlowdown"),
    (0x80, "HwPowerBrakeSlowdown"),
    (0x100, "DisplayClockSetting"),
    (0x200, "BoardLimit"),
    (0x400, "Reliability"),
)
EVENT_REASON_SOURCE = ("NVML API Reference, nvmlClocksEventReasons "
                       "(https://docs.nvidia.com/deploy/nvml-api/group__nvmlClocksEventReasons.html); "
                       "0x200/0x400 from cuda-python cuda.bindings.nvml.ClocksEventReasons "
                       "(https://nvidia.github.io/cuda-python/)")

GEMM_N = 8192
COPY_BYTES = 2 << 30  # 2 GiB per tensor
# Relative-error bounds against float64: bf16 operands land between 1e-3 and 1e-2; fp32 with TF32 off far under
# 1e-4, while TF32 would land near 3e-4, so the fp32 bound also proves TF32 is off.
BF16_TOL = 1e-2
FP32_TOL = 5e-5


# ----------------------------------------------------------------------------------------------------------------
# Pure helpers (no GPU; exercised by the local test)
# ----------------------------------------------------------------------------------------------------------------
def percentile(values, q):
    """Linear-interpolation percentile (q in [0, 100]) of a list of numbers; None if empty."""
    xs = sorted(v for v in values if v is not None and not math.isnan(v))
    if not xs:
        return None
    if len(xs) == 1:
        return xs[0]
    pos = (len(xs) - 1) * q / 100.0
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def stats(values):
    xs = [v for v in values if v is not None and not math.isnan(v)]
    if not xs:
        return {"n": 0, "median": None, "p10": None, "p90": None, "min": None, "max": None}
    return {"n": len(xs), "median": percentile(xs, 50), "p10": percentile(xs, 10), "p90": percentile(xs, 90),
            "min": min(xs), "max": max(xs)}


def decode_reasons(mask):
    """Names of the set bits of a clocks-event mask (unknown bits as hex)."""
    names = []
    rest = mask
    for bit, name in EVENT_REASON_BITS:
        if mask & bit:
            names.append(name)
            rest &= ~bit
    if rest:
        names.append(f"unknown(0x{rest:x})")
    return names if names else ["None"]


def parse_number(s):
    s = s.strip()
    if not s or s.startswith("[") or s.upper() in ("N/A", "NOT SUPPORTED"):
        return None
    try:
        return float(s.split()[0])
    except ValueError:
        return None


def parse_mask(s):
    s = s.strip()
    if not s or s.startswith("["):
        return None
    try:
        return int(s, 16) if s.lower().startswith("0x") else int(s)
    except ValueError:
        return None


def parse_timestamp(s):
    """nvidia-smi's timestamp ('2026/11/24 10:00:00.123', local time) -> epoch seconds, or None."""
    s = s.strip()
    for fmt in ("%Y/%m/%d %H:%M:%S.%f", "%Y/%m/%d %H:%M:%S", "%a %b %d %H:%M:%S %Y"):
        try:
            return datetime.datetime.strptime(s, fmt).timestamp()  # naive -> local time, as nvidia-smi prints
        except ValueError:
            continue
    return None


def parse_samples(lines, fields):
    """CSV lines (noheader, nounits) of the fields -> list of dicts with 't' (epoch s) and parsed values."""
    out = []
    for line in lines:
        parts = [p.strip() for p in line.rstrip("\n").split(",")]
        if len(parts) != len(fields):
            continue
        rec = {}
        for f, v in zip(fields, parts):
            if f == "timestamp":
                rec["t"] = parse_timestamp(v)
            elif f in ("clocks_event_reasons.active", "clocks_throttle_reasons.active"):
                rec["reasons"] = parse_mask(v)
            else:
                rec[f] = parse_number(v)
        if rec.get("t") is None:
            continue
        out.append(rec)
    return out


def summarize_window(samples, t0, t1):
    """Statistics of the samples with t0 <= t < t1."""
    win = [s for s in samples if t0 <= s["t"] < t1]
    res = {"window_start_epoch": t0, "window_end_epoch": t1, "samples": len(win)}
    for key, name in (("clocks.sm", "sm_clock_mhz"), ("clocks.mem", "mem_clock_mhz"),
                      ("power.draw", "power_w"), ("temperature.gpu", "temperature_c"),
                      ("utilization.gpu", "utilization_pct")):
        res[name] = stats([s.get(key) for s in win])
    counts = {}
    union = 0
    for s in win:
        m = s.get("reasons")
        if m is None:
            continue
        counts[m] = counts.get(m, 0) + 1
        union |= m
    res["event_reasons"] = [{"mask": f"0x{m:016x}", "decoded": decode_reasons(m), "samples": c}
                            for m, c in sorted(counts.items())]
    res["event_reasons_union"] = {"mask": f"0x{union:016x}", "decoded": decode_reasons(union)}
    n_r = sum(counts.values())
    res["sw_power_cap_fraction"] = (sum(c for m, c in counts.items() if m & 0x4) / n_r) if n_r else None
    res["thermal_fraction"] = (sum(c for m, c in counts.items() if m & 0x60) / n_r) if n_r else None
    return res


# ----------------------------------------------------------------------------------------------------------------
# nvidia-smi (queries only)
# ----------------------------------------------------------------------------------------------------------------
def smi_query(fields, timeout=20):
    """One-shot --query-gpu of the fields (GPU 0); (values or None, stderr)."""
    cmd = ["nvidia-smi", "-i", "0", f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError) as e:
        return None, str(e)
    if p.returncode != 0 or not p.stdout.strip():
        return None, (p.stderr or p.stdout).strip()
    vals = [v.strip() for v in p.stdout.strip().splitlines()[0].split(",")]
    if len(vals) != len(fields):
        return None, f"expected {len(fields)} values, got {len(vals)}: {p.stdout.strip()}"
    return vals, ""


def supported_fields(wanted):
    """The fields of `wanted` this driver accepts (all at once first; if refused, each alone, with fallbacks)."""
    if smi_query(list(wanted))[0] is not None:
        return list(wanted), []
    used, dropped = [], []
    for f in wanted:
        vals, err = smi_query([f])
        if vals is not None:
            used.append(f)
            continue
        alt = FIELD_FALLBACKS.get(f)
        if alt is not None and smi_query([alt])[0] is not None:
            used.append(alt)
            dropped.append({"field": f, "error": err, "replaced_by": alt})
        else:
            dropped.append({"field": f, "error": err})
    return used, dropped


class Sampler:
    """nvidia-smi --query-gpu ... -lms PERIOD in the background; raw lines go to a CSV file as they come."""

    def __init__(self, fields, path, period_ms):
        self.fields = fields
        self.path = path
        self.cmd = ["nvidia-smi", "-i", "0", f"--query-gpu={','.join(fields)}",
                    "--format=csv,noheader,nounits", "-lms", str(period_ms)]
        self.lines = []
        self.recv_times = []
        self.proc = None
        self.thread = None
        self.stderr = ""

    def start(self):
        self.file = open(self.path, "w")
        self.file.write("# " + ",".join(self.fields) + "\n")
        self.file.write("# command: " + " ".join(self.cmd) + "\n")
        self.file.flush()
        self.proc = subprocess.Popen(self.cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     bufsize=1)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()
        self.start_epoch = time.time()

    def _read(self):
        for line in self.proc.stdout:
            self.recv_times.append(time.time())
            self.lines.append(line)
            self.file.write(line)
            self.file.flush()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.terminate()
                try:
                    self.proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
        self.thread.join(timeout=5)
        try:
            self.stderr = self.proc.stderr.read()
        except (OSError, ValueError):
            self.stderr = ""
        self.file.close()
        return self.proc.returncode


# ----------------------------------------------------------------------------------------------------------------
# Workloads
# ----------------------------------------------------------------------------------------------------------------
def rel_err(out, ref):
    """||out - ref|| / ||ref|| (ref in float64)."""
    d = (out.double() - ref).norm().item()
    r = ref.norm().item()
    return d / r


def check_gemm(torch, dtype, n, tol, label):
    """out = a @ b on fresh random inputs vs float64 on the GPU; poisoned output; raises if wrong."""
    a = torch.randn(n, n, device="cuda", dtype=dtype)
    b = torch.randn(n, n, device="cuda", dtype=dtype)
    c = torch.full((n, n), float("nan"), device="cuda", dtype=dtype)
    torch.matmul(a, b, out=c)
    torch.cuda.synchronize()
    if not torch.isfinite(c).all().item():
        raise RuntimeError(f"{label}: {n}^3 output has non-finite elements (unwritten or overflow)")
    ref = a.double() @ b.double()
    e = rel_err(c, ref)
    print(f"  check {label} {n}^3: rel err {e:.3e} (bound {tol:.0e})", flush=True)
    if not (e <= tol):
        raise RuntimeError(f"{label}: {n}^3 relative error {e:.3e} above {tol:.0e}")
    return e


def check_copy(torch, nbytes):
    n = nbytes // 4
    src = torch.randn(n, device="cuda", dtype=torch.float32)
    if (src == 0).all().item():
        raise RuntimeError("copy check: source is all zeros")
    dst = torch.full((n,), float("nan"), device="cuda", dtype=torch.float32)
    dst.copy_(src)
    torch.cuda.synchronize()
    ok = torch.equal(dst, src)
    print(f"  check d2d copy {nbytes / 2**30:.0f} GiB: equal={ok}", flush=True)
    if not ok:
        raise RuntimeError("copy check: dst differs from src")
    return True


def run_timed(torch, step, seconds, work_per_iter, warmup_s, target_chunk_s=0.1):
    """Run step() back-to-back for `seconds`, in chunks timed with CUDA events; synchronize between chunks.

    work_per_iter: FLOPs (GEMM) or bytes (copy) per call.  Returns the timing record."""
    # Size the chunk: one synchronized probe of a few calls.
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    per = (time.perf_counter() - t) / 3
    chunk = max(1, int(target_chunk_s / max(per, 1e-6)))
    chunks = []  # (wall start epoch, wall end epoch, iters, event ms)
    torch.cuda.synchronize()
    start_epoch = time.time()
    t_end = time.perf_counter() + seconds
    while time.perf_counter() < t_end:
        e0 = torch.cuda.Event(enable_timing=True)
        e1 = torch.cuda.Event(enable_timing=True)
        w0 = time.time()
        e0.record()
        for _ in range(chunk):
            step()
        e1.record()
        e1.synchronize()
        w1 = time.time()
        chunks.append((w0, w1, chunk, e0.elapsed_time(e1)))
    end_epoch = time.time()
    iters = sum(c[2] for c in chunks)
    ev_s = sum(c[3] for c in chunks) / 1e3
    wall_s = end_epoch - start_epoch
    post = [c for c in chunks if c[0] >= start_epoch + warmup_s]
    post_iters = sum(c[2] for c in post)
    post_ev_s = sum(c[3] for c in post) / 1e3
    # Per-second rate (by chunk start), for the shape of the run over time.
    per_second = {}
    for w0, _w1, it, ms in chunks:
        k = int(w0 - start_epoch)
        a = per_second.setdefault(k, [0, 0.0])
        a[0] += it
        a[1] += ms / 1e3
    series = [{"second": k, "iters": v[0], "rate": (v[0] * work_per_iter / v[1]) if v[1] > 0 else None}
              for k, v in sorted(per_second.items())]
    chunk_rates = [c[2] * work_per_iter / (c[3] / 1e3) for c in post if c[3] > 0]
    return {
        "start_epoch": start_epoch, "end_epoch": end_epoch,
        "start_utc": datetime.datetime.fromtimestamp(start_epoch, datetime.timezone.utc).isoformat(),
        "end_utc": datetime.datetime.fromtimestamp(end_epoch, datetime.timezone.utc).isoformat(),
        "wall_s": wall_s, "iterations": iters, "iters_per_chunk": chunk, "chunks": len(chunks),
        "event_s": ev_s, "rate_event": iters * work_per_iter / ev_s if ev_s > 0 else None,
        "rate_wall": iters * work_per_iter / wall_s if wall_s > 0 else None,
        "post_warmup": {"iterations": post_iters, "event_s": post_ev_s,
                        "rate_event": post_iters * work_per_iter / post_ev_s if post_ev_s > 0 else None,
                        "chunk_rate": stats(chunk_rates)},
        "per_second": series,
    }


def scale(rec, factor, unit):
    """Scale the rates of a timing record (FLOP/s -> TFLOP/s, B/s -> GB/s) in place, naming the unit."""
    rec["unit"] = unit
    for k in ("rate_event", "rate_wall"):
        if rec[k] is not None:
            rec[k] /= factor
    pw = rec["post_warmup"]
    if pw["rate_event"] is not None:
        pw["rate_event"] /= factor
    for k in ("median", "p10", "p90", "min", "max"):
        if pw["chunk_rate"][k] is not None:
            pw["chunk_rate"][k] /= factor
    for s in rec["per_second"]:
        if s["rate"] is not None:
            s["rate"] /= factor
    return rec


# ----------------------------------------------------------------------------------------------------------------
def gpu_provenance(dev, smi, dropped, git_sha):
    """The provenance block of a power report: the GPU, driver, software, limits and clocks at the start (queried,
    never set), and the run (date, host, command, git sha).  duty_bench.py writes the same."""
    return {
        "device": torch.cuda.get_device_name(0),
        "sm_count": dev.multi_processor_count,
        "gpu_memory_bytes": dev.total_memory,
        "driver_version": smi.get("driver_version"),
        "cuda_runtime": torch.version.cuda,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "power_limit_w": smi.get("power.limit"),
        "enforced_power_limit_w": smi.get("enforced.power.limit"),
        "max_sm_clock_mhz": smi.get("clocks.max.sm"),
        "nvidia_smi_at_start": smi,
        "nvidia_smi_fields_dropped_at_start": dropped,
        "date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "hostname": socket.gethostname(),
        "command_line": [sys.executable] + sys.argv,
        "git_sha": git_sha,
        "clocks_changed": False,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", required=True, help="report path")
    ap.add_argument("--csv", required=True, help="raw nvidia-smi samples")
    ap.add_argument("--git-sha", default="unknown")
    ap.add_argument("--seconds", type=float, default=60.0, help="length of each workload")
    ap.add_argument("--idle-seconds", type=float, default=10.0)
    ap.add_argument("--gap-seconds", type=float, default=3.0, help="idle pause between workloads")
    ap.add_argument("--warmup-seconds", type=float, default=5.0, help="skipped at each workload's start")
    ap.add_argument("--period-ms", type=int, default=200)
    args = ap.parse_args()

    import torch  # noqa: E402 - imported here so that the pure helpers load without torch

    if not torch.cuda.is_available():
        sys.exit("clock_bench: no CUDA device")
    for d in (os.path.dirname(os.path.abspath(args.json)), os.path.dirname(os.path.abspath(args.csv))):
        os.makedirs(d, exist_ok=True)

    # Provenance from nvidia-smi (queries only).
    prov_fields, prov_dropped = supported_fields(PROVENANCE_FIELDS)
    prov_vals, err = smi_query(prov_fields)
    smi = dict(zip(prov_fields, prov_vals)) if prov_vals else {"error": err}
    fields, dropped = supported_fields(SAMPLER_FIELDS)
    if "timestamp" not in fields:
        sys.exit("clock_bench: nvidia-smi refuses the timestamp field; cannot window samples")
    print(f"sampler fields: {','.join(fields)}; dropped: {dropped}", flush=True)

    sampler = Sampler(fields, args.csv, args.period_ms)
    sampler.start()
    phases = []
    report = None
    try:
        torch.cuda.init()
        torch.zeros(1, device="cuda")
        torch.cuda.synchronize()
        dev = torch.cuda.get_device_properties(0)
        # --- idle baseline ---
        print(f"idle {args.idle_seconds:.0f} s", flush=True)
        t0 = time.time()
        time.sleep(args.idle_seconds)
        phases.append({"name": "idle", "start_epoch": t0, "end_epoch": time.time()})

        # --- correctness ---
        print("checks", flush=True)
        t0 = time.time()
        checks = {}
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        checks["bf16_1024_rel_err"] = check_gemm(torch, torch.bfloat16, 1024, BF16_TOL, "bf16")
        checks["bf16_8192_rel_err"] = check_gemm(torch, torch.bfloat16, GEMM_N, BF16_TOL, "bf16")
        checks["fp32_1024_rel_err"] = check_gemm(torch, torch.float32, 1024, FP32_TOL, "fp32 (tf32 off)")
        checks["fp32_8192_rel_err"] = check_gemm(torch, torch.float32, GEMM_N, FP32_TOL, "fp32 (tf32 off)")
        checks["copy_equal"] = check_copy(torch, COPY_BYTES)
        torch.cuda.empty_cache()
        phases.append({"name": "checks", "start_epoch": t0, "end_epoch": time.time()})

        workloads = []
        flops = 2.0 * GEMM_N ** 3

        def gemm_workload(name, dtype, tf32):
            torch.backends.cuda.matmul.allow_tf32 = tf32
            a = torch.randn(GEMM_N, GEMM_N, device="cuda", dtype=dtype)
            b = torch.randn(GEMM_N, GEMM_N, device="cuda", dtype=dtype)
            c = torch.empty(GEMM_N, GEMM_N, device="cuda", dtype=dtype)
            ref = a[:256].double() @ b.double()  # rows 0..255, to check the last timed product
            print(f"{name}: {args.seconds:.0f} s", flush=True)
            rec = run_timed(torch, lambda: torch.matmul(a, b, out=c), args.seconds, flops, args.warmup_seconds)
            e = rel_err(c[:256], ref)
            tol = BF16_TOL if dtype == torch.bfloat16 else FP32_TOL
            if not (e <= tol):
                raise RuntimeError(f"{name}: last timed product's rows 0..255 rel err {e:.3e} above {tol:.0e}")
            rec = scale(rec, 1e12, "TFLOP/s")
            rec.update({"name": name, "kind": "gemm", "m": GEMM_N, "n": GEMM_N, "k": GEMM_N,
                        "dtype": str(dtype).replace("torch.", ""), "allow_tf32": tf32,
                        "flop_per_iter": flops, "post_check_rel_err": e})
            del a, b, c, ref
            torch.cuda.empty_cache()
            return rec

        def gap():
            if args.gap_seconds > 0:
                g0 = time.time()
                time.sleep(args.gap_seconds)
                phases.append({"name": "gap", "start_epoch": g0, "end_epoch": time.time()})

        workloads.append(gemm_workload("bf16_gemm", torch.bfloat16, False))
        gap()
        workloads.append(gemm_workload("fp32_gemm_no_tf32", torch.float32, False))
        gap()

        n = COPY_BYTES // 4
        src = torch.randn(n, device="cuda", dtype=torch.float32)
        dst = torch.full((n,), float("nan"), device="cuda", dtype=torch.float32)
        print(f"d2d_copy: {args.seconds:.0f} s", flush=True)
        rec = run_timed(torch, lambda: dst.copy_(src), args.seconds, 2.0 * COPY_BYTES, args.warmup_seconds)
        if not torch.equal(dst, src):
            raise RuntimeError("d2d_copy: dst differs from src after the timed run")
        rec = scale(rec, 1e9, "GB/s")
        rec.update({"name": "d2d_copy", "kind": "copy", "bytes_per_tensor": COPY_BYTES, "dtype": "float32",
                    "bytes_per_iter_read_plus_write": 2 * COPY_BYTES})
        workloads.append(rec)
        del src, dst
        torch.cuda.empty_cache()
        time.sleep(1.0)  # one more sample after the last workload
    finally:
        rc = sampler.stop()

    samples = parse_samples(sampler.lines, fields)
    if not samples:
        sys.exit(f"clock_bench: no samples parsed (nvidia-smi rc {rc}, stderr: {sampler.stderr.strip()})")
    # nvidia-smi's timestamp vs the time its line arrived here (a large lag would mean buffered output).
    lags = []
    if len(sampler.recv_times) == len(sampler.lines):
        for line, tr in zip(sampler.lines, sampler.recv_times):
            p = parse_samples([line], fields)
            if p:
                lags.append(tr - p[0]["t"])

    for ph in phases:
        ph["stats"] = summarize_window(samples, ph["start_epoch"], ph["end_epoch"])
    idle = phases[0]
    # Idle baseline over the whole idle window and over its second half.
    idle_last = summarize_window(samples, (idle["start_epoch"] + idle["end_epoch"]) / 2, idle["end_epoch"])

    max_sm = None
    try:
        max_sm = float(smi.get("clocks.max.sm"))
    except (TypeError, ValueError):
        pass
    for w in workloads:
        w["samples_all"] = summarize_window(samples, w["start_epoch"], w["end_epoch"])
        w["samples_after_warmup"] = summarize_window(samples, w["start_epoch"] + args.warmup_seconds,
                                                     w["end_epoch"])
        med = w["samples_after_warmup"]["sm_clock_mhz"]["median"]
        w["median_sm_clock_vs_max"] = (med / max_sm) if (med is not None and max_sm) else None

    report = {
        "tool": TOOL,
        "schema": SCHEMA,
        "provenance": gpu_provenance(dev, smi, prov_dropped, args.git_sha),
        "sampler": {
            "command": sampler.cmd,
            "fields_used": fields,
            "fields_dropped": dropped,
            "period_ms": args.period_ms,
            "samples": len(samples),
            "lines": len(sampler.lines),
            "exit_code": rc,
            "stderr": sampler.stderr.strip()[-2000:],
            "csv": os.path.basename(args.csv),
            "timestamp_note": "nvidia-smi prints local time; parsed as local time of the same machine",
            "arrival_lag_s": stats(lags),
        },
        "event_reason_bits": {f"0x{b:x}": n for b, n in EVENT_REASON_BITS},
        "event_reason_source": EVENT_REASON_SOURCE,
        "settings": {"seconds": args.seconds, "idle_seconds": args.idle_seconds, "gap_seconds": args.gap_seconds,
                     "warmup_seconds": args.warmup_seconds, "gemm_n": GEMM_N, "copy_bytes": COPY_BYTES},
        "checks": checks,
        "idle_baseline": {"all": idle["stats"], "second_half": idle_last},
        "phases": phases,
        "workloads": workloads,
    }
    tmp = args.json + ".tmp"
    with open(tmp, "w") as f:
        json.dump(report, f, indent=1, allow_nan=False, default=str)
    os.replace(tmp, args.json)

    # Short table last.
    def fmt(x, p=0):
        return "-" if x is None else f"{x:.{p}f}"
    ib = idle["stats"]
    print(f"\nidle: SM {fmt(ib['sm_clock_mhz']['median'])} MHz, {fmt(ib['power_w']['median'], 1)} W, "
          f"{fmt(ib['temperature_c']['median'])} C, reasons "
          f"{[r['mask'] for r in ib['event_reasons']]}")
    print(f"{'workload':20s} {'rate':>12s} {'SM med/p10/p90 MHz':>20s} {'vs max':>7s} {'W med':>7s} "
          f"{'C med':>6s}  reasons")
    for w in workloads:
        s = w["samples_after_warmup"]
        c = s["sm_clock_mhz"]
        print(f"{w['name']:20s} {fmt(w['post_warmup']['rate_event'], 1):>7s} {w['unit']:>4s} "
              f"{fmt(c['median'])}/{fmt(c['p10'])}/{fmt(c['p90']):>5s}       "
              f"{fmt(w['median_sm_clock_vs_max'] and 100 * w['median_sm_clock_vs_max'], 1):>6s}% "
              f"{fmt(s['power_w']['median'], 1):>7s} {fmt(s['temperature_c']['median']):>6s}  "
              f"{['%s %s x%d' % (r['mask'][-4:], '+'.join(r['decoded']), r['samples']) for r in s['event_reasons']]}")
    print(f"wrote {args.json} and {args.csv} ({len(samples)} samples)")


if __name__ == "__main__":
    main()
