"""Models: from the zoo, from files (roofplan-model/1 JSON, ONNX), from layers, and (roofplan.from_torch) from
PyTorch modules.  A model is loaded by the library (the C++ reader checks it, with its messages) and kept: the 64
most recently used, a file by its absolute path, modification time and size (a file edited since is read again)."""
import atexit
import copy
import hashlib
import json
import operator
import os
import shutil
import tempfile
import warnings
from collections import OrderedDict

from . import _core
from ._errors import RoofplanError

_temp_dir = None
_cache = OrderedDict()  # load options and file stamp -> the library's model, least recently used first
_CACHE_SIZE = 64
_DOCUMENT = "roofplan-model/1 document"  # how errors name a model made in Python (not its scratch file)


def _scratch(name):
    """A file in this process's scratch folder (removed at exit): models made in Python are read from there."""
    global _temp_dir
    if _temp_dir is None:
        _temp_dir = tempfile.mkdtemp(prefix="roofplan-")
        atexit.register(shutil.rmtree, _temp_dir, True)
    return os.path.join(_temp_dir, name)


def _stamp(path):
    """(absolute path, modification time in ns, size) of a model file; (absolute path, None, None) when it cannot
    be read (the loader says why)."""
    absolute = os.path.abspath(path)
    try:
        status = os.stat(absolute)
    except OSError:
        return absolute, None, None
    return absolute, status.st_mtime_ns, status.st_size


class Model:
    """A network: its layers as roofplan's descriptors, loaded by the library.  Pass it as ``model=`` to every
    command (``roofplan.predict(model, device="h100")``).  Make one with :func:`zoo`, :func:`load`,
    :func:`from_layers` or :func:`roofplan.from_torch`."""

    def __init__(self, core, unsupported=None, stamp=None):
        self._core = core
        self._stamp = stamp  # a file model: the file's (absolute path, mtime_ns, size) when it was read
        #: What was left out (not counted): one dict per operation type with type, count, first (occurrence) and
        #: reason; from_torch's operations and an ONNX file's operators alike.
        self.unsupported = list(unsupported or [])

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
        """The command-line options that name this model: the zoo id and size, or the file by its absolute path with
        every load option (seq, strict, inputs).  A file changed on disk since it was loaded is an error (the
        command would read other figures than this model's)."""
        core = self._core
        if core.zoo_id:
            args = ["--model", core.zoo_id]
            if core.size and core.uses_seq:
                args += ["--seq", str(core.size)]
            elif core.size:
                args += ["--image-size", str(core.size)]
            return args
        path = self._stamp[0] if self._stamp else os.path.abspath(core.file)
        if self._stamp and _stamp(path) != self._stamp:
            raise RoofplanError(f"{core.file}: changed on disk since it was loaded; roofplan.load() it again for "
                                "the file's figures")
        args = ["--model-file", path]
        if core.seq:
            args += ["--seq", str(core.seq)]
        if core.strict:
            args.append("--strict")
        for name in core.inputs:
            args += ["--input", name]
        return args

    def __reduce__(self):
        """Pickled as a zoo id and size, or as its roofplan-model/1 document (a file model comes back as the
        layers it was read as, independent of the file) with its list of what was not counted."""
        core = self._core
        if core.zoo_id:
            return _zoo_model, (core.zoo_id, core.seq, core.image_size)
        return _document_model, (self.to_json(), self.unsupported)

    def __copy__(self):
        return Model(self._core, self.unsupported, self._stamp)  # the library's model is immutable: shared

    def __deepcopy__(self, memo):
        return Model(self._core, copy.deepcopy(self.unsupported, memo), self._stamp)

    def __repr__(self):
        return f"roofplan.Model({self.id!r}, {self.layer_count} layers, {self.parameters:,} parameters)"


def _zoo_model(model_id, seq, image_size):
    return Model(_load(model=model_id, seq=seq, image_size=image_size))


def _document_model(text, unsupported):
    model = from_json(text)
    model.unsupported = list(unsupported)
    return model


def _load_stamped(model="", model_file="", seq=0, image_size=0, strict=False, inputs=()):
    """The library's model and, for a file, its stamp; loaded once per file version and options (LRU of 64)."""
    stamp = _stamp(model_file) if model_file else None
    key = (model, model_file and stamp, seq, image_size, strict, tuple(inputs))
    core = _cache.get(key)
    if core is None:
        try:
            core = _core.load_model(model=model, model_file=model_file, seq=seq, image_size=image_size,
                                    strict=strict, inputs=list(inputs))
        except ValueError as e:
            raise RoofplanError(str(e)) from None
        _cache[key] = core
        if len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    else:
        _cache.move_to_end(key)
    return core, stamp


def _load(**source):
    return _load_stamped(**source)[0]


def _warn_unsupported(core, stacklevel):
    """An ONNX file's operators left out, as Python warnings with the CLI's text."""
    for text in core.warnings:
        warnings.warn(text, stacklevel=stacklevel + 1)


def _integer(name, value):
    """An integer option's value: an int or anything with __index__ (numpy integers), never a bool."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an int, got bool")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an int, got {type(value).__name__}") from None


def _option_problem(command, name, value):
    """The CLI's own check of `value` for option --name of `command`: RoofplanError with the CLI's message."""
    problem = _core.option_problem(command, name.replace("_", "-"), value)
    if problem:
        raise RoofplanError(problem)


def _check_size(name, value):
    """seq= or image_size= of a model: an int in the CLI's range for --seq or --image-size (0: not given)."""
    if value is None:
        return 0
    value = _integer(name, value)
    _option_problem("inspect", name, str(value))
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
    inputs = list(inputs)
    for name, text in [("path", path)] + [("inputs", i) for i in inputs]:
        if not isinstance(text, str):
            raise TypeError(f"{name}: expected a str, got {type(text).__name__}")
        if "\0" in text:
            raise RoofplanError(f"{name}: {text!r} contains a NUL character; give the text without it")
    core, stamp = _load_stamped(model_file=path, seq=_check_size("seq", seq), strict=bool(strict), inputs=inputs)
    _warn_unsupported(core, stacklevel=2)
    return Model(core, unsupported=core.unsupported, stamp=stamp)


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
    # Read from a scratch file named by its content: the file never changes, and commands given the model read it.
    path = _scratch(f"model-{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()[:32]}.json")
    if not os.path.exists(path):
        with open(path, "w", encoding="utf-8", errors="surrogatepass") as f:
            f.write(text)
    try:
        core, stamp = _load_stamped(model_file=path)
    except ValueError as e:  # the reader names the file: name the document instead of the scratch path
        raise RoofplanError(str(e).replace(path, _DOCUMENT)) from None
    return Model(core, stamp=stamp)
