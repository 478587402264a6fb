"""from_torch's edge cases (review of 2026-11-24): parameters counted once by identity, batch axes folded into
others, submodules' training modes, the torch.export route's dropout, adaptive pooling that keeps an axis, and
operations written with keywords, in place, or stacked.  Every figure is counted by hand from the shapes (or is
torch's own parameter count) and written out in the test."""
import json

import pytest

torch = pytest.importorskip("torch")
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import roofplan  # noqa: E402


def macs(model):
    return model.inspect().to_dict()["macs_per_sample"]


class FrozenNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.bn = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        return self.fc(self.bn(self.conv(x)).mean((2, 3)))


def test_every_submodule_keeps_its_training_mode():
    module = FrozenNorm().train()
    module.bn.eval()  # a frozen BatchNorm inside a model in training
    roofplan.from_torch(module, torch.randn(2, 3, 8, 8))
    assert module.training and module.conv.training and module.fc.training
    assert not module.bn.training
    module.eval()
    module.fc.train()
    roofplan.from_torch(module, torch.randn(2, 3, 8, 8))
    assert [m.training for m in (module, module.conv, module.bn, module.fc)] == [False, False, False, True]


def layers_of(model):
    return {l["name"]: l for l in model.inspect().to_dict()["layers"]}


class Shared(nn.Module):
    """One convolution, one LayerNorm and one linear layer, each called twice on the same shape."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)  # 8·3·9 + 8 = 224 parameters
        self.conv = nn.Conv2d(8, 8, 3, padding=1)  # 8·8·9 + 8 = 584
        self.norm = nn.LayerNorm(8)  # 16
        self.fc = nn.Linear(8, 8)  # 72

    def forward(self, x):  # [B, 3, 6, 6]
        h = self.conv(self.conv(self.stem(x)))
        t = h.flatten(2).transpose(1, 2)  # [B, 36, 8]
        return self.fc(self.fc(self.norm(self.norm(t))))


def test_a_module_called_twice_counts_its_parameters_once():
    module = Shared()
    model = roofplan.from_torch(module, torch.randn(2, 3, 6, 6))
    assert model.parameters == sum(p.numel() for p in module.parameters()) == 224 + 584 + 16 + 72
    # MACs per example, every call: stem 36 positions·8·27, conv twice 2·36·8·72, fc twice 2·36·64.
    assert macs(model) == 36 * 8 * 27 + 2 * 36 * 8 * 72 + 2 * 36 * 64 == 53_856
    layers = layers_of(model)
    assert layers["conv"]["repeat"] == 2 and layers["norm"]["repeat"] == 2 and layers["conv"]["macs"] == 41_472
    assert layers["fc:2"]["params"] == 0  # a linear layer reusing counted weights is tied
    assert model.unsupported == []


class SharedOnAnotherShape(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 3, 1)
        self.conv = nn.Conv2d(3, 3, 3, padding=1)

    def forward(self, x):  # [B, 3, 8, 8]
        h = self.conv(self.stem(x))
        return self.conv(h[:, :, :4, :4])


def test_a_module_called_again_on_another_shape_is_reported_not_counted_twice():
    module = SharedOnAnotherShape()
    model = roofplan.from_torch(module, torch.randn(2, 3, 8, 8))
    assert model.parameters == sum(p.numel() for p in module.parameters()) == 12 + 84
    assert macs(model) == 64 * 3 * 3 + 64 * 3 * 27  # stem and the first call of conv; the second is reported
    (entry,) = model.unsupported
    assert entry["type"] == "conv2d" and entry["first"] == "conv"
    assert "reuses the parameters of 'conv'" in entry["reason"]
    with pytest.raises(ValueError, match="conv2d at 'conv' is not supported"):
        roofplan.from_torch(module, torch.randn(2, 3, 8, 8), strict=True)


class FunctionalNorm(nn.Module):
    def __init__(self, affine):
        super().__init__()
        self.affine = affine
        if affine:
            self.weight = nn.Parameter(torch.ones(8))
            self.bias = nn.Parameter(torch.zeros(8))

    def forward(self, x):
        if self.affine:
            return F.layer_norm(x, (8,), self.weight, self.bias)
        return F.layer_norm(x, (8,))


@pytest.mark.parametrize("affine", [False, True])
def test_functional_layer_norm_has_parameters_only_when_given(affine):
    module = FunctionalNorm(affine)
    model = roofplan.from_torch(module, torch.randn(2, 3, 8))
    assert model.parameters == sum(p.numel() for p in module.parameters()) == (16 if affine else 0)
    (layer,) = model.inspect().to_dict()["layers"]
    assert layer["type"] == "layernorm" and layer["params"] == (16 if affine else 0)
    assert model.unsupported == []


class BareParameters(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.scale = nn.Parameter(torch.ones(8))
        self.shift = nn.Parameter(torch.zeros(3, 8))

    def forward(self, x):  # [B, 3, 8]
        return self.scale * self.fc(x) + self.shift


def test_a_parameter_used_directly_is_reported_and_its_operation_has_the_broadcast_shape():
    module = BareParameters()
    model = roofplan.from_torch(module, torch.randn(2, 3, 8))
    layers = model.inspect().to_dict()["layers"]
    assert [(l["type"], l["output_shape"]) for l in layers] == [("linear", [3, 8]), ("multiply", [3, 8]),
                                                                 ("add", [3, 8])]
    # No roofplan layer owns a bare parameter: fc's 72 are counted, scale's 8 and shift's 24 are reported.
    assert model.parameters == 72 == sum(p.numel() for p in module.fc.parameters())
    (entry,) = model.unsupported
    assert entry["type"] == "parameter outside a module" and entry["count"] == 2 and entry["first"] == "scale"
    with pytest.raises(ValueError, match="parameter outside a module at 'scale'"):
        roofplan.from_torch(module, torch.randn(2, 3, 8), strict=True)


class Folded(nn.Module):
    """The batch folded with other axes (a view to rows, heads folded into the batch of bmm and of a
    convolution) and moved behind another axis (transpose(0, 1))."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 16)
        self.conv = nn.Conv2d(1, 4, 3)
        self.out = nn.Linear(16, 4)

    def forward(self, x):  # [B, 6, 8]
        b, t = x.size(0), x.size(1)
        y = self.fc(x.view(-1, 8))  # [B·6, 16]
        heads = y.view(b * 2, t, 8)  # [B·2, 6, 8]
        scores = torch.bmm(heads, heads.transpose(1, 2))  # [B·2, 6, 6]
        maps = self.conv(scores.view(b * 2, 1, t, t))  # [B·2, 4, 4, 4]
        seq_first = y.view(b, t, 16).transpose(0, 1)  # [6, B, 16]
        return maps, self.out(seq_first)


