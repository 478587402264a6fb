"""Every roofplan subcommand as a function.  Keyword arguments are the command's options (``--batch`` is
``batch=``, ``--model-file`` is ``model_file=``; a switch takes True), results are the CLI's JSON as a
:class:`Result`, and errors are :class:`RoofplanError` (a ValueError) with the CLI's message.  The command runs
in this process, through the same code as the ``roofplan`` binary (docs/cli.md), so the figures are the same.

``predict`` on one GPU calls the library directly (no command line, no JSON until asked): thousands of calls a
second; :func:`sweep` predicts many configurations in one call.  Values given to the fast paths pass the CLI's
own checks of the same options (its limits, its messages)."""
import json
import numbers
import operator
import os
import warnings

from . import _core
from ._errors import RoofplanError
from ._model import Model, _integer, _load, _option_problem, _scratch, _warn_unsupported
from ._results import Result, Table


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


def _string(key, value):
    """A text option's value (a str or a path); a NUL character would cut it short on the command line."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str):
        raise TypeError(f"{key} must be a str, got {type(value).__name__}")
    if "\0" in value:
        raise RoofplanError(f"{key}: {value!r} contains a NUL character; give the text without it")
    return value


def _real(key, value):
    """A number option's value: any real number (numpy floats too), never a bool."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{key} must be a number, got {type(value).__name__}")
    return float(value)


def _text(key, value):
    """A value as the command line writes it: text, an integer (anything with __index__) or a real number."""
    if isinstance(value, bool):
        raise TypeError(f"{key}: expected a value, not {value!r}")
    if isinstance(value, (str, os.PathLike)):
        return _string(key, value)
    if hasattr(type(value), "__index__"):
        return str(operator.index(value))
    if isinstance(value, numbers.Real):
        return repr(float(value))
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


def _no_load_options(model, options):
    """A loaded Model carries its load options; giving them again is a mistake, named as such."""
    given = sorted(k for k in set(options) & _MODEL_SOURCE if options[k] is not None and options[k] is not False)
    if isinstance(model, Model) and given:
        raise TypeError(f"{', '.join(given)}: the model is already loaded; give them to roofplan.zoo() or "
                        "roofplan.load()")


def _command(command, positional=(), **options):
    _profile_file(options)
    _no_load_options(options.get("model"), options)
    if options.pop("help", None):  # the command's help text, as `roofplan COMMAND --help` prints it
        return _core.run_cli([command, "--help"])[1]
    table = _options(command)
    machine = "json" in table and not options.get("csv")
    chart = None
    if options.get("svg") is True:  # the chart inline: written to the scratch folder, read back
        chart = options["svg"] = _scratch(f"{command}-{id(options)}.svg")
    try:
        args = _arguments(command, positional, options)
        if machine and "--json" not in args:
            args.insert(1, "--json")
        code, out, err = _core.run_cli(args)
        chart_text = None
        if chart and os.path.exists(chart):
            with open(chart, encoding="utf-8") as f:
                chart_text = f.read()
    finally:
        if chart and os.path.exists(chart):
            os.remove(chart)
    for line in err.splitlines():
        if line.startswith("roofplan: warning: "):
            warnings.warn(line[len("roofplan: warning: "):], stacklevel=3)
    if code == 2:
        raise RoofplanError(err.strip().removeprefix("roofplan: error: ").removeprefix("roofplan: ")
                            or f"roofplan {command}: bad input")
    if code not in (0, 1):
        raise RuntimeError(f"roofplan {command} failed (status {code}): {err.strip()}")
    if not machine:
        result = Result({"output": out, "messages": err}, command, code)
    else:
        text = out.strip()
        data = json.loads(text) if text else {}
        if isinstance(data, list):  # models, devices, systems: one record per entry
            table = Table(data)
            table.command, table.exit_code = command, code
            return table
        result = Result(data, command, code)
    if chart_text is not None:
        object.__setattr__(result, "chart", chart_text)
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

_DIRECT = {"device", "device_file", "batch", "precision", "mode", "optimizer", "runtime", "cuda_graphs", "engine", "profile",
           "context_gib", "host_speed", "kernels", "input_source", "loader_workers", "decode_rate", "top", "layers", "json"}
_MODEL_SOURCE = {"model_file", "seq", "image_size", "strict", "input"}


class Prediction(Result):
    """One GPU's prediction (``roofplan predict --json``'s fields).  The headline figures come straight from the
    library; the rest (layers, memory, kernels) is made the first time it is read.  A copy or a pickle of it is
    its :class:`Result` (the same fields, read from the JSON), which no longer holds the library's objects."""

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


