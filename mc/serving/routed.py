"""A pool of cards behind a router (SPEC §9): fleet-level latency.

``N`` cards of one §7 configuration, card ``i`` at speed factor ``f_i`` (its
decode-step and prefill times divided by ``f_i``; ``max_wait`` is a wait, not a
step, and stays), arrivals from §7/§7.1 at the pool's rate, a router from
``mc.serving.routers``, and each card its own §7 batcher
(``mc.serving.routedloop``). A replication draws what §7 draws from its key (so
one card is §7 exactly), the router's uniforms from ``fold_in(key, 3)`` and,
when the factors come from a lottery, the cards from ``fold_in(key, 4)``. With a
configuration of ``tp`` cards per replica (SPEC §11) each of the ``N`` is a replica:
given factors are the replicas', and a lottery draws ``N · tp`` cards, each replica
at its slowest card's factor.

Choices beyond SPEC §9, stated here: the pool's utilisation is the mean of the
cards' (each busy share of the pool's measured span); the slowest tenth is the
``ceil(N/10)`` cards of lowest factor in each replication (ties: lowest index);
the tail is the measured requests whose TTFT is at least the pool's p95.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

from .. import _validate as v
from .. import engine
from .._pytree import pytree_dataclass
from ..engine import Column
from ..kernels.random import uniforms
from .arrivals import arrivals, draw
from .latency import (COLUMNS, FILL_SHARE, TURNOVERS, LatencyResult, Params, Serving, check_replications,
                      check_seats, request_figures, seats_note, short_of_seats)
from .loop import CONSTS
from .routedloop import pool_server
from .routers import ROUTERS

ROUTE_STREAM, SPEED_STREAM = 3, 4
MAX_CARDS = 4096
MAX_CELLS = 2**28  # cards x requests per replication: 1 GiB of routing lists
TIMES = ("step_base", "step_kv", "prefill_token", "step_req", "prefill_base")  # divided by a card's speed
POOL_TABLE = {**{k: c for k, c in COLUMNS.items() if k != "pass_slo"}, "slow_tail_share": Column("float", "share"),
              "slowest_speed": Column("float", "×"), "pass_slo": COLUMNS["pass_slo"]}
POOL_COLUMNS = tuple(POOL_TABLE)


@pytree_dataclass(static=("router", "cards", "lottery"))
class PoolParams:
    """The device parameters of a pool: the §7 ``queue`` at the pool's rate and the
    cards' factors ``speed`` ((cards,) float32), or a ``lottery``: a hashable
    function ``(key, cards) -> (cards,) float32`` drawing them per replication."""

    queue: Params
    speed: Any
    router: str = "least_requests"
    cards: int = 1
    lottery: Callable | None = None


@dataclass(frozen=True)
class RoutedPool:
    """``cards`` cards of the configuration ``serving`` behind ``router``, at the
    given ``speeds`` (default all 1) or drawn per replication by ``lottery`` (a
    hashable function ``(key, cards) -> (cards,)`` factors; ``mc.fleet.lottery.Speeds``).
    With ``serving.tp > 1`` the cards are replicas of ``tp`` cards each: ``speeds``
    gives each replica's factor, and the lottery draws ``cards · tp`` (``speeds_of``).

    Raises:
        ParamError: cards out of [1, 4096], an unknown router, speeds of the wrong
        count or not positive finite, both speeds and a lottery.
    """

    serving: Serving
    cards: int = 1
    router: str = "least_requests"
    speeds: tuple | None = None
    lottery: Callable | None = None

    def __post_init__(self):
        v.instance("serving", self.serving, Serving, "a Serving (mc.serving.Serving)")
        object.__setattr__(self, "cards", v.count("cards", self.cards, lo=1, hi=MAX_CARDS))
        v.choice("router", self.router, tuple(ROUTERS))
        if self.speeds is not None:
            if self.lottery is not None:
                v.fail("speeds", self.speeds, "and a lottery were both given: give one")
            try:
                sp = tuple(self.speeds)
            except TypeError:
                v.fail("speeds", self.speeds, "must be one factor per card, e.g. (1, 1, 0.65)")
            sp = tuple(v.number(f"speeds[{i}]", x, lo=0.0, lo_open=True, hi=1e3) for i, x in enumerate(sp))
            if len(sp) != self.cards:
                v.fail("speeds", ",".join(f"{x:g}" for x in sp)[:60],
                       f"must give one factor per card: {len(sp)} given for {self.cards} cards")
            object.__setattr__(self, "speeds", sp)
        if self.lottery is not None and not callable(self.lottery):
            raise TypeError(f"lottery must be a function (key, cards) -> factors, not {type(self.lottery).__name__}")
        n = self.serving.n + self.serving.warmup
        if self.cards * n > MAX_CELLS:
            v.fail("cards", self.cards, f"times {n:,} requests must be at most {MAX_CELLS:,} (each card keeps a list "
                   "of the pool's requests routed to it)")
        if self.router == "least_tokens":
            s = self.serving
            if (s.n + s.warmup) * s.longest_context() > 2**31 - 1:
                v.fail("router", self.router, "counts tokens in int32: requests times the longest context must "
                       "stay below 2**31")

    def params(self, rate: float, **kw) -> PoolParams:
        """The device parameters at the pool's ``rate`` requests/s (kw: ``Serving.params``)."""
        speed = np.ones(self.cards, np.float32) if self.speeds is None else np.asarray(self.speeds, np.float32)
        return PoolParams(queue=self.serving.params(rate, **kw), speed=speed, router=self.router, cards=self.cards,
                          lottery=self.lottery)

    def capacity_rate(self) -> float:
        """The pool's full-batch capacity: the card's times its cards' factors summed
        (the nominal cards' count with a lottery)."""
        return self.serving.capacity_rate() * (self.cards if self.speeds is None else sum(self.speeds))

    @property
    def seats(self) -> int:
        """The requests the pool holds at once: cards times the card's slots."""
        return self.cards * self.serving.slots

    def short_of_seats(self) -> tuple[str, int, str] | None:
        """Why a replication is too short for the pool's seats, as ``(field, value,
        allowed)``, or None: the one rule of ``mc.serving.latency.short_of_seats``
        over ``cards`` cards."""
        return short_of_seats(self.serving, self.cards)

    def check_seats(self, prefix: str = "") -> None:
        """Refuses (one line, ``ParamError``) a replication too short for the pool's seats."""
        check_seats(self.serving, prefix, self.cards)

    def seats_note(self) -> str | None:
        """``short_of_seats`` as one line (``field=value: allowed``), or None."""
        return seats_note(self.serving, self.cards)

    def as_dict(self) -> dict:
        return {"cards": self.cards, "router": self.router, "speeds": None if self.speeds is None else list(self.speeds),
                "lottery": None if self.lottery is None else repr(self.lottery)}


