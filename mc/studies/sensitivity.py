"""Which parameter drives each verdict: variance-based global sensitivity (Sobol
first-order and total indices) over any numeric scenario fields.

Points come from Saltelli's scheme (SALib's Sobol' sequence, ``N·(D + 2)`` points
for ``D`` fields, no second-order terms) and the indices, with bootstrap 95%
intervals, from SALib's estimators: none are written here. Each point's figures
(P(pass) of each check, mean bill, mean convergence, mean shortfall) are means
over ``months`` fleet-months run by the engine, with the points of a block
vmapped over the scenario's parameter leaves (one compilation serves them all).

Monte Carlo noise: every point uses the same months (month ``i`` of the seed for
every point: common random numbers), so the noise is shared across points and
largely cancels in the differences the estimators take. What remains is
reported per figure as ``noise_share``: the mean over points of a figure's
Monte Carlo variance (its per-month variance over ``months``) against the
variance of the figure across points. Below a few percent, noise cannot move an
index by more than its interval.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import warnings
from typing import Any, Callable, Mapping

import jax.numpy as jnp
import numpy as np

from .. import _validate as v
from .. import files
from . import manifest
from . import blocks
from . import dispatch
from .store import FolderLock, tag
from .._pytree import set_field
from ..fleet.eviction import Eviction
from ..fleet.outages import plan as outage_plan
from ..fleet.scenario import OPTIONAL, SECTIONS, Scenario

# A point's figures: name -> what a month contributes (its mean over months is the figure).
FIGURES = ("p_capacity", "p_convergence", "p_eviction", "bill_mean", "convergence_mean", "shortfall_mean")
MAX_POINTS = 200_000
NOISY = 0.5  # a figure whose Monte Carlo variance is over this share of its spread has no meaningful indices
BLOCK = 64  # points vmapped together per engine call


def _month_figures(out: dict) -> dict:
    """``{"y": (figures,) float32}`` for one month, in ``FIGURES`` order (the bill in $)."""
    return {"y": jnp.stack([out["pass_capacity"].astype(jnp.float32), out["pass_convergence"].astype(jnp.float32),
                            out["pass_eviction"].astype(jnp.float32), out["bill"].astype(jnp.float32) / 100.0,
                            out["convergence"], out["shortfall"]])}


# -- ranges -----------------------------------------------------------------------------

# Field annotations of numbers that vary continuously (demand.level is None until a
# shape gives it a value: a request log's own mean).
CONTINUOUS = ("float", float, "float | None")

def _continuous(base: Scenario, cls) -> dict[str, bool]:
    """A section's fields, each with whether it varies continuously. The eviction
    rule's fields are the base's policy's (each a float with its declared range)."""
    if cls is Eviction:
        return {"policy": False, **dict.fromkeys(base.eviction.rule.params(), True), "churn": True}
    return {f.name: f.name not in cls._static_fields and f.type in CONTINUOUS for f in dataclasses.fields(cls)
            if f.init}


def check_ranges(base: Scenario, ranges: Any) -> dict[str, tuple[float, float]]:
    """Validated ``{"section.field": (lo, hi)}``: numeric, non-static, non-integer
    scenario fields with ``lo < hi``, both ends valid values of the field."""
    if not isinstance(ranges, Mapping) or not ranges:
        v.fail("ranges", ranges, 'must be a table of "section.field" = [lo, hi], e.g. "window.hours" = [1, 168]')
    out = {}
    sections = {**SECTIONS, **OPTIONAL}  # [autoscaler] fields too (SPEC §6)
    for name, pair in ranges.items():
        head, _, tail = str(name).partition(".")
        fields = _continuous(base, sections[head]) if head in sections else {}
        if tail not in fields:
            known = [f"{s}.{f}" for s, c in sections.items() for f, ok in _continuous(base, c).items() if ok]
            v.fail(f"ranges.{name}", pair, "is not a numeric scenario field; known: " + ", ".join(known))
        if not fields[tail]:
            v.fail(f"ranges.{name}", pair, "fixes shapes or modes or is an integer (it cannot vary continuously)")
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            v.fail(f"ranges.{name}", pair, "must be [lo, hi]")
        lo = v.number(f"ranges.{name}[0]", pair[0])
        hi = v.number(f"ranges.{name}[1]", pair[1])
        if not lo < hi:
            v.fail(f"ranges.{name}", [lo, hi], "must have lo < hi")
        for end in (lo, hi):
            base.replace({name: end})  # each end must be a valid value of the field
        out[str(name)] = (lo, hi)
    return out


def check_samples(samples: Any, n_vars: int) -> int:
    """A power of two, at least 64, and no more than ``MAX_POINTS`` points."""
    n = v.count("samples", samples, lo=64, hi=1 << 20)
    if n & (n - 1):
        v.fail("samples", n, "must be a power of two (Sobol' sequences balance only there), e.g. 256")
    if n * (n_vars + 2) > MAX_POINTS:
        v.fail("samples", n, f"gives {n * (n_vars + 2):,} points for {n_vars} ranges; at most {MAX_POINTS:,}")
    return n


