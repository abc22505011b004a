"""Autoscaler calibration (SPEC §1, §6): the cheapest setting within stated risks.

**The grid.** Any scenario fields (``window.hours``, ``eviction.policy``,
``eviction.share``, ``eviction.theta``, ``runset``, ``autoscaler.period``,
``autoscaler.strikes``, ``autoscaler.min_age``, ...), each with a list of values.
Settings are the product of the lists, except that ``eviction.share`` varies
only under the share policy and ``eviction.theta``/``eviction.max_share`` only
under the threshold policy. Naming an ``autoscaler`` field makes every setting
a §6 month. At most ``MAX_SETTINGS`` settings.

**Figures** per setting, each a mean over its fleet-months with a 95% interval
(normal for means, Wilson for probabilities): ``bill`` ($), ``convergence``
(capped at 1: a bill below the ideal from under-provisioning is no gain),
``p_capacity_fail``, ``p_wrong_eviction``, ``p_convergence_fail``,
``wrong_mean`` (wrong evictions a month), ``shortfall``, ``n_evicted``,
``n_replaced``. One set of names: the same in the table's columns
(``bill``, ``bill_lo``, ``bill_hi``), the JSON report and the text.

**The answer.** The lowest mean bill (or another ``objective``) among the
settings that meet the limits: P(capacity failure) ≤ ``max_capacity_risk`` and
P(any wrong eviction) ≤ ``max_wrong`` (and, if given, mean wrong evictions ≤
``max_wrong_mean``), each judged on the upper end of its 95% interval (``judge
= "upper"``) or on the point estimate. When none does, the closest (least
excess over a limit) is reported as such; a check the answer fails more often
than not is said in words.

**The race.** Every setting runs on the same months (common random numbers).
All settings run ``first`` months; then, round by round, the months double for
the settings still in the race, up to ``n``. After each round a setting leaves
the race when it is surely worse than the leader (the 95% interval of its paired
month-by-month difference from the leader lies on the worse side) or surely
breaks a limit (the lower end of the risk's interval is above it). Only the
settings that finish the race can be recommended.

**Merging.** Settings whose months give identical outputs (every SPEC §2 output
and ``n_replaced``, bit for bit: the same decisions) form one row listing all
their names. Rows are formed on the first round; a row's later months run on
its first setting, and at the end every member of a row that finished the race
runs those months too, so a row's members agree on every month it reports.
Settings that differ only in outputs the figures do not show (``capacity_tokens``,
``idle_burn``: under ``runset = "all"`` the window changes them even with share
0) stay separate rows with equal figures; the text names those whose printed
figures equal the recommendation's on one line rather than as runners-up (the
JSON report keeps them as rows).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import time
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

from .. import _validate as v
from ..engine import Z95, figure, wilson
from .. import files
from ..fleet import Scenario
from ..fleet import month as fleet_month
from ..fleet.eviction import POLICIES
from ..fleet.runset import MODES
from ..kernels import fingerprint
from . import blocks, manifest
from .store import FolderLock, tag
from .sweep import check_grid, describe_point, flatten_grid, label

WINDOWS = (1.0, 4.0, 24.0, 72.0, 168.0)  # hour, 4 h, day, 3 days, week
SHARES = (0.0, 0.05, 0.1, 0.15, 0.2, 0.3)
THETAS = (0.6, 0.7, 0.8, 0.85, 0.9, 0.95)
STRIKES = (1, 2)  # for a §6 scenario
JUDGES = ("upper", "point")
DEFAULT_N = 4_096
DEFAULT_FIRST = 256
MAX_SETTINGS = 4_096
# A policy's own parameters: they vary only under that policy.
POLICY_FIELDS = {"eviction.share": "share", "eviction.theta": "threshold", "eviction.max_share": "threshold"}

# name -> (units, interval kind): "mean" a normal 95% interval, "rate" Wilson.
FIGURES = {
    "bill": ("$", "mean"), "convergence": ("", "mean"), "p_capacity_fail": ("share", "rate"),
    "p_wrong_eviction": ("share", "rate"), "p_convergence_fail": ("share", "rate"),
    "wrong_mean": ("cards", "mean"), "shortfall": ("share", "mean"), "n_evicted": ("cards", "mean"),
    "n_replaced": ("cards", "mean"),
}
# objective -> (figure, sense): +1 lower is better, -1 higher is better.
OBJECTIVES = {"bill": ("bill", 1), "convergence": ("convergence", -1), "shortfall": ("shortfall", 1),
              "wrong_mean": ("wrong_mean", 1)}


# -- one month's figures ------------------------------------------------------------------

def month_figures(out: dict) -> dict:
    """What a month contributes to each figure, and its fingerprint: the bits of
    every SPEC §2 output and ``n_replaced`` (0 in a §1 month)."""
    zero = jnp.zeros((), jnp.int32)
    replaced = out.get("n_replaced", zero).astype(jnp.int32)
    return {
        "bill": out["bill"].astype(jnp.int32),  # cents
        "convergence": jnp.minimum(out["convergence"], 1.0),
        "p_capacity_fail": ~out["pass_capacity"],
        "p_wrong_eviction": ~out["pass_eviction"],
        "p_convergence_fail": ~out["pass_convergence"],
        "wrong_mean": out["n_wrong"].astype(jnp.int32),
        "shortfall": out["shortfall"],
        "n_evicted": out["n_evicted"].astype(jnp.int32),
        "n_replaced": replaced,
        "print": fingerprint([out[c] for c in fleet_month.OUTPUTS] + [replaced]),
    }


def _values(got: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Host per-month values in their figure's units (the bill in $, float64)."""
    out = {k: np.asarray(x) for k, x in got.items()}
    out["bill"] = out["bill"].astype(np.int64)  # cents, summed exactly
    return out


