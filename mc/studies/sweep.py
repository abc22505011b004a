"""Sweeps: a grid over scenario fields, one ``simulate`` per grid point, one tidy table.

A sweep is a base scenario, a grid (dotted field name → list of values), a number of
fleet-months ``n`` and a seed. Its table has one row per grid point and statistic::

    <grid fields...> | point | statistic | n | mean std p5 p50 p95 | rate lo hi | mode mode_share

``statistic`` is an output of SPEC §2 (``bill``, ``convergence``, ...: ``mean``..``p95``
filled), a check (``pass_capacity``, ``pass_convergence``, ``pass_eviction``: ``rate``
and its 95% Wilson interval ``lo``/``hi`` filled) or a derived per-month column (see
``derive``). ``bill``, ``n_run`` and ``n_evicted`` rows also carry their modal value.

Seeds: every grid point runs on the sweep's own seed, so month ``i`` of every point
draws the same random numbers wherever the pool's shape allows (common random
numbers). Differences between neighbouring points then measure the parameter change,
not sampling noise, and curves over a grid come out smooth. Each point's own
intervals are still valid; points are simply not independent of each other.

Resuming: each finished point is written atomically to ``points/<hash>.parquet``,
the hash covering the point's full scenario, ``n``, seed and derived columns. A
point file carries what it is (its key, index, ``n``, seed, the arithmetic that
made it: ``madeby.arithmetic()``, row count and a checksum of its rows) in its
Parquet metadata. A rerun reuses a point file only when all of that checks out; an
empty, truncated, damaged, foreign or misplaced file, or one made by other
arithmetic (a change to a model's code, or another version of mc), is recomputed
with a warning naming it (a folder in its place is refused). ``reuse_stale`` keeps
points made by other arithmetic instead, and the manifest lists them
(``stale_points``: each point's index and the arithmetic its file records). A point stopped by Ctrl-C is never written: the run raises
``Interrupted`` (a ``KeyboardInterrupt``) saying how many points are kept, so a
sweep interrupted or killed at any moment and started again ends with the same
table as one never interrupted.

The table and its manifest are sealed (``manifest.seal``): ``manifest.json`` is
removed when a run starts and written last, with the table's checksum, so a
folder's manifest always describes the table beside it; ``read`` verifies it.
"""

from __future__ import annotations

import dataclasses
import time
import warnings
from contextlib import closing
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .. import _validate as v
from .. import files
from .._pytree import set_field
from ..engine import describe
from ..fleet import Scenario, simulate
from . import derive, dispatch
from . import manifest as manifests
from .grid import Point, check_grid, flatten_grid, label, points
from .store import FolderLock, Interrupted, reusable, tag, write_piece
from .manifest import config_hash as _hash
from .manifest import plain as _plain

STATS = ("mean", "std", "p5", "p50", "p95")
PASS = ("rate", "lo", "hi")
VALUE_COLUMNS = ("n",) + STATS + PASS + ("mode", "mode_share")
DEFAULT_N = 10_000
CONFIG_KEYS = ("preset", "scenario", "grid", "n", "seed", "derive")


@dataclasses.dataclass(frozen=True)
class Sweep:
    """A grid of scenarios.

    Attributes:
        base: the scenario every grid point starts from.
        grid: dotted field name → tuple of values, in the order given (the first
            field varies slowest).
        n: fleet-months per grid point.
        seed: the seed of every grid point (common random numbers).
        derive: name → expression over the per-month columns (e.g.
            ``"idle_burn / bill"``; what it may hold: ``mc.studies.derive``),
            summarised like the outputs.
    """

    base: Scenario
    grid: dict[str, tuple]
    n: int = DEFAULT_N
    seed: int = 0
    derive: dict[str, str] = dataclasses.field(default_factory=dict)

    def __post_init__(self):
        check_grid(self.grid)
        set_field(self, "grid", {k: tuple(vals) for k, vals in self.grid.items()})
        set_field(self, "n", v.count("n", self.n, lo=1, hi=2**32))
        set_field(self, "seed", v.count("seed", self.seed, lo=0, hi=2**31 - 1))
        for name, expr in v.mapping("derive", self.derive).items():
            derive.check(f"derive.{name}", expr, derive.OUTPUTS)
        set_field(self, "derive", dict(self.derive))

    # -- plain data ------------------------------------------------------
    def config(self) -> dict:
        """Plain data that rebuilds this sweep exactly (``Sweep.from_dict``)."""
        return {"scenario": self.base.to_dict(), "grid": {k: list(vals) for k, vals in self.grid.items()},
                "n": self.n, "seed": self.seed, "derive": dict(self.derive)}

    def config_hash(self) -> str:
        return _hash(self.config())

    @classmethod
    def from_dict(cls, data: dict, folder: str | Path = ".") -> "Sweep":
        """From the TOML layout: a base (``preset = "name"`` and/or a ``[scenario]``
        table, which may itself name a ``preset``), a ``[grid]`` table, and optional
        ``n``, ``seed`` and ``[derive]``. A trace CSV is read relative to ``folder``."""
        if not isinstance(data, dict):
            v.fail("sweep", type(data).__name__, "must be a table")
        for key in data:
            if key not in CONFIG_KEYS:
                v.fail(key, data[key], "is not a sweep setting; known: " + ", ".join(CONFIG_KEYS))
        table = data.get("scenario") or {}
        if not isinstance(table, dict):
            v.fail("scenario", table, "must be a table of scenario fields (a preset is named by preset = \"name\")")
        table = dict(table)
        preset = table.pop("preset", data.get("preset"))
        if preset is None and not table:
            v.fail("preset", None, "a sweep needs a base: preset = \"name\" or a [scenario] table")
        base = files.scenario_from_data(table if preset is None else {**table, "preset": preset}, folder)
        if "grid" not in data:
            v.fail("grid", None, "must be a table of field = [values], e.g. \"window.hours\" = [1, 24, 168]")
        grid = flatten_grid(data["grid"])
        files.load_policies(grid.get("eviction.policy", []), folder, "grid.eviction.policy")
        return cls(base=base, grid=grid, n=data.get("n", DEFAULT_N),
                   seed=data.get("seed", 0), derive=data.get("derive") or {})


