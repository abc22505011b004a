"""Autoscaler calibration: the window and eviction setting that converges best
within stated risks.

The search covers window lengths × {share policy × shares, threshold policy × θ}.
Each candidate is a scenario run for ``n`` fleet-months on the same seed (common
random numbers, so candidates are compared month for month). The recommendation
maximises the mean convergence subject to

- P(any wrong eviction) = 1 − pass rate of the eviction check ≤ ``max_wrong``, and
- P(capacity failure)   = 1 − pass rate of the capacity check ≤ ``max_shortfall_risk``,

each judged by default on the **upper end of its 95% Wilson interval** (``judge =
"upper"``: a setting is accepted only if the data rule out a risk above the limit),
or on the point estimate (``judge = "point"``). Every figure carries its Monte Carlo
interval: a normal 95% interval for the mean convergence, Wilson for the risks.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd

from .. import _validate as v
from ..engine import Z95
from ..files import atomic_write, write_text
from ..fleet import Scenario
from .sweep import Sweep, table

WINDOWS = (1.0, 4.0, 24.0, 72.0, 168.0)  # hour, 4 h, day, 3 days, week
SHARES = (0.0, 0.05, 0.1, 0.15, 0.2, 0.3)
THETAS = (0.6, 0.7, 0.8, 0.85, 0.9, 0.95)
JUDGES = ("upper", "point")
DEFAULT_N = 4_000

COLUMNS = ["window_hours", "policy", "share", "theta", "conv_mean", "conv_lo", "conv_hi",
           "wrong_risk", "wrong_lo", "wrong_hi", "cap_risk", "cap_lo", "cap_hi",
           "bill_mean", "n_evicted_mean", "feasible", "pareto", "current"]


@dataclasses.dataclass
class Calibration:
    """The search's outcome.

    ``candidates``: one row per setting (``COLUMNS``), best first; ``best``: the
    recommended row's index in it, or ``None`` when no setting meets the limits.
    """

    candidates: pd.DataFrame
    best: int | None
    max_wrong: float
    max_shortfall_risk: float
    judge: str
    n: int
    seed: int
    wall_s: float

    @property
    def recommendation(self) -> pd.Series | None:
        return None if self.best is None else self.candidates.loc[self.best]

    def runners_up(self, k: int = 4) -> pd.DataFrame:
        feasible = self.candidates[self.candidates["feasible"]]
        return feasible.iloc[1:1 + k] if self.best is not None else feasible.iloc[:0]

    def to_dict(self, k: int = 4) -> dict:
        c = self.candidates
        current = c[c["current"]]
        return {
            "n": self.n, "seed": self.seed,
            "constraints": {"max_wrong": self.max_wrong, "max_shortfall_risk": self.max_shortfall_risk,
                            "judged_on": "upper end of the 95% Wilson interval" if self.judge == "upper"
                            else "point estimate"},
            "recommendation": None if self.best is None else setting(c.loc[self.best]),
            "runners_up": [setting(r) for _, r in self.runners_up(k).iterrows()],
            "current": setting(current.iloc[0]) if len(current) else None,
            "pareto_front": [setting(r) for _, r in c[c["pareto"]].sort_values("wrong_risk").iterrows()],
            "searched": int(len(c)), "feasible": int(c["feasible"].sum()),
            "wall_s": round(self.wall_s, 2),
        }


def setting(row: pd.Series) -> dict:
    """One candidate as plain data, each figure with its 95% interval."""
    out = {"window_hours": float(row["window_hours"]), "policy": row["policy"]}
    if row["policy"] == "share":
        out["share"] = float(row["share"])
    else:
        out["theta"] = float(row["theta"])
    out.update({
        "convergence_mean": {"value": row["conv_mean"], "lo": row["conv_lo"], "hi": row["conv_hi"]},
        "p_wrong_eviction": {"value": row["wrong_risk"], "lo": row["wrong_lo"], "hi": row["wrong_hi"]},
        "p_capacity_fail": {"value": row["cap_risk"], "lo": row["cap_lo"], "hi": row["cap_hi"]},
        "bill_mean": row["bill_mean"], "n_evicted_mean": row["n_evicted_mean"],
        "feasible": bool(row["feasible"]),
    })
    return {k: ({kk: float(vv) for kk, vv in x.items()} if isinstance(x, dict) else
                x.item() if isinstance(x, np.generic) else x) for k, x in out.items()}


def search_space(windows=WINDOWS, shares=SHARES, thetas=THETAS) -> list[dict]:
    """The two grids searched: windows × shares (share policy), windows × θ (threshold)."""
    grids = []
    if shares:
        grids.append({"window.hours": list(windows), "eviction.policy": ["share"], "eviction.share": list(shares)})
    if thetas:
        grids.append({"window.hours": list(windows), "eviction.policy": ["threshold"], "eviction.theta": list(thetas)})
    if not windows or not grids:
        v.fail("search", {"windows": windows, "shares": shares, "thetas": thetas},
               "needs at least one window and one share or θ")
    return grids


def candidates_table(tables: list[pd.DataFrame]) -> pd.DataFrame:
    """Tidy sweep tables → one row per candidate with risks and intervals."""
    rows = []
    for tab in tables:
        for _, g in tab.groupby("point", sort=True):
            stat = g.set_index("statistic")
            conv = stat.loc["convergence"]
            half = Z95 * conv["std"] / math.sqrt(conv["n"])
            wrong, cap = stat.loc["pass_eviction"], stat.loc["pass_capacity"]
            first = g.iloc[0]
            policy = first["eviction.policy"]
            rows.append({
                "window_hours": float(first["window.hours"]), "policy": policy,
                "share": float(first["eviction.share"]) if policy == "share" else math.nan,
                "theta": float(first["eviction.theta"]) if policy == "threshold" else math.nan,
                "conv_mean": conv["mean"], "conv_lo": conv["mean"] - half, "conv_hi": conv["mean"] + half,
                "wrong_risk": 1 - wrong["rate"], "wrong_lo": 1 - wrong["hi"], "wrong_hi": 1 - wrong["lo"],
                "cap_risk": 1 - cap["rate"], "cap_lo": 1 - cap["hi"], "cap_hi": 1 - cap["lo"],
                "bill_mean": stat.loc["bill"]["mean"], "n_evicted_mean": stat.loc["n_evicted"]["mean"],
            })
    return pd.DataFrame(rows)


def pareto(conv: np.ndarray, risk: np.ndarray) -> np.ndarray:
    """(k,) bool: candidates no other beats on both higher convergence and lower
    wrong-eviction risk (at least as good on both, better on one).

    ``calibrate`` takes the front among settings that meet the capacity limit."""
    conv, risk = np.asarray(conv, float), np.asarray(risk, float)
    ge = (conv[None, :] >= conv[:, None]) & (risk[None, :] <= risk[:, None])
    gt = (conv[None, :] > conv[:, None]) | (risk[None, :] < risk[:, None])
    return ~np.any(ge & gt, axis=1)


def calibrate(scenario: Scenario, *, max_wrong: float = 0.05, max_shortfall_risk: float = 0.05,
              n: int = DEFAULT_N, seed: int = 0, judge: str = "upper", windows=WINDOWS,
              shares=SHARES, thetas=THETAS, chunk: int | None = None,
              progress: bool | None = None) -> Calibration:
    """Search window × policy × share/θ and recommend the best feasible setting.

    Args:
        scenario: everything but the autoscaler's setting (pool, demand, run set, ...).
        max_wrong: the limit on P(any wrong eviction in a month), in [0, 1].
        max_shortfall_risk: the limit on P(capacity check fails), in [0, 1].
        n: fleet-months per candidate; seed: the seed of every candidate.
        judge: ``"upper"`` (the Wilson upper bound must meet the limit) or ``"point"``.

    Returns:
        A ``Calibration``; ``best`` is ``None`` when no candidate is feasible.
    """
    max_wrong = v.number("max_wrong", max_wrong, lo=0.0, hi=1.0)
    max_shortfall_risk = v.number("max_shortfall_risk", max_shortfall_risk, lo=0.0, hi=1.0)
    judge = v.choice("judge", judge, JUDGES)
    start = time.perf_counter()
    sweeps = [Sweep(base=scenario, grid=g, n=n, seed=seed) for g in search_space(windows, shares, thetas)]
    c = candidates_table([table(s, chunk=chunk, progress=progress, desc="calibrate") for s in sweeps])
    # The scenario's own setting, for comparison (run on the same seed if not searched).
    ev = scenario.eviction
    own = (c["window_hours"] == scenario.window.hours) & (c["policy"] == ev.policy) & \
          ((c["share"] == ev.share) if ev.policy == "share" else (c["theta"] == ev.theta))
    if not own.any():
        grid = {"window.hours": [scenario.window.hours], "eviction.policy": [ev.policy],
                "eviction.share" if ev.policy == "share" else "eviction.theta":
                [ev.share if ev.policy == "share" else ev.theta]}
        extra = candidates_table([table(Sweep(base=scenario, grid=grid, n=n, seed=seed), chunk=chunk,
                                        progress=False)])
        c = pd.concat([c, extra], ignore_index=True)
        own = pd.Series([False] * (len(c) - 1) + [True])
    c["current"] = own.to_numpy()
    wrong = c["wrong_hi"] if judge == "upper" else c["wrong_risk"]
    cap = c["cap_hi"] if judge == "upper" else c["cap_risk"]
    cap_ok = (cap <= max_shortfall_risk).to_numpy()
    c["feasible"] = (wrong <= max_wrong).to_numpy() & cap_ok
    # The front among settings that meet the capacity limit: convergence above 1
    # from under-provisioning is not a gain (SPEC §1.8), so those are left out.
    front = np.zeros(len(c), bool)
    front[cap_ok] = pareto(c["conv_mean"].to_numpy()[cap_ok], c["wrong_risk"].to_numpy()[cap_ok])
    c["pareto"] = front
    # Best first: feasible, higher mean convergence; ties to lower risks, then fewer evictions.
    c = c.sort_values(["feasible", "conv_mean", "wrong_risk", "cap_risk", "n_evicted_mean"],
                      ascending=[False, False, True, True, True], kind="stable").reset_index(drop=True)
    best = 0 if bool(c["feasible"].iloc[0]) else None
    return Calibration(c[COLUMNS], best, max_wrong, max_shortfall_risk, judge, int(n), int(seed),
                       time.perf_counter() - start)


def save(result: Calibration, out: str | Path, scenario: str, provenance: dict | None = None) -> dict:
    """Write ``out/candidates.parquet`` and ``out/calibration.json`` (atomically);
    returns the report written to the JSON file (with ``provenance`` when given)."""
    out = Path(out)
    report = {"scenario": scenario, **result.to_dict()}
    if provenance is not None:
        report["provenance"] = provenance
    atomic_write(out / "candidates.parquet", lambda tmp: result.candidates.to_parquet(tmp, index=False))
    write_text(out / "calibration.json", json.dumps(report, indent=2, default=float) + "\n")
    return report