def profiler_macs_per_example(module, x):
    """The MACs of the products and convolutions torch's profiler counts (2 FLOPs a MAC), per example."""
    from torch.profiler import ProfilerActivity, profile
    with torch.no_grad(), profile(activities=[ProfilerActivity.CPU], with_flops=True) as prof:
        module(x)
    flops = {e.key: e.flops for e in prof.key_averages() if e.flops}
    conv = next((flops[k] for k in ("aten::conv2d", "aten::convolution", "aten::_convolution") if k in flops), 0)
    total = conv + sum(flops.get(k, 0) for k in ("aten::addmm", "aten::mm", "aten::bmm", "aten::matmul"))
    return total // 2 // x.shape[0]


def test_a_batch_folded_with_other_axes_counts_every_row_and_product():
    module = Folded().eval()
    x = torch.randn(2, 6, 8)
    model = roofplan.from_torch(module, x)
    # Per example: fc 6 rows·8·16, bmm 2 products·6·8·6, conv 2 maps·16 positions·4·9, out 6 rows·16·4.
    by_hand = 6 * 8 * 16 + 2 * 6 * 8 * 6 + 2 * 16 * 4 * 9 + 6 * 16 * 4
    assert macs(model) == by_hand == 2_880 == profiler_macs_per_example(module, x)
    layers = layers_of(model)
    assert layers["fc"]["macs"] == 768 and layers["bmm"]["macs"] == 576 and layers["conv"]["macs"] == 1_152
    assert layers["conv"]["repeat"] == 2 and layers["out"]["macs"] == 384
    assert model.parameters == sum(p.numel() for p in module.parameters())
    assert model.unsupported == []  # x.size(0) * 2 is arithmetic on Python integers: no kernel, nothing to report
    # Batch 3: the moved axis (6) is still a multiple of the batch and counts the same per example.
    assert macs(roofplan.from_torch(module, torch.randn(3, 6, 8))) == by_hand


