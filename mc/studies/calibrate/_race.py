"""The race: successive halving of the settings over common random numbers
(``calibrate``'s **The race** and **Merging**).

Every setting runs the same ``first`` months; identical settings form one row;
round by round the months double for the rows still in the race, up to ``n``,
and a row leaves when it is surely worse than the leader or surely breaks a
limit. At the end every member of a finishing row runs its row's months too.
"""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

import numpy as np

from ... import _validate as v
from ..._pytree import set_field
from ...engine import mean_interval
from .. import blocks, dispatch
from ..grid import Setting
from ._figures import host_values, month_figures, objective_values, summarise

JUDGES = ("upper", "point")
DEFAULT_N = 4_096
DEFAULT_FIRST = 256


@dataclasses.dataclass(frozen=True)
class Limits:
    """The risks a recommendation must stay within, and how they are judged."""

    max_capacity_risk: float = 0.05
    max_wrong: float = 0.05
    max_wrong_mean: float | None = None
    judge: str = "upper"

    def __post_init__(self):
        set_field(self, "max_capacity_risk", v.number("max_capacity_risk", self.max_capacity_risk, lo=0.0, hi=1.0))
        set_field(self, "max_wrong", v.number("max_wrong", self.max_wrong, lo=0.0, hi=1.0))
        if self.max_wrong_mean is not None:
            set_field(self, "max_wrong_mean", v.nonneg("max_wrong_mean", self.max_wrong_mean))
        v.choice("judge", self.judge, JUDGES)

    def pairs(self) -> list[tuple[str, float]]:
        out = [("p_capacity_fail", self.max_capacity_risk), ("p_wrong_eviction", self.max_wrong)]
        if self.max_wrong_mean is not None:
            out.append(("wrong_mean", self.max_wrong_mean))
        return out

    def excess(self, stats: dict) -> float:
        """How far the judged figures are above their limits (≤ 0: all met), in
        units of each limit's own scale."""
        k = 2 if self.judge == "upper" else 0
        return max((stats[f][k] - lim) / max(lim, 1e-3) for f, lim in self.pairs())

    def broken(self, stats: dict) -> bool:
        """Surely above a limit: the lower end of a figure's interval is above it."""
        return any(stats[f][1] > lim for f, lim in self.pairs())

    def to_dict(self) -> dict:
        out = {"max_capacity_risk": self.max_capacity_risk, "max_wrong": self.max_wrong}
        if self.max_wrong_mean is not None:
            out["max_wrong_mean"] = self.max_wrong_mean
        out["judged_on"] = "upper end of the 95% interval" if self.judge == "upper" else "point estimate"
        return out


@dataclasses.dataclass
class Row:
    """Settings with identical months (one row of the answer)."""

    members: list[int]  # indices into the settings, the first runs the race
    months: dict[str, np.ndarray]  # figure -> (m,) per-month values of the first member
    status: str = "finished"

    @property
    def m(self) -> int:
        return int(self.months["bill"].shape[0])


class Raced(NamedTuple):
    """The race's outcome."""

    rows: list[Row]  # every row, its status "finished", "raced out" or "breaks a limit"
    stages: list[dict]  # per round: months, rows in it, rows kept
    months_run: int  # setting-months run in all


def _rows(prints: np.ndarray, members: list[int]) -> list[list[int]]:
    """``members`` grouped by identical fingerprint columns (``prints`` (m, len(members)))."""
    seen: dict[bytes, list[int]] = {}
    for j, i in enumerate(members):
        seen.setdefault(np.ascontiguousarray(prints[:, j]).tobytes(), []).append(i)
    return list(seen.values())


def _leader(rows: list[Row], stats: list[dict], limits: Limits, objective: str) -> int | None:
    ok = [i for i, s in enumerate(stats) if limits.excess(s) <= 0]
    if not ok:
        return None
    return min(ok, key=lambda i: (float(objective_values(rows[i].months, objective).mean()), _ties(stats[i])))


def _ties(s: dict) -> tuple:
    return (s["p_wrong_eviction"][0], s["p_capacity_fail"][0], s["n_evicted"][0])


def _surely_worse(row: Row, lead: Row, objective: str) -> bool:
    d = objective_values(row.months, objective) - objective_values(lead.months, objective)
    return mean_interval(d)[1] > 0


def race(found: list[Setting], limits: Limits, objective: str, *, n: int, first: int, seed: int,
         chunk: int | None, progress: bool | None, executor: Any = None) -> Raced:
    """Run ``found`` on common months (each on ``seed``), round by round, and
    merge identical settings into rows (see the module). Each round's units (its
    surviving settings and months, ``blocks.units``) run where ``executor`` says
    (None: here, in order; see ``dispatch``).

    Returns:
        ``Raced``: the rows, each with its members' per-month figures (``m``
        months: ``first`` to ``n``) and status.
    """
    scenarios = [s.scenario for s in found]
    # One setting per engine call on a CPU: vmapping settings barely pays there and
    # each block width would compile anew; on an accelerator, blocks of BLOCK. The
    # devices are those that run the units (a cluster's workers').
    executor = dispatch.check(executor)
    run_kw = {"seed": seed, "chunk": chunk, "most": 1 if executor.platform == "cpu" else blocks.BLOCK,
              "executor": executor}
    months_run = 0

    def evaluate(members: list[int], lo: int, hi: int) -> dict[str, np.ndarray]:
        nonlocal months_run
        months_run += len(members) * (hi - lo)
        got = blocks.run([scenarios[i] for i in members], month_figures, hi - lo, first=lo, progress=progress,
                         **run_kw)
        return host_values(got)

    # Round 1: every setting, then rows of identical settings.
    got = evaluate(list(range(len(found))), 0, first)
    rows = []
    for members in _rows(got["print"], list(range(len(found)))):
        j = members[0]
        rows.append(Row(members, {k: x[:, j] for k, x in got.items()}))
    stages = []
    alive = list(range(len(rows)))
    m = first
    while True:
        stats = [summarise(rows[i].months) for i in alive]
        lead = _leader([rows[i] for i in alive], stats, limits, objective)
        keep = []
        for j, i in enumerate(alive):
            if limits.broken(stats[j]):
                rows[i].status = "breaks a limit"
            elif lead is not None and j != lead and _surely_worse(rows[i], rows[alive[lead]], objective):
                rows[i].status = "raced out"
            else:
                keep.append(i)
        stages.append({"months": m, "rows": len(alive), "kept": len(keep)})
        alive = keep
        if m >= n or not alive:
            break
        nxt = min(2 * m, n)
        reps = [rows[i].members[0] for i in alive]
        more = evaluate(reps, m, nxt)
        for j, i in enumerate(alive):
            rows[i].months = {k: np.concatenate([rows[i].months[k], more[k][:, j]]) for k in more}
        m = nxt
    # The finishers' other members run the months their row reports, and split if they differ.
    final = []
    for i in range(len(rows)):
        row = rows[i]
        if i in alive and len(row.members) > 1 and row.m > first:
            rest = row.members[1:]
            more = evaluate(rest, first, row.m)
            prints = np.concatenate([row.months["print"][first:, None], more["print"]], axis=1)
            parts = _rows(prints, row.members)
            for part in parts:
                if part[0] == row.members[0]:
                    final.append(Row(part, row.months, row.status))
                else:
                    j = rest.index(part[0])
                    head = {k: got[k][:, part[0]] for k in got}
                    final.append(Row(part, {k: np.concatenate([head[k], more[k][:, j]]) for k in more},
                                     row.status))
        else:
            final.append(row)
    return Raced(final, stages, months_run)
