"""The answer: the raced rows as a table, best first, with the Pareto front, the
recommendation and its saving; written as ``candidates.parquet`` and
``calibration.json`` (``calibrate``'s **The answer**).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from ...engine import figure, mean_interval
from .. import manifest
from ..store import FolderLock, tag
from ..grid import Setting, own_value
from ._figures import FIGURES, OBJECTIVES, summarise
from ._race import Limits, Row


@dataclasses.dataclass
class Calibration:
    """The search's outcome.

    ``table``: one row per group of identical settings, best first (see
    ``columns``); ``best``: the recommended row's index, or ``None`` when no
    setting meets the limits (``closest`` then names the nearest).
    """

    table: pd.DataFrame
    best: int | None
    closest: int | None
    current: int | None
    fields: list[str]
    limits: Limits
    objective: str
    n: int
    first: int
    seed: int
    stages: list[dict]
    searched: int  # settings of the grid (the current setting, when outside it, is run besides)
    wall_s: float
    months_run: int
    saving: tuple[float, float, float] | None  # current − recommended bill, paired, $ (value, lo, hi)

    @property
    def recommendation(self) -> pd.Series | None:
        return None if self.best is None else self.table.loc[self.best]

    def runners_up(self, k: int = 4) -> pd.DataFrame:
        t = self.table
        ok = t[t["feasible"] & (t["status"] == "finished")]
        return ok.iloc[:k]

    def warnings(self) -> list[str]:
        """Plain sentences on what the answer fails."""
        out = []
        if self.best is None:
            row = self.table.loc[self.closest] if self.closest is not None else None
            out.append("no setting meets the limits" + (f"; the closest is {row['names'].split('; ')[0]}"
                                                        if row is not None else ""))
            pick = row
        else:
            pick = self.table.loc[self.best]
        if pick is not None:
            checks = (("p_capacity_fail", "capacity check (shortfall above its limit)"),
                      ("p_convergence_fail", "convergence check (bill above ideal / threshold)"),
                      ("p_wrong_eviction", "eviction check (a wrong eviction)"))
            for fig, what in checks:
                if pick[fig] > 0.05:
                    out.append(f"it fails the {what} in {pick[fig]:.0%} of months")
        return out

    def row_dict(self, i: int) -> dict:
        r = self.table.loc[i]
        return {
            "names": r["names"].split("; "), "settings": int(r["settings"]),
            "setting": {f: _plain(r[f]) for f in self.fields},
            "months": int(r["months"]), "status": r["status"], "feasible": bool(r["feasible"]),
            "figures": {name: figure(r[name], r[f"{name}_lo"], r[f"{name}_hi"], units)
                        for name, (units, _) in FIGURES.items()},
        }

    def to_dict(self, k: int = 4) -> dict:
        t = self.table
        merged = [r.split("; ") for r in t.loc[t["settings"] > 1, "names"]]
        return {
            "objective": self.objective, "limits": self.limits.to_dict(),
            "n": self.n, "first": self.first, "seed": self.seed,
            "recommendation": None if self.best is None else self.row_dict(self.best),
            "closest": None if self.closest is None or self.best is not None else self.row_dict(self.closest),
            "warnings": self.warnings(),
            "saving_vs_current": None if self.saving is None else figure(*self.saving, "$"),
            "runners_up": [self.row_dict(i) for i in self.runners_up(k + 1).index if i != self.best][:k],
            "current": None if self.current is None else self.row_dict(self.current),
            "pareto_front": [self.row_dict(i) for i in t.index[t["pareto"]]],
            "merged": merged,
            "race": self.stages,
            "searched": self.searched, "rows": int(len(t)), "feasible": int(t["feasible"].sum()),
            "setting_months": self.months_run, "wall_s": round(self.wall_s, 2),
        }


def _plain(x: Any) -> Any:
    return x.item() if isinstance(x, np.generic) else x


def pareto(objective: np.ndarray, risk: np.ndarray) -> np.ndarray:
    """(k,) bool: rows no other beats on both a lower objective and a lower risk
    (at least as good on both, better on one)."""
    o, r = np.asarray(objective, float), np.asarray(risk, float)
    ge = (o[None, :] <= o[:, None]) & (r[None, :] <= r[:, None])
    gt = (o[None, :] < o[:, None]) | (r[None, :] < r[:, None])
    return ~np.any(ge & gt, axis=1)


def _row_stats(r: pd.Series) -> dict:
    return {name: (r[name], r[f"{name}_lo"], r[f"{name}_hi"]) for name in FIGURES}


def _table(rows: list[Row], found: list[Setting], fields: list[str], limits: Limits, current: int) -> pd.DataFrame:
    recs = []
    for row in rows:
        s = summarise(row.months)
        head = found[row.members[0]]
        rec = {f: own_value(head.scenario, f) for f in fields}
        rec["names"] = "; ".join(found[i].name for i in row.members)
        rec["settings"] = len(row.members)
        for name, (val, lo, hi) in s.items():
            rec[name], rec[f"{name}_lo"], rec[f"{name}_hi"] = val, lo, hi
        rec["months"] = row.m
        rec["status"] = row.status
        rec["feasible"] = limits.excess(s) <= 0
        rec["current"] = current in row.members
        rec["_row"] = row
        recs.append(rec)
    t = pd.DataFrame.from_records(recs)
    k = 2 if limits.judge == "upper" else 0
    cap_ok = np.array([_row_stats(r)["p_capacity_fail"][k] <= limits.max_capacity_risk for _, r in t.iterrows()])
    front = np.zeros(len(t), bool)
    if cap_ok.any():
        front[cap_ok] = pareto(t["bill"].to_numpy()[cap_ok], t["p_wrong_eviction"].to_numpy()[cap_ok])
    t["pareto"] = front
    return t


def _paired_saving(table: pd.DataFrame, cur: int, best: int) -> tuple[float, float, float]:
    a, b = table.loc[cur, "_row"], table.loc[best, "_row"]
    m = min(a.m, b.m)
    d = (a.months["bill"][:m] - b.months["bill"][:m]).astype(np.float64) / 100.0
    return mean_interval(d)


class Ranked(NamedTuple):
    """The rows ranked: ``Calibration``'s table and the rows it names."""

    table: pd.DataFrame  # one row per group of identical settings, best first
    best: int | None  # the recommended row, or None when no finisher meets the limits
    closest: int | None  # the row nearest the limits when none meets them
    current: int  # the scenario's own setting's row
    saving: tuple[float, float, float] | None  # current − recommended bill, paired, $ (value, lo, hi)