def speeds_of(key: jax.Array, pp: PoolParams) -> jax.Array:
    """(cards,) float32 factors of one replication. A pool of replicas of ``tp``
    cards (SPEC §11) draws ``cards · tp`` cards from the lottery, replica ``i`` being
    cards ``i·tp .. i·tp + tp − 1``, and runs each replica at its slowest card's factor."""
    if pp.lottery is None:
        return jnp.asarray(pp.speed, jnp.float32)
    k = pp.queue.tp
    drawn = pp.lottery(jax.random.fold_in(key, SPEED_STREAM), pp.cards * k)
    return drawn if k == 1 else jnp.min(drawn.reshape(pp.cards, k), axis=1)


def requests(key: jax.Array, pp: PoolParams) -> dict:
    """One replication's requests as ``mc.serving.latency.requests`` gives them, plus
    ``card`` (N,) where each went and ``speed`` (cards,); ``busy``, ``steps``,
    ``active``, ``end`` per card."""
    p = pp.queue
    d = draw(key, p)
    a = arrivals(d, p)
    u = uniforms(jax.random.fold_in(key, ROUTE_STREAM), (p.n + p.warmup,))
    speed = speeds_of(key, pp)
    consts = {k: (getattr(p, k) / speed if k in TIMES else jnp.broadcast_to(getattr(p, k), speed.shape))
              for k in CONSTS}
    out = pool_server(pp.router, p.batcher, p.slots, p.warmup)(a[0], a[1], d.prompt, d.answer, u, consts)
    return {"arrival": a, **out, "prompt": d.prompt, "answer": d.answer, "speed": speed}


