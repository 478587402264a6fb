#!/usr/bin/python3
"""Exports the ONNX files roofplan's import tests read (Debian python3-torch / python3-torchvision).

    /usr/bin/python3 tests/onnx/export_models.py OUT_DIR

Writes into OUT_DIR:
* alexnet, vgg16, googlenet, resnet18, resnet50 .onnx: torchvision definitions (weights=None), exported
  in training mode (BatchNormalization and Dropout stay in the graph instead of being folded into the
  convolutions) with export_params=False (parameters become graph inputs; the files stay small) and a
  dynamic batch axis;
* encoder.onnx: a 2-layer nn.TransformerEncoder (d=64, 4 heads, GELU feed-forward of 256, batch_first)
  with a dynamic batch and sequence axis, exported WITH its weights (initializers), opset 17;
* lstm.onnx: Linear → 2-layer LSTM → bidirectional GRU, static shapes;
* decoder.onnx: Conv2d → ConvTranspose2d (stride 2) → ConvTranspose2d (output_padding 1, groups 2), batch dynamic;
* malformed files for the error-path tests: truncated.onnx, wrong_magic.onnx, cycle.onnx, no_shape.onnx,
  absurd.onnx, unsupported.onnx (made with the onnx package);
* torch_counts.json: torch's own figures for encoder.onnx, lstm.onnx and decoder.onnx — parameter counts
  (sum of p.numel()) and multiply-adds per sample from the autograd profiler's FLOP counts of a batch-1
  forward (aten::mm/addmm/bmm/matmul: FLOPs = 2 x MACs), plus the LSTM's MACs by formula.
"""
import json
import os
import sys
import warnings

import onnx
import torch
import torch.nn as nn
import torchvision
from onnx import TensorProto, helper

warnings.filterwarnings("ignore")
OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)
torch.manual_seed(0)

CNNS = {
    "alexnet": lambda: torchvision.models.alexnet(weights=None),
    "vgg16": lambda: torchvision.models.vgg16(weights=None),
    "googlenet": lambda: torchvision.models.googlenet(weights=None, aux_logits=False, transform_input=False,
                                                      init_weights=False),
    "resnet18": lambda: torchvision.models.resnet18(weights=None),
    "resnet50": lambda: torchvision.models.resnet50(weights=None),
}


def export_cnn(name):
    model = CNNS[name]().eval()
    torch.onnx.export(model, torch.randn(1, 3, 224, 224), os.path.join(OUT, name + ".onnx"), export_params=False,
                      opset_version=17, training=torch.onnx.TrainingMode.TRAINING, input_names=["images"],
                      dynamic_axes={"images": {0: "batch"}})


