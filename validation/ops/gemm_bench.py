#!/usr/bin/env python3
"""Per-shape GEMM times of linear layers as eager PyTorch runs them (issue 14, item 2: "when a calibrated profile
holds the exact GEMM/conv shape, use the measured time"), the companion of conv_bench.py.  A single-operator
micro-benchmark: one matrix product at a time, never a network.

For every distinct linear layer (in features, out features, bias) of the Hugging Face models the end-to-end suite
runs (BERT-base for question answering and multiple choice, GPT-2 with its LM head; shapes from forward hooks on
nn.Linear and transformers' Conv1D, whose x @ W is measured as x @ W^T like nn.Linear), in each precision mode as
validation/e2e/e2e_suite.py runs them (fp32: matmul precision "highest"; tf32: "high"; bf16 and fp16: tensors of
that dtype, as autocast hands them to cuBLAS), at each row count M (tokens: batch x sequence), each pass on the
ATen operator autograd calls for it:
  forward            aten.addmm(bias, x, W^T) (aten.mm without a bias): cuBLAS or cuBLASLt with the bias epilogue
  backward-data      aten.mm(dY, W)
  backward-weight    aten.mm(dY^T, X)     (the bias gradient is a reduction of its own, not measured here)
Method (validation: METHOD.md), as conv_bench.py:
  1. correctness: at M = 64, on fresh random non-zero inputs, each pass against the same pass in float64 by
     ||out - ref|| / ||ref|| (bounds per mode below); a failing pass is still timed and recorded "verified": false.
  2. warm-up: two calls.
  3. time: CUDA events around each call with a spin kernel before it; median of --reps.
  4. kernels: one torch.profiler pass per shape and mode over every M and pass (3 calls each, spin kernels as
     separators): kernels per call (cuBLAS's split-K paths add a memset, a scaling kernel and a reduction) and
     their device time by class.
Output: JSON (tool "roofplan-gemm-shapes") with provenance; `roofplan calibrate` reads it.

  python3 validation/ops/gemm_bench.py --json gemm.json --modes fp32,tf32,bf16,fp16 --git-sha SHA [--deadline-s 500]
"""
import argparse
import sys
import time

import torch

from conv_bench import measure_runs, rel_error, spin_name

sys.path.insert(0, __file__.rsplit("/", 2)[0] + "/e2e")
import rp_common as rc  # noqa: E402

MODES = {"fp32": (torch.float32, "highest"), "tf32": (torch.float32, "high"),
         "bf16": (torch.bfloat16, "highest"), "fp16": (torch.float16, "highest")}
TOL = {"fp32": 1e-5, "tf32": 5e-3, "bf16": 2e-2, "fp16": 4e-3}
PASSES = ("forward", "backward_data", "backward_weight")
ROWS = "1,2,4,8,16,32,64,128,256,512,1024,2048,3072,4096,5120,6144,8192,12288,16384,24576,32768"


def linear_shapes(names):
    """The distinct linear layers of the suite's transformer models: {(in, out, bias): [models]}, in order of first
    use (random weights; built on the CPU, one short forward with hooks)."""
    import transformers as tf
    from transformers.pytorch_utils import Conv1D
    builders = {"bert-qa": lambda: tf.BertForQuestionAnswering(tf.BertConfig()),
                "bert-swag": lambda: tf.BertForMultipleChoice(tf.BertConfig()),
                "gpt2": lambda: tf.GPT2LMHeadModel(tf.GPT2Config())}
    shapes = {}
    for name in names:
        model = builders[name]().eval()
        seen = []

        def hook(m, _inp, _out):
            if isinstance(m, Conv1D):
                seen.append((m.weight.shape[0], m.weight.shape[1], m.bias is not None))
            else:
                seen.append((m.in_features, m.out_features, m.bias is not None))
        hs = [m.register_forward_hook(hook) for m in model.modules() if isinstance(m, (torch.nn.Linear, Conv1D))]
        ids = torch.randint(0, 1000, (1, 4, 8) if name == "bert-swag" else (1, 8))
        with torch.no_grad():
            model(input_ids=ids)
        for h in hs:
            h.remove()
        for k in seen:
            if name not in shapes.setdefault(k, []):
                shapes[k].append(name)
    return shapes


