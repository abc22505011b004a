"""Serving latency under a batcher (SPEC §7, §7.1): one card's queue of requests.

A replication is one card from empty: ``warmup + n`` arrivals (Poisson, gamma, or
a request log's, see ``mc.serving.arrivals``) with lognormal or logged lengths, a
static or continuous batcher (``mc.serving.loop``), prefill and decode times from
§5's formulas taken literally, and the card draining after the last arrival. The
first ``warmup`` requests are dropped from every figure.

Replications go through the shared engine (one key each, ``fold_in(seed, i)``),
so nothing depends on the chunk or the device count. Every result carries the
offered load, ``rate / capacity_rate``.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

from .. import _validate as v
from .. import engine
from ..engine import Column
from .._fields import Field
from ..kernels import clock
from ..kernels.exact import unfused
from ..kernels.sums import tree_sum
from .arrivals import Draws, arrivals, draw
from .loop import CONSTS, server
from .queue import (ARRIVALS, BATCHERS, LENGTHS, MAX_REQUESTS, MAX_SLOTS, MAX_TOKENS, Params, Serving)

# A replication's outputs, each with its kind and units (SPEC §7): times in s, then the
# card's throughput, busy share and mean batch, then whether the SLO held.
COLUMNS = {**{c: Column("float", "s") for c in ("ttft_p50", "ttft_p95", "ttft_p99", "ttft_q", "e2e_p50", "e2e_p95",
                                                "e2e_p99", "wait_mean", "itl_mean")},
           "throughput": Column("float", "tok/s"), "utilisation": Column("float", "share"),
           "mean_batch": Column("float", "requests"), "pass_slo": Column("pass", "share")}
OUTPUTS = tuple(COLUMNS)
FIGURES = engine.of_kind(COLUMNS, "float")  # each a median over replications with its interval
MAX_REPLICATIONS = 10_000_000
REPLICATIONS = Field(None, lo=2, hi=MAX_REPLICATIONS, kind="integer", doc="independent replications per rate")


def requests(key: jax.Array, p: Params) -> dict:
    """One replication's every request: ``arrival`` (hi, lo) and ``wait``, ``ttft``,
    ``e2e`` (s after arrival), ``prompt``, ``answer``, (N,) each, warmup included;
    and the replication's ``busy``, ``steps``, ``active``, ``end`` (see
    ``mc.serving.loop``)."""
    d = draw(key, p)
    a = arrivals(d, p)
    consts = {k: getattr(p, k) for k in CONSTS}
    out = server(p.batcher, p.slots, p.warmup)(a[0], a[1], d.prompt, d.answer, consts)
    return {"arrival": a, **out, "prompt": d.prompt, "answer": d.answer}
def _percentile(sorted_x: jax.Array, q) -> jax.Array:
    """``np.percentile`` (linear) of a sorted (n,) sample at ``q`` in [0, 100]."""
    n = sorted_x.shape[-1]
    pos = unfused(jnp.asarray(q, jnp.float32) / 100.0 * (n - 1))
    k0 = jnp.clip(jnp.floor(pos), 0, n - 1).astype(jnp.int32)
    k1 = jnp.minimum(k0 + 1, n - 1)
    a, b = sorted_x[k0], sorted_x[k1]
    frac = pos - k0.astype(jnp.float32)
    d = b - a
    return jnp.where(frac >= 0.5, b - unfused(d * (1 - frac)), a + unfused(d * frac))


def request_figures(r: dict, p: Params) -> tuple[dict, jax.Array]:
    """The figures of one replication's measured requests (``r`` as ``requests``
    gives it: ``arrival``, ``wait``, ``ttft``, ``e2e``, ``answer``), () each:
    every column but ``utilisation`` and ``mean_batch``; and the measured span (s,
    first measured arrival to last measured finish)."""
    w = p.warmup
    ttft, e2e, wait = r["ttft"][w:], r["e2e"][w:], r["wait"][w:]
    answer = r["answer"][w:]
    st, se = jnp.sort(ttft), jnp.sort(e2e)
    many = answer > 1
    itl = jnp.where(many, (e2e - ttft) / jnp.maximum(answer - 1, 1).astype(jnp.float32), 0.0)
    n_itl = jnp.sum(many, dtype=jnp.int32)
    span = jnp.max(clock.sub((r["arrival"][0][w:], r["arrival"][1][w:]),
                             (r["arrival"][0][w], r["arrival"][1][w])) + e2e)
    tokens = jnp.sum(answer, dtype=jnp.int32).astype(jnp.float32)
    q = _percentile(st, p.percentile)
    return {"ttft_p50": _percentile(st, 50.0), "ttft_p95": _percentile(st, 95.0),
            "ttft_p99": _percentile(st, 99.0), "ttft_q": q,
            "e2e_p50": _percentile(se, 50.0), "e2e_p95": _percentile(se, 95.0), "e2e_p99": _percentile(se, 99.0),
            "wait_mean": tree_sum(wait) / np.float32(p.n),
            "itl_mean": jnp.where(n_itl > 0, tree_sum(itl) / n_itl.astype(jnp.float32), jnp.nan),
            "throughput": tokens / span, "pass_slo": q <= p.slo_ttft}, span


def replication(key: jax.Array, p: Params) -> dict:
    """One replication's figures (SPEC §7), () each: p50/p95/p99 and the SLO's
    percentile of TTFT (s), p50/p95/p99 end-to-end (s), mean wait (s), mean
    inter-token latency (s; NaN when every answer is one token), throughput
    (output tok/s), utilisation, mean batch, and ``pass_slo``."""
    r = requests(key, p)
    out, span = request_figures(r, p)
    tail = r["end"] - span  # busy without a break after the last measured finish
    out["utilisation"] = (r["busy"] - tail) / span
    out["mean_batch"] = jnp.where(r["steps"] > 0, r["active"].astype(jnp.float32)
                                  / jnp.maximum(r["steps"], 1).astype(jnp.float32), jnp.nan)
    return {k: out[k] for k in COLUMNS}


SCHEMA = engine.Schema(columns=OUTPUTS, kept=OUTPUTS)


# -- runs on the host ---------------------------------------------------------------------

@dataclass
class LatencyResult:
    """A configuration's distribution over ``replications`` at one ``rate``.

    ``load``: the offered load, ``rate / capacity_rate``. ``summary``: as
    ``mc.engine.of_columns`` gives it (mean, std, p5/p50/p95 of each figure over
    replications; ``pass["slo"]`` with its Wilson interval). ``samples``: one row
    per replication.
    """

    serving: Serving
    rate: float
    replications: int
    seed: int
    percentile: float
    slo_ttft: float | None
    summary: dict
    samples: pd.DataFrame = dataclasses.field(repr=False)

    @property
    def load(self) -> float:
        return self.serving.load_of(self.rate)

    def median(self, col: str) -> float:
        return self.summary["stats"][col]["p50"]

    def band(self, col: str) -> tuple[float, float]:
        """The p5..p95 band of ``col`` over replications."""
        s = self.summary["stats"][col]
        return s["p5"], s["p95"]

    def mean_interval(self, col: str) -> tuple[float, float, float]:
        """The mean of ``col`` over replications and its 95% interval
        (``mean ± 1.96·sd/√K``; replications are independent)."""
        x = self.samples[col].to_numpy(np.float64)
        x = x[np.isfinite(x)]
        m = float(x.mean())
        h = engine.Z95 * float(x.std(ddof=1)) / math.sqrt(x.size) if x.size > 1 else math.inf
        return m, m - h, m + h

    def median_interval(self, col: str) -> tuple[float, float, float]:
        """The median of ``col`` over replications and a distribution-free 95%
        interval for it: the order statistics at ranks ``K/2 ± 1.96·√K/2``
        (normal approximation to the binomial), rounded outward. NaN without a
        finite value; no interval (lo = hi = the value) from one replication."""
        x = np.sort(self.samples[col].to_numpy(np.float64))
        x = x[np.isfinite(x)]
        k = x.size
        if k == 0:
            return math.nan, math.nan, math.nan
        h = engine.Z95 * math.sqrt(k) / 2
        lo, hi = max(0, math.floor(k / 2 - h) - 1), min(k - 1, math.ceil(k / 2 + h))
        return float(np.median(x)), float(x[lo]), float(x[hi])

    def figures(self) -> dict:
        """Every figure in the one shape (``mc.engine.figure``): the median over
        replications with its 95% interval (none from a single replication, a
        replay), and the load."""
        out = {}
        for col in FIGURES:
            m, lo, hi = self.median_interval(col)
            one = self.replications < 2 or not math.isfinite(m)
            out[col] = engine.figure(m, None if one else lo, None if one else hi, COLUMNS[col].units)
        out["load"] = engine.figure(self.load, units="")
        out["rate"] = engine.figure(self.rate, units="req/s")
        return out

    def bands(self) -> dict:
        """``{col: {"p5", "p95"}}``: how figures spread over replications."""
        return {col: dict(zip(("p5", "p95"), self.band(col))) for col in FIGURES}


def default_chunk(s: Serving) -> int:
    """Replications per step: 16. The loop runs as long as its slowest replication
    and its per-request arrays stay in cache at this size; on a CPU 16 ran ~1.4×
    the replications per second of 64 for the continuous batcher (PERFORMANCE.md)."""
    return 16


def check_replications(s: Serving, replications: int | None, default: int = 200) -> int:
    """Replications to run: ``default`` unless given; a replay is one path (exactly 1)."""
    v.instance("s", s, Serving, "a Serving")
    if s.replay:
        if replications not in (None, 1):
            v.fail("replications", replications, "a replay is one path, the log itself: leave replications out")
        return 1
    return REPLICATIONS.check("replications", default if replications is None else replications)


# How long a replication must be for its seats (docs/guide/router.md): an empty card or
# pool of S seats takes its first S arrivals without queueing, whatever the rate.
TURNOVERS = 4  # measured requests per seat, at least
FILL_SHARE = 0.05  # the most of the measured requests that may be among the first S arrivals


def short_of_seats(s: Serving, cards: int = 1) -> tuple[str, int, str] | None:
    """Why a replication of ``s`` is too short for the seats ``S`` of ``cards`` such
    cards (one: §7's card; several: §9's pool), as ``(field, value, allowed)``, or
    None: ``n`` must be at least ``TURNOVERS · S`` (each seat turns over several
    times within the measured requests) and ``warmup`` at least ``S − ⌊FILL_SHARE ·
    n⌋`` (at most that share of the measured requests arrive while the empty seats
    fill)."""
    v.instance("s", s, Serving, "a Serving")
    cards = v.count("cards", cards, lo=1, hi=4096)  # a pool's most (routed.MAX_CARDS)
    S = cards * s.slots
    what = "card" if cards == 1 else "pool"
    detail = "" if cards == 1 else f" ({cards:,} cards x {s.slots:,} seats)"
    if s.n < TURNOVERS * S:
        return "n", s.n, (f"must be at least {TURNOVERS * S:,} measured requests per replication, {TURNOVERS} "
                          f"per seat of the {what}'s {S:,}{detail}: a shorter replication measures a {what} still "
                          "filling")
    need = S - math.floor(FILL_SHARE * s.n)
    if s.warmup < need:
        return "warmup", s.warmup, (f"must be at least {need:,} with n = {s.n:,}: an empty {what} seats its "
                                    f"first {S:,} arrivals at once{detail}, and at most {FILL_SHARE:.0%} of "
                                    "the measured requests may be among them")
    return None


def check_seats(s: Serving, prefix: str = "", cards: int = 1) -> None:
    """Refuses (one line, ``ParamError``) a replication too short for its seats
    (``short_of_seats``); ``prefix`` goes before the field's name."""
    v.instance("prefix", prefix, str, "a str (what goes before the field's name)")
    short = short_of_seats(s, cards)
    if short is not None:
        v.fail(prefix + short[0], short[1], short[2])