MATRIX_OPS = {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm"}


def macs_from_profiler(model, *inputs):
    """Multiply-adds of one forward as torch's profiler counts them (grad enabled: under no_grad torch takes
    fused kernels whose FLOPs the 1.13 profiler does not report)."""
    with torch.autograd.profiler.profile(with_flops=True) as prof:
        model(*inputs)
    flops = sum(e.flops for e in prof.function_events if e.name in MATRIX_OPS and e.flops)
    return flops // 2


def export_encoder(counts):
    layer = nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=256, dropout=0.1, activation="gelu",
                                       batch_first=True)
    model = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False).eval()
    seq = 24
    x = torch.randn(1, seq, 64)
    torch.onnx.export(model, x, os.path.join(OUT, "encoder.onnx"), export_params=True, opset_version=17,
                      input_names=["tokens"], dynamic_axes={"tokens": {0: "batch", 1: "sequence"}})
    d, heads, ff, layers = 64, 4, 256, 2
    formula = layers * (seq * d * 3 * d + 2 * heads * seq * seq * (d // heads) + seq * d * d + 2 * seq * d * ff)
    counts["encoder"] = {"seq": seq, "params": sum(p.numel() for p in model.parameters()),
                         "profiler_macs": macs_from_profiler(model, x), "formula_macs": formula}


class Recurrent(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(32, 48)
        self.rnn = nn.LSTM(48, 64, num_layers=2)
        self.gru = nn.GRU(64, 24, bidirectional=True)

    def forward(self, x):  # x: [seq, batch, 32]
        return self.gru(self.rnn(self.proj(x))[0])[0]


def export_lstm(counts):
    model = Recurrent().eval()
    seq = 10
    x = torch.randn(seq, 1, 32)
    torch.onnx.export(model, x, os.path.join(OUT, "lstm.onnx"), export_params=False, opset_version=17,
                      input_names=["frames"])
    h = 64
    macs = seq * 32 * 48 + seq * (4 * h * (48 + h) + 4 * h * (h + h)) + seq * 2 * 3 * 24 * (64 + 24)
    counts["lstm"] = {"seq": seq, "params": sum(p.numel() for p in model.parameters()), "formula_macs": macs}


class Decoder(nn.Module):
    """Conv2d → ConvTranspose2d stride 2 → ConvTranspose2d with output_padding and groups (no bias)."""

    def __init__(self):
        super().__init__()
        self.enc = nn.Conv2d(3, 16, 3, stride=2, padding=1)
        self.up1 = nn.ConvTranspose2d(16, 8, 4, stride=2, padding=1)
        self.up2 = nn.ConvTranspose2d(8, 6, 3, stride=2, padding=1, output_padding=1, groups=2, bias=False)

    def forward(self, x):  # x: [batch, 3, 32, 32]
        return self.up2(torch.relu(self.up1(torch.relu(self.enc(x)))))


def export_decoder(counts):
    model = Decoder().eval()
    x = torch.randn(1, 3, 32, 32)
    torch.onnx.export(model, x, os.path.join(OUT, "decoder.onnx"), export_params=False, opset_version=17,
                      input_names=["images"], dynamic_axes={"images": {0: "batch"}})
    out = model(x).shape
    # Conv2d: Ho·Wo·co·ci·k²; ConvTranspose2d: H·W·ci·(co/groups)·k² (every input pixel scatters a kernel)
    macs = 16 * 16 * 16 * 3 * 9 + 16 * 16 * 16 * 8 * 16 + 32 * 32 * 8 * (6 // 2) * 9
    # torch 1.13's profiler reports no FLOPs for conv_transpose2d; it does for conv2d.  A transposed convolution
    # is the input gradient of the Conv2d with in/out channels swapped, on its output, with the same MACs:
    # profile those duals (and the encoder itself) and halve the FLOPs.
    flops = 0
    h = model.enc(x)
    for layer, inp in [(model.enc, x), (model.up1, h), (model.up2, model.up1(h))]:
        if isinstance(layer, nn.ConvTranspose2d):
            dual = nn.Conv2d(layer.out_channels, layer.in_channels, layer.kernel_size, stride=layer.stride,
                             padding=layer.padding, dilation=layer.dilation, groups=layer.groups, bias=False)
            probe = torch.randn(layer(inp).shape)
            assert dual(probe).shape == inp.shape
            layer, inp = dual, probe
        with torch.autograd.profiler.profile(with_flops=True) as prof:
            layer(inp)
        flops += sum(e.flops for e in prof.function_events if e.name == "aten::conv2d" and e.flops)
    counts["decoder"] = {"params": sum(p.numel() for p in model.parameters()), "formula_macs": macs,
                         "profiler_macs": flops // 2, "output": list(out[1:])}


def save(graph, name, opset=17):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(model.SerializeToString())


def malformed():
    with open(os.path.join(OUT, "resnet18.onnx"), "rb") as f:
        data = f.read()
    with open(os.path.join(OUT, "truncated.onnx"), "wb") as f:
        f.write(data[: len(data) // 2])
    with open(os.path.join(OUT, "wrong_magic.onnx"), "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])
    # a -> b -> a: a cycle
    cyc = helper.make_graph([helper.make_node("Add", ["x", "b"], ["a"], name="first"),
                             helper.make_node("Relu", ["a"], ["b"], name="second"),
                             helper.make_node("Relu", ["a"], ["y"], name="third")], "cycle", [x], [y])
    save(cyc, "cycle.onnx")
    # an input without any shape
    noshape = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="act")], "noshape",
                                [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)], [y])
    save(noshape, "no_shape.onnx")
    # a weight of 10^12 x 10^12
    w = helper.make_tensor_value_info("w", TensorProto.FLOAT, [10 ** 12, 10 ** 12])
    absurd = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="huge")], "absurd",
                               [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 10 ** 12]), w], [y])
    save(absurd, "absurd.onnx")
    # a Linear followed by an operator roofplan has no layer for (HardSwish), twice
    wt = helper.make_tensor_value_info("w", TensorProto.FLOAT, [8, 8])
    uns = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["h"], name="/fc/MatMul"),
                             helper.make_node("HardSwish", ["h"], ["h2"], name="/act/HardSwish"),
                             helper.make_node("HardSwish", ["h2"], ["y"], name="/act2/HardSwish")],
                            "unsupported", [x, wt], [y])
    save(uns, "unsupported.onnx")


def main():
    only = sys.argv[2:] or list(CNNS) + ["encoder", "lstm", "decoder", "malformed"]
    counts_file = os.path.join(OUT, "torch_counts.json")
    counts = json.load(open(counts_file)) if os.path.exists(counts_file) else {}
    for name in only:
        if name in CNNS:
            export_cnn(name)
        elif name == "encoder":
            export_encoder(counts)
        elif name == "lstm":
            export_lstm(counts)
        elif name == "decoder":
            export_decoder(counts)
        elif name == "malformed":
            malformed()
    if counts:
        with open(counts_file, "w") as f:
            json.dump(counts, f, indent=2)
    print("exported", " ".join(only), "to", OUT)


if __name__ == "__main__":
    main()
