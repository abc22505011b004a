"""A result's figures in the one JSON shape (``mc.engine.figure``) every ``--json`` writes.

Each figure is ``{"value", "lo", "hi", "units"}``: a mean over months with its normal
95% interval (``mc.engine.mean_figure``), a pass rate with its 95% Wilson interval
(``mc.engine.pass_figure``). Keys are ``<column>_mean`` and ``pass_<check>``, the
same for ``mc run``, ``mc presets``, ``mc buy`` and ``mc sweep``. ``units`` are the
column's true units (``"$"``, ``"cards"``, ``"tokens"``, ``"share"``, ``"h"``;
``""`` for a ratio); tables for people may scale them (``mc.fleet.report``).
"""

from __future__ import annotations

from typing import Mapping

from ..engine import column_units, mean_figure, pass_figure
from ..fleet.report import FLEET_UNITS


def units_of(column: str, units: Mapping[str, str]) -> str:
    """A column's units: from ``units``, else ``"share"`` for a ``*_share`` column
    (a sweep's derived ``idle_share``), else ``""``."""
    if column in units:
        return units[column]
    return "share" if column.endswith("_share") else ""

def of_values(values: Mapping, units: Mapping[str, str]) -> dict[str, dict]:
    """Exact figures (arithmetic, not a sample): ``{"value", "units"}`` for each of
    ``units`` that ``values`` holds (a figure with no interval; ``None`` stays null)."""
    return {name: {"value": values[name], "units": u} for name, u in units.items() if name in values}


def of_summary(summary: Mapping, units: Mapping[str, str]) -> dict[str, dict]:
    """Every figure of an engine summary (``{"n", "stats", "pass"}``): each column's
    mean with its 95% interval, then each check's pass rate with its Wilson interval."""
    n = int(summary["n"])
    out = {f"{col}_mean": mean_figure(st["mean"], st["std"], n, units_of(col, units))
           for col, st in summary["stats"].items()}
    out.update({f"pass_{check}": pass_figure(p) for check, p in summary["pass"].items()})
    return out


def of_rows(rows, units: Mapping[str, str]) -> dict[str, dict]:
    """The same figures from one sweep point's tidy rows (``statistic``, ``n``,
    ``mean std`` or ``rate lo hi``)."""
    out, passes = {}, {}
    for rec in rows.to_dict("records"):
        name = rec["statistic"]
        if name.startswith("pass_"):
            passes[name] = pass_figure({"rate": rec["rate"], "lo": rec["lo"], "hi": rec["hi"], "n": rec["n"]})
        else:
            out[f"{name}_mean"] = mean_figure(rec["mean"], rec["std"], int(rec["n"]), units_of(name, units))
    return {**out, **passes}


__all__ = ["FLEET_UNITS", "column_units", "units_of", "of_values", "of_summary", "of_rows"]
