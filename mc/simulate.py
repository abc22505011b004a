"""Run a scenario for N fleet-months and summarise the distribution (SPEC §2)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import engine, summary
from .fleet import COUNTS, MONEY, OUTPUTS, fleet_month
from .scenario import Scenario

MODE_COLUMNS = ("bill", "n_run", "n_evicted")


def to_dollars(cents: np.ndarray) -> np.ndarray:
    """int cents → float64 dollars (exact to the cent when printed to 2 places)."""
    return np.asarray(cents, dtype=np.int64) / 100.0


def finalize(raw: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Device outputs → user columns, in ``OUTPUTS`` order: money in dollars
    (float64), counts int64, the rest float64 or bool."""
    out = {}
    for name in OUTPUTS:
        col = np.asarray(raw[name])
        if name in MONEY:
            out[name] = to_dollars(col)
        elif name in COUNTS:
            out[name] = col.astype(np.int64)
        elif col.dtype != bool:
            out[name] = col.astype(np.float64)
        else:
            out[name] = col
    return out


def summarize(columns: dict[str, np.ndarray]) -> dict:
    """SPEC §2 summary of finalized columns: stats, pass rates, modes."""
    out = summary.summarize(columns)
    out["modes"] = {}
    for name in MODE_COLUMNS:
        value, share = summary.mode(columns[name])
        out["modes"][name] = {"value": value, "share": float(share)}
    return out


@dataclass
class Result:
    """A scenario's distribution over ``n`` fleet-months.

    ``summary``: ``{"n", "stats": {col: {mean, std, p5, p50, p95}},
    "pass": {check: {rate, lo, hi, n}}, "modes": {col: {value, share}}}``.
    ``samples``: one row per fleet-month (SPEC §2 columns) when kept.
    """

    scenario: Scenario
    n: int
    seed: int
    summary: dict
    samples: pd.DataFrame | None = field(default=None, repr=False)


def simulate(scenario: Scenario, n: int, *, seed: int = 0, chunk: int | None = None,
             keep_samples: bool = False) -> Result:
    """Months ``0..n-1`` of ``scenario``; month ``i`` uses ``fold_in(key(seed), i)``,
    so results do not depend on ``chunk``."""
    if not isinstance(scenario, Scenario):
        raise TypeError(f"scenario must be a Scenario, not {type(scenario).__name__}")
    columns = finalize(engine.sample(fleet_month, scenario, n, seed=seed, chunk=chunk))
    return Result(scenario, int(n), int(seed), summarize(columns),
                  pd.DataFrame(columns) if keep_samples else None)