def test_an_operation_whose_first_axis_is_not_the_batch_is_reported():
    module = Folded().eval()
    model = roofplan.from_torch(module, torch.randn(4, 6, 8))  # out reads [6, 4, 16]: 6 is not a multiple of 4
    assert macs(model) == 6 * 8 * 16 + 2 * 6 * 8 * 6 + 2 * 16 * 4 * 9
    (entry,) = model.unsupported
    assert entry["type"] == "linear" and entry["first"] == "out" and "[6, 4, 16]" in entry["reason"]
    with pytest.raises(ValueError, match="linear at 'out' is not supported"):
        roofplan.from_torch(module, torch.randn(4, 6, 8), strict=True)


class KeepHeight(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d((None, 7))

    def forward(self, x):  # [B, 3, 14, 14]
        return self.pool(x) + F.adaptive_avg_pool2d(x, (5, None))[:, :, :, :7].sum(2, keepdim=True)


def test_adaptive_pooling_that_keeps_an_axis():
    model = roofplan.from_torch(KeepHeight(), torch.randn(2, 3, 14, 14))
    pools = [l for l in model.inspect().to_dict()["layers"] if l["type"] == "adaptive_avgpool2d"]
    # None keeps the input's extent: 14 rows by 7 columns, then 5 rows by 14 columns.
    assert [p["output_shape"] for p in pools] == [[3, 14, 7], [3, 5, 14]]
    # Windows of 1 row by 2 columns: 2 additions per output plus one divide, 3·14·7 outputs.
    assert pools[0]["flops"] == 3 * 14 * 7 * (2 + 1)


class _Op:
    """An ATen operator as a torch.export graph names it (its ``_opname``)."""

    def __init__(self, name):
        self._opname = self.__name__ = name

    def __call__(self, *args):
        raise AssertionError("never run")


def exported(ops, parameters, batch=2):
    """A small torch.export-style program by hand: ATen nodes (parameters are placeholders), each value's shape in
    ``meta['val']`` and the module it ran in in ``meta['nn_module_stack']``; `ops` lists (operator, the indices
    of its inputs among the earlier values or scalars, output shape, module path, module type)."""
    import types

    graph = torch.fx.Graph()
    values = [graph.placeholder("x")]
    values[0].meta["val"] = torch.empty(batch, 4, 8)
    for name, shape in parameters.items():
        node = graph.placeholder(name)
        node.meta["val"] = torch.empty(shape)
        values.append(node)
    for op, inputs, shape, path, kind in ops:
        args = tuple(values[i] if isinstance(i, int) else i.value for i in inputs)
        node = graph.call_function(_Op(op), args)
        node.meta["val"] = torch.empty(shape)
        node.meta["nn_module_stack"] = {path: (path, kind)} if path else {}
        values.append(node)
    graph.output(values[-1])
    signature = types.SimpleNamespace(inputs_to_parameters={n: "encoder." + n for n in parameters}, user_inputs=["x"])
    return types.SimpleNamespace(graph_signature=signature, graph_module=types.SimpleNamespace(graph=graph))


class _Const:
    def __init__(self, value):
        self.value = value


def test_the_export_route_maps_dropout_as_the_fx_route_does():
    """torch 2.11's export of Hugging Face's BertModel in eval mode (transformers 5.17, on the device machine) holds
    25 ``aten.dropout.default(x, 0.1, False)``, each in an nn.Dropout (``nn_module_stack``'s innermost entry:
    ``('embeddings.dropout', 'torch.nn.modules.dropout.Dropout')``): the zoo's 25 dropout layers."""
    from roofplan._torch import _map_exported

    linear, drop = "torch.nn.modules.linear.Linear", "torch.nn.modules.dropout.Dropout"
    program = exported([
        ("linear", [0, 1, 2], (2, 4, 8), "fc", linear),  # value 3
        ("dropout", [3, _Const(0.1), _Const(False)], (2, 4, 8), "drop", drop),  # an nn.Dropout captured in eval
        ("dropout", [4, _Const(0.2), _Const(False)], (2, 4, 8), "", None),  # F.dropout(training=False): nothing
        ("native_dropout", [5, _Const(0.3), _Const(True)], (2, 4, 8), "block", "Block"),  # a training dropout
        ("dropout", [6, _Const(0.1), _Const(False)], (2, 4, 8), "other", nn.Dropout),  # the type as a class
    ], {"fc_weight": (8, 8), "fc_bias": (8,)})
    builder = _map_exported(program, batch=2, strict=True, causal=None)
    assert [(l["name"], l["type"], l.get("probability"), l["input"]) for l in builder.layers] == [
        ("fc", "linear", None, [4, 8]), ("drop", "dropout", 0.1, [4, 8]), ("block.dropout", "dropout", 0.3, [4, 8]),
        ("other", "dropout", 0.1, [4, 8])]
    assert builder.unsupported.report() == []


class Spelled(nn.Module):
    """Operations spelled with keywords, in place, divided, stacked, split and concatenated."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):  # [B, 4, 8]
        h = self.fc(x)
        a = torch.add(h, other=x)  # a keyword operand
        a.sub_(x)  # in place
        q = a / h  # a quotient of two tensors
        halves = q.chunk(2, dim=-1)  # views: [B, 4, 4] twice
        left, right = halves[0], halves[1]
        s = torch.stack((left, right), dim=1)  # [B, 2, 4, 4]
        c = torch.cat((left, right), dim=1)  # [B, 8, 4]
        one = torch.cat([c], 1)  # one tensor: a copy roofplan's concat does not describe
        d = F.dropout(one, 0.5, False)  # training=False given by position: no dropout runs
        return s, d, F.dropout(c, p=0.25)


def test_operations_with_keywords_in_place_stacked_and_concatenated():
    model = roofplan.from_torch(Spelled(), torch.randn(2, 4, 8))
    layers = model.inspect().to_dict()["layers"]
    assert [(l["type"], l["output_shape"]) for l in layers] == [
        ("linear", [4, 8]), ("add", [4, 8]), ("add", [4, 8]), ("multiply", [4, 8]), ("concat", [2, 4, 4]),
        ("concat", [8, 4]), ("dropout", [8, 4])]
    assert layers[-1]["name"] == "dropout_1"
    (entry,) = model.unsupported
    assert entry["type"] == "cat" and "fewer than two tensors" in entry["reason"]


class FunctionalLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(16, 8))
        self.bias = nn.Parameter(torch.zeros(16))
        self.back = nn.Parameter(torch.randn(8, 16))

    def forward(self, x):  # [B, 5, 8]
        h = F.linear(F.linear(x, self.weight, self.bias), self.back)  # [B, 5, 8]
        return F.linear(h, self.weight, self.bias), F.linear(h, h[0])  # the first pair again; an activation weight


def test_functional_linear_with_parameters_is_a_linear_layer():
    module = FunctionalLinear()
    model = roofplan.from_torch(module, torch.randn(2, 5, 8))
    assert model.parameters == sum(p.numel() for p in module.parameters()) == 16 * 8 + 16 + 8 * 16
    assert macs(model) == 3 * 5 * 8 * 16  # three products of 5 rows, 8·16 weights each
    layers = model.inspect().to_dict()["layers"]
    assert [(l["name"], l["params"]) for l in layers] == [("linear", 144), ("linear_1", 128), ("linear_2", 0)]
    (entry,) = model.unsupported
    assert entry["type"] == "functional linear" and entry["first"] == "linear_3"


class LongNames(nn.Module):
    """Two layers whose module paths (71 characters) share their last 63: a layer name's limit."""

    def __init__(self):
        super().__init__()
        setattr(self, "x" + "p" * 70, nn.Linear(8, 8))
        setattr(self, "y" + "p" * 70, nn.Linear(8, 8))

    def forward(self, x):
        return getattr(self, "y" + "p" * 70)(getattr(self, "x" + "p" * 70)(x))


def test_long_layer_names_are_cut_before_they_are_made_unique():
    model = roofplan.from_torch(LongNames(), torch.randn(2, 8))
    names = [layer["name"] for layer in json.loads(model.to_json())["layers"]]
    assert len(names) == 2 and len(set(names)) == 2, names
    assert all(len(n) <= 63 for n in names)
    assert names == ["p" * 63, "p" * 61 + ":2"]
