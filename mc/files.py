"""Files in and out: TOML and CSV inputs with one-line errors, the registries
they may name, and atomic writes.

This is the one layer that knows every registry: a file's ``preset = "name"``
starts from a fleet preset (scenarios) or a buying preset (procurements).
"""

from __future__ import annotations

import os
import tempfile
import tomllib
from pathlib import Path
from typing import Any, Callable

import numpy as np

from . import _validate as v
from .buy import Procurement
from .buy import presets as buy_presets
from .fleet import Scenario
from .fleet import presets as fleet_presets


def read_toml(path: str | Path) -> dict:
    """The tables of a TOML file; a missing file raises FileNotFoundError and
    invalid TOML a one-line ``ParamError`` naming the file."""
    path = Path(path)
    with path.open("rb") as fh:
        try:
            return tomllib.load(fh)
        except tomllib.TOMLDecodeError as err:
            v.fail(str(path), "TOML", f"is not valid TOML ({err})")


def read_trace_csv(path: str | Path) -> np.ndarray:
    """730 hourly demands from a CSV: one number a line, or a ``demand`` column."""
    import pandas as pd

    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(2, "no such file", str(path))
    frame = pd.read_csv(path, header=None)
    if frame.shape[1] > 1 or not pd.api.types.is_numeric_dtype(frame.dtypes.iloc[0]):
        frame = pd.read_csv(path)
        if "demand" not in frame.columns:
            v.fail("demand.trace_csv", str(path), "must hold one number a line or a 'demand' column")
        col = frame["demand"]
    else:
        col = frame.iloc[:, 0]
    col = pd.to_numeric(col, errors="coerce")
    if col.isna().any():
        v.fail("demand.trace_csv", str(path), f"row {int(col.isna().to_numpy().argmax())}: must hold only numbers")
    return col.to_numpy()


def scenario_from_data(data: dict, folder: str | Path = ".") -> Scenario:
    """A scenario from plain data (a TOML document or a sweep's ``[scenario]``
    table). ``preset = "name"`` starts from a fleet preset; ``demand.trace_csv =
    "file.csv"`` reads a trace (``read_trace_csv``) relative to ``folder``."""
    data = dict(data)
    base = fleet_presets.get(data.pop("preset")) if "preset" in data else None
    demand = data.get("demand")
    if isinstance(demand, dict) and "trace_csv" in demand:
        demand = dict(demand)
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
    path = Path(path)
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


def atomic_write(path: str | Path, write: Callable[[str], Any]) -> None:
    """Write a file through a temporary sibling and rename it into place, so an
    interrupted run never leaves a half-written file. ``write(tmp_path)``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_text(path: str | Path, text: str) -> None:
    """``atomic_write`` of a text file."""
    def write(tmp):
        with open(tmp, "w") as fh:
            fh.write(text)

    atomic_write(path, write)


__all__ = ["read_toml", "read_trace_csv", "scenario_from_data", "procurement_from_data", "load_scenario",
           "load_procurement", "scenario", "procurement", "atomic_write", "write_text"]
