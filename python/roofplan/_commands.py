"""Every roofplan subcommand as a function.  Keyword arguments are the command's options (``--batch`` is
``batch=``, ``--model-file`` is ``model_file=``; a switch takes True), results are the CLI's JSON as a
:class:`Result`, and errors are :class:`RoofplanError` (a ValueError) with the CLI's message.  The command runs
in this process, through the same code as the ``roofplan`` binary (docs/cli.md), so the figures are the same.

``predict`` on one GPU calls the library directly (no command line, no JSON until asked): thousands of calls a
second; :func:`sweep` predicts many configurations in one call."""
import json
import os
import warnings

from . import _core
from ._model import Model, _load, _scratch
from ._results import Result, Table


class RoofplanError(ValueError):
    """Bad input: what was wrong and what is accepted (the CLI's message; its exit status 2)."""


_options_of = {}


def _options(command):
    """kwarg name -> (flag, positional, takes a value, repeatable) for one subcommand, from the CLI's own table."""
    if command not in _options_of:
        table = {}
        for names, positional, takes_value, repeatable, _help in _core.command_options(command):
            for name in names:
                key = name.replace("-", "_")
                table[key] = ("" if positional else ("--" if len(name) > 1 else "-") + name, positional,
                              takes_value, repeatable)
        _options_of[command] = table
    return _options_of[command]


def _text(key, value):
    if isinstance(value, bool):
        raise TypeError(f"{key}: expected a value, not {value!r}")
    if isinstance(value, (int, str)):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    raise TypeError(f"{key}: expected a str, int, float or path, got {type(value).__name__}")


def _arguments(command, positional, options):
    """The command line for `command` with these keyword arguments (None and False: not given)."""
    table = _options(command)
    args = [command]
    for key, value in options.items():
        if value is None or value is False:
            continue
        if key == "model" and isinstance(value, Model):
            args += value.cli_args()
            continue
        if key not in table or table[key][1]:
            accepted = ", ".join(sorted(k for k, v in table.items() if not v[1] and len(k) > 1))
            raise TypeError(f"{command}() got an unexpected keyword argument '{key}'; accepted: {accepted}")
        flag, _, takes_value, repeatable = table[key]
        if not takes_value:
            if value is not True:
                raise TypeError(f"{key} is a switch: give True or False, got {value!r}")
            args.append(flag)
        elif isinstance(value, (list, tuple)):
            if repeatable:
                for v in value:
                    args += [flag, _text(key, v)]
            else:
                args += [flag, ",".join(_text(key, v) for v in value)]
        else:
            args += [flag, _text(key, value)]
    if positional:
        args.append("--")
        args += [_text("positional", p) for p in positional]
    return args


def run(*args):
    """``roofplan ARGS...`` in this process: (exit status, stdout, stderr), nothing interpreted."""
    return _core.run_cli([_text("argument", a) for a in args])