_INTEGER_OPTIONS = {"batch", "loader_workers", "seq", "image_size", "top"}
_REAL_OPTIONS = {"decode_rate", "context_gib", "host_speed"}
_STRING_OPTIONS = {"device", "precision", "mode", "optimizer", "runtime", "cuda_graphs", "engine", "profile", "input_source",
                   "model_file"}


def _checked(options):
    """predict's options for the library call: ints and reals normalised (numpy scalars accepted, bools not), text
    without NUL characters, and every value through the CLI's own check of its option (the same limits and
    messages as ``roofplan predict``)."""
    table = _options("predict")
    out = {}
    for key, value in options.items():
        if key in _INTEGER_OPTIONS:
            value = _integer(key, value)
        elif key in _REAL_OPTIONS:
            value = _real(key, value)
        elif key in _STRING_OPTIONS:
            value = _string(key, value)
        elif key == "input" or key == "device_file":
            value = [_string(key, v) for v in ([value] if isinstance(value, (str, os.PathLike)) else value)]
        if key in table and table[key][2] and not isinstance(value, list):
            _option_problem("predict", key, _text(key, value))
        out[key] = value
    return out


def _model_of(model, options):
    if isinstance(model, Model):
        return model._core
    if model is None and not options.get("model_file"):
        raise RoofplanError("give a model: a zoo id (roofplan.models() lists them), a roofplan.Model, or model_file=")
    if model is not None and not isinstance(model, str):
        raise TypeError(f"model must be a zoo id (str) or a roofplan.Model, got {type(model).__name__}")
    return _load(model=_string("model", model or ""), model_file=options.get("model_file") or "",
                 seq=options.get("seq") or 0, image_size=options.get("image_size") or 0,
                 strict=bool(options.get("strict")), inputs=options.get("input") or [])


def _request(options):
    q = _core.Request()
    for key in ("device", "precision", "mode", "optimizer", "runtime", "cuda_graphs", "engine", "profile", "input_source"):
        if options.get(key) is not None:
            setattr(q, key, options[key])
    if options.get("device_file") is not None:
        q.device_files = options["device_file"]
    for key in ("batch", "loader_workers", "decode_rate", "context_gib", "host_speed"):
        if options.get(key) is not None:
            setattr(q, key, options[key])
    q.kernels = bool(options.get("kernels"))
    return q


def _direct(options):
    """Whether predict can call the library directly: one GPU, no chart or CSV."""
    return set(options) <= _DIRECT | _MODEL_SOURCE and not options.get("svg") and not options.get("csv")


def predict(model=None, device=None, **options):
    """A prediction of training or inference (``roofplan predict``): on one GPU (``device=``) a :class:`Prediction`,
    on a system (``system=``, ``gpus=``, ...) the command's system result.  Options as the command's flags:
    ``batch``, ``precision``, ``mode``, ``optimizer``, ``runtime``, ``profile``, ``input_source``, ..."""
    options = {k: v for k, v in options.items() if v is not None and v is not False}
    _profile_file(options)
    if device is not None:
        options["device"] = device
    _no_load_options(model, options)
    if _direct(options):
        options = _checked(options)
        core = _model_of(model, options)
        _warn_unsupported(core, stacklevel=2)  # as the command prints them
        try:
            return Prediction(_core.predict(core, _request(options)))
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
    def listed(name, values, convert, single):
        values = [convert(name, v) for v in ([values] if isinstance(values, single) else values)]
        if not values:
            raise ValueError(f"{name}: give at least one")
        return values

    unknown = set(options) - (_DIRECT - {"device", "batch", "precision", "mode", "top", "layers", "json", "kernels"})
    if unknown:
        raise TypeError(f"sweep() got unexpected keyword arguments: {', '.join(sorted(unknown))}")
    devices = listed("devices", devices, _string, (str,))
    precisions = listed("precisions", precisions, _string, (str,))
    modes = listed("modes", modes, _string, (str,))
    batches = listed("batches", batches, _integer, (numbers.Integral,))
    for batch in batches:  # predict's --batch check, for each
        try:
            _option_problem("predict", "batch", str(batch))
        except RoofplanError as e:
            raise RoofplanError(f"batches: {e}") from None
    core = _model_of(model, {})
    _profile_file(options)
    request = _request(_checked({k: v for k, v in options.items() if v is not None}))
    request.memory = bool(memory)
    _warn_unsupported(core, stacklevel=2)
    records = _core.sweep(core, devices, batches, precisions, modes, request)
    return Table(records)
