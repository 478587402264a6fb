"""Models: from the zoo, from files (roofplan-model/1 JSON, ONNX), from layers, and (roofplan.from_torch) from
PyTorch modules.  A model is loaded once by the library (the C++ reader checks it, with its messages) and kept."""
import atexit
import json
import os
import shutil
import tempfile

from . import _core

_temp_dir = None
_cache = {}


def _scratch(name):
    """A file in this process's scratch folder (removed at exit): models made in Python are read from there."""
    global _temp_dir
    if _temp_dir is None:
        _temp_dir = tempfile.mkdtemp(prefix="roofplan-")
        atexit.register(shutil.rmtree, _temp_dir, True)
    return os.path.join(_temp_dir, name)


class Model:
    """A network: its layers as roofplan's descriptors, loaded by the library.  Pass it as ``model=`` to every
    command (``roofplan.predict(model, device="h100")``).  Make one with :func:`zoo`, :func:`load`,
    :func:`from_layers` or :func:`roofplan.from_torch`."""

    def __init__(self, core, unsupported=None):
        self._core = core
        self.unsupported = unsupported or []  # from_torch: operations not counted (type, count, first occurrence)

    @property
    def id(self):
        return self._core.id

    @property
    def parameters(self):
        """Parameters (trainable weights and biases) counted once."""
        return self._core.parameters

    @property
    def layer_count(self):
        return self._core.layer_count

    @property
    def size(self):
        """The sequence length (transformers) or image size (CNNs) it was built for; 0 when a file fixes it."""
        return self._core.size

    def to_json(self):
        """The model in roofplan-model/1 (docs/model-files.md): a file any roofplan command reads."""
        return self._core.to_json()

    def save(self, path):
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.to_json())

    def inspect(self, **options):
        """``roofplan inspect`` of this model: totals and every layer (shape, parameters, MACs)."""
        from ._commands import inspect
        return inspect(model=self, **options)

    def cli_args(self):
        """The command-line options that name this model."""
        if self._core.zoo_id:
            args = ["--model", self._core.zoo_id]
            if self._core.size and self._core.uses_seq:
                args += ["--seq", str(self._core.size)]
            elif self._core.size:
                args += ["--image-size", str(self._core.size)]
            return args
        return ["--model-file", self._core.file]

    def __repr__(self):
        return f"roofplan.Model({self.id!r}, {self.layer_count} layers, {self.parameters:,} parameters)"


def _load(model="", model_file="", seq=0, image_size=0, strict=False, inputs=()):
    key = (model, model_file, seq, image_size, strict, tuple(inputs))
    if key not in _cache:
        _cache[key] = _core.load_model(model=model, model_file=model_file, seq=seq, image_size=image_size,
                                       strict=strict, inputs=list(inputs))
    return _cache[key]


def _check_size(name, value):
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value}")
    return value


def zoo(model_id, seq=None, image_size=None):
    """A model of the zoo by id (``roofplan.models()`` lists them), at a sequence length or image size."""
    if not isinstance(model_id, str):
        raise TypeError(f"model id must be a str, got {type(model_id).__name__}")
    return Model(_load(model=model_id, seq=_check_size("seq", seq), image_size=_check_size("image_size", image_size)))


def load(path, seq=None, strict=False, inputs=()):
    """A model file: ``.json`` (roofplan-model/1) or ``.onnx``; ``seq`` sets a dynamic sequence axis, ``strict``
    makes unsupported ONNX operators an error, ``inputs`` names the ONNX graph inputs that carry data."""
    path = os.fspath(path)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if isinstance(inputs, str):
        inputs = [inputs]
    core = _load(model_file=path, seq=_check_size("seq", seq), strict=bool(strict), inputs=inputs)
    return Model(core, unsupported=list(core.warnings))


def layer(type, name, **fields):
    """One layer of a roofplan-model/1 file: ``layer("conv2d", "conv1", out_channels=64, kernel=3, padding=1)``.
    The fields are the layer's own (docs/model-files.md); the library checks them when the model is built."""
    entry = {"name": name, "type": type}
    entry.update(fields)
    return entry


def from_layers(layers, input, id="custom", description=""):
    """A model from layers (dicts as :func:`layer` makes) and the shape of one instance (no batch axis:
    ``[3, 224, 224]`` or ``[seq]``).  Errors name the layer and field, as for a file."""
    document = {"schema": "roofplan-model/1", "id": id, "input": list(input), "layers": list(layers)}
    if description:
        document["description"] = description
    return from_json(document)


def from_json(document):
    """A model from a roofplan-model/1 document (a dict, or its JSON text)."""
    text = document if isinstance(document, str) else json.dumps(document)
    path = _scratch(f"model-{len(_cache)}-{abs(hash(text))}.json")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return Model(_load(model_file=path))
