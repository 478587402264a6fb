"""from_torch's edge cases (review of 2026-11-24): parameters counted once by identity, batch axes folded into
others, submodules' training modes, the torch.export route's dropout, adaptive pooling that keeps an axis, and
operations written with keywords, in place, or stacked.  Every figure is counted by hand from the shapes (or is
torch's own parameter count) and written out in the test."""
import pytest

torch = pytest.importorskip("torch")
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import roofplan  # noqa: E402
from roofplan._torch import capture  # noqa: E402


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