def load_ranges(path) -> dict:
    """The ``[ranges]`` table of a TOML file (``"window.hours" = [1, 168]``)."""
    return files.read_one_table(path, "ranges", '"window.hours" = [1, 168]')


# -- sampling and analysis (SALib) --------------------------------------------------------

def problem(ranges: Mapping[str, tuple[float, float]]) -> dict:
    return {"num_vars": len(ranges), "names": list(ranges), "bounds": [list(b) for b in ranges.values()]}


def sample(ranges: Mapping[str, tuple[float, float]], samples: int, seed: int = 0) -> np.ndarray:
    """(samples·(D + 2), D) float64 Saltelli points (SALib's Sobol' sampler, scrambled by ``seed``)."""
    from SALib.sample import sobol as sobol_sample

    return sobol_sample.sample(problem(ranges), samples, calc_second_order=False, seed=seed)


def analyze(ranges: Mapping[str, tuple[float, float]], y: np.ndarray, *, resamples: int = 200,
            seed: int = 0) -> dict[str, np.ndarray]:
    """First-order and total indices of one figure ``y`` (points,) with bootstrap
    95% half-widths: ``S1, S1_conf, ST, ST_conf``, each (D,). A figure that does not
    vary across points has no indices (NaN)."""
    from SALib.analyze import sobol as sobol_analyze

    d = len(ranges)
    if not np.all(np.isfinite(y)) or np.ptp(y) == 0:
        nan = np.full(d, np.nan)
        return {"S1": nan, "S1_conf": nan, "ST": nan, "ST_conf": nan}
    # SALib seeds its bootstrap only for a true seed (``if seed:``); seed 0 would draw
    # from NumPy's unseeded global state and change the intervals on every run. 0 maps
    # to 2**31, outside the seeds a user may give, so every seed is its own.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = sobol_analyze.analyze(problem(ranges), np.asarray(y, np.float64), calc_second_order=False,
                                    num_resamples=resamples, conf_level=0.95, seed=seed if seed else 2**31)
    return {k: np.asarray(res[k], np.float64) for k in ("S1", "S1_conf", "ST", "ST_conf")}


@dataclasses.dataclass
class Sensitivity:
    """Indices per figure and parameter, and what produced them."""

    ranges: dict[str, tuple[float, float]]
    points: np.ndarray  # (P, D) float64
    y: dict[str, np.ndarray]  # figure -> (P,) float64
    noise_share: dict[str, float]  # figure -> Monte Carlo variance / variance across points
    indices: dict[str, dict[str, np.ndarray]]  # figure -> S1, S1_conf, ST, ST_conf, each (D,)
    samples: int
    months: int
    seed: int

    def table(self):
        """A tidy pandas table: one row per (figure, parameter)."""
        import pandas as pd

        rows = []
        for fig, ind in self.indices.items():
            for j, name in enumerate(self.ranges):
                rows.append({"figure": fig, "parameter": name, "lo": self.ranges[name][0],
                             "hi": self.ranges[name][1], **{k: float(ind[k][j]) for k in ind},
                             "noise_share": self.noise_share[fig]})
        return pd.DataFrame(rows)

    def report(self) -> dict:
        """JSON-ready: each figure's indices per parameter, with their intervals."""
        def num(x):
            return None if not math.isfinite(x) else float(x)

        figures = {}
        for fig, ind in self.indices.items():
            figures[fig] = {
                "noise_share": num(self.noise_share[fig]),
                "varies": bool(np.isfinite(ind["S1"]).all()),
                "parameters": {name: {"S1": num(ind["S1"][j]), "S1_conf": num(ind["S1_conf"][j]),
                                      "ST": num(ind["ST"][j]), "ST_conf": num(ind["ST_conf"][j])}
                               for j, name in enumerate(self.ranges)}}
        return {"samples": self.samples, "points": int(self.points.shape[0]), "months": self.months,
                "seed": self.seed, "ranges": {k: list(b) for k, b in self.ranges.items()}, "figures": figures}


def indices_of(ranges: Mapping[str, tuple[float, float]], evaluate: Callable[[np.ndarray], tuple[dict, dict]],
               samples: int, *, seed: int = 0, months: int = 0, resamples: int = 200) -> Sensitivity:
    """The whole method for any model: Saltelli points, ``evaluate(points)`` giving
    ``(figures, noise variances)`` (dicts of (P,) arrays), SALib's indices."""
    ranges = dict(ranges)
    samples = check_samples(samples, len(ranges))
    x = sample(ranges, samples, seed)
    y, noise = evaluate(x)
    shares = {}
    for fig, col in y.items():
        spread = float(np.var(col))
        shares[fig] = float(np.mean(noise[fig]) / spread) if spread > 0 else 0.0
    ind = {fig: analyze(ranges, col, resamples=resamples, seed=seed) for fig, col in y.items()}
    return Sensitivity(ranges, x, y, shares, ind, samples, months, seed)


# -- the fleet month ----------------------------------------------------------------------

