#!/usr/bin/env python3
"""PyTorch operator micro-benchmarks for roofplan's eager runtime (issue 14, item 4).  Calibration input: each
record is one framework operator (or one autograd backward of it) at one size and dtype, timed alone.

For every case:
  1. correctness first: the op runs on fresh random non-zero inputs (its own seed, not the timing buffers) and is
     compared with a float64 reference by ||out - ref|| / ||ref|| (bounds per dtype: TOL below); dropout, memset
     and the optimizers have exact or statistical checks of their own.  A case that fails is still timed and
     recorded with "verified": false.
  2. timing: CUDA events around each call, after warm-up; before each call a spin kernel (torch.cuda._sleep)
     longer than the host's dispatch time keeps the GPU busy while the host enqueues the call, so the time between
     the events is the GPU's own time for the call (its kernels back to back, launch gaps on the GPU included,
     host dispatch excluded).  Median, p10, p90 over many repetitions.  When a set of inputs fits in a few L2s,
     the calls rotate over enough input sets (views into a large random pool, or separate states) to touch about
     3x L2 per cycle; "rotating_sets" says how many.
  3. one torch.profiler pass (3 calls) lists the kernels launched per call (name, class, count, device time).
  4. host_us: the median wall time the host spent issuing the call in the timed loop (not synchronised).
  With --inner N (or auto) N calls run back to back between the events and the time per call is the elapsed
  time over N: it then includes the GPU's gap between queued kernels but not the events' own overhead (about
  3.5 us per pair on an H200, measured: compare "median_s" with "kernel_busy_us" of a run with --inner 1).
Plus sections that are not per-size ops: "host" (dispatch cost per op: no autograd, autograd forward,
forward + backward, autocast, nn.Module calls, optimizer step per tensor, CUDA graph replay) and "floor" (GPU time
of a tiny kernel back to back, eagerly and inside a CUDA graph).

Bytes are nominal: each input read once and each output written once (the kernels may move more, e.g. batch norm
reads its input twice); FLOPs count a multiply-add as 2.  Output: one JSON report (tool "roofplan-ops"), schema in
docs/report-schemas.md, section roofplan-ops.

  python3 validation/ops/op_bench.py --json ops.json --git-sha SHA [--only gemm,bn] [--deadline-s 300]
  python3 validation/ops/op_bench.py --smoke --json /tmp/ops_smoke.json   # CPU, tiny sizes: exercises the code
"""
import argparse
import contextlib
import math
import statistics
import sys
import time
import traceback

import torch
import torch.nn.functional as F

sys.path.insert(0, __file__.rsplit("/", 2)[0] + "/e2e")
import rp_common as rc  # noqa: E402

SIZE = {"fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp64": 8, "int64": 8, "bool": 1}
DT = {"fp32": torch.float32, "tf32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
# relative-error bounds ||out-ref||/||ref|| per compute dtype
TOL = {"fp32": 2e-5, "tf32": 5e-3, "bf16": 2e-2, "fp16": 4e-3}

KB, MB, GB = 1 << 10, 1 << 20, 1 << 30
INNER = 1  # calls between two events (--inner)
DP_ROUNDS = 0  # dp_host's rounds (--dp-rounds; 0: 9 on a GPU, 2 in --smoke)
TRAFFIC = [64 * KB, 256 * KB, 1 * MB, 4 * MB, 16 * MB, 64 * MB, 256 * MB, 1 * GB]


class Env:
    """Where and how cases run (GPU, or CPU in --smoke)."""

    def __init__(self, smoke, deadline):
        self.smoke = smoke
        self.cuda = torch.cuda.is_available() and not smoke
        self.dev = "cuda" if self.cuda else "cpu"
        self.l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 50 * MB) if self.cuda else 4 * MB
        self.deadline = deadline
        self.pools = {}

    def sync(self):
        if self.cuda:
            torch.cuda.synchronize()

    def left(self):
        return self.deadline - time.monotonic()

    def pool(self, dtype):
        """A large random pool of this dtype (about 3 L2s, at least 64 MiB): cheap input sets are views into it."""
        if dtype not in self.pools:
            n = max(3 * self.l2, 64 * MB) // torch.tensor([], dtype=dtype).element_size()
            if self.smoke:
                n = 1 << 16
            g = torch.Generator(device=self.dev).manual_seed(1234)
            p = torch.randn(n, generator=g, device=self.dev, dtype=torch.float32).to(dtype)
            p[p == 0] = 0.5  # non-zero
            self.pools[dtype] = [p, 0]
        return self.pools[dtype]

    def view(self, shape, dtype):
        """Next view of `shape` into the pool of `dtype` (wraps around; a fresh tensor if it does not fit)."""
        entry = self.pool(dtype)
        p, off = entry
        n = math.prod(shape)
        if n > p.numel():
            return torch.randn(shape, device=self.dev).to(dtype)
        if off + n > p.numel():
            off = 0
        entry[1] = off + n
        return p[off:off + n].view(shape)

    def leaf(self, shape, dtype, seed, grad):
        """Fresh random tensor (seed given: the correctness check) or a pool view (timing), made a leaf that
        requires grad when `grad`."""
        x = self.fresh(shape, dtype, seed) if seed is not None else self.view(shape, dtype)
        if grad:
            x = x.detach().clone().requires_grad_(True)
        return x

    def fresh(self, shape, dtype, seed):
        g = torch.Generator(device=self.dev).manual_seed(seed)
        x = torch.randn(shape, generator=g, device=self.dev, dtype=torch.float32)
        x[x == 0] = 0.25
        return x.to(dtype)

    def sets_for(self, ws_bytes, cap):
        """How many rotating input sets make a cycle touch about 3x L2."""
        if ws_bytes >= 3 * self.l2:
            return 1
        return int(max(1, min(cap, math.ceil(3 * self.l2 / max(ws_bytes, 1)))))


def relerr(out, ref):
    out = out.detach().to(torch.float64)
    ref = ref.detach().to(torch.float64)
    if not torch.isfinite(out).all():
        return math.inf
    den = torch.linalg.vector_norm(ref).item()
    num = torch.linalg.vector_norm(out - ref).item()
    return num / den if den > 0 else num


# ---------------------------------------------------------------------------------------------------------------
# timing


def time_call(env, call, nsets, max_reps=200, budget_s=0.12):
    """GPU time per call (CUDA events, sleep-padded), host issue time per call; or CPU wall in smoke mode."""
    # warm-up (allocator, cuBLAS/cuDNN handles and heuristics, lazy module loading)
    for i in range(3):
        call(i % nsets)
    env.sync()
    t0 = time.perf_counter()
    for i in range(2):
        call(i % nsets)
    host_est = (time.perf_counter() - t0) / 2  # issue time only (no synchronisation inside)
    env.sync()
    if not env.cuda:
        reps = 5
        ts = []
        for r in range(reps):
            a = time.perf_counter()
            call(r % nsets)
            ts.append(time.perf_counter() - a)
        return ts, ts
    # a first estimate of the GPU time
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(int(2e9 * (2 * host_est + 50e-6)))
    a.record()
    call(0)
    b.record()
    b.synchronize()
    gpu_est = a.elapsed_time(b) / 1e3
    # INNER calls back to back between the events ("auto": enough for about 25 us of GPU work, at most 16): the
    # per-call time then holds the GPU's own gap between queued kernels but not the events' overhead
    inner = INNER if INNER != "auto" else int(max(1, min(16, math.ceil(25e-6 / max(gpu_est, 1e-7)))))
    sleep_s = inner * 2 * host_est + 30e-6
    reps = int(max(10, min(max_reps, budget_s / (inner * gpu_est + sleep_s))))
    cycles = int(2.0e9 * sleep_s)  # _sleep counts SM clocks (about 2 GHz on Hopper); only a lower bound matters
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    host = []
    for r in range(reps):
        torch.cuda._sleep(cycles)
        starts[r].record()
        h = time.perf_counter()
        for j in range(inner):
            call((r * inner + j) % nsets)
        host.append((time.perf_counter() - h) / inner)
        ends[r].record()
    torch.cuda.synchronize()
    time_call.inner = inner
    return [s.elapsed_time(e) / 1e3 / inner for s, e in zip(starts, ends)], host


