"""Run a scenario for N fleet-months and summarise the distribution (SPEC §2)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import engine, stream, summary
from .fleet import COUNTS, MONEY, OUTPUTS, fleet_month
from .scenario import Scenario

MODE_COLUMNS = stream.MODE_COLUMNS


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
    """SPEC §2 summary of finalized columns: stats, pass rates, modes (all exact)."""
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
    "pass": {check: {rate, lo, hi, n}}, "modes": {col: {value, share}}}``; a
    streamed run adds ``"quantile_error": {col: bound}`` (the most a p5/p50/p95
    can differ from the all-samples value; 0 where exact), and a run stopped by
    Ctrl-C adds ``"partial": True`` (``n`` is then the months actually done).
    ``samples``: one row per fleet-month (SPEC §2 columns) when kept.
    """

    scenario: Scenario
    n: int
    seed: int
    summary: dict
    samples: pd.DataFrame | None = field(default=None, repr=False)


def simulate(scenario: Scenario, n: int, *, seed: int = 0, chunk: int | None = None,
             keep_samples: bool = False, devices: int | None = None,
             progress: bool | None = False, bins: int = stream.BINS) -> Result:
    """Months ``0..n-1`` of ``scenario``; month ``i`` uses ``fold_in(key(seed), i)``,
    so results do not depend on ``chunk`` or ``devices``.

    Args:
        chunk: fleet-months per step, all devices together (a multiple of the
            device count); default a per-backend size times the device count.
        keep_samples: keep every fleet-month (memory grows with ``n``) and
            summarise them exactly; otherwise stream: memory is bounded by the chunk.
        devices: use the first ``devices`` local devices (default: all devices,
            of every process after ``jax.distributed.initialize``).
        progress: a progress bar on stderr: True, False, or None (when stderr is
            a terminal).
        bins: histogram bins per float output when streaming.
    """
    if not isinstance(scenario, Scenario):
        raise TypeError(f"scenario must be a Scenario, not {type(scenario).__name__}")
    kw = dict(seed=seed, chunk=chunk, devices=devices)
    if keep_samples:
        run = engine.Run(0)
        raw = engine.sample(fleet_month, scenario, n, progress=progress, run=run, **kw)
        columns = finalize(raw) if raw else None
        result = Result(scenario, run.done, int(seed), summarize(columns) if columns else {"n": 0},
                        pd.DataFrame(columns) if columns else None)
    else:
        red, aux = stream.plan(scenario, bins)
        aux = stream.ranges_from(engine.first_chunk(fleet_month, scenario, n, reducer=red, aux=aux, **kw), aux)
        acc = stream.Accumulator(red, aux)
        run = engine.stream(fleet_month, scenario, n, reducer=red, merge=acc.merge, aux=aux,
                            progress=progress, **kw)
        result = Result(scenario, run.done, int(seed), acc.summary() if run.done else {"n": 0})
    if run.partial:
        result.summary["partial"] = True
    return result
