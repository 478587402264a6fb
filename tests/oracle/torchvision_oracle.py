#!/usr/bin/python3
"""External oracle: check roofplan's model zoo against torchvision.

roofplan counts parameters and MACs from its own hand-written model
descriptions.  This script rebuilds the same networks in PyTorch
(torchvision 0.14 definitions, plus a hand-built OverFeat "fast" model
following soumith/convnet-benchmarks), runs one batch-1 forward pass with
hooks on every leaf module, and compares what torch actually computes with
what `roofplan inspect --model M --batch 1 --json` reports:

* total parameter count, exactly (sum of p.numel() over the torch model);
* for every torch nn.Conv2d / nn.Linear leaf: roofplan has exactly one layer
  with the same module path, of type conv2d / linear, with the same per-sample
  output shape, the same parameter count and the same MACs
  (conv: Ho*Wo*Cout*(Cin/groups)*kh*kw, linear: out*in*leading dims; no bias);
* for every other torch leaf (BatchNorm2d, ReLU, pools, Dropout, ...) that has
  a roofplan layer of the same name: same type, output shape and params;
* roofplan's summed conv2d+linear MACs equal torch's.  roofplan's total
  macs_per_sample is printed next to it but not enforced (it may also count
  MACs in other layer types).

Because the shapes come from a real forward pass, this proves roofplan's
shape inference, layer naming and conv/linear MAC formulas agree with the
reference implementations, not just the totals.  roofplan layers without a
torch module (functional add/concat/relu/flatten) are ignored.

Run with the system interpreter (Debian python3-torch / python3-torchvision):
    /usr/bin/python3 tests/oracle/torchvision_oracle.py --roofplan build/roofplan
Prints one PASS/FAIL line per model, then "N passed, M failed"; exit 0 iff all
pass.  Never downloads weights (weights=None).
"""
import argparse
import json
import subprocess
import sys

import torch
import torch.nn as nn
import torchvision

MODELS = ["alexnet", "vgg16", "vgg19", "googlenet", "resnet18", "resnet34",
          "resnet50", "resnet101", "resnet152", "overfeat"]
# torch leaf class -> roofplan "type" string.
TYPES = {nn.Conv2d: "conv2d", nn.Linear: "linear", nn.BatchNorm2d: "batchnorm2d",
         nn.ReLU: "relu", nn.MaxPool2d: "maxpool2d", nn.AvgPool2d: "avgpool2d",
         nn.AdaptiveAvgPool2d: "adaptive_avgpool2d", nn.Dropout: "dropout",
         nn.Flatten: "flatten"}
MAX_REPORTED = 20


