"""from_torch: any PyTorch module as a model.  The torchvision CNNs of the zoo give exactly the zoo's parameters
and MACs; a module written with functional operations gives the MACs torch's own profiler counts."""
import pytest

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import roofplan  # noqa: E402

ZOO = {"alexnet": lambda: torchvision.models.alexnet(),
       "vgg16": lambda: torchvision.models.vgg16(),
       "googlenet": lambda: torchvision.models.googlenet(aux_logits=False, init_weights=False),
       "resnet18": lambda: torchvision.models.resnet18(),
       "resnet50": lambda: torchvision.models.resnet50(),
       "resnet152": lambda: torchvision.models.resnet152()}


@pytest.mark.parametrize("model_id", sorted(ZOO))
def test_torchvision_cnns_match_the_zoo(model_id):
    module = ZOO[model_id]().eval()
    model = roofplan.from_torch(module, torch.randn(1, 3, 224, 224), id=model_id)
    ours = model.inspect().to_dict()
    zoo = roofplan.inspect(model_id).to_dict()
    assert model.parameters == sum(p.numel() for p in module.parameters()) == zoo["params"]
    assert ours["macs_per_sample"] == zoo["macs_per_sample"]
    # Layer by layer: every convolution and linear layer of the zoo, by its module path, with its MACs.
    heavy = {l["name"]: l["macs"] for l in zoo["layers"] if l["type"] in ("conv2d", "linear")}
    assert {l["name"]: l["macs"] for l in ours["layers"] if l["type"] in ("conv2d", "linear")} == heavy
    assert model.unsupported == []


class Functional(nn.Module):
    """A custom module whose arithmetic is partly in its own code: functional activations, a residual add, a
    batched matrix product of two activations, scaled-dot-product attention when torch has it, a reshape."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, padding=1)
        self.proj = nn.Linear(16, 64)
        self.q = nn.Linear(64, 64)
        self.k = nn.Linear(64, 64)
        self.out = nn.Linear(64, 10)

    def forward(self, x):
        x = F.relu(self.conv(x))
        x = x.flatten(2).transpose(1, 2)  # [B, 64 tokens, 16]
        h = F.gelu(self.proj(x))
        scores = torch.matmul(self.q(h), self.k(h).transpose(1, 2))  # [B, 64, 64]
        h = h + torch.matmul(F.softmax(scores, dim=-1), h)
        return self.out(h)


def profiler_macs(module, x):
    """MACs of the matrix products and convolutions torch's profiler counts (with_flops: 2 FLOPs a MAC)."""
    from torch.profiler import ProfilerActivity, profile
    with torch.no_grad(), profile(activities=[ProfilerActivity.CPU], with_flops=True) as prof:
        module(x)
    gemm = ("aten::addmm", "aten::mm", "aten::bmm", "aten::conv2d", "aten::convolution", "aten::_convolution")
    flops = {e.key: e.flops for e in prof.key_averages() if e.key in gemm and e.flops}
    # conv2d, convolution and _convolution nest: count the outermost only.
    conv = next((flops[k] for k in ("aten::conv2d", "aten::convolution", "aten::_convolution") if k in flops), 0)
    return (conv + sum(v for k, v in flops.items() if k in ("aten::addmm", "aten::mm", "aten::bmm"))) // 2


def test_custom_module_matches_torchs_profiler():
    module = Functional().eval()
    x = torch.randn(1, 3, 8, 8)
    model = roofplan.from_torch(module, x, id="functional")
    assert model.parameters == sum(p.numel() for p in module.parameters())
    info = model.inspect().to_dict()
    gemm_macs = sum(l["macs"] for l in info["layers"] if l["type"] in ("conv2d", "linear", "matmul"))
    assert gemm_macs == profiler_macs(module, x)
    types = [l["type"] for l in info["layers"]]
    assert types.count("matmul") == 2 and "gelu" in types and "softmax" in types and "add" in types
    # The model predicts like any other.
    p = roofplan.predict(model, device="h100-sxm", batch=64, precision="amp-bf16")
    assert p.step_time_s > 0


class DataDependent(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x * 2
        return x


def test_data_dependent_control_flow_is_a_clear_error():
    with pytest.raises(ValueError, match="control flow"):
        roofplan.from_torch(DataDependent(), torch.randn(2, 4))


class Unmapped(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return torch.cumsum(self.fc(x), dim=-1) + 1


def test_unsupported_operations_are_reported_or_raised():
    model = roofplan.from_torch(Unmapped(), torch.randn(2, 8))
    kinds = {u["type"]: u for u in model.unsupported}
    assert kinds["cumsum"]["count"] == 1 and kinds["cumsum"]["first"] == "cumsum"
    assert "add with a scalar" in kinds
    with pytest.raises(ValueError, match="cumsum at 'cumsum' is not supported"):
        roofplan.from_torch(Unmapped(), torch.randn(2, 8), strict=True)


def test_bad_arguments():
    with pytest.raises(TypeError, match="torch.nn.Module"):
        roofplan.from_torch("resnet50", torch.randn(1, 3, 224, 224))
    with pytest.raises(TypeError, match="example_inputs"):
        roofplan.from_torch(nn.Linear(4, 4), [1, 2, 3])
    with pytest.raises(ValueError, match="batch axis"):
        roofplan.from_torch(nn.Linear(4, 4), torch.randn(4))
    with pytest.raises(ValueError, match="failed"):
        roofplan.from_torch(nn.Linear(4, 4), torch.randn(2, 5))