def summarise(months: dict[str, np.ndarray]) -> dict[str, tuple[float, float, float]]:
    """Each figure's ``(value, lo, hi)`` from a setting's per-month values."""
    res = {}
    for name, (_, kind) in FIGURES.items():
        x = months[name]
        m = x.shape[0]
        if kind == "rate":
            k = int(np.count_nonzero(x))
            lo, hi = wilson(k, m)
            res[name] = (k / m, lo, hi)
        else:
            if name == "bill":
                mean = float(int(x.sum())) / m / 100.0
                sd = float(np.std(x.astype(np.float64) / 100.0))
            else:
                xf = x.astype(np.float64)
                mean, sd = float(xf.mean()), float(xf.std())
            half = Z95 * sd / math.sqrt(m)
            res[name] = (mean, mean - half, mean + half)
    return res


# -- the grid ------------------------------------------------------------------------------

def default_grid(base: Scenario) -> dict[str, list]:
    """The grid searched when none is given: windows × {share × shares, threshold
    × θ} × run-set modes, and strikes for a §6 scenario."""
    grid = {"window.hours": list(WINDOWS), "eviction.policy": list(POLICIES), "eviction.share": list(SHARES),
            "eviction.theta": list(THETAS), "runset": list(MODES)}
    if base.autoscaler is not None:
        grid["autoscaler.strikes"] = list(STRIKES)
    return grid


def load_grid(path) -> dict[str, list]:
    """The ``[grid]`` table of a TOML file (``"window.hours" = [1, 24, 168]``)."""
    return flatten_grid(files.read_one_table(path, "grid", '"window.hours" = [1, 24, 168]'))


@dataclasses.dataclass(frozen=True)
class Setting:
    """One point of the grid: the values as given, a short name, its scenario."""

    values: dict[str, Any]
    name: str
    scenario: Scenario


def _fmt(x: Any) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


# How a field reads in a setting's name ("24h window, theta 0.8, peak, strikes 2").
NAMES = {"window.hours": "{}h window", "eviction.share": "share {}", "eviction.theta": "theta {}",
         "eviction.max_share": "max_share {}", "runset": "{}", "autoscaler.period": "every {}h",
         "autoscaler.boot_hours": "boot {}h", "autoscaler.strikes": "strikes {}", "autoscaler.min_age": "min_age {}h"}


def setting_name(values: dict[str, Any]) -> str:
    """A short name of a setting from its grid values (the policy is implied by
    its share or theta where one is given)."""
    parts = []
    for f, x in values.items():
        if f == "eviction.policy" and ("eviction.share" in values or "eviction.theta" in values
                                       or "eviction.max_share" in values):
            continue
        if f == "autoscaler.replace":
            parts.append("replace" if x else "no replace")
            continue
        parts.append(NAMES.get(f, f + "={}").format(_fmt(x)))
    return ", ".join(parts)