def seats_note(s: Serving, cards: int = 1) -> str | None:
    """``short_of_seats`` as one line (``field=value: allowed``), or None."""
    short = short_of_seats(s, cards)
    return None if short is None else f"{short[0]}={short[1]}: {short[2]}"


def simulate(s: Serving, rate: float | None = None, replications: int | None = None, *, load: float | None = None,
             seed: int = 0, percentile: float = 95.0, slo_ttft: float | None = None, chunk: int | None = None,
             devices: int | None = None, progress: bool | None = False) -> LatencyResult:
    """Replications ``0..K-1`` of ``s`` at ``rate`` requests/s (or the offered
    ``load``; for log arrivals given neither, the log's own rate); replication ``i``
    uses ``fold_in(key(seed), i)``, so nothing depends on ``chunk`` or ``devices``.
    ``replications``: default 200; a replay runs exactly one."""
    v.instance("s", s, Serving, "a Serving")
    p = s.params(s.rate_of(rate, load), percentile=percentile, slo_ttft=slo_ttft)
    replications = check_replications(s, replications)
    progress = v.progress("progress", progress)
    out = engine.summarise(replication, p, replications, SCHEMA, seed=seed,
                           chunk=default_chunk(s) if chunk is None else chunk, devices=devices,
                           progress=progress, keep=True, unit="replications")
    samples = pd.DataFrame(out.columns)
    return LatencyResult(s, float(p.rate), out.run.done, int(seed), float(p.percentile), slo_ttft,
                         out.summary, samples)


__all__ = ["ARRIVALS", "BATCHERS", "COLUMNS", "FILL_SHARE", "LENGTHS", "MAX_REPLICATIONS", "MAX_REQUESTS",
           "MAX_SLOTS", "MAX_TOKENS", "TURNOVERS", "Draws", "LatencyResult", "Params", "SCHEMA", "Serving", "arrivals",
           "check_replications", "check_seats", "default_chunk", "draw", "replication", "request_figures", "requests",
           "seats_note", "short_of_seats", "simulate"]