def load(path: str | Path) -> Sweep:
    """A sweep from a TOML file (see ``Sweep.from_dict``)."""
    path = Path(path)
    return Sweep.from_dict(files.read_toml(path), path.parent)


# -- one point's rows ---------------------------------------------------------

def rows(point: Point, result, derived: dict[str, np.ndarray] | None = None) -> pd.DataFrame:
    """The tidy rows of one grid point from its ``simulate`` result."""
    s = result.summary
    recs = []
    for stat, st in s["stats"].items():
        rec = {"statistic": stat, "n": s["n"], **st}
        if stat in s.get("modes", {}):
            rec["mode"] = float(s["modes"][stat]["value"])
            rec["mode_share"] = float(s["modes"][stat]["share"])
        recs.append(rec)
    for name, col in (derived or {}).items():
        recs.append({"statistic": name, "n": s["n"], **describe(col)})
    for check, pr in s["pass"].items():
        recs.append({"statistic": f"pass_{check}", "n": pr["n"], "rate": pr["rate"], "lo": pr["lo"], "hi": pr["hi"]})
    frame = pd.DataFrame.from_records(recs, columns=["statistic", *VALUE_COLUMNS])
    frame["n"] = frame["n"].astype(np.int64)
    for col in VALUE_COLUMNS[1:]:
        frame[col] = frame[col].astype(np.float64)
    for i, (field, val) in enumerate(point.labels.items()):
        frame.insert(i, field, [val] * len(frame))
    frame.insert(len(point.labels), "point", np.int64(point.index))
    return frame


def evaluate(point: Point, sweep: Sweep, *, chunk: int | None = None, progress: Any = False) -> pd.DataFrame:
    """Simulate one grid point and return its rows (``progress``: as ``simulate``'s,
    or a bar shared by the points).

    Raises:
        Interrupted: Ctrl-C stopped the point short (no rows: a point is whole or absent).
    """
    return _evaluate(point, sweep, chunk, progress)[0]


def _evaluate(point: Point, sweep: Sweep, chunk: int | None, progress: Any) -> tuple[pd.DataFrame, bool]:
    """``evaluate``'s rows, and whether a Ctrl-C came after the point's last chunk
    (the point is whole; the sweep stops after saving it)."""
    result = simulate(point.scenario, sweep.n, seed=sweep.seed, chunk=chunk, keep_samples=bool(sweep.derive),
                      progress=progress)
    if result.summary.get("partial") or result.n != sweep.n:
        raise Interrupted(f"grid point {point.index} stopped after {result.n:,} of {sweep.n:,} months")
    derived = None
    if sweep.derive:
        derived = {}
        for name, expr in sweep.derive.items():
            derived[name] = derive.evaluate(f"derive.{name}", expr, result.samples)
    return rows(point, result, derived), bool(result.summary.get("interrupted"))


# -- running ----------------------------------------------------------------

@dataclasses.dataclass
class Outcome:
    """What ``run`` wrote: the table, where, how many points it computed and reused,
    and the reused points made by other arithmetic (``stale``: ``{"point", "arithmetic"}``
    each, as the manifest's ``stale_points``)."""

    table: pd.DataFrame
    out: Path
    computed: int
    reused: int
    wall_s: float
    stale: list[dict] = dataclasses.field(default_factory=list)


