"""Streaming summaries (SPEC §2) over any number of fleet-months.

Each chunk is reduced on the devices to a few small arrays; the host merges
them in float64 / int64. Nothing grows with N.

What each output gets:

- **money** (cents) and **counts**: exact value counts. A column's possible
  values are enumerated from the pool (every bill is a sum of whole cards'
  prices and churn fees), so mean, std, p5/p50/p95 and the modes are exactly
  what the all-samples computation gives (to float rounding of the mean and
  std). Where a pool has too many possible bills, the chunk's bills come to
  the host and are counted there, still exactly.
- **float** outputs: Welford mean and M2 per device, merged with Chan's formula
  in float64 on the host (deviations from a shift near the mean, so token sums
  keep their precision at N = 10^9), and a fixed-bin histogram for the
  quantiles. Bins span the first chunk's range widened by a quarter of it each
  side, plus an underflow and an overflow bin reaching to the exact minimum and
  maximum; a quantile is interpolated inside its bin, so its error is at most
  the width of the bin(s) it falls in. ``summary["quantile_error"][col]`` states
  that bound (0 for exact columns).
- **pass_*** checks: counts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from . import summary as summ
from .engine import AXIS
from .fleet import COUNTS, FLOATS, MONEY, OUTPUTS, PASSES
from .scenario import Scenario

BINS = 4096
MAX_SUPPORT = 1 << 16  # largest enumerated set of money values counted on the device
MODE_COLUMNS = ("bill", "n_run", "n_evicted")
QUANTILES = summ.QUANTILES


# -- the possible values of a money column -------------------------------------------

def _set_sums(options: list[list[int]], cap: int) -> np.ndarray | None:
    acc = np.zeros(1, np.int64)
    for opts in options:
        acc = np.unique((acc[:, None] + np.asarray(opts, np.int64)[None, :]).ravel())
        if acc.size > cap:
            return None
    return acc


def money_support(sc: Scenario, col: str, cap: int = MAX_SUPPORT) -> np.ndarray | None:
    """Sorted int64 cents a money column can take (a superset), or None if more than ``cap``."""
    pool = sc.pool
    churn = [int(sc.churn_cents[s.start]) for s in pool.slices]
    options = []
    for (card, count), fee in zip(pool.groups, churn):
        price = card.price_cents
        if col in ("warm_bill", "ideal_bill"):
            options.append([r * price for r in range(count + 1)])
        elif col == "churn_bill":
            options.append([e * fee for e in range(count + 1)])
        else:  # bill: r run and e evicted cards of the class, r + e <= count
            if (count + 1) * (count + 2) // 2 > cap:
                return None
            options.append([r * price + e * fee for r in range(count + 1) for e in range(count + 1 - r)])
    return _set_sums(options, cap)


# -- the device side ----------------------------------------------------------------------

@dataclass(frozen=True)
class Reducer:
    """Reduces one device's share of a chunk (inside ``shard_map``) to replicated
    partial summaries. Static: which columns get which treatment."""

    searched: tuple[str, ...]  # money columns counted against an enumerated support
    ranged: tuple[tuple[str, int], ...]  # count columns with values 0..size-1
    floats: tuple[str, ...]
    host: tuple[str, ...]  # money columns whose values come back to be counted on the host
    bins: int = BINS

    def __call__(self, out: dict, mask: jax.Array, aux: dict) -> dict:
        one = mask.astype(jnp.int32)
        res: dict = {"n": jax.lax.psum(jnp.sum(one), AXIS)}
        counts = {}
        for col in self.searched:
            values, x = aux["support"][col], out[col]
            i = jnp.clip(jnp.searchsorted(values, x, method="scan_unrolled"), 0, values.shape[0] - 1)
            i = jnp.where(values[i] == x, i, values.shape[0])  # the last bin counts misses
            counts[col] = jnp.zeros(values.shape[0] + 1, jnp.int32).at[i].add(one)
        for col, size in self.ranged:
            x = out[col]
            i = jnp.where((x >= 0) & (x < size), x, size)
            counts[col] = jnp.zeros(size + 1, jnp.int32).at[i].add(one)
        res["counts"] = jax.lax.psum(counts, AXIS)
        res["pass"] = jax.lax.psum(jnp.stack([jnp.sum(out[c] & mask, dtype=jnp.int32) for c in PASSES]), AXIS)
        if self.floats:
            x = jnp.stack([out[c].astype(jnp.float32) for c in self.floats])  # (F, local)
            lo, hi, shift = aux["lo"][:, None], aux["hi"][:, None], aux["shift"][:, None]
            t = jnp.floor((x - lo) / (hi - lo) * self.bins)
            b = (jnp.clip(t, -1.0, float(self.bins)) + 1.0).astype(jnp.int32)  # 0 under, bins+1 over
            rows = jnp.arange(len(self.floats), dtype=jnp.int32)[:, None] * (self.bins + 2)
            hist = jnp.zeros(len(self.floats) * (self.bins + 2), jnp.int32).at[(b + rows).ravel()].add(
                jnp.broadcast_to(one[None, :], b.shape).ravel())
            res["hist"] = jax.lax.psum(hist.reshape(len(self.floats), self.bins + 2), AXIS)
            d = jnp.where(mask[None, :], x - shift, 0.0)
            cnt = jnp.sum(one).astype(jnp.float32)
            s1 = jnp.sum(d, axis=1)
            m = s1 / jnp.maximum(cnt, 1.0)
            m2 = jnp.sum(jnp.where(mask[None, :], (d - m[:, None]) ** 2, 0.0), axis=1)
            local = jnp.stack([jnp.broadcast_to(cnt, s1.shape), s1, m2], axis=1)  # (F, 3)
            res["welford"] = jax.lax.all_gather(local, AXIS)  # (devices, F, 3)
            big = jnp.float32(np.inf)
            res["min"] = jax.lax.pmin(jnp.min(jnp.where(mask[None, :], x, big), axis=1), AXIS)
            res["max"] = jax.lax.pmax(jnp.max(jnp.where(mask[None, :], x, -big), axis=1), AXIS)
        if self.host:
            res["host"] = {c: jax.lax.all_gather(jnp.where(mask, out[c], -1), AXIS, tiled=True)
                           for c in self.host}
        return res


def plan(sc: Scenario, bins: int = BINS) -> tuple[Reducer, dict]:
    """The reducer and its host-side inputs (supports; float ranges filled in later)."""
    supports, host = {}, []
    for col in MONEY:
        values = money_support(sc, col)
        if values is None:
            host.append(col)
        else:
            supports[col] = values.astype(np.int32)
    size = sc.pool.size + 1
    red = Reducer(tuple(supports), tuple((c, size) for c in COUNTS), FLOATS, tuple(host), bins)
    f = len(FLOATS)
    aux = {"support": supports, "lo": np.zeros(f, np.float32), "hi": np.ones(f, np.float32),
           "shift": np.zeros(f, np.float32)}
    return red, aux


def ranges_from(pilot: dict, aux: dict) -> dict:
    """Float bin ranges and Welford shifts from a pilot chunk's min and max."""
    lo, hi = np.asarray(pilot["min"], np.float64), np.asarray(pilot["max"], np.float64)
    span = hi - lo
    pad = np.where(span > 0, 0.25 * span, np.maximum(np.abs(lo) * 1e-6, 1e-12))
    out = dict(aux)
    out["lo"] = (lo - pad).astype(np.float32)
    out["hi"] = (hi + pad).astype(np.float32)
    out["shift"] = (0.5 * (lo + hi)).astype(np.float32)
    return out