class OverFeat(nn.Module):
    """OverFeat "fast" (torch7 model from soumith/convnet-benchmarks), 3x231x231."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 96, 11, stride=4), nn.ReLU(inplace=True), nn.MaxPool2d(2, 2),  # 0-2
            nn.Conv2d(96, 256, 5), nn.ReLU(inplace=True), nn.MaxPool2d(2, 2),          # 3-5
            nn.Conv2d(256, 512, 3, padding=1), nn.ReLU(inplace=True),                   # 6-7
            nn.Conv2d(512, 1024, 3, padding=1), nn.ReLU(inplace=True),                  # 8-9
            nn.Conv2d(1024, 1024, 3, padding=1), nn.ReLU(inplace=True),                 # 10-11
            nn.MaxPool2d(2, 2))                                                         # 12
        self.classifier = nn.Sequential(
            nn.Linear(1024 * 6 * 6, 3072), nn.ReLU(inplace=True),                       # 0-1
            nn.Linear(3072, 4096), nn.ReLU(inplace=True),                               # 2-3
            nn.Linear(4096, 1000))                                                      # 4

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))


def build(name):
    """Return (torch model in eval mode, input spatial size)."""
    if name == "overfeat":
        return OverFeat().eval(), 231
    if name == "googlenet":
        model = torchvision.models.googlenet(weights=None, aux_logits=False,
                                             transform_input=False, init_weights=False)
    else:
        model = getattr(torchvision.models, name)(weights=None)
    return model.eval(), 224


def torch_facts(name):
    """Run one batch-1 forward pass; return (total params, {leaf name: facts})."""
    model, hw = build(name)
    leaves = {n: m for n, m in model.named_modules() if not list(m.children())}
    facts = {n: {"module": m, "shapes": [], "macs": [],
                 "params": sum(p.numel() for p in m.parameters())}
             for n, m in leaves.items()}

    def hook(n):
        def record(mod, _inp, out):
            if not isinstance(out, torch.Tensor):
                return
            shape = list(out.shape[1:])
            facts[n]["shapes"].append(shape)
            per_sample = out.numel() // out.shape[0]
            if isinstance(mod, nn.Conv2d):
                kh, kw = mod.kernel_size
                facts[n]["macs"].append(per_sample * (mod.in_channels // mod.groups) * kh * kw)
            elif isinstance(mod, nn.Linear):
                facts[n]["macs"].append(per_sample * mod.in_features)
        return record

    handles = [m.register_forward_hook(hook(n)) for n, m in leaves.items()]
    torch.manual_seed(0)
    with torch.no_grad():
        model(torch.randn(1, 3, hw, hw))
    for h in handles:
        h.remove()
    return sum(p.numel() for p in model.parameters()), facts


def run_roofplan(binary, name):
    """Run the CLI; return (report dict, None) or (None, error message)."""
    cmd = [binary, "inspect", "--model", name, "--batch", "1", "--json"]
    shown = " ".join(cmd)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"cannot run `{shown}`: {e}"
    if proc.returncode != 0:
        return None, f"`{shown}` exited {proc.returncode}; stderr: {proc.stderr.strip()!r}"
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError as e:
        return None, f"`{shown}` printed invalid JSON ({e}); stderr: {proc.stderr.strip()!r}"
    if not isinstance(report, dict) or not isinstance(report.get("layers"), list):
        return None, f"`{shown}` JSON is not an object with a 'layers' list"
    return report, None


def compare(name, total, facts, report):
    """Return the list of mismatches between torch facts and a roofplan report."""
    bad = []
    if report.get("model", name) != name:
        bad.append(f"model field is {report.get('model')!r}")
    if report.get("params") != total:
        bad.append(f"params: torch {total} vs roofplan {report.get('params')}")
    by_name = {}
    for layer in report["layers"]:
        by_name.setdefault(layer.get("name"), []).append(layer)

    torch_macs = 0
    for n, f in facts.items():
        mod, ours = f["module"], by_name.get(n, [])
        kind = TYPES.get(type(mod))
        heavy = isinstance(mod, (nn.Conv2d, nn.Linear))
        if heavy:
            if len(f["macs"]) != 1:
                bad.append(f"{n}: torch ran this {type(mod).__name__} {len(f['macs'])} times")
                continue
            torch_macs += f["macs"][0]
            if len(ours) != 1:
                bad.append(f"{n}: expected one roofplan layer of this name, found {len(ours)}")
                continue
            if ours[0].get("macs") != f["macs"][0]:
                bad.append(f"{n}: macs torch {f['macs'][0]} vs roofplan {ours[0].get('macs')}")
        for layer in ours:
            if kind is not None and layer.get("type") != kind:
                bad.append(f"{n}: type torch {kind} vs roofplan {layer.get('type')!r}")
            if f["shapes"] and layer.get("output_shape") not in f["shapes"]:
                seen = [x for i, x in enumerate(f["shapes"]) if x not in f["shapes"][:i]]
                want = seen[0] if len(seen) == 1 else f"one of {seen}"
                bad.append(f"{n}: output_shape torch {want} vs roofplan {layer.get('output_shape')}")
            if layer.get("params") != f["params"]:
                bad.append(f"{n}: params torch {f['params']} vs roofplan {layer.get('params')}")

    heavy_layers = [l for l in report["layers"] if l.get("type") in ("conv2d", "linear")]
    ours_macs = sum(l.get("macs") or 0 for l in heavy_layers)
    if ours_macs != torch_macs:
        known = {n for n, f in facts.items() if isinstance(f["module"], (nn.Conv2d, nn.Linear))}
        extra = [l.get("name") for l in heavy_layers if l.get("name") not in known]
        bad.append(f"conv2d+linear MACs: torch {torch_macs} vs roofplan {ours_macs}"
                   + (f" (roofplan-only conv/linear layers: {extra[:5]})" if extra else ""))
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--roofplan", required=True, help="path to the roofplan CLI binary")
    ap.add_argument("--models", default=",".join(MODELS),
                    help="comma-separated subset of: " + ",".join(MODELS))
    ap.add_argument("--verbose", action="store_true", help="print per-layer torch facts")
    args = ap.parse_args()
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    unknown = [m for m in models if m not in MODELS]
    if unknown or not models:
        ap.error(f"unknown model(s) {unknown}; choose from {','.join(MODELS)}")

    passed = failed = 0
    for name in models:
        total, facts = torch_facts(name)
        torch_macs = sum(sum(f["macs"]) for f in facts.values())
        report, err = run_roofplan(args.roofplan, name)
        bad = [err] if err else compare(name, total, facts, report)
        if args.verbose:
            for n, f in facts.items():
                print(f"  {name} {n:40s} {type(f['module']).__name__:18s} "
                      f"out={f['shapes']} params={f['params']} macs={f['macs']}")
        summary = f"params={total} conv+linear MACs={torch_macs}"
        if report is not None:
            summary += f" (roofplan macs_per_sample={report.get('macs_per_sample')})"
        if bad:
            failed += 1
            print(f"FAIL {name}: {len(bad)} mismatch(es); torch {summary}")
            for line in bad[:MAX_REPORTED]:
                print(f"  - {line}")
            if len(bad) > MAX_REPORTED:
                print(f"  ... and {len(bad) - MAX_REPORTED} more")
        else:
            passed += 1
            print(f"PASS {name} {summary}")
        sys.stdout.flush()
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
