"""Files in: TOML and CSV inputs with one-line errors, and the registries they may name.

This is the one layer that knows every registry: a file's ``preset = "name"``
starts from a fleet preset (scenarios) or a buying preset (procurements).
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

import numpy as np

from .. import _validate as v
from ..buy import Procurement
from ..buy import presets as buy_presets
from ..fleet import Scenario
from ..fleet import presets as fleet_presets
from .paths import input_file
from .requestlog import read_request_log
from .rules import is_rule_path, load_rule


def read_toml(path: str | Path) -> dict:
    """The tables of a TOML file; a missing file raises FileNotFoundError, and a
    folder, an unreadable, non-UTF-8, invalid or too deeply nested file a one-line
    ``ParamError`` naming the file."""
    path = input_file(path, "file")
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as err:
        v.fail(str(path), "TOML", f"is not valid TOML ({err})")
    except UnicodeDecodeError as err:
        v.fail(str(path), "TOML", f"is not UTF-8 text (byte {err.start})")
    except RecursionError:
        v.fail(str(path), "TOML", "nests its arrays or tables too deeply")
    except PermissionError:
        v.fail(str(path), "file", "cannot be read (permission denied)")


def to_toml(data: dict, header: str = "", comments: dict[str, str] | None = None) -> str:
    """Plain data (the layout ``read_toml`` returns for a scenario or a plan) as
    TOML text: top-level values first, then one table per nested dict; lists of
    tables inline; ``None`` (no TOML value) left out. ``read_toml`` of the text
    gives ``data`` back (float32 values, e.g. a trace, as the shortest decimals that
    read back to the same float32). A long list of numbers at a key is wrapped over
    lines of at most 100 characters. ``comments`` maps ``"section.field"`` (or a
    top-level ``"field"``) to a comment written after its value, ``  # comment``
    (after the closing bracket of a wrapped list); line breaks in it become spaces."""
    comments = comments or {}

    def value(x: Any) -> str:
        if isinstance(x, bool):
            return "true" if x else "false"
        if isinstance(x, (int, np.integer)):
            return str(int(x))
        if isinstance(x, (float, np.floating)):
            if x != x:
                return "nan"
            if x in (float("inf"), float("-inf")):
                return "inf" if x > 0 else "-inf"
            return str(x) if isinstance(x, np.float32) else repr(float(x))
        if isinstance(x, str):
            return '"' + x.replace("\\", "\\\\").replace('"', '\\"') + '"'
        if isinstance(x, np.ndarray):
            return value(list(x) if x.dtype == np.float32 and x.ndim == 1 else x.tolist())
        if isinstance(x, (list, tuple)):
            return "[" + ", ".join(value(y) for y in x) + "]"
        if isinstance(x, dict):
            return "{ " + ", ".join(f"{key(k)} = {value(y)}" for k, y in x.items()) + " }"
        raise TypeError(f"not TOML data: {type(x).__name__}")

    def key(k: str) -> str:
        return k if k.replace("_", "").replace("-", "").isalnum() else value(str(k))

    def remark(name: str) -> str:
        """``  # comment`` for field ``name`` ("" for none), one line of characters
        a TOML comment may hold."""
        note = comments.get(name)
        if note is None:
            return ""
        return ("  # " + "".join(c if c >= " " and c != "\x7f" or c == "\t" else " " for c in str(note))).rstrip()

    def entry(k: str, x: Any, section: str = "") -> str:
        note = remark(f"{section}.{k}" if section else k)
        text = value(x)
        items = list(x) if isinstance(x, (list, tuple)) or isinstance(x, np.ndarray) and x.ndim == 1 else None
        if len(text) > 100 and items and all(isinstance(y, (int, float, np.number)) for y in items):
            if isinstance(x, np.ndarray) and x.dtype != np.float32:
                items = x.tolist()
            rows = [""]
            for word in (value(y) + "," for y in items):
                if len(rows[-1]) + 1 + len(word) > 96 and rows[-1]:
                    rows.append("")
                rows[-1] += (" " if rows[-1] else "") + word
            text = "[\n" + "\n".join("    " + row for row in rows) + "\n]"
        return f"{key(k)} = {text}{note}"

    lines = [f"# {line}" if line else "#" for line in header.splitlines()]
    lines += [entry(k, x) for k, x in data.items() if not isinstance(x, dict) and x is not None]
    for k, x in data.items():
        if isinstance(x, dict):
            lines += ["", f"[{key(k)}]"] + [entry(kk, y, k) for kk, y in x.items() if y is not None]
    return "\n".join(lines) + "\n"


def read_one_table(path: str | Path, key: str, example: str) -> Any:
    """The one ``[key]`` table of a TOML file that holds nothing else (a grid
    file, a ranges file); anything else in it, or no such table, is a one-line
    ``ParamError`` (``example`` shows a line of the table)."""
    data = read_toml(path)
    unknown = sorted(set(data) - {key})
    if unknown:
        v.fail(unknown[0], data[unknown[0]], f"is not a {key}-file key; the file holds one [{key}] table")
    if key not in data:
        v.fail(key, None, f"{path} must hold a [{key}] table, e.g. {example}")
    return data[key]


def read_trace_csv(path: str | Path) -> np.ndarray:
    """730 hourly demands from a CSV: one number a line, or a ``demand`` column."""
    import pandas as pd

    path = input_file(path, "demand.trace_csv")
    shape = "must hold one number a line or a 'demand' column"
    try:
        frame = pd.read_csv(path, header=None)
        named = frame.shape[1] > 1 or not pd.api.types.is_numeric_dtype(frame.dtypes.iloc[0])
        if named:
            frame = pd.read_csv(path)
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError, PermissionError) as err:
        v.fail("demand.trace_csv", str(path), f"{shape} ({type(err).__name__})")
    if named:
        if "demand" not in frame.columns:
            v.fail("demand.trace_csv", str(path), shape)
        col = frame["demand"]
    else:
        col = frame.iloc[:, 0]
    # true/false cells are read as booleans, which count as numbers (1 and 0): refused.
    flags = col.map(lambda x: isinstance(x, (bool, np.bool_))).to_numpy(bool)
    if flags.any():
        v.fail("demand.trace_csv", str(path), f"row {int(flags.argmax())}: must hold only numbers, not true/false")
    col = pd.to_numeric(col, errors="coerce")
    if col.isna().any():
        v.fail("demand.trace_csv", str(path), f"row {int(col.isna().to_numpy().argmax())}: must hold only numbers")
    return col.to_numpy()


def _log_demand(demand: dict, base: Scenario | None, folder: str | Path) -> dict:
    """A ``[demand]`` table with ``log = "FILE"`` (relative to ``folder``; read
    with ``read_request_log``, ``columns`` passed on) as ``Demand`` takes it: the
    log read, ``shape = "log"`` required (given or the base's)."""
    demand = dict(demand)
    log = demand.get("log")
    if "columns" in demand and not isinstance(log, str):
        v.fail("demand.columns", demand["columns"], "is read with demand.log = \"FILE\": give both")
    if not isinstance(log, str):
        return demand  # a RequestLog (or a wrong value, which Demand names)
    if not log:
        v.fail("demand.log", log, "must be the path of a request-log file")
    shape = demand.get("shape", base.demand.shape if base is not None else "flat")
    if shape != "log":
        v.fail("demand.log", log, f"is only used with shape = 'log', not {shape!r}")
    columns = demand.get("columns")
    if columns is not None and not isinstance(columns, str):
        v.fail("demand.columns", columns, "must name the time, prompt and answer columns, e.g. 'time,prompt,answer'")
    demand["log"] = read_request_log(Path(folder) / log, columns=columns)
    return demand


def _log_entry(entry: dict, folder: str | Path) -> dict:
    """A pool entry rated from its SLO on a request log: ``log = "FILE"`` (relative
    to ``folder``; ``columns`` optional) read into the log the queue takes."""
    if "log" not in entry and "columns" not in entry:
        return entry
    entry = dict(entry)
    where = f"pool.{entry.get('name', 'entry')}"
    log, columns = entry.get("log"), entry.pop("columns", None)
    if not isinstance(log, str):
        v.fail(f"{where}.log", log, "must be the path of a request log (CSV, JSONL or Parquet)")
    if entry.get("rated_from") not in ("slo", "pool-slo"):
        v.fail(f"{where}.log", log, "is read by a card rated from its SLO (rated_from = \"slo\")")
    entry["log"] = read_request_log(Path(folder) / log, columns=columns)
    return entry


def scenario_from_data(data: dict, folder: str | Path = ".") -> Scenario:
    """A scenario from plain data (a TOML document or a sweep's ``[scenario]``
    table). ``preset = "name"`` starts from a fleet preset; ``demand.trace_csv =
    "file.csv"`` reads a trace (``read_trace_csv``) and ``demand.log = "FILE"`` a
    request log (``_log_demand``), as does an SLO-rated pool entry's ``log``, and
    ``eviction.policy = "rules.py:Class"`` loads a user's rule (``load_rule``), all
    relative to ``folder``."""
    data = dict(data)
    base = fleet_presets.get(data.pop("preset")) if "preset" in data else None
    eviction = data.get("eviction")
    if isinstance(eviction, dict) and is_rule_path(eviction.get("policy")):
        load_rule(eviction["policy"], folder)
    demand = data.get("demand")
    if isinstance(demand, dict) and ("log" in demand or "columns" in demand):
        demand = data["demand"] = _log_demand(demand, base, folder)
    if isinstance(data.get("pool"), list):
        data["pool"] = [_log_entry(e, folder) if isinstance(e, dict) else e for e in data["pool"]]
    if isinstance(demand, dict) and "trace_csv" in demand:
        demand = dict(demand)
        if not isinstance(demand["trace_csv"], str):
            v.fail("demand.trace_csv", demand["trace_csv"], "must be the path of a CSV file")
        shape = demand.get("shape", base.demand.shape if base is not None else "flat")
        if shape != "trace":
            v.fail("demand.trace_csv", demand["trace_csv"], f"is only used with shape = 'trace', not {shape!r}")
        demand["trace"] = read_trace_csv(Path(folder) / demand.pop("trace_csv"))
        data["demand"] = demand
    return Scenario.from_dict(data, base=base)


def procurement_from_data(data: dict) -> Procurement:
    """A procurement from plain data; ``preset = "name"`` starts from a buying preset."""
    data = dict(data)
    base = buy_presets.get(data.pop("preset")) if "preset" in data else None
    return Procurement.from_dict(data, base=base)


def load_scenario(path: str | Path) -> Scenario:
    """A scenario from a TOML file (see ``scenario_from_data``)."""
    path = Path(v.instance("path", path, (str, os.PathLike), "the path of a TOML file (str or Path)"))
    return scenario_from_data(read_toml(path), path.parent)


def load_procurement(path: str | Path) -> Procurement:
    """A procurement from a TOML file (see ``procurement_from_data``)."""
    return procurement_from_data(read_toml(path))


def _named(field: str, spec: str, registry, load):
    """A preset of ``registry`` by name, or what ``load`` reads from a TOML path."""
    if spec.endswith(".toml") or os.sep in spec or Path(spec).exists():
        return load(spec)
    if spec not in registry.names():
        v.fail(field, spec, "must be a preset (" + ", ".join(registry.names()) + ") or a .toml file")
    return registry.get(spec)


def scenario(spec: str) -> Scenario:
    """A fleet preset name or a path to a scenario TOML file."""
    return _named("scenario", spec, fleet_presets, load_scenario)


def procurement(spec: str) -> Procurement:
    """A buying preset name or a path to a procurement TOML file."""
    return _named("plan", spec, buy_presets, load_procurement)
