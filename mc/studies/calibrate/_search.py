"""``calibrate``: the grid's settings, raced, reported (grid → race → report)."""

from __future__ import annotations

import time
from typing import Any

from ... import _validate as v
from ...fleet import Scenario
from .. import dispatch
from ..grid import Setting, default_grid, own_value, setting_name, settings
from ._figures import OBJECTIVES
from ._race import DEFAULT_FIRST, DEFAULT_N, Limits, race
from ._report import Calibration, rank


def calibrate(scenario: Scenario, grid: dict[str, Any] | None = None, *, objective: str = "bill",
              max_capacity_risk: float = 0.05, max_wrong: float = 0.05, max_wrong_mean: float | None = None,
              judge: str = "upper", n: int = DEFAULT_N, first: int = DEFAULT_FIRST, seed: int = 0,
              chunk: int | None = None, progress: bool | None = None, executor: Any = None) -> Calibration:
    """Race the grid's settings and recommend the best one within the limits.

    Args:
        scenario: the base: everything the grid does not vary.
        grid: dotted field -> values (``default_grid(scenario)`` when None).
        objective: a key of ``OBJECTIVES`` (lowest mean bill by default).
        max_capacity_risk, max_wrong: limits on P(capacity check fails) and
            P(any wrong eviction in a month), in [0, 1]; ``max_wrong_mean``: an
            optional limit on mean wrong evictions a month.
        judge: ``"upper"``: the upper end of each 95% interval must meet its
            limit; ``"point"``: the estimate.
        n: most fleet-months per setting; first: months of the race's first
            round (every setting); seed: the seed of every setting.
        executor: where the race's units run: None (here, in order) or a
            cluster's (``mc.studies.dispatch``); the same bits either way.

    Returns:
        A ``Calibration``; ``best`` is None when no setting meets the limits.
    """
    start = time.perf_counter()
    limits = Limits(max_capacity_risk, max_wrong, max_wrong_mean, judge)
    objective = v.choice("objective", objective, tuple(OBJECTIVES))
    n = v.count("n", n, lo=16, hi=10**8)
    first = v.count("first", first, lo=16, hi=n)
    seed = v.count("seed", seed, lo=0, hi=2**31 - 1)
    executor = dispatch.check(executor)
    grid = default_grid(scenario) if grid is None else grid
    found = settings(scenario, grid)
    fields = list(dict.fromkeys(f for s in found for f in s.values))
    searched = len(found)
    current = next((i for i, s in enumerate(found) if s.scenario.to_dict() == scenario.to_dict()), None)
    if current is None:  # the scenario's own setting, run for comparison
        own = {f: own_value(scenario, f) for f in fields}
        found.append(Setting(own, "current (" + setting_name({f: x for f, x in own.items() if x is not None}) + ")",
                             scenario))
        current = len(found) - 1
    raced = race(found, limits, objective, n=n, first=first, seed=seed, chunk=chunk, progress=progress,
                 executor=executor)
    ranked = rank(raced.rows, found, fields, limits, objective, current)
    return Calibration(ranked.table, ranked.best, ranked.closest, ranked.current, fields, limits, objective, int(n),
                       int(first), int(seed), raced.stages, searched, time.perf_counter() - start, raced.months_run,
                       ranked.saving)
