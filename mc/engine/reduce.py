"""Streaming summaries over any number of months, from a model's column ``Schema``.

Each chunk is reduced on the devices to a few small arrays; the host merges
them in float64 / int64. Nothing grows with N.

What each output gets:

- **money** (cents) and **counts**: exact value counts. A money column's
  possible values are enumerated by the model (``Schema.money``), so mean, std, p5/p50/p95 and the modes are exactly
  what the all-samples computation gives (to float rounding of the mean and
  std). Where a column has no support (too many values), the chunk's values come
  to the host and are counted there, still exactly.
- **float** outputs: Welford mean and M2 per device, merged with Chan's formula
  in float64 on the host (deviations from a shift near the mean, so token sums
  keep their precision at N = 10^9, divided by a power of two near the
  column's magnitude, exactly, so their squares stay finite in float32 for any
  value a model may produce), and a fixed-bin histogram for the
  quantiles (a quantile among a column's exact zeros, which are counted, is
  exactly 0). Bins span the range of months 0..PILOT-1 (whatever the chunk),
  widened by a quarter of it each side, plus an underflow and an overflow bin reaching to the exact minimum and
  maximum; a quantile is interpolated inside its bin, so its error is at most
  the width of the bin(s) it falls in. ``summary["quantile_error"][col]`` states
  that bound (0 for exact columns).
- **kept** columns: every value comes to the host (exact, memory grows with N);
  ``keep=True`` keeps every column, for per-month rows.
- **pass_*** checks: counts.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from .. import _validate as v
from ..kernels import bincount, lanes_for

from ..units import CENTS
from . import run as runner
from .schema import Schema
from .summary import QUANTILES, describe, exact_percentile, lerp, mode, of_columns, pass_count

BINS = 4096


# -- the device side ----------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Reducer:
    """Reduces one device's share of a chunk (inside ``shard_map``) to replicated
    partial summaries. Static: which columns get which treatment."""

    columns: tuple[str, ...]  # what the month must return
    searched: tuple[str, ...]  # money columns counted against an enumerated support
    ranged: tuple[tuple[str, int], ...]  # count columns with values 0..size-1
    floats: tuple[str, ...]  # binned
    counted: tuple[str, ...]  # money columns whose values come back to be counted on the host
    kept: tuple[str, ...]  # columns whose values come back to be kept on the host
    passes: tuple[str, ...]
    bins: int = BINS
    platform: str = "cpu"  # the devices' kind: how counts are laid out (``kernels.bincount``)

    def on(self, platform: str) -> "Reducer":
        """This reducer for devices of ``platform`` (the same results, in a
        layout without same-address atomics on parallel devices)."""
        return self if platform == self.platform else dataclasses.replace(self, platform=platform)

    def _count(self, index: jax.Array, one: jax.Array, length: int) -> jax.Array:
        return bincount(index, one, length, lanes_for(self.platform, length))

    def __call__(self, out: dict, mask: jax.Array, aux: dict) -> dict:
        if set(out) != set(self.columns):
            raise ValueError(f"the month returns {sorted(out)}, its schema names {sorted(self.columns)}")
        one = mask.astype(jnp.int32)
        res: dict = {"n": jax.lax.psum(jnp.sum(one), runner.AXIS)}
        counts = {}
        for col in self.searched:
            values, x = aux["support"][col], out[col]
            i = jnp.clip(jnp.searchsorted(values, x, method="scan_unrolled"), 0, values.shape[0] - 1)
            i = jnp.where(values[i] == x, i, values.shape[0])  # the last bin counts misses
            counts[col] = self._count(i, one, values.shape[0] + 1)
        for col, size in self.ranged:
            x = out[col]
            i = jnp.where((x >= 0) & (x < size), x, size)
            counts[col] = self._count(i, one, size + 1)
        res["counts"] = jax.lax.psum(counts, runner.AXIS)
        res["pass"] = jax.lax.psum(jnp.stack([jnp.sum(out[c] & mask, dtype=jnp.int32) for c in self.passes]),
                                   runner.AXIS) if self.passes else jnp.zeros(0, jnp.int32)
        if self.floats:
            res.update(self._floats(out, mask, one, aux))
        if self.counted:
            res["host"] = {c: jax.lax.all_gather(jnp.where(mask, out[c], -1), runner.AXIS, tiled=True)
                           for c in self.counted}
        if self.kept:
            res["kept"] = {c: jax.lax.all_gather(out[c], runner.AXIS, tiled=True) for c in self.kept}
        return res

    def _floats(self, out, mask, one, aux) -> dict:
        AXIS, res = runner.AXIS, {}
        x = jnp.stack([out[c].astype(jnp.float32) for c in self.floats])  # (F, local)
        lo, hi, shift = aux["lo"][:, None], aux["hi"][:, None], aux["shift"][:, None]
        t = jnp.floor((x - lo) / (hi - lo) * self.bins)
        b = (jnp.clip(t, -1.0, float(self.bins)) + 1.0).astype(jnp.int32)  # 0 under, bins+1 over
        rows = jnp.arange(len(self.floats), dtype=jnp.int32)[:, None] * (self.bins + 2)
        hist = self._count((b + rows).ravel(), jnp.broadcast_to(one[None, :], b.shape).ravel(),
                           len(self.floats) * (self.bins + 2))
        res["hist"] = jax.lax.psum(hist.reshape(len(self.floats), self.bins + 2), AXIS)
        d = jnp.where(mask[None, :], (x - shift) * aux["unscale"][:, None], 0.0)
        cnt = jnp.sum(one).astype(jnp.float32)
        s1 = jnp.sum(d, axis=1)
        m = s1 / jnp.maximum(cnt, 1.0)
        m2 = jnp.sum(jnp.where(mask[None, :], (d - m[:, None]) ** 2, 0.0), axis=1)
        local = jnp.stack([jnp.broadcast_to(cnt, s1.shape), s1, m2], axis=1)  # (F, 3)
        res["welford"] = jax.lax.all_gather(local, AXIS)  # (devices, F, 3)
        big = jnp.float32(np.inf)
        res["min"] = jax.lax.pmin(jnp.min(jnp.where(mask[None, :], x, big), axis=1), AXIS)
        res["max"] = jax.lax.pmax(jnp.max(jnp.where(mask[None, :], x, -big), axis=1), AXIS)
        # Exact zeros are common (no shortfall, no idle rent): counted, so a quantile
        # that falls among them is exactly 0 rather than a point inside a bin.
        res["below"] = jax.lax.psum(jnp.sum(mask[None, :] & (x < 0), axis=1, dtype=jnp.int32), AXIS)
        res["zeros"] = jax.lax.psum(jnp.sum(mask[None, :] & (x == 0), axis=1, dtype=jnp.int32), AXIS)
        return res


def plan(schema: Schema, bins: int = BINS, keep: bool = False) -> tuple[Reducer, dict]:
    """The reducer for ``schema`` and its host-side inputs (supports; float ranges
    filled in by ``ranges_from``). ``keep``: every column comes back to the host."""
    bins = v.count("bins", bins, lo=16, hi=1 << 20)
    if keep:
        red = Reducer(schema.columns, (), (), (), (), schema.columns, schema.passes, bins)
        return red, {"support": {}}
    supports = {c: np.asarray(s, np.int32) for c, s in schema.money.items() if s is not None}
    counted = tuple(c for c, s in schema.money.items() if s is None)
    red = Reducer(schema.columns, tuple(supports), tuple(schema.counts.items()), tuple(schema.floats), counted,
                  tuple(schema.kept), tuple(schema.passes), bins)
    f = len(schema.floats)
    aux = {"support": supports, "lo": np.zeros(f, np.float32), "hi": np.ones(f, np.float32),
           "shift": np.zeros(f, np.float32), "unscale": np.ones(f, np.float32)}
    return red, aux


PILOT = 1024  # months whose range sets the histogram bins, whatever the chunk


def ranges_from(pilot: dict | list, aux: dict) -> dict:
    """Float bin ranges and Welford shifts from the min and max of a pilot's
    reductions (one, or a list of chunks')."""
    parts = pilot if isinstance(pilot, list) else [pilot]
    if not parts or "min" not in parts[0]:
        return aux
    lo = np.min([np.asarray(p["min"], np.float64) for p in parts], axis=0)
    hi = np.max([np.asarray(p["max"], np.float64) for p in parts], axis=0)
    span = hi - lo
    pad = np.where(span > 0, 0.25 * span, np.maximum(np.abs(lo) * 1e-6, 1e-12))
    out = dict(aux)
    out["lo"] = (lo - pad).astype(np.float32)
    out["hi"] = (hi + pad).astype(np.float32)
    out["shift"] = (0.5 * (lo + hi)).astype(np.float32)
    # Welford deviations are taken in units of a power of two at the column's
    # magnitude (exact scaling), so their squares stay finite in float32.
    _, e = np.frexp(np.maximum(np.abs(lo), np.abs(hi)))
    out["unscale"] = np.ldexp(np.float32(1.0), np.clip(-e, -126, 126)).astype(np.float32)
    return out


# -- the host side -------------------------------------------------------------------------

def host_column(schema: Schema, col: str, x: np.ndarray) -> np.ndarray:
    """A kept device column in user units: money in dollars (float64, exact to the
    cent when printed to 2 places), counts int64, floats float64, checks bool."""
    x = np.asarray(x)
    if col in schema.money:
        return np.asarray(x, np.int64) / float(CENTS)
    if col in schema.counts:
        return x.astype(np.int64)
    if x.dtype == bool:
        return x
    return x.astype(np.float64)


class Accumulator:
    """Merged partial summaries, in int64 and float64, and the kept columns."""

    def __init__(self, red: Reducer, aux: dict, schema: Schema):
        self.red, self.aux, self.schema = red, aux, schema
        self.n = 0
        self.counts = {c: np.zeros(len(aux["support"][c]) + 1, np.int64) for c in red.searched}
        self.counts.update({c: np.zeros(size + 1, np.int64) for c, size in red.ranged})
        self.host = {c: {} for c in red.counted}
        self.kept: dict[str, list] = {c: [] for c in red.kept}
        f = len(red.floats)
        self.hist = np.zeros((f, red.bins + 2), np.int64)
        self.w_n = np.zeros(f, np.float64)
        self.w_mean = np.zeros(f, np.float64)
        self.w_m2 = np.zeros(f, np.float64)
        self.min = np.full(f, np.inf)
        self.max = np.full(f, -np.inf)
        self.below = np.zeros(f, np.int64)  # months with a negative value
        self.zeros = np.zeros(f, np.int64)  # months with exactly 0
        self.passed = np.zeros(len(red.passes), np.int64)

    def merge(self, res: dict, take: int) -> None:
        n = int(res["n"])
        if n != take:
            raise RuntimeError(f"chunk reduced {n} months, expected {take}")
        for c, x in res["counts"].items():
            if x[-1]:
                raise RuntimeError(f"{c}: {int(x[-1])} values outside their enumerated support")
            self.counts[c] += x
        for c, x in res.get("host", {}).items():
            values, k = np.unique(x[:take], return_counts=True)
            d = self.host[c]
            for val, cnt in zip(values.tolist(), k.tolist()):
                d[val] = d.get(val, 0) + cnt
        for c, x in res.get("kept", {}).items():
            self.kept[c].append(np.asarray(x)[:take])
        self.passed += np.asarray(res["pass"], np.int64)
        if self.red.floats:
            self.hist += res["hist"]
            shift = self.aux["shift"].astype(np.float64)
            unit = 1.0 / self.aux["unscale"].astype(np.float64)  # a power of two: exact
            for block in np.asarray(res["welford"], np.float64):  # per device, in mesh order
                cnt, s1, m2 = block[:, 0], block[:, 1] * unit, block[:, 2] * unit**2
                if cnt[0] == 0:
                    continue
                mean = shift + s1 / cnt
                tot = self.w_n + cnt
                delta = mean - self.w_mean
                self.w_mean = self.w_mean + delta * cnt / tot
                self.w_m2 = self.w_m2 + m2 + delta**2 * self.w_n * cnt / tot
                self.w_n = tot
            self.min = np.minimum(self.min, res["min"])
            self.max = np.maximum(self.max, res["max"])
            self.below += np.asarray(res["below"], np.int64)
            self.zeros += np.asarray(res["zeros"], np.int64)
        self.n += n

    def columns(self) -> dict[str, np.ndarray] | None:
        """The kept columns of every month merged, in user units (and ``derive``d),
        or None when nothing was kept."""
        if not self.red.kept or not self.n:
            return None
        cols = {c: host_column(self.schema, c, np.concatenate(self.kept[c])) for c in self.red.kept}
        return self.schema.derive(cols) if self.schema.derive else cols

    # -- the summary -----------------------------------------------------------------
    def summary(self) -> dict:
        """``{"n", "stats": {col: {mean, std, p5, p50, p95}}, "pass": {check: {rate,
        lo, hi, n}}}``, then ``"modes": {col: {value, share}}`` when the schema names
        modes, and ``"quantile_error": {col: bound}`` (0 where exact) unless every
        column was kept."""
        n = self.n
        if not n:
            return {"n": 0}
        schema, kept = self.schema, self.columns() or {}
        if kept and set(self.red.kept) == set(schema.columns):
            return of_columns(kept, schema.modes)
        stats, qerr, modes, passes = {}, {}, {}, {}
        fidx = {c: i for i, c in enumerate(self.red.floats)}
        pidx = {c: i for i, c in enumerate(self.red.passes)}
        names = list(kept) + [c for c in schema.columns if c not in kept]
        for col in names:
            if col.startswith("pass_") or col in schema.passes:
                k = int(np.sum(kept[col])) if col in kept else int(self.passed[pidx[col]])
                passes[col[len("pass_"):] if col.startswith("pass_") else col] = pass_count(k, n)
                continue
            if col in kept:
                stats[col], qerr[col] = describe(kept[col]), 0.0
                if col in schema.modes:
                    value, share = mode(kept[col])
                    modes[col] = {"value": value, "share": float(share)}
            elif col in fidx:
                stats[col], qerr[col] = self._float_stats(fidx[col])
            else:
                stats[col], qerr[col] = self._discrete_stats(col, modes)
        out = {"n": n, "stats": stats, "pass": passes}
        if schema.modes:
            out["modes"] = {c: modes[c] for c in schema.modes}
        if set(self.red.kept) != set(schema.columns):
            out["quantile_error"] = qerr
        return out

    def _discrete_stats(self, col: str, modes: dict) -> tuple[dict, float]:
        """Exact statistics of a money or count column from its value counts."""
        if col in self.host:
            d = self.host[col]
            raw = np.array(sorted(d), np.int64)
            cnt = np.array([d[v] for v in raw.tolist()], np.int64)
        elif col in self.aux["support"]:
            raw = np.asarray(self.aux["support"][col], np.int64)
            cnt = self.counts[col][:-1]
        else:
            cnt = self.counts[col][:-1]
            raw = np.arange(cnt.size, dtype=np.int64)
        nz = np.flatnonzero(cnt)
        raw, cnt = raw[nz], cnt[nz]
        total = sum(int(a) * int(b) for a, b in zip(raw.tolist(), cnt.tolist()))
        n = self.n
        money = col in self.schema.money
        scale = CENTS if money else 1
        values = raw / scale
        mean = total / (n * scale)
        std = math.sqrt(float(np.sum(cnt * (values - mean) ** 2)) / n)
        st = {"mean": mean, "std": std}
        st.update({f"p{q}": exact_percentile(values, cnt, q) for q in QUANTILES})
        if col in self.schema.modes:
            i = int(np.argmax(cnt)) if cnt.size else 0
            modes[col] = {"value": values[i].item() if money else int(raw[i]), "share": float(cnt[i] / n)}
        return st, 0.0

    def _float_stats(self, i: int) -> tuple[dict, float]:
        n = self.n
        st = {"mean": float(self.w_mean[i]), "std": math.sqrt(max(self.w_m2[i], 0.0) / n)}
        lo, hi = float(self.aux["lo"][i]), float(self.aux["hi"][i])
        gmin, gmax = float(self.min[i]), float(self.max[i])
        bins = self.red.bins
        width = (hi - lo) / bins
        edges = np.concatenate([[min(gmin, lo)], lo + width * np.arange(bins + 1), [max(gmax, hi)]])
        hist = self.hist[i]
        cum = np.cumsum(hist)
        err = 0.0
        for q in QUANTILES:
            if gmin == gmax:
                st[f"p{q}"] = gmin
                continue
            pos = q / 100 * (n - 1)
            k0 = math.floor(pos)
            k1 = min(k0 + 1, n - 1)
            v, e = [], []
            for k in (k0, k1):
                if self.below[i] <= k < self.below[i] + self.zeros[i]:  # among the exact zeros
                    v.append(0.0)
                    e.append(0.0)
                    continue
                b = int(np.searchsorted(cum, k, side="right"))
                before = cum[b - 1] if b else 0
                a, c = edges[b], edges[b + 1]
                v.append(float(min(max(a + (k - before + 0.5) / hist[b] * (c - a), gmin), gmax)))
                e.append(c - a)
            st[f"p{q}"] = lerp(v[0], v[1], pos - k0)
            err = max(err, max(e) * (1 + 1e-5))
        return st, err



# -- a whole run ---------------------------------------------------------------------------

@dataclasses.dataclass
class Summarised:
    """A run's summary, its kept per-month columns (None unless kept) and what ran."""

    summary: dict
    columns: dict[str, np.ndarray] | None
    run: runner.Run


def summarise(month_fn: Callable, params: Any, n: int, schema: Schema, *, seed: int = 0,
              chunk: int | None = None, devices: Any = None, progress: bool | None = False,
              bins: int = BINS, keep: bool = False, unit: str = "months") -> Summarised:
    """Months ``0..n-1`` of ``month_fn(key, params)``, summarised as ``schema`` says
    (``keep``: every column comes back, exactly). Binned floats get their ranges
    from a pilot over the first ``PILOT`` months (the same compiled step). A Ctrl-C
    stops after the chunk in hand; the summary then covers the months done and says ``"partial"``
    (and ``"interrupted"``, also when the Ctrl-C came after the last chunk).

    The histogram bins of binned floats span the range of months ``0..PILOT-1``
    (widened), the same months whatever the chunk, so every quantile is the same
    for any chunk size and device count."""
    red, aux = plan(schema, bins, keep)
    kw = dict(seed=seed, chunk=chunk, devices=devices)
    if red.floats:
        aux = ranges_from(runner.leading(month_fn, params, n, PILOT, reducer=red, aux=aux, **kw), aux)
    acc = Accumulator(red, aux, schema)
    done = runner.stream(month_fn, params, n, reducer=red, merge=acc.merge, aux=aux, progress=progress, unit=unit,
                         **kw)
    summary = acc.summary()
    if done.partial:
        summary["partial"] = True
    if done.stopped:  # a Ctrl-C came, perhaps after the last chunk: a study stops after this run
        summary["interrupted"] = True
    return Summarised(summary, acc.columns(), done)