def pct(xs, q):
    xs = sorted(xs)
    if not xs:
        return None
    k = (len(xs) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


class Runner:
    def __init__(self, env, out_doc, out_path):
        self.env = env
        self.doc = out_doc
        self.path = out_path
        self.n = 0
        self.t_last_write = time.monotonic()

    def save(self, force=False):
        if force or time.monotonic() - self.t_last_write > 5:
            rc.write_json(self.path, self.doc)
            self.t_last_write = time.monotonic()

    def run(self, rec, setup, check, ws_bytes, set_cap=4096, profile=True):
        """rec: the record's descriptive fields; setup(k) -> call(state); check() -> (error, tol, note)."""
        env = self.env
        rec = dict(rec)
        if env.left() < 0:
            rec["skipped"] = "deadline"
            self.doc["cases"].append(rec)
            return rec
        t_case = time.monotonic()
        try:
            err, tol, note = check()
            rec["check_error"] = err
            rec["check_tol"] = tol
            rec["verified"] = bool(err is not None and math.isfinite(err) and err <= tol)
            if note:
                rec["check_note"] = note
            nsets = env.sets_for(ws_bytes, set_cap)
            states = [setup(k) for k in range(nsets)]
            fn = states[0][0]
            calls = [s[0] for s in states]
            rec["rotating_sets"] = nsets
            rec["working_set_bytes"] = ws_bytes

            def call(i):
                return calls[i]()
            time_call.inner = 1
            ts, host = time_call(env, call, nsets)
            rec["inner"] = time_call.inner
            rec["reps"] = len(ts)
            rec["median_s"] = statistics.median(ts)
            rec["p10_s"] = pct(ts, 0.1)
            rec["p90_s"] = pct(ts, 0.9)
            rec["host_us"] = statistics.median(host) * 1e6
            if rec.get("bytes"):
                rec["gb_s"] = rec["bytes"] / rec["median_s"] / 1e9
            if rec.get("flops"):
                rec["tflops"] = rec["flops"] / rec["median_s"] / 1e12
            if profile:
                ev = rc.profile_device(fn, calls=3, sync=env.sync)
                s = rc.summarize_kernels(ev, calls=3)
                rec["kernel_count"] = s["count"]
                rec["kernels"] = [{"name": k["name"][:300], "class": k["class"], "count": k["count"],
                                   "time_us": round(k["time_us"], 3)} for k in s["kernels"]]
                rec["kernel_busy_us"] = s["busy_us"]
                rec["class_time_us"] = s["class_time_us"]
            extra = states[0][1] if len(states[0]) > 1 else None
            if extra:
                rec.update(extra() if callable(extra) else extra)
            del states, calls, fn
        except Exception as e:  # noqa: BLE001 - one failing case must not end the run
            rec["error"] = f"{type(e).__name__}: {str(e)[:400]}"
            rec["traceback"] = traceback.format_exc()[-1200:]
        rec["case_wall_s"] = time.monotonic() - t_case
        self.doc["cases"].append(rec)
        self.n += 1
        if env.cuda and self.n % 20 == 0:
            torch.cuda.empty_cache()
        self.save()
        tag = " ".join(str(rec.get(k, "")) for k in ("op", "pass", "dtype", "layout"))
        if "error" in rec:
            print(f"[{self.n}] {tag} {rec.get('shape')}: ERROR {rec['error']}", file=sys.stderr)
        elif rec.get("median_s") is not None:
            bw = f" {rec['gb_s']:.0f} GB/s" if rec.get("gb_s") else ""
            tf = f" {rec['tflops']:.1f} TFLOP/s" if rec.get("tflops") else ""
            print(f"[{self.n}] {tag} {rec.get('shape')}: {rec['median_s']*1e6:.1f} us{bw}{tf} "
                  f"k={rec.get('kernel_count')} err={rec.get('check_error'):.2e}", file=sys.stderr)
        return rec


# ---------------------------------------------------------------------------------------------------------------
# cases


def gelu_tanh_hf(x):
    # GPT-2's activation as Hugging Face writes it (separate ops): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


UNARY = {
    "relu": (lambda x: torch.relu(x), lambda x: torch.relu(x), 1),
    "relu_": (lambda x: torch.relu_(x), lambda x: torch.relu(x), 1),
    "gelu": (lambda x: F.gelu(x), lambda x: F.gelu(x), 8),
    "gelu_tanh_hf": (gelu_tanh_hf, gelu_tanh_hf, 9),
    "silu": (lambda x: F.silu(x), lambda x: F.silu(x), 4),
    "tanh": (lambda x: torch.tanh(x), lambda x: torch.tanh(x), 4),
}
BINARY = {
    "add": (lambda x, y: torch.add(x, y), lambda x, y: x + y),
    "mul": (lambda x, y: torch.mul(x, y), lambda x, y: x * y),
    "add_": (lambda x, y: x.add_(y), lambda x, y: x + y),
}


def traffic_sizes(env, per_elem):
    if env.smoke:
        return [1 << 10, 1 << 12]
    return [max(1024, t // per_elem) for t in TRAFFIC]


def cases_elementwise(R):
    env = R.env
    for dt in ("fp32", "bf16"):
        e = SIZE[dt]
        dtype = DT[dt]
        for op, (f, fref, flop) in UNARY.items():
            for n in traffic_sizes(env, 2 * e):
                def check(f=f, fref=fref, n=n, dtype=dtype, dt=dt):
                    x = env.fresh((n,), dtype, 11)
                    ref = fref(x.to(torch.float64))
                    return relerr(f(x.clone()), ref), TOL[dt], None

                def setup(k, f=f, n=n, dtype=dtype):
                    x = env.view((n,), dtype)
                    if f is UNARY["relu_"][0]:
                        x = x.clone()  # in place: its own buffer
                    return (lambda: f(x),)
                R.run({"op": op, "pass": "fwd", "class": "elementwise", "dtype": dt, "layout": "contiguous",
                       "shape": [n], "numel": n, "bytes": 2 * n * e, "flops": flop * n}, setup, check, 2 * n * e,
                      set_cap=512 if op == "relu_" else 4096)
        for op, (f, fref) in BINARY.items():
            for n in traffic_sizes(env, 3 * e):
                def check(f=f, fref=fref, n=n, dtype=dtype, dt=dt):
                    x, y = env.fresh((n,), dtype, 12), env.fresh((n,), dtype, 13)
                    ref = fref(x.to(torch.float64), y.to(torch.float64))
                    return relerr(f(x.clone(), y), ref), TOL[dt], None

                def setup(k, f=f, n=n, dtype=dtype, op=op):
                    x, y = env.view((n,), dtype), env.view((n,), dtype)
                    if op == "add_":
                        x = x.clone()
                    return (lambda: f(x, y),)
                R.run({"op": op, "pass": "fwd", "class": "elementwise", "dtype": dt, "layout": "contiguous",
                       "shape": [n], "numel": n, "bytes": 3 * n * e, "flops": n}, setup, check, 3 * n * e,
                      set_cap=512 if op == "add_" else 4096)


def cases_cast(R):
    env = R.env
    for src, dst in (("fp32", "bf16"), ("fp32", "fp16"), ("bf16", "fp32"), ("fp16", "fp32")):
        per = SIZE[src] + SIZE[dst]
        for n in traffic_sizes(env, per):
            def check(src=src, dst=dst, n=n):
                x = env.fresh((n,), DT[src], 14)
                y = x.to(DT[dst])
                # the cast's own rounding: bounded by the narrower type's
                tol = TOL["bf16"] if "bf16" in (src, dst) else TOL["fp16"]
                return relerr(y, x.to(torch.float64)), tol if dst != "fp32" else 0.0, None

            def setup(k, src=src, dst=dst, n=n):
                x = env.view((n,), DT[src])
                return (lambda: x.to(DT[dst]),)
            R.run({"op": f"cast_{src}_to_{dst}", "pass": "fwd", "class": "copy/cast", "dtype": f"{src}->{dst}",
                   "layout": "contiguous", "shape": [n], "numel": n, "bytes": n * per, "flops": 0},
                  setup, check, n * per)


def cases_memset(R):
    env = R.env
    for op in ("zero_", "zeros_like"):
        for n in traffic_sizes(env, 4):
            def check(op=op, n=n):
                x = env.fresh((n,), torch.float32, 15)
                y = x.zero_() if op == "zero_" else torch.zeros_like(x)
                return float((y != 0).sum().item()), 0.0, "count of non-zero elements after the op"

            def setup(k, op=op, n=n):
                x = torch.empty(n, device=env.dev).normal_()
                return (lambda: x.zero_(),) if op == "zero_" else (lambda: torch.zeros_like(x),)
            R.run({"op": op, "pass": "fwd", "class": "memset", "dtype": "fp32", "layout": "contiguous",
                   "shape": [n], "numel": n, "bytes": 4 * n, "flops": 0}, setup, check, 4 * n, set_cap=64)


def autograd_pair(R, rec, build, ref_build, ws_fwd, ws_bwd, tol, set_cap_bwd=16, autocast=None,
                  set_cap_fwd=4096, checks=None):
    """A forward case and a backward case of one op.  build(inputs) -> output; inputs from make(seed or None).
    checks: (check_fwd, check_bwd) replacing the float64 comparison (ops whose output is random)."""
    env = R.env
    make, fn = build
    ac = autocast

    def run_fwd(inputs):
        if ac:
            with torch.autocast(env.dev, dtype=ac):
                return fn(*inputs)
        return fn(*inputs)

    def check_fwd():
        inputs = make(21)
        out = run_fwd(inputs)
        ref = ref_build([t.detach().to(torch.float64) if torch.is_floating_point(t) else t for t in inputs])
        return relerr(out, ref), tol, None

    def setup_fwd(k):
        inputs = make(None)
        return (lambda: run_fwd(inputs),)
    r_f = dict(rec, **{"pass": "fwd"})
    r_f["bytes"], r_f["flops"] = rec["bytes_fwd"], rec.get("flops_fwd", 0)
    r_f.pop("bytes_fwd"), r_f.pop("bytes_bwd"), r_f.pop("flops_fwd", None), r_f.pop("flops_bwd", None)

    def setup_fwd_grad(k):
        inputs = make(None, grad=True)
        return (lambda: run_fwd(inputs),)
    if checks:
        check_fwd = checks[0]
    R.run(r_f, setup_fwd_grad if rec.get("fwd_with_grad") else setup_fwd, check_fwd, ws_fwd, set_cap=set_cap_fwd)

    def check_bwd():
        inputs = make(22, grad=True)
        out = run_fwd(inputs)
        g = env.fresh(out.shape, out.dtype, 23)
        diff = [t for t in inputs if t.requires_grad]
        got = torch.autograd.grad(out, diff, g)
        ins64 = [t.detach().to(torch.float64).requires_grad_(t.requires_grad) if torch.is_floating_point(t) else t
                 for t in inputs]
        ref_out = ref_build(ins64)
        d64 = [t for t in ins64 if torch.is_floating_point(t) and t.requires_grad]
        ref = torch.autograd.grad(ref_out, d64, g.to(torch.float64))
        errs = [relerr(a, b) for a, b in zip(got, ref)]
        return max(errs), tol, "max over the input gradients"

    def setup_bwd(k):
        inputs = make(None, grad=True)
        out = run_fwd(inputs)
        g = env.view(out.shape, out.dtype) if out.is_contiguous() else torch.randn_like(out)
        diff = [t for t in inputs if t.requires_grad]
        return (lambda: torch.autograd.grad(out, diff, g, retain_graph=True),)
    r_b = dict(rec, **{"pass": "bwd"})
    r_b["bytes"], r_b["flops"] = rec["bytes_bwd"], rec.get("flops_bwd", 0)
    r_b.pop("bytes_fwd"), r_b.pop("bytes_bwd"), r_b.pop("flops_fwd", None), r_b.pop("flops_bwd", None)
    R.run(r_b, setup_bwd, checks[1] if checks else check_bwd, ws_bwd, set_cap=set_cap_bwd)


def precisions(env, amp_ok=True):
    """(name, storage dtype of activations, autocast dtype or None)."""
    out = [("fp32", torch.float32, None)]
    if amp_ok:
        out.append(("amp-bf16", torch.bfloat16, torch.bfloat16))
        if env.cuda:
            out.append(("amp-fp16", torch.float16, torch.float16))
    return out


def cases_batchnorm(R):
    env = R.env
    shapes = [(n, 64, 56, 56) for n in ((1, 4, 16, 64, 256) if not env.smoke else (2,))]
    shapes += [(256, 256, 14, 14), (256, 2048, 7, 7)] if not env.smoke else []
    for prec, adt, ac in precisions(env):
        for layout in ("nchw", "nhwc"):
            mf = torch.channels_last if layout == "nhwc" else torch.contiguous_format
            for shp in shapes:
                N, C, H, W = shp
                n = N * C * H * W
                e = torch.tensor([], dtype=adt).element_size()
                tol = TOL["fp32"] * 10 if ac is None else TOL["bf16" if adt == torch.bfloat16 else "fp16"]

                def make(seed, grad=False, shp=shp, adt=adt, mf=mf, C=C):
                    x = env.leaf(shp, adt, seed, False).contiguous(memory_format=mf)
                    if grad:
                        x = x.detach().clone(memory_format=mf).requires_grad_(True)
                    w = (env.fresh((C,), torch.float32, 31).abs() + 0.5).requires_grad_(grad)
                    b = env.fresh((C,), torch.float32, 32).requires_grad_(grad)
                    rm = torch.zeros(C, device=env.dev)
                    rv = torch.ones(C, device=env.dev)
                    return [x, w, b, rm, rv]

                def fn(x, w, b, rm, rv):
                    return F.batch_norm(x, rm, rv, w, b, training=True, momentum=0.1, eps=1e-5)

                def ref(ins):
                    x, w, b = ins[0], ins[1], ins[2]
                    m = x.mean(dim=(0, 2, 3), keepdim=True)
                    v = x.var(dim=(0, 2, 3), unbiased=False, keepdim=True)
                    return (x - m) / torch.sqrt(v + 1e-5) * w.view(1, -1, 1, 1) + b.view(1, -1, 1, 1)

                backend = None
                try:
                    ins = make(None)
                    backend = str(torch._C._select_batch_norm_backend(ins[0], ins[1], ins[2], ins[3], ins[4],
                                                                      True, 1e-5)).split(".")[-1]
                except Exception:  # noqa: BLE001 - older torch
                    pass
                rec = {"op": "batch_norm_train", "class": "normalization", "dtype": prec, "layout": layout,
                       "shape": list(shp), "numel": n, "bytes_fwd": 2 * n * e, "bytes_bwd": 3 * n * e,
                       "flops_fwd": 8 * n, "flops_bwd": 12 * n, "bn_backend": backend}
                autograd_pair(R, rec, (make, fn), ref, 2 * n * e, 3 * n * e, tol, autocast=ac)


def cases_batchnorm_infer(R):
    """Batch norm in eval mode (running statistics), forward only, as inference steps run it: FP32 NCHW (the fp32
    and tf32 runs; cuDNN), bf16 channels-last under autocast (PyTorch's native kernels: bf16 input) and fp16
    channels-last (cuDNN).  Bytes: the input read and the output written once (the per-channel vectors are
    negligible).  The backend PyTorch selects is recorded."""
    env = R.env
    shapes = [(n, 64, 56, 56) for n in ((1, 4, 16, 64, 256) if not env.smoke else (2,))]
    shapes += [(256, 256, 14, 14), (256, 2048, 7, 7)] if not env.smoke else []
    for prec, adt, ac, layout in [("fp32", torch.float32, None, "nchw"), ("amp-bf16", torch.bfloat16, torch.bfloat16, "nhwc"),
                                  ("amp-fp16", torch.float16, torch.float16, "nhwc")]:
        if ac is not None and not env.cuda:
            continue
        mf = torch.channels_last if layout == "nhwc" else torch.contiguous_format
        e = torch.tensor([], dtype=adt).element_size()
        tol = TOL["fp32"] * 10 if ac is None else TOL["bf16" if adt == torch.bfloat16 else "fp16"]
        for shp in shapes:
            N, C, H, W = shp
            n = N * C * H * W

            def stats(C=C):
                w = env.fresh((C,), torch.float32, 31).abs() + 0.5
                b = env.fresh((C,), torch.float32, 32)
                rm = env.fresh((C,), torch.float32, 33)
                rv = env.fresh((C,), torch.float32, 34).abs() + 0.5
                return w, b, rm, rv

            def run(x, w, b, rm, rv, ac=ac):
                if ac is None:
                    return F.batch_norm(x, rm, rv, w, b, training=False, eps=1e-5)
                with torch.autocast(env.dev, dtype=ac):
                    return F.batch_norm(x, rm, rv, w, b, training=False, eps=1e-5)

            def check(shp=shp, adt=adt, mf=mf, tol=tol):
                x = env.fresh(shp, adt, 35).contiguous(memory_format=mf)
                w, b, rm, rv = stats()
                shape = (1, -1, 1, 1)
                x64 = x.to(torch.float64)
                ref = (x64 - rm.view(shape).double()) / torch.sqrt(rv.view(shape).double() + 1e-5) * \
                    w.view(shape).double() + b.view(shape).double()
                return relerr(run(x, w, b, rm, rv), ref), tol, None

            def setup(k, shp=shp, adt=adt, mf=mf):
                x = env.leaf(shp, adt, None, False).contiguous(memory_format=mf)
                w, b, rm, rv = stats()
                return (lambda: run(x, w, b, rm, rv),)
            backend = None
            try:
                x0 = torch.empty(shp, dtype=adt, device=env.dev).contiguous(memory_format=mf)
                w0, b0, rm0, rv0 = stats()
                backend = str(torch._C._select_batch_norm_backend(x0, w0, b0, rm0, rv0, False, 1e-5)).split(".")[-1]
            except Exception:  # noqa: BLE001 - older torch
                pass
            R.run({"op": "batch_norm_infer", "pass": "fwd", "class": "normalization", "dtype": prec, "layout": layout,
                   "shape": list(shp), "numel": n, "bytes": 2 * n * e, "flops": 2 * n, "bn_backend": backend},
                  setup, check, 2 * n * e)


def cases_layernorm(R):
    env = R.env
    toks = (128, 1024, 4096, 16384, 65536) if not env.smoke else (64,)
    D = 768
    for prec, adt, ac in [("fp32", torch.float32, None), ("bf16", torch.bfloat16, None),
                          ("amp-bf16", torch.bfloat16, torch.bfloat16)]:
        e_in = torch.tensor([], dtype=adt).element_size()
        e_out = 4 if ac else e_in
        for T in toks:
            n = T * D

            def make(seed, grad=False, T=T, adt=adt):
                x = env.leaf((T, D), adt, seed, grad)
                w = (env.fresh((D,), torch.float32 if adt == torch.float32 or ac else adt, 33).abs() + 0.5)
                b = env.fresh((D,), w.dtype, 34)
                return [x, w.requires_grad_(grad), b.requires_grad_(grad)]

            def fn(x, w, b):
                return F.layer_norm(x, (D,), w, b, 1e-5)

            def ref(ins):
                return F.layer_norm(ins[0], (D,), ins[1], ins[2], 1e-5)
            tol = TOL["fp32"] * 10 if prec == "fp32" else TOL["bf16"]
            rec = {"op": "layer_norm", "class": "normalization", "dtype": prec, "layout": "contiguous",
                   "shape": [T, D], "numel": n, "bytes_fwd": n * (e_in + e_out), "bytes_bwd": n * (e_in + e_out + e_in),
                   "flops_fwd": 8 * n, "flops_bwd": 12 * n}
            autograd_pair(R, rec, (make, fn), ref, n * (e_in + e_out), n * (2 * e_in + e_out), tol, autocast=ac)


def cases_softmax(R):
    env = R.env
    shapes = [(b * 12, 128, 128) for b in (1, 4, 16, 64, 256)] + [(96, 1024, 1024), (8, 1024, 1024)]
    if env.smoke:
        shapes = [(2, 16, 16)]
    for prec, adt, ac in [("fp32", torch.float32, None), ("bf16", torch.bfloat16, None),
                          ("amp-bf16", torch.bfloat16, torch.bfloat16)]:
        e_in = torch.tensor([], dtype=adt).element_size()
        e_out = 4 if ac else e_in
        for shp in shapes:
            n = math.prod(shp)

            def make(seed, grad=False, shp=shp, adt=adt):
                return [env.leaf(shp, adt, seed, grad)]

            def fn(x):
                return torch.softmax(x, dim=-1)

            def ref(ins):
                return torch.softmax(ins[0], dim=-1)
            tol = TOL["fp32"] if prec == "fp32" else TOL["bf16"]
            rec = {"op": "softmax", "class": "softmax", "dtype": prec, "layout": "contiguous", "shape": list(shp),
                   "numel": n, "bytes_fwd": n * (e_in + e_out), "bytes_bwd": n * (2 * e_out + e_in),
                   "flops_fwd": 5 * n, "flops_bwd": 4 * n}
            autograd_pair(R, rec, (make, fn), ref, n * (e_in + e_out), n * (2 * e_out + e_in), tol, autocast=ac)


def cases_dropout(R):
    env = R.env
    p = 0.1
    for dt in ("fp32", "bf16"):
        e = SIZE[dt]
        sizes = traffic_sizes(env, 2 * e + 1)[::2] + ([traffic_sizes(env, 2 * e + 1)[-1]] if not env.smoke else [])
        for n in sorted(set(sizes)):
            def check(n=n, dt=dt):
                x = env.fresh((n,), DT[dt], 41)
                y = F.dropout(x, p, training=True)
                kept = y != 0
                frac = 1 - kept.float().mean().item()
                scaled = (y[kept].double() - (x[kept].double() / (1 - p))).abs().max().item() if kept.any() else 0
                # statistic: the dropped fraction within 5 sigma of p (or within 0.05 for tiny n); kept values = x/(1-p)
                sig = max(5 * math.sqrt(p * (1 - p) / n), 0.0 if n > 10000 else 0.05)
                ok_scale = scaled <= (1e-6 if dt == "fp32" else 2e-2) * max(1.0, x.abs().max().item() / (1 - p))
                err = abs(frac - p) / max(sig, 1e-12) if ok_scale else math.inf
                return err, 1.0, f"dropped fraction {frac:.5f} (p={p}); error in units of the allowed deviation"

            def setup_f(k, n=n, dt=dt):
                x = env.view((n,), DT[dt])
                return (lambda: F.dropout(x, p, training=True),)
            R.run({"op": "dropout", "pass": "fwd", "class": "elementwise", "dtype": dt, "layout": "contiguous",
                   "shape": [n], "numel": n, "bytes": n * (2 * e + 1), "flops": 2 * n, "p": p},
                  setup_f, check, n * (2 * e + 1))

            def check_b(n=n, dt=dt):
                x = env.fresh((n,), DT[dt], 42).requires_grad_(True)
                y = F.dropout(x, p, training=True)
                g = env.fresh((n,), DT[dt], 43)
                (gx,) = torch.autograd.grad(y, (x,), g)
                ref = torch.where(y != 0, g.double() / (1 - p), torch.zeros((), dtype=torch.float64,
                                                                             device=env.dev))
                return relerr(gx, ref), TOL[dt], None

            def setup_b(k, n=n, dt=dt):
                x = env.view((n,), DT[dt]).clone().requires_grad_(True)
                y = F.dropout(x, p, training=True)
                g = env.view((n,), DT[dt])
                return (lambda: torch.autograd.grad(y, (x,), g, retain_graph=True),)
            R.run({"op": "dropout", "pass": "bwd", "class": "elementwise", "dtype": dt, "layout": "contiguous",
                   "shape": [n], "numel": n, "bytes": n * (2 * e + 1), "flops": n, "p": p},
                  setup_b, check_b, n * (2 * e + 1), set_cap=16)


def cases_embedding(R):
    env = R.env
    D = 768
    combos = [(30522, 512), (30522, 8192), (30522, 32768), (50257, 8192), (512, 8192)]
    if env.smoke:
        combos = [(100, 64)]
        D = 32
    for V, T in combos:
        def make(seed, grad=False, V=V, T=T):
            w = env.leaf((V, D), torch.float32, seed, grad)
            g = torch.Generator(device=env.dev).manual_seed(52 if seed is None else seed)
            idx = torch.randint(0, V, (T,), device=env.dev, generator=g)
            return [idx, w]

        def fn(idx, w):
            return F.embedding(idx, w)

        def ref(ins):
            return F.embedding(ins[0], ins[1])
        rec = {"op": "embedding", "class": "gather", "dtype": "fp32", "layout": "contiguous", "shape": [T, V, D],
               "vocab": V, "tokens": T, "numel": T * D,
               "bytes_fwd": T * 8 + 2 * T * D * 4, "bytes_bwd": T * 8 + T * D * 4 + V * D * 4,
               "flops_fwd": 0, "flops_bwd": T * D}
        autograd_pair(R, rec, (make, fn), ref, T * 8 + 2 * T * D * 4, T * D * 4 + V * D * 4, TOL["fp32"],
                      set_cap_bwd=4, set_cap_fwd=16)


def cases_cross_entropy(R):
    env = R.env
    combos = [(256, 1000), (4096, 1000), (2048, 30522), (8192, 30522), (8192, 50257)]
    if env.smoke:
        combos = [(16, 100)]
    for prec, adt, ac in [("fp32", torch.float32, None), ("amp-bf16", torch.bfloat16, torch.bfloat16)]:
        e = torch.tensor([], dtype=adt).element_size()
        for N, C in combos:
            def make(seed, grad=False, N=N, C=C, adt=adt):
                x = env.leaf((N, C), adt, seed, grad)
                g = torch.Generator(device=env.dev).manual_seed(61)
                y = torch.randint(0, C, (N,), device=env.dev, generator=g)
                return [x, y]

            def fn(x, y):
                return F.cross_entropy(x, y)

            def ref(ins):
                return F.cross_entropy(ins[0], ins[1])
            tol = TOL["fp32"] if prec == "fp32" else TOL["bf16"]
            rec = {"op": "cross_entropy", "class": "loss", "dtype": prec, "layout": "contiguous", "shape": [N, C],
                   "numel": N * C, "bytes_fwd": N * C * e + N * 8, "bytes_bwd": 2 * N * C * e + N * 8,
                   "flops_fwd": 4 * N * C, "flops_bwd": 3 * N * C}
            autograd_pair(R, rec, (make, fn), ref, N * C * e, 2 * N * C * e, tol, set_cap_bwd=8, autocast=ac)


def param_sizes(total, count):
    """`count` tensor sizes adding up to `total`: a few large matrices and many small vectors, as in real nets."""
    big = max(1, count // 3)
    small = count - big
    small_each = max(1, min(4096, total // (100 * max(small, 1))))
    rest = total - small * small_each
    sizes = [rest // big] * big
    sizes[0] += rest - sum(sizes)
    return sizes + [small_each] * small


def cases_optimizer(R):
    env = R.env
    combos = [(1_000_000, 10), (1_000_000, 100), (10_000_000, 50), (25_557_032, 161), (110_000_000, 201),
              (110_000_000, 20)]
    if env.smoke:
        combos = [(20_000, 6)]
    variants = [("sgd", "foreach"), ("sgd", "fused"), ("adamw", "foreach"), ("adamw", "fused")]
    lr, mom, b1, b2, eps, wd = 0.01, 0.9, 0.9, 0.999, 1e-8, 0.01
    for total, count in combos:
        sizes = param_sizes(total, count)
        for kind, impl in variants:
            if impl == "fused" and not env.cuda:
                continue

            def make_opt(params, kind=kind, impl=impl):
                kw = {"foreach": True} if impl == "foreach" else {"fused": True}
                if kind == "sgd":
                    return torch.optim.SGD(params, lr=lr, momentum=mom, **kw)
                return torch.optim.AdamW(params, lr=lr, betas=(b1, b2), eps=eps, weight_decay=wd, **kw)

            def check(sizes=sizes, kind=kind, make_opt=make_opt):
                ps = [env.fresh((s,), torch.float32, 70 + i).requires_grad_(True) for i, s in enumerate(sizes[:8])]
                gs = [env.fresh((s,), torch.float32, 90 + i) for i, s in enumerate(sizes[:8])]
                p0 = [p.detach().double().clone() for p in ps]
                opt = make_opt(ps)
                for _ in range(2):
                    for p, g in zip(ps, gs):
                        p.grad = g.clone()
                    opt.step()
                errs = []
                for p, q, g in zip(ps, p0, gs):
                    g = g.double()
                    if kind == "sgd":
                        ref = q - lr * g - lr * (mom * g + g)
                    else:
                        m = torch.zeros_like(g)
                        v = torch.zeros_like(g)
                        ref = q.clone()
                        for t in (1, 2):
                            ref = ref * (1 - lr * wd)
                            m = b1 * m + (1 - b1) * g
                            v = b2 * v + (1 - b2) * g * g
                            ref = ref - lr * (m / (1 - b1 ** t)) / ((v / (1 - b2 ** t)).sqrt() + eps)
                    errs.append(relerr(p - q.float(), ref - q))  # error of the update itself
                return max(errs), 1e-4, "relative error of the 2-step update (p - p0) vs float64, first 8 tensors"

            def setup(k, sizes=sizes, make_opt=make_opt):
                ps = [torch.nn.Parameter(env.view((s,), torch.float32).clone()) for s in sizes]
                for p in ps:
                    p.grad = env.view(p.shape, torch.float32).clone() * 1e-3
                opt = make_opt(ps)
                opt.step()  # creates the state
                return (lambda: opt.step(),)
            per = 20 if kind == "sgd" else 28
            R.run({"op": f"{kind}_step", "pass": "step", "class": "optimizer", "dtype": "fp32", "layout": impl,
                   "shape": [total, count], "params": total, "tensors": count, "numel": total,
                   "bytes": per * total, "flops": (3 if kind == "sgd" else 12) * total},
                  setup, check, per * total, set_cap=8)


GEMM_PAIRS = [  # (label, M, K, N) misaligned first, aligned neighbour second
    ("vocab30522", (8192, 768, 30522), (8192, 768, 30528)),
    ("vocab50257", (8192, 768, 50257), (8192, 768, 50264)),
    ("hidden769_in", (8192, 769, 3072), (8192, 768, 3072)),
    ("hidden769_out", (8192, 3072, 769), (8192, 3072, 768)),
    ("classes1000", (256, 2048, 1000), (256, 2048, 1024)),
]


def cases_gemm(R):
    env = R.env
    pairs = GEMM_PAIRS if not env.smoke else [("tiny", (64, 33, 65), (64, 32, 64))]
    for dt in ("bf16", "fp16", "tf32", "fp32"):
        if not env.cuda and dt == "fp16":
            continue
        e = SIZE[dt]
        dtype = DT[dt]
        for label, mis, ali in pairs:
            for which, (M, K, N) in (("misaligned", mis), ("aligned", ali)):
                # pass shapes as autograd runs a Linear(K -> N) on M rows: fwd y = x W^T; dgrad dx = dy W;
                # wgrad dW = dy^T x
                for gpass in ("fwd", "dgrad", "wgrad"):
                    if gpass == "fwd":
                        a_shape, b_shape, mm = (M, K), (N, K), (M, N, K)

                        def op(a, b):
                            return F.linear(a, b)

                        def opref(a, b):
                            return a @ b.t()
                    elif gpass == "dgrad":
                        a_shape, b_shape, mm = (M, N), (N, K), (M, K, N)

                        def op(a, b):
                            return torch.mm(a, b)
                        opref = op
                    else:
                        a_shape, b_shape, mm = (M, N), (M, K), (N, K, M)

                        def op(a, b):
                            return torch.mm(a.t(), b)
                        opref = op
                    gm, gn, gk = mm
                    flops = 2 * gm * gn * gk
                    byts = (gm * gk + gk * gn + gm * gn) * e

                    def run_op(a, b, op=op, dt=dt):
                        prev = torch.get_float32_matmul_precision()
                        torch.set_float32_matmul_precision("high" if dt == "tf32" else "highest")
                        try:
                            return op(a, b)
                        finally:
                            torch.set_float32_matmul_precision(prev)

                    def check(a_shape=a_shape, b_shape=b_shape, dtype=dtype, run_op=run_op, opref=opref, dt=dt):
                        a, b = env.fresh(a_shape, dtype, 81), env.fresh(b_shape, dtype, 82)
                        out = run_op(a, b)
                        ref = opref(a.double(), b.double())
                        return relerr(out, ref), TOL[dt], None

                    def setup(k, a_shape=a_shape, b_shape=b_shape, dtype=dtype, run_op=run_op):
                        a, b = env.view(a_shape, dtype), env.view(b_shape, dtype)
                        return (lambda: run_op(a, b),)
                    R.run({"op": "gemm", "pass": gpass, "class": "gemm", "dtype": dt, "layout": which,
                           "pair": label, "shape": [gm, gn, gk], "linear_mkn": [M, K, N],
                           "bytes": byts, "flops": flops}, setup, check, byts, set_cap=64)


def cases_sdpa(R, dropout=False):
    """Fused attention (F.scaled_dot_product_attention), forward and backward; with `dropout`, only the cases that
    drop probabilities (group sdpa_dropout)."""
    env = R.env
    if not hasattr(F, "scaled_dot_product_attention"):
        return
    H, d = 12, 64
    combos = [(64, 128), (8, 1024), (21, 384)]
    if env.smoke:
        combos, H, d = [(2, 16)], 2, 8
    for dt in ("bf16", "fp16", "fp32"):
        if dt == "fp16" and not env.cuda:
            continue
        e = SIZE[dt]
        for B, T in combos:
            if dt != "bf16" and T == 128 and not env.smoke:
                continue
            for mask in ("none", "causal", "additive"):
                def make(seed, grad=False, B=B, T=T, dt=dt, mask=mask):
                    ins = [env.leaf((B, H, T, d), DT[dt], None if seed is None else seed + i, grad)
                           for i in range(3)]
                    if mask == "additive":  # HF-style padding mask: (B, 1, 1, T), 0 where attended
                        m = torch.zeros(B, 1, 1, T, device=env.dev, dtype=DT[dt])
                        m[:, :, :, -max(1, T // 8):] = torch.finfo(DT[dt]).min
                        ins.append(m)
                    return ins

                def fn(q, k, v, m=None, mask=mask):
                    return F.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=(mask == "causal"))

                def ref(ins, mask=mask, T=T):
                    q, k, v = ins[:3]
                    s = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
                    if mask == "causal":
                        s = s.masked_fill(torch.ones(T, T, dtype=torch.bool, device=s.device).triu(1), -math.inf)
                    elif mask == "additive":
                        s = s + ins[3].to(s.dtype)
                    return torch.softmax(s, -1) @ v
                n_qkv = B * H * T * d
                fl = 4 * B * H * T * T * d // (2 if mask == "causal" else 1)
                rec = {"op": "sdpa", "class": "attention", "dtype": dt, "layout": f"mask={mask}",
                       "shape": [B, H, T, d], "numel": n_qkv, "bytes_fwd": 4 * n_qkv * e,
                       "bytes_bwd": 8 * n_qkv * e, "flops_fwd": fl, "flops_bwd": int(2.5 * fl), "fwd_with_grad": True}
                tol = TOL[dt] if dt != "fp32" else 1e-4
                if not dropout:
                    autograd_pair(R, rec, (make, fn), ref, 4 * n_qkv * e, 8 * n_qkv * e, tol, set_cap_bwd=4)
                if not dropout or mask == "additive":
                    continue
                # The same with dropout on the probabilities (what training runs: BERT's and GPT-2's 0.1).  The
                # output is random, so the check is that dropout happened and is unbiased: one call differs from
                # the call without dropout, and the mean of 16 calls is at least 2.5x closer to it (1/sqrt(16) = 4x
                # for independent masks).
                P = 0.1

                def fn_drop(q, k, v, mask=mask):
                    return F.scaled_dot_product_attention(q, k, v, dropout_p=P, is_causal=(mask == "causal"))

                def unbiased(grad, make=make, fn=fn, fn_drop=fn_drop):
                    def check():
                        ins = make(31, grad=grad)
                        g = env.fresh(tuple(ins[0].shape), ins[0].dtype, 32) if grad else None

                        def result(f):
                            out = f(*ins[:3])
                            if not grad:
                                return [out.float()]
                            return [x.float() for x in torch.autograd.grad(out, ins[:3], g)]
                        plain = result(fn)
                        one = result(fn_drop)
                        runs = [result(fn_drop) for _ in range(16)]
                        mean = [torch.stack([r[i] for r in runs]).mean(0) for i in range(len(plain))]
                        e1 = max(relerr(a, b) for a, b in zip(one, plain))
                        e16 = max(relerr(a, b) for a, b in zip(mean, plain))
                        ok = 0 < e1 < 1 and e16 < e1 / 2.5
                        return (0.0 if ok else math.inf), 1e-9, f"dropout {P}: one call {e1:.3g} from no dropout, mean of 16 {e16:.3g}"
                    return check
                drec = dict(rec, layout=f"mask={mask},dropout={P}")
                autograd_pair(R, drec, (make, fn_drop), None, 4 * n_qkv * e, 8 * n_qkv * e, 0, set_cap_bwd=4,
                              checks=(unbiased(False), unbiased(True)))


# ---------------------------------------------------------------------------------------------------------------
# host dispatch cost and the small-kernel floor


def wall_per_iter(env, body, iters, warm=50):
    for _ in range(warm):
        body()
    env.sync()
    a = torch.cuda.Event(enable_timing=True) if env.cuda else None
    b = torch.cuda.Event(enable_timing=True) if env.cuda else None
    if a:
        a.record()
    t = time.perf_counter()
    for _ in range(iters):
        body()
    host = time.perf_counter() - t
    if b:
        b.record()
    env.sync()
    total = time.perf_counter() - t
    gpu = a.elapsed_time(b) / 1e3 if a else None
    return host / iters, total / iters, (gpu / iters if gpu else None)


def host_recorder(R, out, iters):
    """rec(name, body, ...): one host case timed (issue and wall time per op, kernels per op) into `out`, which is
    the report's "host" list."""
    env = R.env

    def rec(name, body, ops_per_iter=1, note="", iters=iters, kernels=True):
        if env.left() < 0:
            out.append({"case": name, "skipped": "deadline"})
            return
        try:
            host, wall, gpu = wall_per_iter(env, body, iters)
            r = {"case": name, "ops_per_iter": ops_per_iter, "iters": iters,
                 "host_us_per_op": host / ops_per_iter * 1e6, "wall_us_per_op": wall / ops_per_iter * 1e6,
                 "gpu_span_us_per_op": gpu / ops_per_iter * 1e6 if gpu else None, "note": note}
            if kernels:
                ev = rc.profile_device(body, calls=3, sync=env.sync)
                s = rc.summarize_kernels(ev, calls=3)
                r["kernels_per_op"] = s["count"] / ops_per_iter
                r["kernel_names"] = sorted({k["name"][:160] for k in s["kernels"]})[:12]
                r["gpu_busy_us_per_op"] = s["busy_us"] / ops_per_iter
            out.append(r)
            print(f"host {name}: {r['host_us_per_op']:.2f} us/op issue, {r['wall_us_per_op']:.2f} us/op wall, "
                  f"kernels/op {r.get('kernels_per_op')}", file=sys.stderr)
        except Exception as e:  # noqa: BLE001
            out.append({"case": name, "error": f"{type(e).__name__}: {e}"[:400]})
            print(f"host {name}: ERROR {e}", file=sys.stderr)
        R.doc["host"] = out
        R.save()

    return rec


def host_cases(R):
    env = R.env
    dev = env.dev
    iters = 20000 if env.cuda else 300
    out = R.doc.setdefault("host", [])
    rec = host_recorder(R, out, iters)

    x = torch.randn(1024, device=dev)
    y = torch.randn(1024, device=dev)
    a64 = torch.randn(64, 64, device=dev)
    lin = torch.nn.Linear(64, 64).to(dev)
    xin = torch.randn(8, 64, device=dev)
    conv = torch.nn.Conv2d(8, 8, 3, padding=1).to(dev)
    cin = torch.randn(1, 8, 16, 16, device=dev)
    with torch.no_grad():
        rec("add (no_grad)", lambda: torch.add(x, y))
        rec("add_ in place (no_grad)", lambda: x.add_(y, alpha=1e-9))
        rec("relu (no_grad)", lambda: torch.relu(x))
        rec("view (no kernel)", lambda: x.view(32, 32), kernels=False)
        rec("mm 64x64 (no_grad)", lambda: a64 @ a64)
        rec("nn.Linear(64,64) call (no_grad)", lambda: lin(xin))
        rec("nn.Conv2d(8,8,3) call (no_grad)", lambda: conv(cin), iters=iters // 2)
    rec("add (grad mode, inputs without requires_grad)", lambda: torch.add(x, y))
    xg = torch.randn(1024, device=dev, requires_grad=True)
    rec("add, requires_grad (forward only, graph recorded)", lambda: torch.add(xg, y))
    rec("relu, requires_grad (forward only)", lambda: torch.relu(xg))
    rec("nn.Linear(64,64) call, requires_grad (forward only)", lambda: lin(xin))
    rec("nn.Conv2d(8,8,3) call, requires_grad (forward only)", lambda: conv(cin), iters=iters // 2)

    chain = 100

    def fb_add():
        h = xg
        for _ in range(chain):
            h = h + y
        h.sum().backward()
    rec(f"add forward+backward (chain of {chain}, one backward)", fb_add, ops_per_iter=chain, iters=iters // chain)

    def fb_relu():
        h = xg
        for _ in range(chain):
            h = torch.relu(h)
        h.sum().backward()
    rec(f"relu forward+backward (chain of {chain})", fb_relu, ops_per_iter=chain, iters=iters // chain)
    lins = torch.nn.Sequential(*[torch.nn.Linear(64, 64) for _ in range(chain)]).to(dev)

    def fb_lin():
        lins(xin).sum().backward()
    rec(f"nn.Linear(64,64) forward+backward (Sequential of {chain})", fb_lin, ops_per_iter=chain,
        iters=max(20, iters // chain))
    convs = torch.nn.Sequential(*[torch.nn.Conv2d(8, 8, 3, padding=1) for _ in range(chain // 2)]).to(dev)

    def fb_conv():
        convs(cin).sum().backward()
    rec(f"nn.Conv2d(8,8,3) forward+backward (Sequential of {chain // 2})", fb_conv, ops_per_iter=chain // 2,
        iters=max(20, iters // chain))
    ac_dt = torch.bfloat16
    try:
        with torch.no_grad(), torch.autocast(dev, dtype=ac_dt):
            rec("add under autocast bf16 (no_grad)", lambda: torch.add(x, y))
            rec("nn.Linear(64,64) under autocast bf16 (no_grad; casts weight, bias, input)", lambda: lin(xin))
            rec("nn.Conv2d(8,8,3) under autocast bf16 (no_grad)", lambda: conv(cin), iters=iters // 2)

        def fb_lin_ac():
            with torch.autocast(dev, dtype=ac_dt):
                out = lins(xin).float().sum()
            out.backward()
        rec(f"nn.Linear(64,64) forward+backward under autocast bf16 (Sequential of {chain})", fb_lin_ac,
            ops_per_iter=chain, iters=max(20, iters // chain))
    except Exception as e:  # noqa: BLE001
        out.append({"case": "autocast", "error": str(e)[:300]})

    # optimizer step: per-tensor host cost (tiny tensors, so the GPU is never the bottleneck)
    for kind in ("sgd", "adamw"):
        for impl in ("foreach", "fused", "for-loop"):
            if impl == "fused" and not env.cuda:
                continue
            for n in (16, 64, 256):
                ps = [torch.nn.Parameter(torch.randn(256, device=dev)) for _ in range(n)]
                for p in ps:
                    p.grad = torch.randn_like(p) * 1e-3
                kw = {"foreach": True} if impl == "foreach" else ({"fused": True} if impl == "fused"
                                                                  else {"foreach": False})
                opt = (torch.optim.SGD(ps, lr=0.01, momentum=0.9, **kw) if kind == "sgd"
                       else torch.optim.AdamW(ps, lr=1e-3, **kw))
                rec(f"{kind} step ({impl}), {n} tensors of 256", opt.step, ops_per_iter=1,
                    iters=max(20, iters // (10 * max(1, n // 16))))
                out[-1].update({"optimizer": kind, "impl": impl, "tensors": n})

    # CUDA graph: one replay of 100 captured tiny adds (host cost per graph launch; GPU cost per kernel in a graph)
    if env.cuda:
        try:
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            z = torch.zeros_like(x)
            with torch.cuda.stream(s):
                for _ in range(3):
                    z.add_(x, alpha=1e-9)
            torch.cuda.current_stream().wait_stream(s)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                for _ in range(100):
                    z.add_(x, alpha=1e-9)
            rec("CUDA graph replay of 100 tiny adds (per replay)", g.replay, ops_per_iter=1, iters=2000,
                kernels=False)
            out[-1]["kernels_per_replay"] = 100
        except Exception as e:  # noqa: BLE001
            out.append({"case": "cuda graph", "error": str(e)[:300]})
    R.doc["host"] = out
    R.save(force=True)


def interleaved_host(env, bodies, iters, rounds=7):
    """Host time per call of each body, measured in alternating rounds (A B C A B C ...) so that the host's drift
    during the run (other tenants of a virtual machine, clock changes) lands on every body alike; the median over
    the rounds.  Differences between bodies are what the autocast and compiled cases report."""
    per = {name: [] for name in bodies}
    for _ in range(rounds):
        for name, body in bodies.items():
            host, _, _ = wall_per_iter(env, body, iters, warm=20)
            per[name].append(host)
    return {name: statistics.median(v) for name, v in per.items()}, per


def autocast_host_cases(R):
    """What autocast adds to the host's cost of an operator (issue 14, host timeline).  An eager step enters
    autocast once per step and leaves it after the forward, so the cast cache lives one step: every weight is cast
    once per step, as here where the region is entered around each call.  Each pair differs only in autocast:
      conv:   nn.Conv2d(8, 8, 3, bias=False) on a BF16 input under autocast (casts the weight) vs on an FP32 input;
      linear: nn.Linear(64, 64) on an FP32 input under autocast (casts input, weight and bias) vs without;
    plus the region's own cost (entering and leaving an empty autocast region) and a bare Tensor.to(bf16).
    Interleaved rounds (interleaved_host), no_grad and grad mode (forward only)."""
    env = R.env
    if not env.cuda:
        return
    dev, dt = env.dev, torch.bfloat16
    iters = 3000
    conv = torch.nn.Conv2d(8, 8, 3, padding=1, bias=False).to(dev)
    lin = torch.nn.Linear(64, 64).to(dev)
    c32 = torch.randn(1, 8, 16, 16, device=dev)
    c16 = c32.to(dt)
    l32 = torch.randn(8, 64, device=dev)
    small = torch.randn(64, 64, device=dev)

    def region():
        with torch.autocast(dev, dtype=dt):
            pass

    def conv_ac():
        with torch.autocast(dev, dtype=dt):
            conv(c16)

    def lin_ac():
        with torch.autocast(dev, dtype=dt):
            lin(l32)

    out = []
    for mode in ("no_grad", "grad"):
        ctx = torch.no_grad() if mode == "no_grad" else torch.enable_grad()
        with ctx:
            bodies = {"autocast region (enter, exit)": region, "Tensor.to(bf16) of 64x64": lambda: small.to(dt),
                      "conv fp32": lambda: conv(c32), "conv under autocast (weight cast)": conv_ac,
                      "linear fp32": lambda: lin(l32), "linear under autocast (input, weight, bias casts)": lin_ac}
            med, per = interleaved_host(env, bodies, iters)
            kernels = {}
            for name, body in bodies.items():
                ev = rc.profile_device(body, calls=3, sync=env.sync)
                kernels[name] = rc.summarize_kernels(ev, calls=3)["count"]
        for name in bodies:
            out.append({"case": f"{name} ({mode})", "mode": mode, "host_us_per_op": med[name] * 1e6,
                        "host_us_rounds": [x * 1e6 for x in per[name]], "kernels_per_op": kernels[name],
                        "iters": iters})
        d = {"conv": med["conv under autocast (weight cast)"] - med["autocast region (enter, exit)"] - med["conv fp32"],
             "linear": (med["linear under autocast (input, weight, bias casts)"] - med["autocast region (enter, exit)"]
                        - med["linear fp32"])}
        print(f"autocast ({mode}): region {med['autocast region (enter, exit)'] * 1e6:.2f} us, added to a conv "
              f"{d['conv'] * 1e6:.2f} us, to a linear {d['linear'] * 1e6:.2f} us", file=sys.stderr)
    R.doc["autocast_host"] = out
    R.save(force=True)


def compiled_host_cases(R):
    """The host's cost of a torch.compile'd module without CUDA graphs (mode "default": Inductor's generated
    wrapper launches each kernel from Python) and with them (mode "reduce-overhead": cudagraph trees replay the
    recorded graph after the guards and the tree's own checks; inference only).  Chains of n blocks (Linear(64, 64) then GELU: one cuBLAS GEMM with
    the bias in its epilogue and one Triton kernel per block) at two lengths, so that the cost per call (guards,
    the wrapper's entry) and the cost per kernel separate: inference under no_grad, and forward + backward (the
    compiled backward runs as one autograd node; gradients are set to None before each call, as a training step's
    zero_grad does).  Tiny tensors: the GPU is never the bottleneck."""
    env = R.env
    if not env.cuda:
        return
    import torch._dynamo  # noqa: F401
    dev = env.dev
    out = []
    x = torch.randn(8, 64, device=dev)
    for mode, n in (("default", 8), ("default", 32), ("reduce-overhead", 8), ("reduce-overhead", 32)):
        torch.manual_seed(0)
        torch._dynamo.reset()
        blocks = []
        for _ in range(n):
            blocks += [torch.nn.Linear(64, 64), torch.nn.GELU()]
        model = torch.nn.Sequential(*blocks).to(dev)
        compiled = torch.compile(model, mode=mode)
        xg = x.clone().requires_grad_(False)
        with torch.no_grad():
            ref = model(x)
            got = compiled(x)  # compiles
        err = relerr(got, ref.double())

        def infer():
            with torch.no_grad():
                compiled(x)

        def train():  # as a training step: gradients set to None first, so AccumulateGrad launches nothing
            model.zero_grad(set_to_none=True)
            compiled(xg).sum().backward()
        bodies = (("inference (no_grad)", infer), ("forward + backward", train))
        if mode == "default":
            train()  # compiles the training graphs
        else:  # CUDA graphs (cudagraph trees): inference only, its first calls warm up and record
            bodies = bodies[:1]
            for _ in range(3):
                infer()
        for name, body in bodies:
            med, per = interleaved_host(env, {name: body}, 300, rounds=5)
            ev = rc.profile_device(body, calls=3, sync=env.sync)
            s = rc.summarize_kernels(ev, calls=3)
            r = {"case": f"torch.compile {mode}, {n} x (Linear(64,64), GELU): {name}", "blocks": n, "mode": mode,
                 "pass": "infer" if body is infer else "train", "host_us_per_call": med[name] * 1e6,
                 "host_us_rounds": [v * 1e6 for v in per[name]], "kernels_per_call": s["count"],
                 "kernel_names": sorted({k["name"][:100] for k in s["kernels"]})[:12], "relerr_vs_eager": err,
                 "verified": err < 1e-4}
            out.append(r)
            print(f"compiled {r['case']}: {r['host_us_per_call']:.1f} us/call, {s['count']} kernels, "
                  f"relerr {err:.2e}", file=sys.stderr)
        R.doc["compiled_host"] = out
        R.save(force=True)


def floor_cases(R):
    """GPU time of tiny kernels issued back to back (the small-kernel floor), eagerly and in a CUDA graph."""
    env = R.env
    if not env.cuda:
        R.doc["floor"] = []
        return
    out = []
    for n_el in (1024, 65536):
        x = torch.randn(n_el, device="cuda")
        k = 200
        for _ in range(10):
            torch.relu(x)
        torch.cuda.synchronize()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(int(2e9 * 5e-3))  # 5 ms: the host enqueues all 200 before the GPU reaches them
        a.record()
        for _ in range(k):
            torch.relu(x)
        b.record()
        torch.cuda.synchronize()
        eager = a.elapsed_time(b) / 1e3 / k
        z = torch.zeros_like(x)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            z.add_(x)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(k):
                z.add_(x, alpha=1e-9)
        g.replay()
        torch.cuda.synchronize()
        ts = []
        for _ in range(20):
            a.record()
            g.replay()
            b.record()
            b.synchronize()
            ts.append(a.elapsed_time(b) / 1e3 / k)
        out.append({"numel": n_el, "bytes_per_kernel": 8 * n_el, "kernels": k,
                    "eager_back_to_back_us_per_kernel": eager * 1e6,
                    "cuda_graph_us_per_kernel": statistics.median(ts) * 1e6})
        print(f"floor {n_el}: eager {eager*1e6:.2f} us/kernel, graph {statistics.median(ts)*1e6:.2f} us/kernel",
              file=sys.stderr)
    R.doc["floor"] = out
    R.save(force=True)


def cases_pool(R):
    """Max pooling as the zoo's CNNs use it (ResNet k3 s2 p1, AlexNet k3 s2, VGG k2 s2), forward and backward:
    FP32 NCHW (fp32/tf32 runs) and bf16 channels-last (autocast runs; pooling takes the conv's bf16 output).
    Bytes as the eager lowering counts them: the forward reads the input and writes the output and its int64
    indices (CUDA's max_pool2d always computes them); the backward reads the output gradient and the indices and
    writes the input gradient."""
    env = R.env
    configs = [("resnet k3 s2 p1", 64, 112, 3, 2, 1, (4, 16, 64, 256)), ("alexnet k3 s2", 64, 55, 3, 2, 0, (16, 64, 256)),
               ("vgg k2 s2", 64, 224, 2, 2, 0, (4, 16, 64))]
    if env.smoke:
        configs = [("resnet k3 s2 p1", 8, 16, 3, 2, 1, (2,))]
    for prec, adt, layout in [("fp32", torch.float32, "nchw"), ("amp-bf16", torch.bfloat16, "nhwc")]:
        mf = torch.channels_last if layout == "nhwc" else torch.contiguous_format
        e = torch.tensor([], dtype=adt).element_size()
        for name, C, H, k, st, pad, batches in configs:
            for N in batches:
                Ho = (H + 2 * pad - k) // st + 1
                n_in, n_out = N * C * H * H, N * C * Ho * Ho

                def make(seed, grad=False, shp=(N, C, H, H), adt=adt, mf=mf):
                    x = env.leaf(shp, adt, seed, False).contiguous(memory_format=mf)
                    return [x.detach().clone(memory_format=mf).requires_grad_(True) if grad else x]

                def fn(x, k=k, st=st, pad=pad):
                    return F.max_pool2d(x, k, st, pad)

                def ref(ins, k=k, st=st, pad=pad):
                    return F.max_pool2d(ins[0], k, st, pad)
                tol = TOL["fp32"] if prec == "fp32" else TOL["bf16"]
                rec = {"op": "max_pool2d", "class": "pooling", "dtype": prec, "layout": layout, "config": name,
                       "shape": [N, C, H, H], "numel": n_in, "fwd_with_grad": True,
                       "bytes_fwd": e * n_in + (e + 8) * n_out, "bytes_bwd": (e + 8) * n_out + e * n_in,
                       "flops_fwd": k * k * n_out, "flops_bwd": n_out}
                autograd_pair(R, rec, (make, fn), ref, rec["bytes_fwd"], rec["bytes_bwd"], tol)


def cases_reduce(R):
    """Reductions as the eager runtime's lowerings emit them (its `reduction` class), timed alone:
    - "sum_dim0": the sum over the rows of a contiguous [rows, columns] tensor, i.e. a bias gradient (AddmmBackward's
      grad.sum(0) for a linear layer; a convolution's bias gradient on a channels-last gradient is the same sum over
      N*H*W rows of C contiguous channels): transformer widths (768, 2304, 3072 columns) at 128 to 32,768 rows,
      CNN channels (64 to 512) at their feature maps' rows, and a classifier's 4,096 at one row a sample.  PyTorch
      spreads long columns over several blocks, which first zero a semaphore buffer (a memset).
    - "adaptive_avg_pool2d": the global average pool of ResNet's head (a mean over H*W of each channel), FP32 NCHW
      and bf16 channels-last.
    Bytes nominal: the input read once, the output written once."""
    env = R.env
    cols = ([(768, r) for r in (128, 1024, 8192, 32768)] + [(3072, r) for r in (128, 1024, 8192, 32768)] +
            [(2304, 8192), (4096, 64), (4096, 256)] +
            [(64, 3136 * k) for k in (16, 256, 1024)] + [(128, 784 * k) for k in (16, 256, 1024)] +
            [(256, 196 * k) for k in (16, 256, 1024)] + [(512, 49 * k) for k in (16, 256, 1024)] +
            [(384, 169 * k) for k in (16, 256)])
    pools = [(C, 7, N) for C in (512, 2048) for N in (1, 16, 64, 256)]
    if env.smoke:
        cols, pools = [(16, 64), (8, 512)], [(8, 4, 2)]
    for dt in ("bf16", "fp32"):
        e, dtype = SIZE[dt], DT[dt]
        for C, rows in cols:
            def check(C=C, rows=rows, dtype=dtype, dt=dt):
                x = env.fresh((rows, C), dtype, 61)
                return relerr(x.sum(0), x.to(torch.float64).sum(0)), TOL[dt], None

            def setup(k, C=C, rows=rows, dtype=dtype):
                x = env.view((rows, C), dtype)
                return (lambda: x.sum(0),)
            n = rows * C
            R.run({"op": "sum_dim0", "pass": "fwd", "class": "reduction", "dtype": dt, "layout": "contiguous",
                   "shape": [rows, C], "numel": n, "bytes": (n + C) * e, "flops": n}, setup, check, (n + C) * e)
    for prec, dtype, layout in (("fp32", torch.float32, "nchw"), ("amp-bf16", torch.bfloat16, "nhwc")):
        e = torch.tensor([], dtype=dtype).element_size()
        mf = torch.channels_last if layout == "nhwc" else torch.contiguous_format
        for C, H, N in pools:
            shape = (N, C, H, H)

            def check(shape=shape, dtype=dtype, mf=mf, prec=prec):
                x = env.fresh(shape, dtype, 62).contiguous(memory_format=mf)
                ref = x.to(torch.float64).mean((2, 3), keepdim=True)
                return relerr(F.adaptive_avg_pool2d(x, 1), ref), TOL["fp32" if prec == "fp32" else "bf16"], None

            def setup(k, shape=shape, dtype=dtype, mf=mf):
                x = env.view(shape, dtype).contiguous(memory_format=mf)
                return (lambda: F.adaptive_avg_pool2d(x, 1),)
            n = N * C * H * H
            R.run({"op": "adaptive_avg_pool2d", "pass": "fwd", "class": "reduction", "dtype": prec, "layout": layout,
                   "shape": list(shape), "numel": n, "bytes": (n + N * C) * e, "flops": n}, setup, check,
                  (n + N * C) * e, set_cap=64)


def cases_copy(R):
    """Layout copies as the eager runtime's lowerings emit them (its `layout_copy` class), timed
    alone: "heads_contiguous", attention's output [B, H, T, D] made [B, T, H, D] (transpose(1, 2).contiguous());
    "kv_cat", a causal layer's keys appended to an empty cache (torch.cat of an empty [B, H, 0, D] and the keys, a
    strided view of the QKV projection's output); "cat_last", three [B, T, 768] gradients concatenated along the
    last axis (a split's backward); "flatten_nhwc", a channels-last feature map flattened (a copy into NCHW
    order).  Bytes nominal: read once, written once."""
    env = R.env
    H, D = 12, 64
    tokens = [(1, 128), (8, 128), (64, 128), (8, 1024), (32, 1024)]
    maps = [(N, C) for C in (512, 2048) for N in (16, 64, 256)]
    if env.smoke:
        tokens, maps, H, D = [(2, 8)], [(2, 8)], 2, 4
    for dt in ("bf16", "fp32"):
        e, dtype = SIZE[dt], DT[dt]
        for B, T in tokens:
            n = B * T * H * D

            def heads(x):
                return x.transpose(1, 2).contiguous()

            def kv(x, B=B, T=T, dtype=dtype):
                k = x.split(H * D, dim=2)[1].view(B, T, H, D).transpose(1, 2)
                return torch.cat((torch.empty(B, H, 0, D, device=x.device, dtype=dtype), k), dim=-2)

            def cat3(x):
                return torch.cat(x, dim=-1)
            for op, shape, f, ref in (
                    ("heads_contiguous", (B, H, T, D), heads, lambda x: x.transpose(1, 2)),
                    ("kv_cat", (B, T, 3 * H * D), kv, lambda x, B=B, T=T: x.split(H * D, dim=2)[1].view(B, T, H, D).transpose(1, 2)),
                    ("cat_last", (3, B, T, H * D), lambda x: cat3(list(x.unbind(0))), lambda x: torch.cat(list(x.unbind(0)), dim=-1))):
                def check(shape=shape, f=f, ref=ref, dtype=dtype):
                    x = env.fresh(shape, dtype, 63)
                    return relerr(f(x), ref(x.to(torch.float64))), 0.0, None

                def setup(k, shape=shape, f=f, dtype=dtype):
                    x = env.view(shape, dtype)
                    return (lambda: f(x),)
                R.run({"op": op, "pass": "fwd", "class": "copy/cast", "dtype": dt, "layout": "strided",
                       "shape": list(shape), "numel": n, "bytes": 2 * n * e, "flops": 0}, setup, check, 2 * n * e)
        for N, C in maps:
            shape, n = (N, C, 7, 7), N * C * 49

            def check(shape=shape, dtype=dtype):
                x = env.fresh(shape, dtype, 64).contiguous(memory_format=torch.channels_last)
                return relerr(torch.flatten(x, 1), torch.flatten(x.to(torch.float64).contiguous(), 1)), 0.0, None

            def setup(k, shape=shape, dtype=dtype):
                x = env.view(shape, dtype).contiguous(memory_format=torch.channels_last)
                return (lambda: torch.flatten(x, 1),)
            R.run({"op": "flatten_nhwc", "pass": "fwd", "class": "copy/cast", "dtype": dt, "layout": "nhwc",
                   "shape": list(shape), "numel": n, "bytes": 2 * n * e, "flops": 0}, setup, check, 2 * n * e, set_cap=64)


def cases_generated(R):
    """Kernels that torch.compile generates (Triton, Inductor), one fused chain compiled alone at several sizes (the
    compiled runtime's `generated` classes): each function below compiles to one kernel (two with a random draw:
    Inductor's seed kernel first).  Pointwise chains: "gen_bn_add_relu" (batch norm in eval mode, the residual add
    and ReLU on a bf16 channels-last map: what follows every convolution of a compiled ResNet inference) and
    "gen_bn_relu" (no residual), "gen_gelu" (erf GELU on a [rows, 3072] bf16 activation).  Per-row reductions:
    "gen_add_ln" (BERT's residual add of a bf16 projection to an FP32 stream, then layer norm in FP32 over 768),
    "gen_gelu_bwd_sum" (GELU's backward and the bias gradient's column sum in one kernel, [rows, 3072]).  Random
    draws (Inductor's Philox per element): "gen_dropout" (dropout p=0.1 on a bf16 [rows, 768]) and
    "gen_dropout_add_ln" (BERT's dropout, residual add and layer norm in one kernel).  Bytes nominal (inputs read
    once, outputs written once); "random" counts the values drawn.  Each compiled function is checked against a
    float64 reference (the random ones by the dropped fraction and the kept values' scale)."""
    env = R.env
    if not env.cuda or not hasattr(torch, "compile"):
        return
    from torch import _dynamo
    p = 0.1
    dev = env.dev

    def compiled(fn):
        _dynamo.reset()  # each case compiles alone: static shapes, no recompilation limit
        return torch.compile(fn, dynamic=False)

    def record(op, shape, n, nbytes, random, fn, make_inputs, ref, check_random=None, set_cap=4096):
        cf = compiled(fn)

        def check():
            ins = make_inputs(True)
            with torch.no_grad():
                out = cf(*ins)
            if check_random is not None:
                return check_random(ins, out)
            return relerr(out[0] if isinstance(out, tuple) else out, ref(*ins)), TOL["bf16"], None

        def setup(k):
            ins = make_inputs(False)

            def call():
                with torch.no_grad():
                    return cf(*ins)
            return (call,)
        R.run({"op": op, "pass": "fwd", "class": "generated", "dtype": "bf16", "layout": "contiguous",
               "shape": list(shape), "numel": n, "bytes": nbytes, "random": random, "flops": n}, setup, check,
              nbytes, set_cap=set_cap)

    def bn_params(C, seed):
        g = torch.Generator(device=dev).manual_seed(seed)
        m = torch.randn(C, generator=g, device=dev) * 0.1
        v = torch.rand(C, generator=g, device=dev) + 0.5
        w = torch.randn(C, generator=g, device=dev)
        b = torch.randn(C, generator=g, device=dev)
        return m, v, w, b

    maps = [(1, 64, 56), (16, 64, 56), (16, 256, 56), (64, 512, 28), (256, 256, 56), (256, 2048, 7), (1, 2048, 7),
            (64, 1024, 14)]
    rows = [128, 1024, 8192, 32768]
    if env.smoke:
        maps, rows = [(2, 8, 4)], [16]
    for N, C, H in maps:
        shape, n = (N, C, H, H), N * C * H * H
        for residual in (True, False):
            prm = bn_params(C, 71)

            def fn(x, r, m, v, w, b, residual=residual):
                y = F.batch_norm(x, m, v, w, b, training=False, eps=1e-5)
                return torch.relu(y + r if residual else y)

            def make(fresh, shape=shape, prm=prm):
                if fresh:
                    x = env.fresh(shape, torch.bfloat16, 72).contiguous(memory_format=torch.channels_last)
                    r = env.fresh(shape, torch.bfloat16, 73).contiguous(memory_format=torch.channels_last)
                else:
                    x = env.view(shape, torch.bfloat16).contiguous(memory_format=torch.channels_last)
                    r = env.view(shape, torch.bfloat16).contiguous(memory_format=torch.channels_last)
                return (x, r, *prm)

            def ref(x, r, m, v, w, b, residual=residual):
                xd = x.double()
                y = (xd - m.double()[None, :, None, None]) / torch.sqrt(v.double()[None, :, None, None] + 1e-5)
                y = y * w.double()[None, :, None, None] + b.double()[None, :, None, None]
                return torch.relu(y + r.double() if residual else y)
            record("gen_bn_add_relu" if residual else "gen_bn_relu", shape, n, (3 if residual else 2) * n * 2, 0,
                   fn, make, ref, set_cap=64)
    for R_ in rows:
        shape, n = (R_, 3072), R_ * 3072
        record("gen_gelu", shape, n, 4 * n, 0, lambda x: F.gelu(x),
               lambda fresh, shape=shape: (env.fresh(shape, torch.bfloat16, 74) if fresh else env.view(shape, torch.bfloat16),),
               lambda x: F.gelu(x.double()))

        def gbs(g, x):
            dx = torch.ops.aten.gelu_backward(g, x)
            return dx, dx.float().sum(0)

        def gbs_ref(g, x):
            return torch.ops.aten.gelu_backward(g.double(), x.double())

        def make2(fresh, shape=shape):
            if fresh:
                return env.fresh(shape, torch.bfloat16, 75), env.fresh(shape, torch.bfloat16, 76)
            return env.view(shape, torch.bfloat16), env.view(shape, torch.bfloat16)
        record("gen_gelu_bwd_sum", shape, n, 6 * n + 4 * 3072, 0, gbs, make2, gbs_ref)
    for R_ in rows:
        shape, n = (R_, 768), R_ * 768
        g = torch.Generator(device=dev).manual_seed(77)
        lw, lb = torch.randn(768, generator=g, device=dev), torch.randn(768, generator=g, device=dev)

        def make3(fresh, shape=shape, lw=lw, lb=lb):
            if fresh:
                h, r = env.fresh(shape, torch.bfloat16, 78), env.fresh(shape, torch.float32, 79)
            else:
                h, r = env.view(shape, torch.bfloat16), env.view(shape, torch.float32)
            return h, r, lw, lb

        def add_ln(h, r, w, b):
            return F.layer_norm(h + r, (768,), w, b, 1e-12)

        def add_ln_ref(h, r, w, b):
            return F.layer_norm(h.double() + r.double(), (768,), w.double(), b.double(), 1e-12)
        record("gen_add_ln", shape, n, 10 * n, 0, add_ln, make3, add_ln_ref)

        def drop(x):
            return F.dropout(x, p, training=True)

        def drop_check(ins, out):
            x = ins[0]
            kept = out != 0
            frac = 1 - kept.float().mean().item()
            scaled = (out[kept].double() - x[kept].double() / (1 - p)).abs().max().item()
            sig = max(5 * math.sqrt(p * (1 - p) / x.numel()), 0.0 if x.numel() > 10000 else 0.05)
            ok = scaled <= 2e-2 * max(1.0, x.abs().max().item() / (1 - p))
            return (abs(frac - p) / sig if ok else math.inf), 1.0, \
                f"dropped fraction {frac:.5f} (p={p}); error in units of the allowed deviation"
        record("gen_dropout", shape, n, 4 * n, n, drop,
               lambda fresh, shape=shape: (env.fresh(shape, torch.bfloat16, 80) if fresh else env.view(shape, torch.bfloat16),),
               None, check_random=drop_check)

        def drop_ln(h, r, w, b):
            return F.layer_norm(F.dropout(h, p, training=True) + r, (768,), w, b, 1e-12)

        def drop_ln_check(ins, out):
            h, r, w, b = ins
            # the kept pattern is not returned: check the output's statistics per row against layer norm's
            # definition (every row normalised: (out - b) / w has mean 0 and variance 1)
            z = (out.double() - b.double()) / w.double()
            err = max(z.mean(-1).abs().max().item(), (z.var(-1, unbiased=False) - 1).abs().max().item())
            return err, 1e-3, "per-row mean and variance of (out - bias) / weight against 0 and 1"
        record("gen_dropout_add_ln", shape, n, 10 * n, n, drop_ln, make3, None, check_random=drop_ln_check)
        # The same two chains in a training forward (the inputs require gradients: the kernel also writes what
        # the backward reads, the dropout mask and layer norm's statistics); the outputs are dropped each call.
        for op, fn, random, chk in (("gen_add_ln_train", add_ln, 0, None), ("gen_dropout_add_ln_train", drop_ln, n, drop_ln_check)):
            cf = compiled(fn)

            def make_t(fresh, make3=make3):
                return tuple(t.detach().clone().requires_grad_(True) for t in make3(fresh))

            def check_t(cf=cf, make_t=make_t, chk=chk, fn=fn):
                ins = make_t(True)
                out = cf(*ins)
                if chk is not None:
                    return chk(ins, out.detach())
                return relerr(out, add_ln_ref(*[t.detach() for t in ins])), TOL["fp32"] * 10, None

            def setup_t(k, cf=cf, make_t=make_t):
                ins = make_t(False)
                return (lambda: cf(*ins),)
            R.run({"op": op, "pass": "fwd", "class": "generated", "dtype": "bf16", "layout": "contiguous",
                   "shape": list(shape), "numel": n, "bytes": (11 if random else 10) * n + 8 * R_, "random": random,
                   "flops": n, "grad": True}, setup_t, check_t, 11 * n, set_cap=16)


def scaler_host_cases(R):
    """GradScaler's host cost per parameter tensor (torch/amp/grad_scaler.py): `scaler.step(opt)` unscales the
    gradients (a Python loop over the parameters grouping them by device and dtype, one foreach kernel), reads
    found_inf on the host (.item(): a sync), then steps; `scaler.update()` adjusts the scale.  Timed against the
    optimizer's step alone at 16, 64 and 256 tensors (tiny tensors: the GPU is never the bottleneck) in
    interleaved rounds of the pair (interleaved_host: the host runs at two speeds that switch within seconds, so
    the two must share every round); per round the difference, and its median over the rounds.  The line through
    the three tensor counts gives the scaler's per-tensor cost (slope) and its fixed part (intercept):
    `roofplan calibrate` fits them (HostCosts::scaler_per_tensor_s, scaler_s)."""
    env = R.env
    dev = env.dev
    out = []
    for kind in ("sgd", "adamw"):
        for n in (16, 64, 256):
            ps = [torch.nn.Parameter(torch.randn(256, device=dev)) for _ in range(n)]
            for p in ps:
                p.grad = torch.randn_like(p) * 1e-3
            opt = (torch.optim.SGD(ps, lr=0.01, momentum=0.9, foreach=True) if kind == "sgd"
                   else torch.optim.AdamW(ps, lr=1e-3, foreach=True))
            scaler = (torch.amp.GradScaler(dev, enabled=env.cuda) if hasattr(torch.amp, "GradScaler")
                      else torch.cuda.amp.GradScaler(enabled=env.cuda))  # torch < 2.3
            scaler.scale(torch.ones((), device=dev))  # the scale is made by the first scale(loss)

            def scaled_step(scaler=scaler, opt=opt):
                scaler.step(opt)
                scaler.update()

            # About 20 ms a block (AdamW at 256 tensors ~3 ms a step on this host), so a round is well under the
            # seconds between the host's speed changes.
            iters = max(4, (1200 if kind == "sgd" else 400) // n) if env.cuda else 3
            bodies = {"alone": opt.step, "scaler": scaled_step}
            med, per = interleaved_host(env, bodies, iters, rounds=15 if env.cuda else 2)
            diffs = [b - a for a, b in zip(per["alone"], per["scaler"])]
            out.append({"case": f"scaler: {kind}, {n} tensors of 256", "optimizer": kind, "impl": "foreach",
                        "tensors": n, "iters": iters, "host_us_step_alone": med["alone"] * 1e6,
                        "host_us_with_scaler": med["scaler"] * 1e6,
                        "host_us_per_op": statistics.median(diffs) * 1e6,
                        "host_us_rounds_alone": [x * 1e6 for x in per["alone"]],
                        "host_us_rounds_with_scaler": [x * 1e6 for x in per["scaler"]]})
            print(f"scaler ({kind}, {n} tensors): step alone {med['alone'] * 1e6:.1f} us, scaler adds "
                  f"{statistics.median(diffs) * 1e6:.1f} us (median of {len(diffs)} paired rounds)", file=sys.stderr)
    R.doc["scaler_host"] = out
    R.save(force=True)


def adam_split_host_cases(R):
    """Where AdamW's (foreach) Python falls between its kernels (issue 14: the model charged all of it before the
    first kernel).  torch.optim's _multi_tensor_adam walks the parameters several times: grouping them by device and
    dtype and incrementing the step counts (CPU tensors: a foreach op that launches nothing) before its first
    kernel, then computing the bias corrections (a Python list over the parameters, each step count read with
    .item()) after the moment updates are issued and before `_foreach_sqrt`.  Each torch._foreach_* function is
    wrapped for the run to stamp the host clock at its entry and exit (time.perf_counter_ns, ~0.1 us a stamp):
    per step, the host time before the first foreach call, between every pair of calls, and after the last, and
    each call's own time.  Tiny tensors (256 FP32 values) at 16, 64 and 256 tensors, so the GPU never holds the
    host back; the median of each segment over the steps of a round, and the median over rounds.  An unwrapped
    step is timed in the same rounds (interleaved) for the instrumentation's cost.  `roofplan calibrate` takes the
    share of the per-tensor cost paid before each GPU operation from the slopes (HostCosts::adam_op_shares)."""
    env = R.env
    dev = env.dev
    out = []
    names = sorted(n for n in dir(torch) if n.startswith("_foreach_"))
    originals = {n: getattr(torch, n) for n in names}
    stamps = []

    def wrap(name, fn):
        def wrapped(*args, **kwargs):
            first = args[0] if args else None
            where = (first[0].device.type if isinstance(first, (list, tuple)) and first
                     and isinstance(first[0], torch.Tensor) else "?")
            stamps.append((name, where, "in", time.perf_counter_ns()))
            r = fn(*args, **kwargs)
            stamps.append((name, where, "out", time.perf_counter_ns()))
            return r
        return wrapped

    for n in (16, 64, 256):
        if env.left() < 0:
            out.append({"case": f"adamw split: {n} tensors of 256", "skipped": "deadline"})
            continue
        ps = [torch.nn.Parameter(torch.randn(256, device=dev)) for _ in range(n)]
        for p in ps:
            p.grad = torch.randn_like(p) * 1e-3
        opt = torch.optim.AdamW(ps, lr=1e-3, foreach=True)
        steps = max(10, 800 // n) if env.cuda else 3
        rounds = 9 if env.cuda else 2
        seq, per_round, plain_rounds, total_rounds = None, [], [], []
        for _ in range(rounds):
            plain, _, _ = wall_per_iter(env, opt.step, steps, warm=10)
            plain_rounds.append(plain)
            for name in names:
                setattr(torch, name, wrap(name, originals[name]))
            try:
                for _ in range(5):
                    opt.step()
                env.sync()
                segs, totals = [], []
                for _ in range(steps):
                    stamps.clear()
                    t0 = time.perf_counter_ns()
                    opt.step()
                    t1 = time.perf_counter_ns()
                    calls = [(stamps[i][0], stamps[i][1], stamps[i][3], stamps[i + 1][3])
                             for i in range(0, len(stamps), 2)]
                    this_seq = [f"{c[0]}({c[1]})" for c in calls]
                    if seq is None:
                        seq = this_seq
                    if this_seq != seq:
                        raise RuntimeError(f"foreach calls changed between steps: {this_seq} vs {seq}")
                    gaps = [calls[0][2] - t0]
                    gaps += [calls[i + 1][2] - calls[i][3] for i in range(len(calls) - 1)]
                    gaps.append(t1 - calls[-1][3])
                    segs.append((gaps, [c[3] - c[2] for c in calls]))
                    totals.append(t1 - t0)
                env.sync()
            finally:
                for name in names:
                    setattr(torch, name, originals[name])
            per_round.append(([statistics.median(g[0][i] for g in segs) * 1e-3 for i in range(len(seq) + 1)],
                              [statistics.median(g[1][i] for g in segs) * 1e-3 for i in range(len(seq))]))
            total_rounds.append(statistics.median(totals) * 1e-3)
        gaps = [statistics.median(r[0][i] for r in per_round) for i in range(len(seq) + 1)]
        inside = [statistics.median(r[1][i] for r in per_round) for i in range(len(seq))]
        out.append({"case": f"adamw split: {n} tensors of 256", "optimizer": "adamw", "impl": "foreach",
                    "tensors": n, "steps_per_round": steps, "rounds": rounds, "foreach_calls": seq,
                    "gap_us": gaps, "call_us": inside, "host_us_step_instrumented": statistics.median(total_rounds),
                    "host_us_step_plain": statistics.median(plain_rounds) * 1e6,
                    "gap_us_rounds": [r[0] for r in per_round]})
        print(f"adamw split ({n} tensors): calls {seq}; gaps (us) {[round(g, 1) for g in gaps]}; calls (us) "
              f"{[round(c, 1) for c in inside]}; step {statistics.median(total_rounds):.1f} us instrumented, "
              f"{statistics.median(plain_rounds) * 1e6:.1f} plain", file=sys.stderr)
        R.doc["adam_split_host"] = out
        R.save()
    R.doc["adam_split_host"] = out
    R.save(force=True)


def host_speed_cases(R):
    """How each host cost moves with the host's speed (issue 14; the device hosts switch between two speeds within
    seconds, validation/results/2026-11-24-h200-host-items): rounds of short blocks (~2-15 ms each) of representative
    host cases (tight-loop operators, and whole tiny modules as models write them: torchvision's ResNet-18, one
    Hugging Face BERT layer and GPT-2 block), each round between two probes of the view op the e2e suite uses
    (`x.view`, no kernel), for as long as `--deadline-s` allows (at most 3000 rounds).  Per round: the probes and every case's time per op.  Classifying
    rounds by their probes (fast/slow) gives each cost's own slow/fast ratio (its sensitivity); `roofplan calibrate`
    fits HostCosts::speed_sensitivity from them (calibration/operators.hpp, fit_speed_sensitivity)."""
    env = R.env
    dev = env.dev
    small = not env.cuda
    x = torch.randn(1024, device=dev)
    y = torch.randn(1024, device=dev)
    lin = torch.nn.Linear(64, 64).to(dev)
    xin = torch.randn(8, 64, device=dev)
    xg = torch.randn(1024, device=dev, requires_grad=True)
    chain = 100
    lins = torch.nn.Sequential(*[torch.nn.Linear(64, 64) for _ in range(chain)]).to(dev)

    def fb_add():
        h = xg
        for _ in range(chain):
            h = h + y
        h.sum().backward()

    def fb_lin():
        lins(xin).sum().backward()

    def optimizer(kind, n=64):
        ps = [torch.nn.Parameter(torch.randn(256, device=dev)) for _ in range(n)]
        for p in ps:
            p.grad = torch.randn_like(p) * 1e-3
        opt = (torch.optim.SGD(ps, lr=0.01, momentum=0.9, foreach=True) if kind == "sgd"
               else torch.optim.AdamW(ps, lr=1e-3, foreach=True))
        return opt.step

    def no_grad(f):
        def body():
            with torch.no_grad():
                f()
        return body

    def autocast_linear():
        with torch.no_grad(), torch.autocast(dev, dtype=torch.bfloat16, enabled=env.cuda):
            lin(xin)

    # name: (body, iterations per block, ops per iteration)
    cases = {
        "view (no kernel)": (lambda: x.view(32, 32), 2000, 1),
        "add (no_grad)": (no_grad(lambda: torch.add(x, y)), 400, 1),
        "nn.Linear(64,64) call (no_grad)": (no_grad(lambda: lin(xin)), 300, 1),
        "nn.Linear(64,64) call, requires_grad (forward only)": (lambda: lin(xin), 300, 1),
        "nn.Linear(64,64) under autocast bf16 (no_grad)": (autocast_linear, 200, 1),
        f"add forward+backward (chain of {chain}, per op)": (fb_add, 4, chain),
        f"nn.Linear(64,64) forward+backward (Sequential of {chain}, per layer)": (fb_lin, 2, chain),
        "sgd step (foreach), 64 tensors of 256": (optimizer("sgd"), 20, 1),
        "adamw step (foreach), 64 tensors of 256": (optimizer("adamw"), 8, 1),
    }
    # Whole modules as models write them (tiny tensors: host only): how a model's own Python between its operators
    # moves with the host's speed, beside the tight-loop operator cases above.
    try:
        import torchvision
        r18 = torchvision.models.resnet18(num_classes=10).to(dev).eval()
        r18_train = torchvision.models.resnet18(num_classes=10).to(dev).train()
        img = torch.randn(1, 3, 32, 32, device=dev)
        img2 = torch.randn(2, 3, 32, 32, device=dev)  # batch norm in training needs two samples
        cases["torchvision resnet18 forward (no_grad, eval; per forward)"] = (no_grad(lambda: r18(img)), 4, 1)
        cases["torchvision resnet18 forward+backward (train; per step)"] = (
            lambda: r18_train(img2).sum().backward(), 2, 1)
    except Exception as e:  # noqa: BLE001
        print(f"host_speed: torchvision cases skipped: {e}", file=sys.stderr)
    try:
        import transformers as tf
        bert_cfg = tf.BertConfig(hidden_size=64, num_attention_heads=2, intermediate_size=256, num_hidden_layers=1)
        bert = tf.BertModel(bert_cfg).to(dev)
        gpt_cfg = tf.GPT2Config(n_embd=64, n_head=2, n_layer=1, n_positions=64)
        gpt = tf.GPT2Model(gpt_cfg).to(dev).eval()
        ids = torch.randint(0, 100, (1, 8), device=dev)
        bert_eval = bert.eval()
        cases["HF BertModel, 1 layer, forward (no_grad, eval; per forward)"] = (no_grad(lambda: bert_eval(ids)), 10, 1)
        cases["HF GPT2Model, 1 block, forward (no_grad, eval; per forward)"] = (no_grad(lambda: gpt(ids)), 10, 1)
        bert_train = tf.BertModel(bert_cfg).to(dev).train()
        cases["HF BertModel, 1 layer, forward+backward (train; per step)"] = (
            lambda: bert_train(ids).last_hidden_state.sum().backward(), 4, 1)
    except Exception as e:  # noqa: BLE001
        print(f"host_speed: Hugging Face cases skipped: {e}", file=sys.stderr)
    if small:
        cases = {k: (b, 2, o) for k, (b, _, o) in cases.items()}
    probe = cases["view (no kernel)"][0]
    rounds = []
    while len(rounds) < (3 if small else 3000) and time.monotonic() < env.deadline - 5:
        before = wall_per_iter(env, probe, 2000 if env.cuda else 20, warm=20)[0]
        per = {}
        for name, (body, iters, ops) in cases.items():
            per[name] = wall_per_iter(env, body, iters, warm=2)[0] / ops * 1e6
        after = wall_per_iter(env, probe, 2000 if env.cuda else 20, warm=20)[0]
        rounds.append({"probe_us": [before * 1e6, after * 1e6], "host_us_per_op": per})
    R.doc["host_speed"] = {"cases": list(cases), "rounds": rounds}
    R.save(force=True)
    print(f"host_speed: {len(rounds)} rounds", file=sys.stderr)


def kernel_gap_cases(R):
    """The GPU's gap between back-to-back kernels as the profiler sees it (issue 14: a profiler counts it as idle,
    while event-timed operator benchmarks fold it into each kernel's time).  A spin kernel queues each chain of N
    operators of one kind behind it, so the host is never the limit; the gap is the next kernel's start minus the
    previous one's end, over the chain (median, p10, p90), beside (event time per operator - profiler busy per
    operator) for the same chain run back to back."""
    env = R.env
    dev = env.dev
    out = R.doc.setdefault("kernel_gap", [])
    if not env.cuda:
        out.append({"case": "smoke", "skipped": "no GPU"})
        return
    n = 200
    t = {}
    t["add 1K fp32"] = (torch.randn(1024, device=dev), torch.randn(1024, device=dev))
    t["add 4M bf16"] = (torch.randn(4 << 20, device=dev, dtype=torch.bfloat16),
                        torch.randn(4 << 20, device=dev, dtype=torch.bfloat16))
    ln = torch.nn.LayerNorm(768).to(dev)
    xln = torch.randn(128, 768, device=dev)
    w = torch.randn(1024, 1024, device=dev, dtype=torch.bfloat16)
    xg = torch.randn(1024, 1024, device=dev, dtype=torch.bfloat16)
    x768, w768, b768 = (torch.randn(128, 768, device=dev), torch.randn(768, 768, device=dev),
                        torch.randn(768, device=dev))
    chains = {
        "add 1K fp32": lambda: torch.add(*t["add 1K fp32"]),
        "add 4M bf16": lambda: torch.add(*t["add 4M bf16"]),
        "layer_norm 128x768 fp32": lambda: ln(xln),
        "mm 1024^3 bf16": lambda: xg @ w,
        "mm 1024^3 bf16 then add 1K": lambda: (xg @ w, torch.add(*t["add 1K fp32"])),
        "linear 128x768x768 fp32": lambda: F.linear(x768, w768, b768),
    }
    with torch.no_grad():
        for name, op in chains.items():
            try:
                for _ in range(20):
                    op()
                env.sync()
                # event time per operator, back to back (behind a spin so the host runs ahead)
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                torch.cuda._sleep(100_000_000)
                a.record()
                for _ in range(n):
                    op()
                b.record()
                env.sync()
                event_us = a.elapsed_time(b) * 1e3 / n
                acts = [torch.profiler.ProfilerActivity.CUDA]
                with torch.profiler.profile(activities=acts) as prof:
                    torch.cuda._sleep(100_000_000)
                    for _ in range(n):
                        op()
                    env.sync()
                ev = [e for e in rc.device_events(prof) if "spin_kernel" not in e["name"]]
                ev.sort(key=lambda e: e["start_us"])
                gaps = [ev[i + 1]["start_us"] - (ev[i]["start_us"] + ev[i]["dur_us"]) for i in range(len(ev) - 1)]
                busy = rc.busy_union(ev)
                r = {"case": name, "operators": n, "kernels": len(ev), "kernels_per_operator": len(ev) / n,
                     "gap_us_median": statistics.median(gaps), "gap_us_p10": pct(gaps, 0.1),
                     "gap_us_p90": pct(gaps, 0.9), "gap_us_mean": sum(gaps) / len(gaps),
                     "kernel_us_mean": sum(e["dur_us"] for e in ev) / len(ev),
                     "event_us_per_operator": event_us, "busy_us_per_operator": busy / n,
                     "event_minus_busy_us_per_kernel": (event_us - busy / n) / (len(ev) / n),
                     "kernel_names": sorted({e["name"][:120] for e in ev})[:6]}
                # The same operators issued one at a time onto an idle GPU (a wait of ~50 us after each: a
                # host-bound step's pattern): their kernels' profiler durations against the back-to-back ones.
                with torch.profiler.profile(activities=acts) as prof:
                    for _ in range(n):
                        op()
                        env.sync()
                        t_wait = time.perf_counter() + 50e-6
                        while time.perf_counter() < t_wait:
                            pass
                iso = rc.device_events(prof)
                r["isolated_kernel_us_mean"] = sum(e["dur_us"] for e in iso) / len(iso)
                r["isolated_kernel_us_median"] = statistics.median(e["dur_us"] for e in iso)
                r["kernel_us_median"] = statistics.median(e["dur_us"] for e in ev)
                r["isolated_minus_back_to_back_us"] = r["isolated_kernel_us_mean"] - r["kernel_us_mean"]
                print(f"kernel_gap {name}: gap median {r['gap_us_median']:.2f} us, mean {r['gap_us_mean']:.2f}, "
                      f"event-busy {r['event_minus_busy_us_per_kernel']:.2f} us/kernel; kernel back to back "
                      f"{r['kernel_us_mean']:.2f} us, isolated {r['isolated_kernel_us_mean']:.2f} us",
                      file=sys.stderr)
            except Exception as e:  # noqa: BLE001
                r = {"case": name, "error": f"{type(e).__name__}: {e}"[:400]}
            out.append(r)
            R.save()
    # The same chains captured in a CUDA graph and replayed behind a spin kernel: the gap between a graph's kernels
    # (what a compiled runtime with CUDA graphs pays between its kernels).  Own section: not the stream's gap.
    graph_out = R.doc.setdefault("kernel_gap_graph", [])
    with torch.no_grad():
        for name, op in chains.items():
            try:
                side = torch.cuda.Stream()
                side.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(side):
                    for _ in range(3):
                        op()
                torch.cuda.current_stream().wait_stream(side)
                g = torch.cuda.CUDAGraph()
                with torch.cuda.graph(g):
                    for _ in range(n):
                        op()
                for _ in range(3):
                    g.replay()
                env.sync()
                acts = [torch.profiler.ProfilerActivity.CUDA]
                with torch.profiler.profile(activities=acts) as prof:
                    torch.cuda._sleep(100_000_000)
                    g.replay()
                    env.sync()
                ev = [e for e in rc.device_events(prof) if "spin_kernel" not in e["name"]]
                ev.sort(key=lambda e: e["start_us"])
                gaps = [ev[i + 1]["start_us"] - (ev[i]["start_us"] + ev[i]["dur_us"]) for i in range(len(ev) - 1)]
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                torch.cuda._sleep(100_000_000)
                a.record()
                g.replay()
                b.record()
                env.sync()
                event_us = a.elapsed_time(b) * 1e3 / n
                busy = rc.busy_union(ev)
                r = {"case": "graph: " + name, "operators": n, "kernels": len(ev), "kernels_per_operator": len(ev) / n,
                     "gap_us_median": statistics.median(gaps), "gap_us_p10": pct(gaps, 0.1),
                     "gap_us_p90": pct(gaps, 0.9), "gap_us_mean": sum(gaps) / len(gaps),
                     "kernel_us_mean": sum(e["dur_us"] for e in ev) / len(ev),
                     "event_us_per_operator": event_us, "busy_us_per_operator": busy / n,
                     "event_minus_busy_us_per_kernel": (event_us - busy / n) / (len(ev) / n)}
                print(f"kernel_gap graph {name}: gap median {r['gap_us_median']:.2f} us, mean {r['gap_us_mean']:.2f}; "
                      f"kernel {r['kernel_us_mean']:.2f} us", file=sys.stderr)
                del g
            except Exception as e:  # noqa: BLE001
                r = {"case": "graph: " + name, "error": f"{type(e).__name__}: {e}"[:400]}
            graph_out.append(r)
            R.save()


def block_host_cases(R):
    """Host time of whole Hugging Face transformer blocks as models write them (issue 14 item 3: the Python between
    a block's operators that the per-operator host costs do not hold; validation/results/2026-11-24-h200-host-items
    found 6-14 us of it before each of the 280-570 operators a BERT/GPT-2 forward calls).  Tiny models (hidden 64,
    2 heads, 8 tokens, batch 1: host time only) with 1 and 4 layers, so that the per-layer slope is the block's host
    time apart from the embeddings, masks and heads; in inference (eval, no_grad; FP32 and autocast BF16), training
    forward (autograd on, autocast BF16) and a training step's forward+backward (zero_grad(set_to_none) first, as
    the e2e suite's step), built as the e2e suite builds them (attention_mask of ones for BERT; GPT-2's default
    cache).  Also AdamW/SGD foreach steps over BERT-base's 201 parameter shapes beside 201 tiny tensors: does the
    optimizer's host time per tensor depend on the tensor's size?  Rounds of every case between two probes of the
    view op (the host's two speeds, ../host-speed), until `--deadline-s`; each case profiled once for its kernels."""
    env = R.env
    dev = env.dev
    import transformers as tf
    ids = torch.randint(0, 100, (1, 8), device=dev)
    mask = torch.ones_like(ids)
    ac = torch.bfloat16 if env.cuda else None

    def autocast():
        return torch.autocast(dev, dtype=ac) if ac is not None else contextlib.nullcontext()

    cases = {}
    for fam in ("bert", "gpt2"):
        for layers in (1, 4):
            if fam == "bert":
                cfg = tf.BertConfig(hidden_size=64, num_attention_heads=2, intermediate_size=256,
                                    num_hidden_layers=layers, vocab_size=128)
                kw = {"input_ids": ids, "attention_mask": mask}
                model = tf.BertModel(cfg).to(dev)
            else:
                cfg = tf.GPT2Config(n_embd=64, n_head=2, n_layer=layers, n_positions=64, vocab_size=128)
                kw = {"input_ids": ids}
                model = tf.GPT2Model(cfg).to(dev)
            tag = f"{fam} L{layers}"

            def infer(model=model, kw=kw, amp=False):
                model.eval()

                def body():
                    with torch.no_grad(), (autocast() if amp else contextlib.nullcontext()):
                        model(**kw)
                return body

            def train_fwd(model=model, kw=kw):
                def body():
                    model.train()
                    with autocast():
                        model(**kw)
                return body

            def train_step(model=model, kw=kw):
                def body():
                    model.train()
                    model.zero_grad(set_to_none=True)
                    with autocast():
                        out = model(**kw).last_hidden_state
                    out.float().sum().backward()
                return body
            cases[f"{tag} infer fp32"] = (infer(), 6)
            cases[f"{tag} infer amp-bf16"] = (infer(amp=True), 6)
            cases[f"{tag} train forward amp-bf16"] = (train_fwd(), 4)
            cases[f"{tag} train forward+backward amp-bf16"] = (train_step(), 3)
    # The optimizer at BERT-base's parameter shapes vs tiny tensors (same count, 201)
    big = tf.BertModel(tf.BertConfig()) if env.cuda else tf.BertModel(tf.BertConfig(
        hidden_size=64, num_attention_heads=2, intermediate_size=128, num_hidden_layers=12))
    shapes = [tuple(p.shape) for p in big.parameters()]
    del big

    def optimizer(kind, sizes):
        ps = [torch.nn.Parameter(torch.randn(s, device=dev) * 0.02) for s in sizes]
        for q in ps:
            q.grad = torch.randn_like(q) * 1e-3
        opt = (torch.optim.SGD(ps, lr=0.01, momentum=0.9) if kind == "sgd" else torch.optim.AdamW(ps, lr=1e-4))
        return opt.step
    n = len(shapes)
    cases[f"adamw step, {n} tensors of BERT-base's shapes"] = (optimizer("adamw", shapes), 2)
    cases[f"adamw step, {n} tensors of 256"] = (optimizer("adamw", [(256,)] * n), 2)
    cases[f"sgd step, {n} tensors of BERT-base's shapes"] = (optimizer("sgd", shapes), 3)
    cases[f"sgd step, {n} tensors of 256"] = (optimizer("sgd", [(256,)] * n), 3)
    x = torch.randn(1024, device=dev)
    probe = lambda: x.view(32, 32)  # noqa: E731
    kernels = {}
    for name, (body, _) in cases.items():
        for _ in range(3):
            body()
        env.sync()
        try:
            ev = rc.profile_device(body, calls=2, sync=env.sync)
            s = rc.summarize_kernels(ev, calls=2)
            kernels[name] = {"kernels_per_call": s["count"], "busy_us": s["busy_us"],
                             "names": [(k["name"][:100], k["count"]) for k in s["kernels"][:40]]}
        except Exception as e:  # noqa: BLE001
            kernels[name] = {"error": f"{type(e).__name__}: {e}"[:300]}
    rounds = []
    small = not env.cuda
    while len(rounds) < (2 if small else 5000) and time.monotonic() < env.deadline - 5:
        before = wall_per_iter(env, probe, 2000 if env.cuda else 20, warm=20)[0]
        per = {}
        for name, (body, iters) in cases.items():
            # host issue time per call (the GPU is never the limit for these tiny tensors; the optimizer at full
            # size issues ahead of its kernels), and the wall time with the final sync
            host, wall, _ = wall_per_iter(env, body, 1 if small else iters, warm=1)
            per[name] = [host * 1e6, wall * 1e6]
        after = wall_per_iter(env, probe, 2000 if env.cuda else 20, warm=20)[0]
        rounds.append({"probe_us": [before * 1e6, after * 1e6], "host_wall_us": per})
        if len(rounds) % 100 == 0:
            R.doc["block_host"] = {"cases": list(cases), "kernels": kernels, "rounds": rounds}
            R.save()
    R.doc["block_host"] = {"cases": list(cases), "kernels": kernels, "rounds": rounds,
                           "transformers": tf.__version__}
    R.save(force=True)
    print(f"block_host: {len(rounds)} rounds", file=sys.stderr)


def profile_top(call, rows=15):
    """One call of `call` (after two unprofiled ones) under torch.profiler (CPU and CUDA): its wall time and the
    operators that took the most CPU time in total, with their counts and CUDA time (what a step spends where)."""
    from torch.profiler import ProfilerActivity, profile
    for _ in range(2):
        call()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        t = time.perf_counter()
        call()
        torch.cuda.synchronize()
        wall = time.perf_counter() - t
    events = sorted(prof.key_averages(), key=lambda e: e.cpu_time_total, reverse=True)[:rows]
    return {"wall_us": wall * 1e6,
            "top": [{"name": e.key, "count": e.count, "cpu_total_us": e.cpu_time_total,
                     "self_cpu_us": e.self_cpu_time_total,
                     "device_total_us": getattr(e, "device_time_total", getattr(e, "cuda_time_total", 0))}
                    for e in events]}


def dp_host_cases(R):
    """nn.DataParallel's host side on one GPU (issue 16 item 1): what its Python costs per step apart from the
    collectives, which the system's links time.  Two parts of DataParallel.forward run PyTorch's own code here with
    every replica on GPU 0:
      replicate: torch.nn.parallel.replicate's Python (a copy of every module per replica, every parameter and
        buffer set on each) at 1, 2, 4 and 8 replicas.  Its broadcast (NCCL between GPUs) is replaced by one
        returning views of the source tensors for every replica, so the Python runs as on N GPUs and the copies are
        left out.
      parallel_apply: the replicas' forwards on one thread each (torch.nn.parallel.parallel_apply, the threads
        DataParallel starts every step), training mode (autograd records; autocast where named), tiny inputs (batch
        1, 64x64 images or 8 tokens) so the GPU is never the limit: the host's time for the N forwards, which
        contend for the interpreter lock.  All replicas share GPU 0 and its stream here (on N GPUs each thread has
        a device of its own): the same forwards on the meta device (no kernels, no CUDA driver) by N plain threads
        isolate the interpreter lock.
    Each case: rounds of N = 1, 2, 4, 8 interleaved, median over rounds; wall time per step with a final sync, and
    the GPU span of the step (events) to show the GPU was not the limit.  Also a bare Python thread started and
    joined (what parallel_apply's threads cost beyond their work)."""
    env = R.env
    dev = env.dev
    import threading
    from torch.nn.parallel import parallel_apply, replicate
    rep_mod = sys.modules["torch.nn.parallel.replicate"]
    import torchvision
    import transformers as tf
    out = R.doc.setdefault("dp_host", {"replicate": [], "parallel_apply": [], "meta_threads": []})
    counts = (1, 2, 4, 8)
    rounds = DP_ROUNDS or (9 if env.cuda else 2)

    def fake_broadcast(tensors, devices, detach=False):
        # every replica gets views of the source tensors: plain tensors, as Broadcast's outputs are (a Parameter
        # would take Module.__setattr__'s register_parameter path instead)
        return [[t.detach() if detach else t.view_as(t) for t in tensors] for _ in devices]

    @contextlib.contextmanager
    def broadcast_replaced():
        real = rep_mod._broadcast_coalesced_reshape
        rep_mod._broadcast_coalesced_reshape = fake_broadcast
        try:
            yield
        finally:
            rep_mod._broadcast_coalesced_reshape = real

    def chain(k):
        return torch.nn.Sequential(*[torch.nn.Linear(8, 8) for _ in range(k)])

    def bert(layers=12):
        return tf.BertModel(tf.BertConfig(num_hidden_layers=layers))

    models = {"resnet18": lambda: torchvision.models.resnet18(), "resnet50": lambda: torchvision.models.resnet50(),
              "bert-base": bert, "chain16": lambda: chain(16), "chain64": lambda: chain(64),
              "chain256": lambda: chain(256)}
    # -- replicate's Python: rounds outermost, every model and replica count in each (a noisy host's slow spells
    # spread over all of them)
    with broadcast_replaced():
        built = {name: build().to(dev).train() for name, build in models.items()}
        per = {name: {n: [] for n in counts} for name in built}
        for _ in range(rounds):
            if env.left() < 0:
                break
            for name, m in built.items():
                for n in counts:
                    iters = max(3, 40 // n) if env.cuda else 3
                    t = time.perf_counter()
                    for _ in range(iters):
                        rs = replicate(m, [0] * n)
                    per[name][n].append((time.perf_counter() - t) / iters * 1e6)
                    del rs
        for name, m in built.items():
            if not per[name][counts[0]]:
                continue
            info = {"model": name, "modules": sum(1 for _ in m.modules()),
                    "parameters": sum(1 for _ in m.parameters()), "buffers": sum(1 for _ in m.buffers()),
                    "host_us": {str(n): statistics.median(v) for n, v in per[name].items()},
                    "host_us_rounds": {str(n): v for n, v in per[name].items()}}
            out["replicate"].append(info)
            print(f"dp_host replicate {name}: {info['host_us']}", file=sys.stderr)
        del built
        R.save()

    # -- the replicas' forwards on threads
    def inputs_for(name, d, n):
        if name.startswith("resnet"):
            return [(torch.randn(1, 3, 64, 64, device=d),) for _ in range(n)]
        ids = torch.randint(0, 1000, (1, 8), device=d)
        return [(ids, torch.ones_like(ids)) for _ in range(n)]

    fwd_models = ["resnet18", "resnet50", "bert-base"]
    # parallel_apply needs CUDA devices: a smoke run exercises only replicate and the meta threads
    precisions_ = ["fp32", "amp-bf16"] if env.cuda else []
    with broadcast_replaced():
        for name in fwd_models:
            m = models[name]().to(dev).train()
            replicas = replicate(m, [0] * max(counts))
            for prec in precisions_:
                if env.left() < 0:
                    break
                per = {n: [] for n in counts}
                gpu = {n: [] for n in counts}
                ac = (torch.autocast("cuda", dtype=torch.bfloat16) if prec == "amp-bf16"
                      else contextlib.nullcontext())
                for _ in range(rounds):
                    for n in counts:
                        ins = inputs_for(name, dev, n)
                        with ac:  # parallel_apply hands the autocast state to its threads
                            _, wall, span = wall_per_iter(
                                env, lambda: parallel_apply(replicas[:n], ins, devices=[0] * n), 5, warm=2)
                        per[n].append(wall * 1e6)
                        if span:
                            gpu[n].append(span * 1e6)
                rec = {"model": name, "precision": prec, "input": "batch 1, 3x64x64" if name.startswith("resnet")
                       else "batch 1, 8 tokens", "mode": "train (autograd records)",
                       "wall_us": {str(n): statistics.median(v) for n, v in per.items()},
                       "wall_us_rounds": {str(n): v for n, v in per.items()},
                       "gpu_span_us": {str(n): statistics.median(v) for n, v in gpu.items() if v}}
                out["parallel_apply"].append(rec)
                print(f"dp_host parallel_apply {name} {prec}: {rec['wall_us']}", file=sys.stderr)
                R.save()
                if prec == "fp32" and name == "resnet18":
                    # The 2026-12-07 H200 run's step from one replica (inline) to two (threads) was 34 ms that the
                    # lock model does not describe: one profiled call at N = 1 and at N = 2 names where it goes.
                    try:
                        out["parallel_apply_profile"] = {str(n): profile_top(
                            lambda: parallel_apply(replicas[:n], inputs_for(name, dev, n), devices=[0] * n))
                            for n in (1, 2)}
                    except Exception as e:  # a diagnostic: its failure must not lose the measurements
                        out["parallel_apply_profile"] = {"error": f"{type(e).__name__}: {e}"[:300]}
                    R.save()
            del replicas, m

    # -- the same forwards on the meta device, plain threads: the interpreter lock alone
    for name in fwd_models:
        if env.left() < 0:
            break
        ms = [models[name]().to("meta").train() for _ in range(max(counts))]
        ins = inputs_for(name, "meta", max(counts))

        def run(n, reps):
            barrier = threading.Barrier(n + 1)

            def work(i):
                barrier.wait()
                for _ in range(reps):
                    ms[i](*ins[i])
            ths = [threading.Thread(target=work, args=(i,)) for i in range(n)]
            for th in ths:
                th.start()
            barrier.wait()
            t = time.perf_counter()
            for th in ths:
                th.join()
            return (time.perf_counter() - t) / reps * 1e6

        try:  # a model whose forward needs values cannot run on the meta device (transformers 5's BERT mask
            ms[0](*ins[0])  # creation calls .all() on the padding mask): recorded as skipped, the rest goes on
        except RuntimeError as e:
            out["meta_threads"].append({"model": name, "skipped": str(e).splitlines()[0][:200]})
            print(f"dp_host meta {name}: skipped ({e})", file=sys.stderr)
            continue
        per = {n: [] for n in counts}
        single = []
        for _ in range(rounds):
            t = time.perf_counter()
            for _ in range(3):
                ms[0](*ins[0])
            single.append((time.perf_counter() - t) / 3 * 1e6)
            for n in counts:
                per[n].append(run(n, 3))
        rec = {"model": name, "mode": "train (autograd records), meta device", "inline_us": statistics.median(single),
               "wall_us": {str(n): statistics.median(v) for n, v in per.items()},
               "wall_us_rounds": {str(n): v for n, v in per.items()}}
        out["meta_threads"].append(rec)
        print(f"dp_host meta {name}: inline {rec['inline_us']:.0f}, {rec['wall_us']}", file=sys.stderr)
        R.save()
    # a Python thread started and joined, doing nothing (what parallel_apply's threads cost beyond their work)
    def noop():
        pass
    starts = []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(2000):
            th = threading.Thread(target=noop)
            th.start()
            th.join()
        starts.append((time.perf_counter() - t) / 2000 * 1e6)
    out["thread_start_join_us"] = statistics.median(starts)
    out["transformers"] = tf.__version__
    out["torchvision"] = torchvision.__version__
    out["python"] = sys.version.split()[0]
    out["switch_interval_s"] = sys.getswitchinterval()
    R.save(force=True)


GROUPS = {
    "floor": floor_cases, "host": host_cases, "elementwise": cases_elementwise, "cast": cases_cast,
    "bn": cases_batchnorm, "bn_infer": cases_batchnorm_infer, "ln": cases_layernorm, "softmax": cases_softmax, "dropout": cases_dropout,
    "embedding": cases_embedding, "ce": cases_cross_entropy, "optim": cases_optimizer, "memset": cases_memset,
    "gemm": cases_gemm, "sdpa": cases_sdpa, "sdpa_dropout": lambda R: cases_sdpa(R, dropout=True),
    "pool": cases_pool, "autocast_host": autocast_host_cases,
    "compiled_host": compiled_host_cases, "scaler_host": scaler_host_cases, "adam_split_host": adam_split_host_cases,
    "host_speed": host_speed_cases,
    "kernel_gap": kernel_gap_cases, "block_host": block_host_cases, "reduce": cases_reduce,
    "copy": cases_copy, "generated": cases_generated, "dp_host": dp_host_cases,
}
ORDER = ["floor", "host", "bn", "bn_infer", "gemm", "elementwise", "cast", "ln", "softmax", "dropout", "ce", "embedding",
         "optim", "memset", "reduce", "copy", "generated", "sdpa", "sdpa_dropout", "pool", "autocast_host", "compiled_host",
         "scaler_host", "adam_split_host", "host_speed", "kernel_gap", "block_host", "dp_host"]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", default="-")
    p.add_argument("--git-sha", default="unknown")
    p.add_argument("--only", default="", help="comma-separated groups: " + ",".join(ORDER))
    p.add_argument("--deadline-s", type=float, default=1e9, help="stop starting new cases after this many seconds")
    p.add_argument("--smoke", action="store_true", help="CPU, tiny sizes: checks the script, measures nothing")
    p.add_argument("--inner", default="1", help="calls between two CUDA events: an integer, or 'auto' (about "
                                                "25 us of GPU work, at most 16: back-to-back time per call)")
    p.add_argument("--dp-rounds", type=int, default=0,
                   help="dp_host: rounds of every replica count (0: 9 on a GPU, 2 with --smoke; with --smoke and more "
                        "rounds, replicate's Python and the meta-device threads are measured on this CPU)")
    a = p.parse_args()
    global INNER, DP_ROUNDS
    DP_ROUNDS = a.dp_rounds
    INNER = a.inner if a.inner == "auto" else int(a.inner)
    if not torch.cuda.is_available() and not a.smoke:
        print("no CUDA device (use --smoke for a CPU check of the script)", file=sys.stderr)
        sys.exit(77)
    env = Env(a.smoke, time.monotonic() + a.deadline_s)
    if env.cuda:
        torch.backends.cudnn.benchmark = False  # default of an eager script; the kernels are cuDNN's heuristics'
    torch.manual_seed(0)
    doc = {"tool": "roofplan-ops", "schema": 1,
           "provenance": rc.provenance(a.git_sha, {"smoke": a.smoke, "l2_used_for_rotation_bytes": env.l2,
                                                   "cudnn_benchmark": torch.backends.cudnn.benchmark}),
           "method": {"timing": "CUDA events around `inner` calls (per-call time = elapsed / inner), spin kernel "
                                "before each group (GPU time only), median/p10/p90 over reps after 3 warm-up calls",
                      "inner": INNER,
                      "rotation": "input sets cycling through about 3x L2 when one set is smaller",
                      "check": "float64 reference on fresh random non-zero inputs before timing",
                      "bytes": "nominal: inputs read once, outputs written once", "flops": "multiply-add = 2"},
           "floor": [], "host": [], "cases": []}
    R = Runner(env, doc, a.json)
    # host_speed and block_host run until the deadline: only when named
    groups = [g for g in ORDER if g in a.only.split(",")] if a.only else \
        [g for g in ORDER if g not in ("host_speed", "block_host", "dp_host")]
    t0 = time.monotonic()
    for g in groups:
        tg = time.monotonic()
        GROUPS[g](R)
        print(f"== {g}: {time.monotonic() - tg:.1f} s (total {time.monotonic() - t0:.1f} s)", file=sys.stderr)
        doc.setdefault("group_wall_s", {})[g] = time.monotonic() - tg
    doc["wall_s"] = time.monotonic() - t0
    R.save(force=True)
    n_err = sum(1 for c in doc["cases"] if "error" in c)
    n_bad = sum(1 for c in doc["cases"] if c.get("verified") is False)
    n_skip = sum(1 for c in doc["cases"] if "skipped" in c)
    print(f"{len(doc['cases'])} cases, {n_err} errors, {n_bad} not verified, {n_skip} skipped; "
          f"{doc['wall_s']:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
