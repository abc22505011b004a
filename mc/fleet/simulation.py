"""Run a scenario for N fleet-months and summarise the distribution (SPEC §2)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from .. import _validate as v
from .. import engine
from . import autoscaler, month
from .replicas import rounds as replica_rounds
from .scenario import Scenario


@dataclass
class Result:
    """A scenario's distribution over ``n`` fleet-months.

    ``summary``: ``{"n", "stats": {col: {mean, std, p5, p50, p95}},
    "pass": {check: {rate, lo, hi, n}}, "modes": {col: {value, share}}}``; a
    streamed run adds ``"quantile_error": {col: bound}`` (the most a p5/p50/p95
    can differ from the all-samples value; 0 where exact), and a run stopped by
    Ctrl-C adds ``"partial": True`` (``n`` is then the months actually done).
    ``samples``: one row per fleet-month (SPEC §2 columns, money in dollars) when kept.
    """

    scenario: Scenario
    n: int
    seed: int
    summary: dict
    samples: pd.DataFrame | None = field(default=None, repr=False)


def model(scenario: Scenario):
    """``(month function, column schema)`` of a scenario: SPEC §6's month when it
    has an ``[autoscaler]`` section, else §1's."""
    v.instance("scenario", scenario, Scenario, month.SCENARIO)
    if scenario.autoscaler is not None and scenario.by_replica:  # SPEC §11 in §6's rounds
        return replica_rounds.replica_month, replica_rounds.schema(scenario)
    if scenario.autoscaler is not None:
        return autoscaler.autoscaler_month, autoscaler.schema(scenario)
    return month.fleet_month, month.schema(scenario)


def simulate(scenario: Scenario, n: int, *, seed: int = 0, chunk: int | None = None,
             keep_samples: bool = False, devices: int | None = None,
             progress: bool | None = False, bins: int = engine.BINS) -> Result:
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
    month_fn, columns = model(scenario)  # checks the scenario's type
    keep_samples = v.flag("keep_samples", keep_samples)
    out = engine.summarise(month_fn, scenario, n, columns, seed=seed, chunk=chunk,
                           devices=devices, progress=progress, bins=bins, keep=keep_samples)
    samples = pd.DataFrame(out.columns) if out.columns is not None else None
    return Result(scenario, out.run.done, int(seed), out.summary, samples)