class Gemm:
    """One linear shape in one mode at M rows: its tensors and its three passes as callables."""

    def __init__(self, key, mode, rows, dtype=None, seed=0):
        fin, fout, bias = key
        dt = dtype or MODES[mode][0]
        g = torch.Generator(device="cuda").manual_seed(seed)
        self.x = torch.randn(rows, fin, device="cuda", dtype=dt, generator=g)
        self.w = torch.randn(fout, fin, device="cuda", dtype=dt, generator=g) / fin ** 0.5
        self.b = torch.randn(fout, device="cuda", dtype=dt, generator=g) if bias else None
        self.gy = torch.randn(rows, fout, device="cuda", dtype=dt, generator=g)

    def forward(self):
        if self.b is None:
            return torch.ops.aten.mm(self.x, self.w.t())
        return torch.ops.aten.addmm(self.b, self.x, self.w.t())

    def backward_data(self):
        return torch.ops.aten.mm(self.gy, self.w)

    def backward_weight(self):
        return torch.ops.aten.mm(self.gy.t(), self.x)

    def run(self, p):
        return getattr(self, p)()


def verify(key, mode, p):
    """The pass at M = 64 against float64 on the same inputs."""
    c = Gemm(key, mode, 64, seed=1234)
    ref = Gemm(key, mode, 64, dtype=torch.float64, seed=1234)
    for name in ("x", "w", "b", "gy"):
        if getattr(c, name) is not None:
            getattr(ref, name).copy_(getattr(c, name).double())
    err = rel_error(c.run(p), ref.run(p))
    return err, err <= TOL[mode]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", required=True)
    ap.add_argument("--git-sha", default="unknown")
    ap.add_argument("--models", default="bert-qa,bert-swag,gpt2")
    ap.add_argument("--modes", default="fp32,tf32,bf16,fp16")
    ap.add_argument("--rows", default=ROWS)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--limit", type=int, default=0, help="only the first N shapes (a quick check)")
    ap.add_argument("--deadline-s", type=float, default=500)
    a = ap.parse_args()
    t0 = time.monotonic()
    shapes = list(linear_shapes(a.models.split(",")).items())
    if a.limit:
        shapes = shapes[:a.limit]
    rows_list = [int(r) for r in a.rows.split(",")]
    spin = spin_name()
    doc = {"tool": "roofplan-gemm-shapes",
           "provenance": rc.provenance(a.git_sha, {"reps": a.reps}),
           "gemms": []}
    for mode in a.modes.split(","):
        torch.set_float32_matmul_precision(MODES[mode][1])
        for key, models in shapes:
            if time.monotonic() - t0 > a.deadline_s:
                doc["incomplete"] = f"stopped at the deadline ({a.deadline_s:.0f} s)"
                break
            fin, fout, bias = key
            rec = {"mode": mode, "in_features": fin, "out_features": fout, "bias": bias, "models": models,
                   "verified": {}, "rel_error": {}, "runs": []}
            for p in PASSES:
                err, ok = verify(key, mode, p)
                rec["rel_error"][p], rec["verified"][p] = err, ok
            runs = measure_runs(lambda m: Gemm(key, mode, m), rows_list, "rows", PASSES, a.reps, spin)
            rec["runs"] = runs
            doc["gemms"].append(rec)
            rc.write_json(a.json, doc)
            at = [r for r in runs if r.get("rows") == 128 and "error" not in r]
            print(mode, models[0], fin, fout, bias, f"{time.monotonic() - t0:.0f}s",
                  {r["pass"]: (round(r["median_s"] * 1e6, 1), r.get("kernels_per_call")) for r in at},
                  {p: f"{rec['rel_error'][p]:.1e}" for p in PASSES}, flush=True)
    rc.write_json(a.json, doc)


if __name__ == "__main__":
    main()