def settings(base: Scenario, grid: dict[str, Any]) -> list[Setting]:
    """Every setting of the grid, validated and built before anything runs.

    Raises:
        ParamError: an unknown field, an empty or repeated list, a policy's own
            field that no policy in the grid uses, more than ``MAX_SETTINGS``
            settings, or a setting the scenario refuses (naming it).
    """
    grid = flatten_grid(grid) if isinstance(grid, dict) else grid
    check_grid(grid)
    grid = {k: list(vals) for k, vals in grid.items()}
    policies = grid.get("eviction.policy", [base.eviction.policy])
    for f, policy in POLICY_FIELDS.items():
        if f in grid and policy not in policies:
            v.fail(f"grid.{f}", grid[f], f"varies only under the {policy} policy, which no setting uses; "
                   f'add "{policy}" to eviction.policy')
    fields = list(grid)
    size = 0
    combos = []
    for policy in policies:
        own = [f for f in fields if POLICY_FIELDS.get(f, policy) == policy]
        lists = [[policy] if f == "eviction.policy" else grid[f] for f in own]
        count = math.prod(len(x) for x in lists)
        size += count
        if size > MAX_SETTINGS:
            break
        combos += [dict(zip(own, c)) for c in itertools.product(*lists)]
        if "eviction.policy" not in grid:
            break
    if size > MAX_SETTINGS:
        total = sum(math.prod(len(grid[f]) if f != "eviction.policy" else 1 for f in fields
                              if POLICY_FIELDS.get(f, p) == p) for p in policies)
        v.fail("grid", f"{total:,} settings", f"is too large; at most {MAX_SETTINGS:,} settings per calibration")
    out = []
    for values in combos:
        try:
            sc = base.replace(values)
        except v.ParamError as err:
            raise v.ParamError(f"setting {describe_point(values)}: {err}") from None
        out.append(Setting(values, setting_name({f: label(sc, f) for f in values}), sc))
    return out


# -- the race ------------------------------------------------------------------------------

@dataclasses.dataclass
class Row:
    """Settings with identical months (one row of the answer)."""

    members: list[int]  # indices into the settings, the first runs the race
    months: dict[str, np.ndarray]  # figure -> (m,) per-month values of the first member
    status: str = "finished"

    @property
    def m(self) -> int:
        return int(self.months["bill"].shape[0])


def _rows(prints: np.ndarray, members: list[int]) -> list[list[int]]:
    """``members`` grouped by identical fingerprint columns (``prints`` (m, len(members)))."""
    seen: dict[bytes, list[int]] = {}
    for j, i in enumerate(members):
        seen.setdefault(np.ascontiguousarray(prints[:, j]).tobytes(), []).append(i)
    return list(seen.values())


def _objective(row: Row, objective: str) -> np.ndarray:
    fig, sense = OBJECTIVES[objective]
    x = row.months[fig].astype(np.float64)
    return sense * (x / 100.0 if fig == "bill" else x)  # lower is better


@dataclasses.dataclass(frozen=True)
class Limits:
    """The risks a recommendation must stay within, and how they are judged."""

    max_capacity_risk: float = 0.05
    max_wrong: float = 0.05
    max_wrong_mean: float | None = None
    judge: str = "upper"

    def __post_init__(self):
        object.__setattr__(self, "max_capacity_risk",
                           v.number("max_capacity_risk", self.max_capacity_risk, lo=0.0, hi=1.0))
        object.__setattr__(self, "max_wrong", v.number("max_wrong", self.max_wrong, lo=0.0, hi=1.0))
        if self.max_wrong_mean is not None:
            object.__setattr__(self, "max_wrong_mean", v.nonneg("max_wrong_mean", self.max_wrong_mean))
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


def _leader(rows: list[Row], stats: list[dict], limits: Limits, objective: str) -> int | None:
    ok = [i for i, s in enumerate(stats) if limits.excess(s) <= 0]
    if not ok:
        return None
    return min(ok, key=lambda i: (float(_objective(rows[i], objective).mean()), _ties(stats[i])))


def _ties(s: dict) -> tuple:
    return (s["p_wrong_eviction"][0], s["p_capacity_fail"][0], s["n_evicted"][0])