def rank(rows: list[Row], found: list[Setting], fields: list[str], limits: Limits, objective: str,
         current: int) -> Ranked:
    """The raced ``rows`` as a table (``columns``), best first: finished and
    feasible, then by ``objective``; ties to lower risks."""
    finished = [r.status == "finished" for r in rows]
    table = _table(rows, found, fields, limits, current)
    table["finished"] = finished
    fig, sense = OBJECTIVES[objective]
    table["_key"] = sense * table[fig]
    table = table.sort_values(["feasible", "finished", "_key", "p_wrong_eviction", "p_capacity_fail", "n_evicted"],
                              ascending=[False, False, True, True, True, True], kind="stable")
    table = table.drop(columns=["_key", "finished"]).reset_index(drop=True)
    ok = table.index[table["feasible"] & (table["status"] == "finished")]
    best = int(ok[0]) if len(ok) else None
    closest = None
    if best is None:
        closest = int(np.argmin([limits.excess(_row_stats(table.loc[i])) for i in table.index]))
    else:
        table.loc[best, "status"] = "recommended"
    cur = int(table.index[table["current"]][0])
    saving = None
    if best is not None and cur != best:
        saving = _paired_saving(table, cur, best)
    return Ranked(table, best, closest, cur, saving)


def columns(result: Calibration) -> list[str]:
    """The table's columns as written: the grid's fields, the names, each figure
    with its interval, and the verdicts."""
    figs = [c for name in FIGURES for c in (name, f"{name}_lo", f"{name}_hi")]
    return result.fields + ["names", "settings"] + figs + ["months", "status", "feasible", "pareto", "current"]


def save(result: Calibration, out: str | Path, scenario: str, provenance: dict | None = None) -> dict:
    """Write ``out/candidates.parquet`` (``columns``) and ``out/calibration.json``,
    each atomically; the report is written last and seals the table (its sha256,
    ``manifest.verify``), and is removed first, so it never describes another
    table. Returns the report as read back and verified."""
    out = Path(out)
    report = {"scenario": scenario, **result.to_dict()}
    if provenance is not None:
        report["provenance"] = provenance
    table = result.table[columns(result)]
    out.mkdir(parents=True, exist_ok=True)
    with FolderLock(out, "calibration"):  # two writers never interleave one folder's files
        meta = tag(table, what="calibration candidates", scenario=scenario, n=result.n, first=result.first,
                   seed=result.seed)
        return manifest.verify(manifest.write_sealed(out / "calibration.json", report,
                                                     {out / "candidates.parquet": (table, meta)}))