def identity(point: Point, sweep: Sweep) -> dict:
    """What a point's file must say it is (``store.read_piece``)."""
    return {"point": point.key, "index": point.index, "n": sweep.n, "seed": sweep.seed}


def _warn(msg: str) -> None:
    warnings.warn(msg, stacklevel=3)


def point_unit(payload: tuple, bar: Any) -> tuple[pd.DataFrame, bool]:
    """One unit of a sweep: a grid point's ``n`` months on this process's devices
    (``_evaluate``'s rows and whether a Ctrl-C came after its last chunk)."""
    point, sweep, chunk = payload
    return _evaluate(point, sweep, chunk, bar)


def units(todo: list[Point], sweep: Sweep, chunk: int | None) -> list[dispatch.Unit]:
    """A sweep's units: one per grid point, all its months (a point's summary is
    streamed chunk by chunk and merged in float64 in chunk order, so it stays one
    unit; sweeps have many points)."""
    return [dispatch.Unit(point_unit, (p, sweep, chunk), sweep.n, note=f"point {i}/{len(todo)}",
                          name=f"grid point {p.index}") for i, p in enumerate(todo, 1)]


def run(sweep: Sweep, out: str | Path, *, chunk: int | None = None, progress: bool | None = None,
        fresh: bool = False, desc: str | None = None, warn=None, executor: Any = None,
        reuse_stale: bool = False) -> Outcome:
    """Run every grid point not already on disk and write the combined table.

    Writes ``out/points/<key>.parquet`` per point, then ``out/sweep.parquet`` and
    ``out/manifest.json`` (sealed: written last, with the table's checksum), each
    atomically. ``progress``: a bar over the months of the points still to
    compute (months/s and an ETA; default: only when stderr is a terminal).
    ``fresh``: recompute every point even if its file exists. ``warn(message)``:
    told of each point file that cannot be reused, one line each (default
    ``warnings.warn``); a point made by other arithmetic is one of them, unless
    ``reuse_stale`` keeps it (the manifest's ``stale_points`` then lists it).
    ``executor``: where the points run (None: here, one after another; a
    cluster's: as tasks, each point written as it comes back; see ``dispatch``);
    the table is the same bits either way.

    Raises:
        Interrupted: Ctrl-C stopped a point; only the points finished before it are
            kept (the message says how many), and no table or manifest is written.
    """
    start = time.perf_counter()
    warn = warn or _warn
    executor = dispatch.check(executor)
    pts = points(sweep)  # validates every point before anything runs
    out = Path(out)
    pdir = out / "points"
    computed = 0
    with FolderLock(out, "sweep"):  # before anything is written, the point files included
        pdir.mkdir(parents=True, exist_ok=True)
        manifests.unseal(out / "manifest.json")  # the folder is in progress until the end
        for stale in pdir.glob(".*.tmp"):  # left by a run killed mid-write
            stale.unlink(missing_ok=True)
        frames: dict[int, pd.DataFrame] = {}
        stale: list[dict] = []
        for p in pts:
            made = [] if reuse_stale else None
            got = None if fresh else reusable(pdir / f"{p.key}.parquet", identity(p, sweep), warn,
                                              f"grid point {p.index}", stale=made)
            if got is not None:
                frames[p.index] = got
                stale += [{"point": p.index, "arithmetic": m} for m in made or []]
        todo = [p for p in pts if p.index not in frames]
        with _points_bar(todo, sweep, progress, desc or out.name) as bar:
            try:
                with closing(dispatch.run(units(todo, sweep, chunk), executor, bar, ordered=False)) as done:
                    for j, (frame, stopped) in done:
                        point = todo[j]
                        write_piece(pdir / f"{point.key}.parquet", identity(point, sweep), frame)
                        frames[point.index] = frame
                        computed += 1
                        if stopped and computed < len(todo):  # Ctrl-C after the point's last chunk: it is whole
                            raise KeyboardInterrupt(f"stopped after grid point {point.index}")
            except KeyboardInterrupt as err:  # the points in hand are never written
                kept = len(pts) - len(todo) + computed
                why = str(err) or (f"grid point {todo[computed].index} was stopped and is not saved"
                                   if isinstance(executor, dispatch.Local) else
                                   f"{len(todo) - computed} grid points were not finished and are not saved")
                if isinstance(err, Interrupted):
                    why += " and is not saved"
                raise Interrupted(f"{why}; {kept} of {len(pts)} grid points are saved in {pdir}; run the same "
                                  "sweep again to resume") from None
        reused = len(pts) - computed
        table = pd.concat([frames[p.index] for p in pts], ignore_index=True)
        wall = time.perf_counter() - start
        meta = tag(table, what="sweep table", config_hash=sweep.config_hash(), n=sweep.n, seed=sweep.seed,
                   points=len(pts))
        cluster = executor.describe()
        manifests.write_sealed(out / "manifest.json", manifest(sweep, points=len(pts), computed=computed,
                                                               reused=reused, stale_points=stale, wall_s=wall,
                                                               **({"cluster": cluster} if cluster else {})),
                               {out / "sweep.parquet": (table, meta)})
    return Outcome(table, out, computed, reused, wall, stale)