def _surely_worse(row: Row, lead: Row, objective: str) -> bool:
    d = _objective(row, objective) - _objective(lead, objective)
    half = Z95 * float(d.std()) / math.sqrt(d.size)
    return float(d.mean()) - half > 0


# -- the answer -----------------------------------------------------------------------------

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


def calibrate(scenario: Scenario, grid: dict[str, Any] | None = None, *, objective: str = "bill",
              max_capacity_risk: float = 0.05, max_wrong: float = 0.05, max_wrong_mean: float | None = None,
              judge: str = "upper", n: int = DEFAULT_N, first: int = DEFAULT_FIRST, seed: int = 0,
              chunk: int | None = None, progress: bool | None = None) -> Calibration:
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

    Returns:
        A ``Calibration``; ``best`` is None when no setting meets the limits.
    """
    start = time.perf_counter()
    limits = Limits(max_capacity_risk, max_wrong, max_wrong_mean, judge)
    objective = v.choice("objective", objective, tuple(OBJECTIVES))
    n = v.count("n", n, lo=16, hi=10**8)
    first = v.count("first", first, lo=16, hi=n)
    seed = v.count("seed", seed, lo=0, hi=2**31 - 1)
    grid = default_grid(scenario) if grid is None else grid
    found = settings(scenario, grid)
    fields = list(dict.fromkeys(f for s in found for f in s.values))
    searched = len(found)
    current = next((i for i, s in enumerate(found) if s.scenario.to_dict() == scenario.to_dict()), None)
    if current is None:  # the scenario's own setting, run for comparison
        own = {f: _own_value(scenario, f) for f in fields}
        found.append(Setting(own, "current (" + setting_name({f: x for f, x in own.items() if x is not None}) + ")",
                             scenario))
        current = len(found) - 1
    scenarios = [s.scenario for s in found]
    # One setting per engine call on a CPU: vmapping settings barely pays there and
    # each block width would compile anew; on an accelerator, blocks of BLOCK.
    run_kw = {"seed": seed, "chunk": chunk, "most": 1 if jax.default_backend() == "cpu" else blocks.BLOCK}
    months_run = 0

    def evaluate(members: list[int], lo: int, hi: int) -> dict[str, np.ndarray]:
        nonlocal months_run
        months_run += len(members) * (hi - lo)
        got = blocks.run([scenarios[i] for i in members], month_figures, hi - lo, first=lo, progress=progress,
                         **run_kw)
        return _values(got)

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
    finished = [r.status == "finished" for r in final]
    table = _table(final, found, fields, limits, current)
    table["finished"] = finished
    # Best first: finished and feasible, then by objective; ties to lower risks.
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
    return Calibration(table, best, closest, cur, fields, limits, objective, int(n), int(first), int(seed),
                       stages, searched, time.perf_counter() - start, months_run, saving)


def _own_value(sc: Scenario, field: str) -> Any:
    """A setting's value of a grid field: None where it does not apply (a policy's
    own field under the other policy, an [autoscaler] field in a §1 month)."""
    head = field.partition(".")[0]
    if head == "autoscaler" and sc.autoscaler is None:
        return None
    if field in POLICY_FIELDS and sc.eviction.policy != POLICY_FIELDS[field]:
        return None
    return label(sc, field)


def _row_stats(r: pd.Series) -> dict:
    return {name: (r[name], r[f"{name}_lo"], r[f"{name}_hi"]) for name in FIGURES}


def _table(rows: list[Row], found: list[Setting], fields: list[str], limits: Limits, current: int) -> pd.DataFrame:
    recs = []
    for row in rows:
        s = summarise(row.months)
        head = found[row.members[0]]
        rec = {f: _own_value(head.scenario, f) for f in fields}
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
    half = Z95 * float(d.std()) / math.sqrt(m)
    return float(d.mean()), float(d.mean()) - half, float(d.mean()) + half


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


__all__ = ["Calibration", "DEFAULT_FIRST", "DEFAULT_N", "FIGURES", "JUDGES", "Limits", "MAX_SETTINGS", "OBJECTIVES",
           "Setting", "calibrate", "columns", "default_grid", "load_grid", "month_figures", "pareto", "save",
           "settings", "summarise"]