def replication(key: jax.Array, pp: PoolParams) -> dict:
    """The pool's figures (SPEC §9), () each: §7's columns over every measured
    request of the pool (utilisation: the cards' mean, mean batch: over every
    card's steps), ``slow_tail_share`` (the share of the p95 tail the slowest tenth
    of cards served), ``slowest_speed`` and ``util_i`` per card."""
    p = pp.queue
    r = requests(key, pp)
    out, span = request_figures(r, p)
    util = (r["busy"] - jnp.maximum(r["end"] - span, 0.0)) / span
    out["utilisation"] = jnp.mean(util)
    steps, active = jnp.sum(r["steps"]), jnp.sum(r["active"])
    out["mean_batch"] = jnp.where(steps > 0, active.astype(jnp.float32) / jnp.maximum(steps, 1).astype(jnp.float32),
                                  jnp.nan)
    C = pp.cards
    slow = jnp.zeros(C, bool).at[jnp.argsort(r["speed"], stable=True)[:max(1, math.ceil(C / 10))]].set(True)
    w = p.warmup
    tail = r["ttft"][w:] >= out["ttft_p95"]
    on_slow = slow[r["card"][w:]]
    out["slow_tail_share"] = (jnp.sum(tail & on_slow).astype(jnp.float32)
                              / jnp.maximum(jnp.sum(tail), 1).astype(jnp.float32))
    out["slowest_speed"] = jnp.min(r["speed"])
    return {**{k: out[k] for k in POOL_COLUMNS}, **{f"util_{i}": util[i] for i in range(C)}}


def schema(cards: int) -> engine.Schema:
    cols = POOL_COLUMNS + tuple(f"util_{i}" for i in range(cards))
    return engine.Schema(columns=cols, kept=cols)


@dataclass
class PoolResult(LatencyResult):
    """A pool's distribution over replications (``LatencyResult``'s fields and
    figures, ``serving`` the pool's card); ``pool``: the ``RoutedPool``."""

    pool: RoutedPool | None = None

    @property
    def load(self) -> float:
        """The offered load: the pool's rate over the pool's capacity (not one card's)."""
        return self.rate / self.pool.capacity_rate()

    def per_card(self) -> dict:
        """Per-card utilisation: the median over replications of each card's busy share."""
        return {"utilisation": [float(np.median(self.samples[f"util_{i}"])) for i in range(self.pool.cards)]}

    def figures(self) -> dict:
        out = super().figures()
        out["load"] = engine.figure(self.load, units="")
        m, lo, hi = self.median_interval("slow_tail_share")
        one = self.replications < 2
        out["slow_tail_share"] = engine.figure(m, None if one else lo, None if one else hi,
                                               POOL_TABLE["slow_tail_share"].units)
        return out

    def bands(self) -> dict:
        out = super().bands()
        out["slow_tail_share"] = dict(zip(("p5", "p95"), self.band("slow_tail_share")))
        return out


def simulate(pool: RoutedPool, rate: float | None = None, replications: int | None = None, *,
             load: float | None = None, seed: int = 0, percentile: float = 95.0, slo_ttft: float | None = None,
             chunk: int | None = None, devices: int | None = None, progress: bool | None = False) -> PoolResult:
    """Replications ``0..K-1`` of the pool at the pool's ``rate`` requests/s (or
    ``load`` of its capacity; a log's own rate when neither); replication ``i``
    uses ``fold_in(key(seed), i)``. ``replications``: default 200; a replay runs one."""
    v.instance("pool", pool, RoutedPool, "a RoutedPool")
    s = pool.serving
    if rate is None and load is not None:
        rate = v.number("load", load, lo=0.0, lo_open=True, hi=1e6) * pool.capacity_rate()
        load = None
    pp = pool.params(s.rate_of(rate, load), percentile=percentile, slo_ttft=slo_ttft)
    replications = check_replications(s, replications)
    progress = v.progress("progress", progress)
    out = engine.summarise(replication, pp, replications, schema(pool.cards), seed=seed,
                           chunk=max(1, 16 // pool.cards) if chunk is None else chunk, devices=devices,
                           progress=progress, keep=True, unit="replications")
    return PoolResult(s, float(pp.queue.rate), out.run.done, int(seed), float(pp.queue.percentile), slo_ttft,
                      out.summary, pd.DataFrame(out.columns), pool=pool)


__all__ = ["FILL_SHARE", "MAX_CARDS", "POOL_COLUMNS", "TURNOVERS", "PoolParams", "PoolResult", "RoutedPool", "paired",
           "replication", "requests", "schema", "simulate", "speeds_of"]


def paired(a: PoolResult, b: PoolResult, col: str = "ttft_p95") -> dict:
    """``a``'s ``col`` less ``b``'s, replication by replication (the same draws): the
    mean difference and its 95% interval (none from one replication), a figure."""
    d = a.samples[col].to_numpy(np.float64) - b.samples[col].to_numpy(np.float64)
    d = d[np.isfinite(d)]
    m = float(d.mean())
    if d.size < 2:
        return engine.figure(m, units="s")
    h = engine.Z95 * float(d.std(ddof=1)) / math.sqrt(d.size)
    return engine.figure(m, m - h, m + h, "s")