def _profile_file(options):
    """profile= may be a calibrated profile itself (calibrate()'s result, or its dict): written to the scratch
    folder, and the command reads it like any profile file."""
    profile = options.get("profile")
    if isinstance(profile, (Result, dict)):
        data = profile.to_dict() if isinstance(profile, Result) else profile
        path = _scratch(f"profile-{abs(hash(json.dumps(data, sort_keys=True)))}.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(data, f)
        options["profile"] = path


def _command(command, positional=(), **options):
    _profile_file(options)
    table = _options(command)
    machine = "json" in table and not options.get("csv")
    chart = None
    if options.get("svg") is True:  # the chart inline: written to the scratch folder, read back
        chart = options["svg"] = _scratch(f"{command}-{id(options)}.svg")
    args = _arguments(command, positional, options)
    if machine and "--json" not in args:
        args.insert(1, "--json")
    code, out, err = _core.run_cli(args)
    for line in err.splitlines():
        if line.startswith("roofplan: warning: "):
            warnings.warn(line[len("roofplan: warning: "):], stacklevel=3)
    if code == 2:
        raise RoofplanError(err.strip().removeprefix("roofplan: error: ").removeprefix("roofplan: ")
                            or f"roofplan {command}: bad input")
    if code not in (0, 1):
        raise RuntimeError(f"roofplan {command} failed (status {code}): {err.strip()}")
    if not machine:
        return Result({"output": out, "messages": err}, command, code)
    text = out.strip()
    data = json.loads(text) if text else {}
    if isinstance(data, list):  # models, devices, systems: one record per entry
        table = Table(data)
        table.command, table.exit_code = command, code
        return table
    result = Result(data, command, code)
    if chart:
        with open(chart, encoding="utf-8") as f:
            object.__setattr__(result, "chart", f.read())
        os.remove(chart)
    return result


def models(**options):
    """The zoo: every model's id, family, input, parameters, MACs and source (``roofplan models``)."""
    return _command("models", **options)


def inspect(model=None, **options):
    """A model's totals and layers: shapes, parameters, MACs (``roofplan inspect``)."""
    return _command("inspect", model=model, **options)


def devices(**options):
    """The device catalog (``roofplan devices``); ``device_file=`` adds devices from a file."""
    return _command("devices", **options)


def systems(**options):
    """The built-in systems (``roofplan systems``); ``system_file=`` adds systems from a file."""
    return _command("systems", **options)


def collective(**options):
    """A collective's time, algbw and busbw on a system (``roofplan collective``)."""
    return _command("collective", **options)


def roofline(model=None, **options):
    """Every layer's point on the device's roofline (``roofplan roofline``).  ``svg="f.svg"`` writes the chart;
    ``svg=True`` keeps it in ``result.chart`` (SVG text; notebooks show it)."""
    return _command("roofline", model=model, **options)


def compare(model=None, **options):
    """A model on several systems side by side (``roofplan compare``)."""
    return _command("compare", model=model, **options)


def scaling(model=None, **options):
    """Data-parallel scaling over GPU counts on a system (``roofplan scaling``)."""
    return _command("scaling", model=model, **options)


def plan(model=None, **options):
    """Ranked options (systems and GPU counts) for a goal (``roofplan plan``); ``exit_code`` is 1 when none is
    feasible."""
    return _command("plan", model=model, **options)


def explain(**options):
    """One layer's arithmetic step by step (``roofplan explain``): ``explain(layer="conv2d cin=64 ...",
    device="h100")``."""
    return _command("explain", **options)


def calibrate(*reports, **options):
    """A calibrated efficiency profile fitted to measurement reports (``roofplan calibrate``)."""
    return _command("calibrate", positional=reports, **options)


def validate(*reports, **options):
    """Predicted against measured for measurement reports (``roofplan validate``)."""
    return _command("validate", positional=reports, **options)


# --- predict: one GPU through the library, systems through the command ---------------------------------------

_DIRECT = {"device", "device_file", "batch", "precision", "mode", "optimizer", "runtime", "cuda_graphs", "profile",
           "context_gib", "kernels", "input_source", "loader_workers", "decode_rate", "top", "layers", "json"}
_MODEL_SOURCE = {"model_file", "seq", "image_size", "strict", "input"}


class Prediction(Result):
    """One GPU's prediction (``roofplan predict --json``'s fields).  The headline figures come straight from the
    library; the rest (layers, memory, kernels) is made the first time it is read."""

    __slots__ = ("_core", "_json")

    def __init__(self, core):
        Result.__init__(self, None, "predict", 0)
        object.__setattr__(self, "_core", core)
        object.__setattr__(self, "_json", None)

    def _fields(self):
        if self._json is None:
            object.__setattr__(self, "_json", json.loads(self._core.json()))
        return self._json

    @property
    def step_time_s(self):
        return self._core.step_time_s

    @property
    def throughput_samples_per_s(self):
        return self._core.throughput_samples_per_s

    @property
    def memory_bytes(self):
        return self._core.memory_bytes

    @property
    def fits(self):
        return self._core.fits

    @property
    def max_batch(self):
        return self._core.max_batch

    @property
    def bound(self):
        return self._core.bound


def _int_option(options, key, low, high):
    value = options.get(key)
    if value is None:
        return True
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{key} must be an int, got {type(value).__name__}")
    return low <= value <= high


def _model_of(model, options):
    if isinstance(model, Model):
        return model._core
    if model is None and not options.get("model_file"):
        raise RoofplanError("give a model: a zoo id (roofplan.models() lists them), a roofplan.Model, or model_file=")
    if model is not None and not isinstance(model, str):
        raise TypeError(f"model must be a zoo id (str) or a roofplan.Model, got {type(model).__name__}")
    inputs = options.get("input") or ()
    return _load(model=model or "", model_file=os.fspath(options.get("model_file") or ""),
                 seq=options.get("seq") or 0, image_size=options.get("image_size") or 0,
                 strict=bool(options.get("strict")), inputs=[inputs] if isinstance(inputs, str) else list(inputs))


def _request(options):
    q = _core.Request()
    for key in ("device", "precision", "mode", "optimizer", "runtime", "cuda_graphs", "profile", "input_source"):
        value = options.get(key)
        if value is not None:
            if not isinstance(value, str):
                raise TypeError(f"{key} must be a str, got {type(value).__name__}")
            setattr(q, key, value)
    files = options.get("device_file")
    if files is not None:
        q.device_files = [os.fspath(files)] if isinstance(files, (str, os.PathLike)) else [os.fspath(f) for f in files]
    for key in ("batch", "loader_workers"):
        if options.get(key) is not None:
            setattr(q, key, options[key])
    if options.get("decode_rate") is not None:
        q.decode_rate = float(options["decode_rate"])
    if options.get("context_gib") is not None:
        q.context_gib = float(options["context_gib"])
    q.kernels = bool(options.get("kernels"))
    return q


def _direct(options):
    """Whether predict can call the library directly: one GPU, options it checks the way the command does."""
    if not set(options) <= _DIRECT | _MODEL_SOURCE or options.get("svg") or options.get("csv"):
        return False
    for key in ("seq", "image_size"):
        if not _int_option(options, key, 1, 1 << 31):
            return False
    if not _int_option(options, "batch", 1, (1 << 63) - 1) or not _int_option(options, "loader_workers", 1, 4096):
        return False
    rate = options.get("decode_rate")
    if rate is not None and (isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 < rate <= 1e7):
        return False
    gib = options.get("context_gib")
    return gib is None or (not isinstance(gib, bool) and isinstance(gib, (int, float)))


def predict(model=None, device=None, **options):
    """A prediction of training or inference (``roofplan predict``): on one GPU (``device=``) a :class:`Prediction`,
    on a system (``system=``, ``gpus=``, ...) the command's system result.  Options as the command's flags:
    ``batch``, ``precision``, ``mode``, ``optimizer``, ``runtime``, ``profile``, ``input_source``, ..."""
    options = {k: v for k, v in options.items() if v is not None and v is not False}
    _profile_file(options)
    if device is not None:
        options["device"] = device
    if isinstance(model, Model) and set(options) & _MODEL_SOURCE:
        raise TypeError(f"{', '.join(sorted(set(options) & _MODEL_SOURCE))}: the model is already loaded; give them "
                        "to roofplan.zoo() or roofplan.load()")
    if _direct(options):
        try:
            return Prediction(_core.predict(_model_of(model, options), _request(options)))
        except ValueError:
            pass  # the command says what was wrong, with its own message
    return _command("predict", model=model, **options)


def sweep(model, devices, batches, precisions=("fp32",), modes=("train",), memory=True, **options):
    """Predictions over every combination of devices, precisions, modes and batches (nested in that order), one
    record each: the configuration and predict's headline figures (``step_time_s``,
    ``throughput_samples_per_s``, ``memory_bytes``, ``fits``, ``max_batch``, ``bound``, ``gpu_idle_s``,
    ``host_s``, ``power_w``, ``samples_per_joule``).  A combination the library refuses (int8 on a GPU without
    it) has its message under ``error`` and no figures.  ``memory=False`` skips the memory estimate (the records
    then have no ``memory_bytes``, ``fits`` or ``max_batch``): the eager runtime's replay of the caching allocator
    is most of a prediction.  Other options apply to every prediction."""
    def listed(name, values, kind):
        values = [values] if isinstance(values, kind) else list(values)
        for v in values:
            if isinstance(v, bool) or not isinstance(v, kind):
                raise TypeError(f"{name}: expected {kind.__name__} values, got {type(v).__name__}")
        if not values:
            raise ValueError(f"{name}: give at least one")
        return values

    unknown = set(options) - (_DIRECT - {"device", "batch", "precision", "mode", "top", "layers", "json", "kernels"})
    if unknown:
        raise TypeError(f"sweep() got unexpected keyword arguments: {', '.join(sorted(unknown))}")
    core = _model_of(model, {})
    _profile_file(options)
    request = _request(options)
    request.memory = bool(memory)
    records = _core.sweep(core, listed("devices", devices, str), listed("batches", batches, int),
                          listed("precisions", precisions, str), listed("modes", modes, str), request)
    return Table(records)
