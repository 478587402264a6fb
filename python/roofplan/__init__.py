"""roofplan for Python: how fast a network trains or infers on a GPU or a multi-GPU system, what limits it,
whether it fits in memory, and how many GPUs a goal needs.

    >>> import roofplan
    >>> p = roofplan.predict("resnet50", device="h100-sxm", batch=256, precision="amp-bf16")
    >>> p.throughput_samples_per_s, p.bound, p.memory_bytes

Every ``roofplan`` subcommand is a function here with the same options (keyword arguments), figures and
messages; results carry the CLI's JSON field names (docs/cli.md).  Models come from the zoo (:func:`zoo`),
files (:func:`load`), layers (:func:`from_layers`) or PyTorch modules (:func:`from_torch`).
"""
import os as _os

from . import _core
from ._commands import (Prediction, RoofplanError, calibrate, collective, compare, devices, explain, inspect, models,
                        plan, predict, roofline, run, scaling, sweep, systems, validate)
from ._model import Model, from_json, from_layers, layer, load, zoo
from ._results import Result, Table
from ._torch import from_torch

__version__ = _core.__version__

#: The device and system catalogs (data/devices.json, data/systems.json) shipped with the package.
data_dir = _os.path.join(_os.path.dirname(__file__), "data")

__all__ = ["Model", "Prediction", "Result", "RoofplanError", "Table", "calibrate", "collective", "compare", "data_dir",
           "devices", "explain", "from_json", "from_layers", "from_torch", "inspect", "layer", "load", "models", "plan",
           "predict", "roofline", "run", "scaling", "sweep", "systems", "validate", "zoo"]