def fleet_evaluator(base: Scenario, names: list[str], months: int, *, seed: int = 0, chunk: int | None = None,
                    progress: bool | None = False, executor: Any = None) -> Callable[[np.ndarray], tuple[dict, dict]]:
    """``evaluate(points)`` for ``indices_of``: each point's figures over months
    ``0..months-1`` of ``seed`` (the same months at every point), in blocks of
    ``BLOCK`` points vmapped in one engine call, each block's months a unit run
    where ``executor`` says (None: here, in order; see ``dispatch``) and folded
    in unit order."""
    months = v.count("months", months, lo=16, hi=10**8)
    executor = dispatch.check(executor)

    def evaluate(x: np.ndarray) -> tuple[dict, dict]:
        scenarios = []
        for row in x:
            try:
                scenarios.append(base.replace(dict(zip(names, row.tolist()))))
            except v.ParamError as err:
                v.fail("ranges", dict(zip(names, row.tolist())), f"give a point the scenario refuses ({err})")
        scenarios = common_shapes(scenarios)
        # Sums in float64 on the host about each point's first-piece mean (exact
        # enough that the variance of a bill of $50,000 keeps its digits).
        shift = np.zeros((len(scenarios), len(FIGURES)))
        s1, s2 = np.zeros_like(shift), np.zeros_like(shift)
        for part, start, got in blocks.pieces(scenarios, _month_figures, months, seed=seed, chunk=chunk,
                                              most=BLOCK, progress=progress, executor=executor):
            y = np.asarray(got["y"], np.float64)  # (m, settings, figures)
            if start == 0:
                shift[part] = y.mean(axis=0)
            d = y - shift[part]
            s1[part] += d.sum(axis=0)
            s2[part] += (d * d).sum(axis=0)
        mean = shift + s1 / months
        var = np.maximum(s2 / months - (s1 / months) ** 2, 0.0)
        figures = {f: mean[:, j] for j, f in enumerate(FIGURES)}
        noise = {f: var[:, j] / months for j, f in enumerate(FIGURES)}
        return figures, noise

    return evaluate


def common_shapes(scenarios: list[Scenario]) -> list[Scenario]:
    """The points with one §10 shape wherever they differ only in rates and spells
    (``outages.plan.widen``): a range over ``failures.rate``, ``spot.rate``,
    ``spot.up_hours`` or ``spot.down_hours`` changes the length of a month's event
    lists, and each length would compile anew. Each point's months are then drawn
    with the longest lists any point of its shape needs: equal in law to ``mc run``'s
    months of that scenario, though not its bits (those draw lists of its own length)."""
    groups: dict[Any, list[int]] = {}
    for i, sc in enumerate(scenarios):
        if sc.outages is not None:
            groups.setdefault((sc.pool, sc.runset, sc.structure, outage_plan.bare(sc.outages)), []).append(i)
    out = list(scenarios)
    for members in groups.values():
        wide = outage_plan.widen([scenarios[i].outages for i in members])
        for i in members:
            out[i] = copy.copy(scenarios[i])
            set_field(out[i], "outages", wide)
    return out


def save(result: Sensitivity, base: Scenario, out, *, wall_s: float | None = None, cluster: dict | None = None) -> None:
    """``out/sensitivity.parquet`` (the tidy indices) and ``out/manifest.json``
    (``cluster``: the cluster that ran the points, as its executor describes it)."""
    out = files.check_output_folder(out)
    out.mkdir(parents=True, exist_ok=True)
    config = {"scenario": base.to_dict(), "ranges": {k: list(b) for k, b in result.ranges.items()},
              "samples": result.samples, "figures": list(FIGURES),
              "method": "Saltelli sampling and Sobol indices (SALib), no second order, 95% bootstrap intervals"}
    with FolderLock(out, "sensitivity study"):  # two writers never interleave one folder's files
        table = result.table()
        meta = tag(table, what="sensitivity indices", config_hash=manifest.config_hash(config), n=result.months,
                   seed=result.seed)
        made = manifest.build(config, seed=result.seed, n=result.months, points=int(result.points.shape[0]),
                              noise_share=result.noise_share, wall_s=wall_s, **({"cluster": cluster} if cluster else {}))
        manifest.write_sealed(out / "manifest.json", made, {out / "sensitivity.parquet": (table, meta)})


def sensitivity(base: Scenario, ranges: Any, *, samples: int = 256, months: int = 1000, seed: int = 0,
                chunk: int | None = None, progress: bool | None = False, resamples: int = 200,
                executor: Any = None) -> Sensitivity:
    """Sobol indices of every figure of ``base``'s fleet month over ``ranges``
    (``{"section.field": [lo, hi]}``), from ``samples·(D + 2)`` points of
    ``months`` fleet-months each (``executor``: where the points' units run, None
    here; the same bits either way)."""
    checked = check_ranges(base, ranges)  # samples are checked by indices_of, months by fleet_evaluator
    evaluate = fleet_evaluator(base, list(checked), months, seed=seed, chunk=chunk, progress=progress,
                               executor=executor)
    return indices_of(checked, evaluate, samples, seed=seed, months=months, resamples=resamples)


__all__ = ["FIGURES", "NOISY", "Sensitivity", "analyze", "check_ranges", "check_samples", "fleet_evaluator",
           "indices_of", "load_ranges", "sample", "save", "sensitivity"]
