"""Results: the CLI's JSON as typed Python objects (attributes and mapping keys are the JSON's field names)."""
import copy
import html
import json
from collections.abc import Mapping


def _wrap(value):
    if isinstance(value, dict):
        return Result(value)
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return Table(value)
    return value


class Result(Mapping):
    """One command's result.  ``result.step_time_s`` and ``result["step_time_s"]`` are the field of the CLI's JSON
    of that name (docs/cli.md); nested objects are Results, lists of records are Tables.  ``to_dict()`` gives the
    JSON as plain Python values.  ``exit_code`` is the command's status: 0, or 1 when the answer is "infeasible" or
    a check failed (the figures are still there).  Results copy and pickle (as their JSON, command, exit code and
    chart)."""

    __slots__ = ("_data", "command", "exit_code", "chart")

    def __init__(self, data, command="", exit_code=0):
        object.__setattr__(self, "_data", data)
        object.__setattr__(self, "command", command)
        object.__setattr__(self, "exit_code", exit_code)
        object.__setattr__(self, "chart", None)  # SVG text when a chart was asked for with svg=True

    def _fields(self):
        return self._data

    def __getattr__(self, name):
        if name.startswith("_"):  # not a field (copy and pickle look for such names on a half-made object)
            raise AttributeError(f"{type(self).__name__} has no attribute '{name}'")
        data = self._fields()
        if name in data:
            return _wrap(data[name])
        raise AttributeError(f"{type(self).__name__} has no field '{name}'; its fields: {', '.join(data)}")

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is read-only")

    def __getitem__(self, key):
        return _wrap(self._fields()[key])

    def __iter__(self):
        return iter(self._fields())

    def __len__(self):
        return len(self._fields())

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._fields()))

    def __reduce__(self):
        return _restore, (self._fields(), self.command, self.exit_code, self.chart)

    def to_dict(self):
        """The result as plain dicts, lists and numbers (a copy): what ``roofplan ... --json`` prints."""
        return copy.deepcopy(self._fields())

    def to_json(self, **kwargs):
        return json.dumps(self._fields(), **kwargs)

    def __repr__(self):
        scalars = [(k, v) for k, v in self._fields().items() if not isinstance(v, (dict, list))][:8]
        inner = ", ".join(f"{k}={v!r}" for k, v in scalars)
        return f"{type(self).__name__}({inner}{', ...' if len(self._fields()) > len(scalars) else ''})"

    def _repr_html_(self):
        rows = []
        for key, value in self._fields().items():
            if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
                value = f"{len(value)} records (.{key})"
            elif isinstance(value, dict):
                value = ", ".join(f"{k}: {_format(v)}" for k, v in value.items() if not isinstance(v, (dict, list)))
            else:
                value = _format(value)
            rows.append(f"<tr><th style='text-align:left'>{html.escape(key)}</th>"
                        f"<td style='text-align:left'>{html.escape(str(value))}</td></tr>")
        title = f"roofplan {self.command}" if self.command else type(self).__name__
        table = f"<table><caption>{html.escape(title)}</caption>{''.join(rows)}</table>"
        return (self.chart + table) if self.chart else table


class Table(list):
    """Records (dicts) with the CLI's JSON field names: a list, plus ``to_records()``, ``to_dataframe()`` (pandas,
    when installed) and an HTML table in notebooks.  A command whose JSON is a list (``models``, ``devices``,
    ``systems``) returns a Table, with its ``command`` and ``exit_code``."""

    command = ""
    exit_code = 0

    def to_records(self):
        """The rows as plain dicts (a copy)."""
        return copy.deepcopy(list(self))

    def to_dict(self):
        """What the command's --json prints: for a Table, its list of records (a copy)."""
        return self.to_records()

    def to_dataframe(self):
        try:
            import pandas
        except ImportError as e:
            raise ImportError("Table.to_dataframe() needs pandas (pip install pandas); to_records() gives the "
                              "same rows as dicts") from e
        return pandas.DataFrame.from_records(list(self))

    def _repr_html_(self, limit=50):
        if not self:
            return "<table></table>"
        columns = list(dict.fromkeys(k for row in self for k in row))
        head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(_format(row.get(c, '')))}</td>" for c in columns) + "</tr>"
                       for row in self[:limit])
        more = f"<caption>first {limit} of {len(self)} rows</caption>" if len(self) > limit else ""
        return f"<table>{more}<tr>{head}</tr>{body}</table>"


def _restore(data, command, exit_code, chart):
    result = Result(data, command, exit_code)
    object.__setattr__(result, "chart", chart)
    return result


def _format(value):
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)