def table(sweep: Sweep, *, chunk: int | None = None, progress: bool | None = None,
          desc: str | None = None, executor: Any = None) -> pd.DataFrame:
    """The sweep's table computed in memory (nothing written, nothing resumed;
    ``executor`` as ``run``'s)."""
    executor = dispatch.check(executor)
    pts = points(sweep)
    with _points_bar(pts, sweep, progress, desc) as bar:  # in point order, wherever they ran
        frames = [frame for _, (frame, _) in dispatch.run(units(pts, sweep, chunk), executor, bar)]
    return pd.concat(frames, ignore_index=True)


def _points_bar(pts: list, sweep: Sweep, progress: bool | None, desc: str | None):
    """One bar over the months of ``pts`` (months/s, ETA), shared by their runs."""
    from ..engine import progress_bar

    return progress_bar(len(pts) * sweep.n, progress, desc=desc)


def figures_by_point(table: pd.DataFrame, fields: list[str]) -> list[dict]:
    """Each grid point's fields and figures in the shape of every ``--json``
    (``mc.studies.figures``): ``[{"point", "fields", "figures"}]``."""
    from .figures import FLEET_UNITS, of_rows

    out = []
    for point, g in table.groupby("point", sort=True):
        first = g.iloc[0]
        out.append({"point": int(point), "fields": {f: _plain(first[f]) for f in fields},
                    "figures": of_rows(g, FLEET_UNITS)})
    return out


def manifest(sweep: Sweep, **extra) -> dict:
    """Everything needed to regenerate a sweep's table and to know what made it."""
    return manifests.build(sweep.config(), seed=sweep.seed, n=sweep.n,
                           seeding="common random numbers: every grid point uses the sweep seed; "
                                   "month i uses fold_in(key(seed), i)", **extra)


def read(out: str | Path) -> tuple[pd.DataFrame, dict]:
    """A finished sweep's table and manifest, verified: the manifest must be there
    and the table must be the one it sealed (a one-line ``ParamError`` otherwise)."""
    out = Path(out)
    made = manifests.verify(out / "manifest.json")
    if "sweep.parquet" not in made.get("outputs", {}):
        v.fail("sweep", str(out), "manifest.json does not describe a sweep table")
    return files.read_parquet(out / "sweep.parquet").to_pandas(), made


def wide(table: pd.DataFrame, statistic: str) -> pd.DataFrame:
    """The rows of one statistic, one per grid point (convenient for plotting)."""
    return table[table["statistic"] == statistic].reset_index(drop=True)


SWEEP_FIGURES = (("bill", "mean", "bill mean ($)", "{:,.2f}"), ("convergence", "mean", "conv. mean", "{:.4f}"),
                 ("shortfall", "mean", "shortfall mean", "{:.4f}"), ("pass_capacity", "rate", "pass cap.", "{:.1%}"),
                 ("pass_convergence", "rate", "pass conv.", "{:.1%}"), ("pass_eviction", "rate", "pass evict.", "{:.1%}"))


def sweep_table(table, fields: list[str], most: int = 40) -> str:
    """A sweep's points, one line each: the grid fields, then mean bill,
    convergence and shortfall and the three pass rates (at most ``most`` lines)."""
    head = [*fields] + [label for _, _, label, _ in SWEEP_FIGURES]
    rows = []
    for _, g in table.groupby("point", sort=True):
        stat = g.set_index("statistic")
        first = g.iloc[0]
        cells = [str(first[f]) for f in fields]
        for name, col, _, fmt in SWEEP_FIGURES:
            cells.append(fmt.format(stat.loc[name][col]) if name in stat.index else "")
        rows.append(cells)
    shown = rows[:most]
    widths = [max(len(r[j]) for r in shown + [head]) for j in range(len(head))]
    line = lambda r: "  ".join(x.ljust(w) if j < len(fields) else x.rjust(w)
                               for j, (x, w) in enumerate(zip(r, widths)))
    out = [line(head)] + [line(r) for r in shown]
    if len(rows) > most:
        out.append(f"... and {len(rows) - most} more points (all in the table)")
    return "\n".join(out)


__all__ = ["Sweep", "Point", "Outcome", "Interrupted", "identity", "load", "points", "point_unit", "run", "table",
           "units", "figures_by_point", "read", "wide", "manifest", "flatten_grid", "check_grid", "label", "rows",
           "SWEEP_FIGURES", "sweep_table"]
