#!/usr/bin/python3
"""Checks `roofplan inspect --model-file X.onnx` against independent counts.

    /usr/bin/python3 tests/onnx/check_import.py --roofplan build/tools/roofplan --dir ONNX_DIR

* torchvision CNNs (exported by export_models.py): the imported model must have exactly the zoo model's
  parameter count and total MACs, and the same per-layer MACs layer by layer (the list of layers with MACs,
  in graph order, against the zoo's list in its order), and the same number of layers.
* encoder.onnx (nn.TransformerEncoder, weights included): parameters equal to torch's sum of p.numel(), MACs
  per sample equal to torch's profiler count of the batch-1 forward (and to the formula), at the exported
  sequence length and at another one (--seq 40: the dynamic axis really is re-inferred).
* lstm.onnx: parameters equal to torch's; MACs equal to the LSTM and GRU formulas.
* decoder.onnx (Conv2d + two ConvTranspose2d): parameters equal to torch's, MACs equal to the formula
  (H·W·ci·(co/groups)·k² per transposed convolution) and to torch's profiler count of the dual Conv2d of
  each transposed convolution, last output shape equal to torch's forward.
Prints one PASS/FAIL line per check; exit 0 iff all pass.
"""
import argparse
import json
import subprocess
import sys


def inspect(roofplan, *args):
    out = subprocess.run([roofplan, "inspect", "--json", *args], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--roofplan", required=True)
    ap.add_argument("--dir", required=True)
    a = ap.parse_args()
    failures = []

    def check(label, ok, detail=""):
        print(("PASS " if ok else "FAIL ") + label + ("" if ok else ": " + detail))
        if not ok:
            failures.append(label)

    for name in ["alexnet", "vgg16", "googlenet", "resnet18", "resnet50"]:
        got = inspect(a.roofplan, "--model-file", f"{a.dir}/{name}.onnx")
        zoo = inspect(a.roofplan, "--model", name)
        check(f"{name} params", got["params"] == zoo["params"], f"{got['params']} != zoo {zoo['params']}")
        check(f"{name} MACs", got["macs_per_sample"] == zoo["macs_per_sample"],
              f"{got['macs_per_sample']} != zoo {zoo['macs_per_sample']}")
        g = [(l["type"], l["macs"], l["params"]) for l in got["layers"] if l["macs"]]
        z = [(l["type"], l["macs"], l["params"]) for l in zoo["layers"] if l["macs"]]
        first = next((i for i, (x, y) in enumerate(zip(g, z)) if x != y), None)
        check(f"{name} per-layer MACs ({len(z)} layers)", g == z,
              f"{len(g)} vs {len(z)} layers; first difference at {first}: {g[first] if first is not None else ''} "
              f"vs {z[first] if first is not None else ''}")
        check(f"{name} layer count", len(got["layers"]) == len(zoo["layers"]),
              f"{len(got['layers'])} != {len(zoo['layers'])}")
        check(f"{name} nothing unsupported", got["import"]["unsupported"] == [], str(got["import"]["unsupported"]))

    with open(f"{a.dir}/torch_counts.json") as f:
        torch_counts = json.load(f)
    enc = torch_counts["encoder"]
    got = inspect(a.roofplan, "--model-file", f"{a.dir}/encoder.onnx", "--seq", str(enc["seq"]))
    check("encoder params = torch", got["params"] == enc["params"], f"{got['params']} != {enc['params']}")
    check("encoder MACs = torch profiler", got["macs_per_sample"] == enc["profiler_macs"],
          f"{got['macs_per_sample']} != {enc['profiler_macs']}")
    check("encoder MACs = formula", got["macs_per_sample"] == enc["formula_macs"])
    check("encoder nothing unsupported", got["import"]["unsupported"] == [], str(got["import"]["unsupported"]))
    types = [l["type"] for l in got["layers"]]
    check("encoder GELU recognised", types.count("gelu") == 2, str(types))
    check("encoder attention products", types.count("matmul") == 4, str(types))
    seq, d, heads, ff = 40, 64, 4, 256
    formula = 2 * (seq * d * 3 * d + 2 * heads * seq * seq * (d // heads) + seq * d * d + 2 * seq * d * ff)
    got40 = inspect(a.roofplan, "--model-file", f"{a.dir}/encoder.onnx", "--seq", str(seq))
    check("encoder at --seq 40 = formula", got40["macs_per_sample"] == formula, f"{got40['macs_per_sample']} != {formula}")

    lstm = torch_counts["lstm"]
    got = inspect(a.roofplan, "--model-file", f"{a.dir}/lstm.onnx")
    check("lstm params = torch", got["params"] == lstm["params"], f"{got['params']} != {lstm['params']}")
    check("lstm MACs = formula", got["macs_per_sample"] == lstm["formula_macs"],
          f"{got['macs_per_sample']} != {lstm['formula_macs']}")
    check("lstm, gru layers", [l["type"] for l in got["layers"]] == ["linear", "lstm", "lstm", "gru"],
          str([l["type"] for l in got["layers"]]))

    dec = torch_counts["decoder"]
    got = inspect(a.roofplan, "--model-file", f"{a.dir}/decoder.onnx")
    check("decoder params = torch", got["params"] == dec["params"], f"{got['params']} != {dec['params']}")
    check("decoder MACs = formula", got["macs_per_sample"] == dec["formula_macs"],
          f"{got['macs_per_sample']} != {dec['formula_macs']}")
    check("decoder MACs = torch profiler (dual convolutions)", got["macs_per_sample"] == dec["profiler_macs"],
          f"{got['macs_per_sample']} != {dec['profiler_macs']}")
    check("decoder nothing unsupported", got["import"]["unsupported"] == [], str(got["import"]["unsupported"]))
    check("decoder layers", [l["type"] for l in got["layers"]] ==
          ["conv2d", "relu", "conv_transpose2d", "relu", "conv_transpose2d"], str([l["type"] for l in got["layers"]]))
    check("decoder output = torch's", got["layers"][-1]["output_shape"] == dec["output"],
          f"{got['layers'][-1]['output_shape']} != {dec['output']}")

    print(f"{len(failures)} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