# -- the host side -------------------------------------------------------------------------

class Accumulator:
    """Merged partial summaries, in int64 and float64."""

    def __init__(self, red: Reducer, aux: dict):
        self.red, self.aux = red, aux
        self.n = 0
        self.counts = {c: np.zeros(len(aux["support"][c]) + 1, np.int64) for c in red.searched}
        self.counts.update({c: np.zeros(size + 1, np.int64) for c, size in red.ranged})
        self.host = {c: {} for c in red.host}
        f = len(red.floats)
        self.hist = np.zeros((f, red.bins + 2), np.int64)
        self.w_n = np.zeros(f, np.float64)
        self.w_mean = np.zeros(f, np.float64)
        self.w_m2 = np.zeros(f, np.float64)
        self.min = np.full(f, np.inf)
        self.max = np.full(f, -np.inf)
        self.passed = np.zeros(len(PASSES), np.int64)

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
        self.passed += np.asarray(res["pass"], np.int64)
        if self.red.floats:
            self.hist += res["hist"]
            shift = self.aux["shift"].astype(np.float64)
            for block in np.asarray(res["welford"], np.float64):  # per device, in mesh order
                cnt, s1, m2 = block[:, 0], block[:, 1], block[:, 2]
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
        self.n += n

    # -- the summary -----------------------------------------------------------------
    def _discrete(self, col: str) -> tuple[np.ndarray, np.ndarray, int | None]:
        """(sorted values in user units, counts, exact total in raw units)."""
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
        return raw, cnt, total

    def summary(self) -> dict:
        """SPEC §2 summary: ``{"n", "stats", "pass", "modes", "quantile_error"}``."""
        n = self.n
        stats, qerr, modes = {}, {}, {}
        fidx = {c: i for i, c in enumerate(self.red.floats)}
        for col in OUTPUTS:
            if col in PASSES:
                continue
            if col in fidx:
                stats[col], qerr[col] = self._float_stats(fidx[col])
                continue
            raw, cnt, total = self._discrete(col)
            scale = 100 if col in MONEY else 1
            values = raw / scale
            mean = total / (n * scale) if n else math.nan
            std = math.sqrt(float(np.sum(cnt * (values - mean) ** 2)) / n) if n else math.nan
            st = {"mean": mean, "std": std}
            st.update({f"p{q}": exact_percentile(values, cnt, q) for q in QUANTILES})
            stats[col], qerr[col] = st, 0.0
            if col in MODE_COLUMNS:
                i = int(np.argmax(cnt)) if cnt.size else 0
                value = values[i].item() if col in MONEY else int(raw[i])
                modes[col] = {"value": value, "share": float(cnt[i] / n) if n else math.nan}
        passes = {name[len("pass_"):]: summ.pass_count(k, n) for name, k in zip(PASSES, self.passed.tolist())}
        return {"n": n, "stats": stats, "pass": passes, "modes": {c: modes[c] for c in MODE_COLUMNS},
                "quantile_error": qerr}

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
                b = int(np.searchsorted(cum, k, side="right"))
                before = cum[b - 1] if b else 0
                a, c = edges[b], edges[b + 1]
                v.append(float(min(max(a + (k - before + 0.5) / hist[b] * (c - a), gmin), gmax)))
                e.append(c - a)
            st[f"p{q}"] = _lerp(v[0], v[1], pos - k0)
            err = max(err, max(e) * (1 + 1e-5))
        return st, err


def _lerp(a: float, b: float, t: float) -> float:
    """NumPy's linear interpolation (``np.percentile``'s default method)."""
    d = b - a
    return b - d * (1 - t) if t >= 0.5 else a + d * t


def exact_percentile(values: np.ndarray, counts: np.ndarray, q: float) -> float:
    """``np.percentile(sample, q)`` of a sample given as sorted distinct values with counts."""
    n = int(counts.sum())
    pos = q / 100 * (n - 1)
    k0 = math.floor(pos)
    k1 = min(k0 + 1, n - 1)
    cum = np.cumsum(counts)
    a = float(values[int(np.searchsorted(cum, k0, side="right"))])
    b = float(values[int(np.searchsorted(cum, k1, side="right"))])
    return _lerp(a, b, pos - k0)
