"""Serving latency under a batcher (SPEC §7): one card's queue of requests, in JAX.

A replication is one card from empty: ``warmup + n`` Poisson arrivals with
lognormal (or fixed) prompt and answer lengths, a static or continuous batcher,
prefill and decode times from §5's formulas taken literally, and the card
draining after the last arrival. The first ``warmup`` requests are dropped from
every figure.

The event loop takes one *iteration* per admission plus one *run* of decode
steps: within a run nobody joins or leaves, so its step durations grow by the
same amount each step and its length is closed-form (``mc.kernels.clock``). A
run ends at the first departure or, for the continuous batcher with an empty
queue and a free slot, at the first step boundary at or past the next arrival,
where that request joins. The clock and arrival times are double-float pairs,
so a replication of many simulated hours keeps sub-microsecond resolution.

Replications go through the shared engine (one key each, ``fold_in(seed, i)``);
the loop is batched by hand (``custom_vmap``): a replication that has finished
is masked, and nothing outside its own row changes its bits, so results do not
depend on the chunk or the device count.

Choices beyond SPEC §7, stated here:
- Lengths are cut at ``prompt_max`` / ``answer_max`` (a server's max-tokens
  limits), so every request has a bounded context and a configuration is
  refused when the longest possible request cannot be seated alone.
- ``cv = 0`` means a fixed length of ``ceil(mean)`` tokens.
- Mean batch counts the decode steps that begin at or after the first measured
  arrival; utilisation is the busy time within [first measured arrival, last
  measured finish] over that span.
- The continuous batcher has no wait cap (``max_wait`` is the static batcher's).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

from .. import _validate as v
from .. import engine
from .._pytree import pytree_dataclass
from ..kernels import clock
from ..kernels.random import exponential, normal, uniforms
from ..kernels.sums import tree_sum
from . import catalogue
from .arithmetic import MEM_UTIL, PREFILL_UTIL, kv_bytes_per_token, weight_bytes

BATCHERS = ("static", "continuous")
COLUMNS = ("ttft_p50", "ttft_p95", "ttft_p99", "ttft_q", "e2e_p50", "e2e_p95", "e2e_p99", "wait_mean",
           "itl_mean", "throughput", "utilisation", "mean_batch", "pass_slo")
MAX_SLOTS = 4096
MAX_TOKENS = 2**20  # longest prompt or answer
MAX_REQUESTS = 2**20  # warmup + n per replication
MAX_REPLICATIONS = 10_000_000
F32_TINY = float(np.finfo(np.float32).tiny)
F32_MAX = float(np.finfo(np.float32).max)


# -- parameters ------------------------------------------------------------------------

@pytree_dataclass(static=("batcher", "slots", "n", "warmup"))
class Params:
    """What the device needs for one arrival rate. Leaves are NumPy scalars."""

    rate: Any  # () float32 requests/s
    gap_scale: Any  # () float32 s: 1 / rate, rounded once on the host (the same bits everywhere)
    max_batch: Any  # () int32
    max_wait: Any  # () float32 s
    step_base: Any  # () float32 s: weight bytes / bandwidth
    step_kv: Any  # () float32 s per token of context in a step: KV bytes per token / bandwidth
    prefill_token: Any  # () float32 s per prompt token: 2 · params / (peak · utilisation)
    kv_tokens: Any  # () int32 tokens of KV cache beside the weights
    prompt_mu: Any  # () float32: log-mean of the lognormal
    prompt_sigma: Any  # () float32: log-sd (0: fixed)
    prompt_fixed: Any  # () int32: the length when fixed
    prompt_max: Any  # () int32
    answer_mu: Any
    answer_sigma: Any
    answer_fixed: Any
    answer_max: Any
    percentile: Any  # () float32 in (0, 100): the SLO's percentile of TTFT
    slo_ttft: Any  # () float32 s (inf: no SLO)
    batcher: str = "static"
    slots: int = 1  # static: the most requests one batch or step can hold
    n: int = 1  # measured requests per replication
    warmup: int = 0


def _lognormal(mean: float, cv: float) -> tuple[float, float]:
    s2 = math.log1p(cv * cv)
    return math.log(mean) - 0.5 * s2, math.sqrt(s2)


@dataclass(frozen=True)
class Serving:
    """One model on one GPU under a batcher, and the requests it serves (SPEC §7).

    Lengths are lognormal with the given mean and coefficient of variation (of
    the variate before rounding up), cut at ``*_max``; ``cv = 0`` is a fixed
    ``ceil(mean)``. ``n`` requests per replication are measured after ``warmup``.
    The §5 constants (``mem_util``, ``prefill_util``, bytes per weight and per KV
    element) default to the catalogue's.

    Raises:
        ParamError: a field out of range, unknown names, weights that do not fit,
        or a longest request (``prompt_max + answer_max``, or the fixed lengths)
        that cannot be seated alone.
    """

    model: str
    gpu: str
    batcher: str = "static"
    max_batch: int = 16
    max_wait: float = 0.05  # s
    prompt_mean: float = 1024.0
    prompt_cv: float = 1.0
    prompt_max: int = 8192
    answer_mean: float = 256.0
    answer_cv: float = 1.0
    answer_max: int = 4096
    n: int = 1000
    warmup: int = 200
    prefill_util: float = PREFILL_UTIL
    mem_util: float = MEM_UTIL
    weight_bytes: float = 2.0
    kv_bytes: float = 2.0

    def __post_init__(self):
        set_ = partial(object.__setattr__, self)
        m, g = catalogue.model(self.model), catalogue.gpu(self.gpu)
        set_("model", m.name)
        set_("gpu", g.name)
        v.choice("batcher", self.batcher, BATCHERS)
        set_("max_batch", v.count("max_batch", self.max_batch, lo=1, hi=MAX_SLOTS))
        set_("max_wait", v.number("max_wait", self.max_wait, lo=0.0, hi=1e6))
        for name in ("prompt", "answer"):
            set_(f"{name}_mean", v.number(f"{name}_mean", getattr(self, f"{name}_mean"), lo=0.0, lo_open=True,
                                          hi=MAX_TOKENS))
            set_(f"{name}_cv", v.number(f"{name}_cv", getattr(self, f"{name}_cv"), lo=0.0, hi=100.0))
            set_(f"{name}_max", v.count(f"{name}_max", getattr(self, f"{name}_max"), lo=1, hi=MAX_TOKENS))
        set_("n", v.count("n", self.n, lo=1, hi=MAX_REQUESTS))
        set_("warmup", v.count("warmup", self.warmup, lo=0, hi=MAX_REQUESTS))
        if self.n + self.warmup > MAX_REQUESTS:
            v.fail("n", self.n, f"plus warmup {self.warmup} must be at most {MAX_REQUESTS:,} requests")
        set_("prefill_util", v.number("prefill_util", self.prefill_util, lo=0.0, lo_open=True, hi=1.0))
        set_("mem_util", v.number("mem_util", self.mem_util, lo=0.0, lo_open=True, hi=1.0))
        set_("weight_bytes", v.number("weight_bytes", self.weight_bytes, lo=0.0, lo_open=True, hi=8.0))
        set_("kv_bytes", v.number("kv_bytes", self.kv_bytes, lo=0.0, lo_open=True, hi=8.0))
        weights = weight_bytes(m.params, self.weight_bytes)
        usable = self.mem_util * g.memory
        if weights >= usable:
            v.fail("weight_bytes", self.weight_bytes, f"{m.name} weights take {weights:.4g} bytes but {g.name} "
                   f"has {usable:.4g} usable ({self.mem_util:g} x {g.memory:.4g}); use fewer bytes per parameter")
        kv = kv_bytes_per_token(m.layers, m.kv_heads, m.head_dim, self.kv_bytes)
        # floor(free / (kv · ctx)) >= count  <=>  count · ctx <= floor(free / kv), ctx an integer.
        tokens = min(math.floor((usable - weights) / kv), 2**31 - 1)
        longest = self.longest_context()
        if longest > tokens:
            v.fail("prompt_max" if self.prompt_cv > 0 else "prompt_mean",
                   self.prompt_max if self.prompt_cv > 0 else self.prompt_mean,
                   f"a request of {longest:,} tokens (prompt {self.longest('prompt'):,} + answer "
                   f"{self.longest('answer'):,}) leaves no seat: its KV cache is {kv * longest:.4g} bytes "
                   f"({kv:.4g} per token) but only {usable - weights:.4g} bytes are free beside the weights "
                   f"({tokens:,} tokens)")
        shortest = self.shortest("prompt") + self.shortest("answer")
        slots = min(self.max_batch, tokens // shortest)
        if slots * longest > 2**31 - 1 or (self.n + self.warmup) * self.longest("answer") > 2**31 - 1:
            v.fail("max_batch", self.max_batch, "times the longest request must stay below 2**31 tokens")
        set_("_kv_tokens", tokens)
        set_("_slots", slots)
        set_("_weights", weights)
        set_("_kv", kv)

    # -- what follows from the fields ---------------------------------------------------
    def longest(self, what: str) -> int:
        """The longest prompt or answer a request can have (tokens)."""
        cv, mean, cap = (getattr(self, f"{what}_{f}") for f in ("cv", "mean", "max"))
        return min(math.ceil(mean), cap) if cv == 0 else cap

    def shortest(self, what: str) -> int:
        return self.longest(what) if getattr(self, f"{what}_cv") == 0 else 1

    def longest_context(self) -> int:
        return self.longest("prompt") + self.longest("answer")

    @property
    def kv_tokens(self) -> int:
        """Tokens of KV cache the memory beside the weights holds."""
        return self._kv_tokens

    @property
    def slots(self) -> int:
        """The most requests one batch (or step) can hold: ``max_batch``, or fewer
        when even the shortest requests run out of seats first."""
        return self._slots

    def constants(self) -> dict[str, float]:
        """§5's formulas per unit, in float64: seconds per decode step at zero
        context (``step_base``), per token of context in a step (``step_kv``), per
        prompt token of prefill (``prefill_token``)."""
        m, g = catalogue.model(self.model), catalogue.gpu(self.gpu)
        return {"step_base": self._weights / g.bandwidth, "step_kv": self._kv / g.bandwidth,
                "prefill_token": 2 * m.params / (g.flops * self.prefill_util)}

    def params(self, rate: float, *, percentile: float = 95.0, slo_ttft: float | None = None) -> Params:
        """The device parameters at ``rate`` requests/s (validated: positive, finite,
        a float32 whose mean gap and horizon are float32 too)."""
        rate = v.number("rate", rate, lo=0.0, lo_open=True, hi=1e9)
        horizon = (self.n + self.warmup) / rate
        if horizon > 1e9:
            v.fail("rate", rate, f"is too low: {self.n + self.warmup:,} arrivals would span {horizon:.3g} s "
                   "(at most 1e9 s)")
        percentile = v.number("percentile", percentile, lo=0.0, hi=100.0, lo_open=True, hi_open=True)
        slo = math.inf if slo_ttft is None else v.number("slo_ttft", slo_ttft, lo=0.0, lo_open=True, hi=1e6)
        c = self.constants()
        for name, x in c.items():
            if not F32_TINY < x < F32_MAX:
                v.fail(name, x, "must be a normal float32 (the card's constants are out of range)")
        f, i = np.float32, np.int32
        pm, ps = _lognormal(self.prompt_mean, self.prompt_cv)
        am, as_ = _lognormal(self.answer_mean, self.answer_cv)
        return Params(rate=f(rate), gap_scale=f(1.0 / rate), max_batch=i(self.max_batch), max_wait=f(self.max_wait),
                      step_base=f(c["step_base"]), step_kv=f(c["step_kv"]), prefill_token=f(c["prefill_token"]),
                      kv_tokens=i(self.kv_tokens), prompt_mu=f(pm), prompt_sigma=f(ps),
                      prompt_fixed=i(self.longest("prompt")), prompt_max=i(self.prompt_max), answer_mu=f(am),
                      answer_sigma=f(as_), answer_fixed=i(self.longest("answer")), answer_max=i(self.answer_max),
                      percentile=f(percentile), slo_ttft=f(slo), batcher=self.batcher, slots=self.slots,
                      n=self.n, warmup=self.warmup)

    def capacity_rate(self) -> float:
        """Requests/s a full batch of mean-length requests would clear: prefill of
        each plus its share of full-batch decode steps (the top of the SLO search)."""
        c = self.constants()
        lin, lout, b = self.prompt_mean, self.answer_mean, self.slots
        step = c["step_base"] + c["step_kv"] * b * (lin + 0.5 * lout)
        return 1.0 / (c["prefill_token"] * lin + max(lout - 1.0, 0.0) * step / b)

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


# -- draws -------------------------------------------------------------------------------

@pytree_dataclass
class Draws:
    """One replication's random inputs: ``gap`` (N,) float32 unit-rate exponential
    arrival gaps (gap ``j`` precedes arrival ``j``); ``prompt``, ``answer`` (N,)
    int32 tokens."""

    gap: Any
    prompt: Any
    answer: Any


def _length(z, mu, sigma, fixed, cap):
    x = jnp.exp(jnp.minimum(mu + sigma * z, 80.0))
    drawn = jnp.clip(jnp.ceil(x), 1.0, cap.astype(jnp.float32)).astype(jnp.int32)
    return jnp.where(sigma > 0, drawn, fixed)


def draw(key: jax.Array, p: Params) -> Draws:
    """The replication's draws from its key: one block of open uniforms (3, N)."""
    N = p.n + p.warmup
    u = uniforms(key, (3, N))
    return Draws(gap=exponential(u[0]),
                 prompt=_length(normal(u[1]), p.prompt_mu, p.prompt_sigma, p.prompt_fixed, p.prompt_max),
                 answer=_length(normal(u[2]), p.answer_mu, p.answer_sigma, p.answer_fixed, p.answer_max))


def arrivals(d: Draws, p: Params) -> clock.Time:
    """(N,) arrival times (double-float seconds): prefix sums of ``gap · (1 / rate)``
    (a product, exactly rounded on every backend, where a division may not be)."""
    return clock.cumsum(d.gap * p.gap_scale)


# -- the event loop, batched by hand ------------------------------------------------------

_CONSTS = ("max_batch", "max_wait", "step_base", "step_kv", "prefill_token", "kv_tokens")


def _gather(x, idx):
    return jnp.take_along_axis(x, idx, axis=1)


def _serve_batch(a_hi, a_lo, lin, lout, consts, batcher: str, S: int, warmup: int) -> dict:
    """The event loop of R replications at once: inputs (R, N), consts (R,) each.

    Returns per request (R, N) float32 ``wait``, ``ttft``, ``e2e`` (seconds after
    arrival) and per replication ``busy`` (s in [first measured arrival, ∞)),
    ``steps``/``active`` (decode steps counted and active requests summed over
    them), ``end`` (the clock at the end, s after the first measured arrival).
    """
    R, N = lin.shape
    mb, mw, base, kvs, pf, kvt = (consts[k][:, None] for k in _CONSTS)
    static = batcher == "static"
    f32, i32 = jnp.float32, jnp.int32
    rows = jnp.arange(R, dtype=i32)[:, None]
    lane = jnp.arange(S, dtype=i32)[None, :]
    s_t = (a_hi[:, warmup:warmup + 1], a_lo[:, warmup:warmup + 1])  # first measured arrival
    final = lin + lout
    zr = jnp.zeros((R, 1), f32)
    st = dict(t=(zr, zr), head=jnp.zeros((R, 1), i32), req=jnp.full((R, S), N, i32),
              ctx=jnp.zeros((R, S), i32), left=jnp.zeros((R, S), i32), fin=jnp.zeros((R, S), i32),
              wait=jnp.zeros((R, N), f32), ttft=jnp.zeros((R, N), f32), e2e=jnp.zeros((R, N), f32),
              busy=(zr, zr), steps=jnp.zeros((R, 1), i32), active=jnp.zeros((R, 1), i32))

    def going(st):
        return (st["head"] < N) | jnp.any(st["left"] > 0, axis=1, keepdims=True)

    def at(x, j):  # (R, k) gather of an (R, N) time at indices clipped into range
        return _gather(x[0], jnp.minimum(j, N - 1)), _gather(x[1], jnp.minimum(j, N - 1))

    a = (a_hi, a_lo)
    inf = jnp.full((R, 1), jnp.inf, f32)

    def body(st):
        go = going(st)
        t, head = st["t"], st["head"]
        live = st["left"] > 0
        n_run = jnp.sum(live, axis=1, keepdims=True, dtype=i32)
        running = n_run > 0
        a_head = at(a, head)
        # -- admission: when, and who ------------------------------------------------
        if static:
            full_j = head + mb - 1
            a_full = at(a, full_j)
            a_full = (jnp.where(full_j < N, a_full[0], inf), jnp.where(full_j < N, a_full[1], 0.0))
            trigger = clock.minimum(a_full, clock.add(a_head, mw))
            admit = ~running
        else:
            trigger = a_head
            admit = jnp.ones_like(running)
        t0 = clock.where(running, t, clock.maximum(t, trigger))
        j = head + lane  # (R, S) candidates, first come first served
        jc = jnp.minimum(j, N - 1)
        arrived = (j < N) & (clock.sub(at(a, j), t0) <= 0)
        max_run = jnp.max(jnp.where(live, st["fin"], 0), axis=1, keepdims=True)
        count = n_run + lane + 1
        need = count * jnp.maximum(max_run, jax.lax.cummax(_gather(final, jc), axis=1))
        ok = arrived & (count <= S) & (count <= mb) & (need <= kvt) & admit & go
        take = jnp.cumprod(ok.astype(i32), axis=1) > 0  # every candidate so far fits
        m = jnp.sum(take, axis=1, keepdims=True, dtype=i32)
        joiner_lin = _gather(lin, jc)
        prompt_tokens = jnp.sum(jnp.where(take, joiner_lin, 0), axis=1, keepdims=True, dtype=i32)
        pf_s = pf * prompt_tokens.astype(f32)
        t1 = clock.add(t0, pf_s)
        idx = jnp.where(take, j, N)
        aj = at(a, j)
        w_j, f_j = clock.sub(t0, aj), clock.sub(t1, aj)
        wait = st["wait"].at[rows, idx].set(w_j, mode="drop")
        ttft = st["ttft"].at[rows, idx].set(f_j, mode="drop")
        one = take & (_gather(lout, jc) == 1)
        e2e = st["e2e"].at[rows, jnp.where(one, j, N)].set(f_j, mode="drop")
        # joiners fill the free slots in order: the i-th free slot gets joiner i
        free = ~live
        rank = jnp.cumsum(free.astype(i32), axis=1) - 1
        joins = free & (rank < m)
        jr = jnp.minimum(head + rank, N - 1)
        req = jnp.where(joins, jr, st["req"])
        ctx = jnp.where(joins, _gather(lin, jr), st["ctx"])
        left = jnp.where(joins, _gather(lout, jr) - 1, st["left"])
        fin = jnp.where(joins, _gather(final, jr), st["fin"])
        head2 = head + m
        since = clock.sub(t0, s_t)
        busy = clock.add(st["busy"], jnp.where(since >= 0, pf_s, jnp.maximum(clock.sub(t1, s_t), 0.0)))
        # -- one run of decode steps -------------------------------------------------
        act = left > 0
        c = jnp.sum(act, axis=1, keepdims=True, dtype=i32)
        X = jnp.sum(jnp.where(act, ctx, 0), axis=1, keepdims=True, dtype=i32)
        A = base + kvs * X.astype(f32)
        B = kvs * c.astype(f32)
        kmax = jnp.min(jnp.where(act, left, 2**30), axis=1, keepdims=True)
        if static:
            k = kmax
        else:
            # The next request joins at the first boundary at or past its arrival,
            # unless it was there at this admission and did not fit (then it waits
            # for a departure) or every slot is taken.
            a_next = at(a, head2)
            fresh = clock.sub(a_next, t0) > 0
            stop = (head2 < N) & fresh & (c < S)
            gap = clock.sub(a_next, t1)
            k = jnp.where(stop, clock.steps_to_reach(A, B, gap, kmax), kmax)
        k = jnp.where(c > 0, k, 0)
        T = clock.run_time(A, B, k)
        t2 = clock.add(t1, T)
        ctx = jnp.where(act, ctx + k, ctx)
        left = jnp.where(act, left - k, left)
        done = act & (left == 0)
        e2e = e2e.at[rows, jnp.where(done & go, req, N)].set(clock.sub(t2, at(a, req)), mode="drop")
        gs = clock.sub(s_t, t1)
        before = jnp.where(gs > 0, clock.steps_to_reach(A, B, gs, jnp.maximum(k, 1)), 0)
        counted = jnp.maximum(k - before, 0)
        since = clock.sub(t1, s_t)
        busy = clock.add(busy, jnp.where(since >= 0, T, jnp.maximum(clock.sub(t2, s_t), 0.0)))
        new = dict(t=t2, head=head2, req=req, ctx=ctx, left=left, fin=fin, busy=busy,
                   steps=st["steps"] + counted, active=st["active"] + counted * c)
        out = {key: clock.where(go, new[key], st[key]) if isinstance(new[key], tuple)
               else jnp.where(go, new[key], st[key]) for key in new}
        out.update(wait=wait, ttft=ttft, e2e=e2e)
        return out

    st = jax.lax.while_loop(lambda s: jnp.any(going(s)), body, st)
    return {"wait": st["wait"], "ttft": st["ttft"], "e2e": st["e2e"],
            "busy": (st["busy"][0] + st["busy"][1])[:, 0], "steps": st["steps"][:, 0],
            "active": st["active"][:, 0], "end": clock.sub(st["t"], s_t)[:, 0]}


@lru_cache(maxsize=None)
def _server(batcher: str, slots: int, warmup: int):
    """``serve(a_hi, a_lo, lin, lout, consts)`` for one replication, batched by
    ``_serve_batch`` under ``vmap``."""
    run = partial(_serve_batch, batcher=batcher, S=slots, warmup=warmup)

    @jax.custom_batching.custom_vmap
    def serve(a_hi, a_lo, lin, lout, consts):
        out = run(a_hi[None], a_lo[None], lin[None], lout[None], {k: x[None] for k, x in consts.items()})
        return {k: x[0] for k, x in out.items()}

    @serve.def_vmap
    def _rule(axis_size, in_batched, a_hi, a_lo, lin, lout, consts):
        def full(x, b, tail):
            return x if b else jnp.broadcast_to(x, (axis_size,) + tail)

        N = lin.shape[-1]
        b_hi, b_lo, b_in, b_out, b_c = in_batched
        args = [full(x, b, (N,)) for x, b in zip((a_hi, a_lo, lin, lout), (b_hi, b_lo, b_in, b_out))]
        cs = {k: full(consts[k], b_c[k], ()) for k in consts}
        out = run(*args, cs)
        return out, {k: True for k in out}

    return serve


def requests(key: jax.Array, p: Params) -> dict:
    """One replication's every request: ``arrival`` (hi, lo) and ``wait``, ``ttft``,
    ``e2e`` (s after arrival), (N,) each, warmup included; and the replication's
    ``busy``, ``steps``, ``active``, ``end`` (see ``_serve_batch``)."""
    d = draw(key, p)
    a = arrivals(d, p)
    consts = {k: getattr(p, k) for k in _CONSTS}
    out = _server(p.batcher, p.slots, p.warmup)(a[0], a[1], d.prompt, d.answer, consts)
    return {"arrival": a, **out, "prompt": d.prompt, "answer": d.answer}


def _percentile(sorted_x: jax.Array, q) -> jax.Array:
    """``np.percentile`` (linear) of a sorted (n,) sample at ``q`` in [0, 100]."""
    n = sorted_x.shape[-1]
    pos = jnp.asarray(q, jnp.float32) / 100.0 * (n - 1)
    k0 = jnp.clip(jnp.floor(pos), 0, n - 1).astype(jnp.int32)
    k1 = jnp.minimum(k0 + 1, n - 1)
    a, b = sorted_x[k0], sorted_x[k1]
    frac = pos - k0.astype(jnp.float32)
    d = b - a
    return jnp.where(frac >= 0.5, b - d * (1 - frac), a + d * frac)


def replication(key: jax.Array, p: Params) -> dict:
    """One replication's figures (SPEC §7), () each: p50/p95/p99 and the SLO's
    percentile of TTFT (s), p50/p95/p99 end-to-end (s), mean wait (s), mean
    inter-token latency (s; NaN when every answer is one token), throughput
    (output tok/s), utilisation, mean batch, and ``pass_slo``."""
    r = requests(key, p)
    w = p.warmup
    ttft, e2e, wait = r["ttft"][w:], r["e2e"][w:], r["wait"][w:]
    answer = r["answer"][w:]
    st, se = jnp.sort(ttft), jnp.sort(e2e)
    many = answer > 1
    itl = jnp.where(many, (e2e - ttft) / jnp.maximum(answer - 1, 1).astype(jnp.float32), 0.0)
    n_itl = jnp.sum(many, dtype=jnp.int32)
    span = jnp.max(clock.sub((r["arrival"][0][w:], r["arrival"][1][w:]),
                             (r["arrival"][0][w], r["arrival"][1][w])) + e2e)
    tail = r["end"] - span  # busy without a break after the last measured finish
    tokens = jnp.sum(answer, dtype=jnp.int32).astype(jnp.float32)
    q = _percentile(st, p.percentile)
    return {"ttft_p50": _percentile(st, 50.0), "ttft_p95": _percentile(st, 95.0),
            "ttft_p99": _percentile(st, 99.0), "ttft_q": q,
            "e2e_p50": _percentile(se, 50.0), "e2e_p95": _percentile(se, 95.0), "e2e_p99": _percentile(se, 99.0),
            "wait_mean": tree_sum(wait) / np.float32(p.n),
            "itl_mean": jnp.where(n_itl > 0, tree_sum(itl) / n_itl.astype(jnp.float32), jnp.nan),
            "throughput": tokens / span,
            "utilisation": (r["busy"] - tail) / span,
            "mean_batch": jnp.where(r["steps"] > 0, r["active"].astype(jnp.float32)
                                    / jnp.maximum(r["steps"], 1).astype(jnp.float32), jnp.nan),
            "pass_slo": q <= p.slo_ttft}


SCHEMA = engine.Schema(columns=COLUMNS, kept=COLUMNS)


# -- runs on the host ---------------------------------------------------------------------

@dataclass
class LatencyResult:
    """A configuration's distribution over ``replications`` at one ``rate``.

    ``summary``: as ``mc.engine.of_columns`` gives it (mean, std, p5/p50/p95 of
    each figure over replications; ``pass["slo"]`` with its Wilson interval).
    ``samples``: one row per replication.
    """

    serving: Serving
    rate: float
    replications: int
    seed: int
    percentile: float
    slo_ttft: float | None
    summary: dict
    samples: pd.DataFrame = dataclasses.field(repr=False)

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
        (normal approximation to the binomial), rounded outward."""
        x = np.sort(self.samples[col].to_numpy(np.float64))
        x = x[np.isfinite(x)]
        k = x.size
        h = engine.Z95 * math.sqrt(k) / 2
        lo, hi = max(0, math.floor(k / 2 - h) - 1), min(k - 1, math.ceil(k / 2 + h))
        return float(np.median(x)), float(x[lo]), float(x[hi])

    def figures(self) -> dict:
        """Medians over replications with their p5..p95 bands, for every figure."""
        out = {}
        for col in COLUMNS[:-1]:
            lo, hi = self.band(col)
            out[col] = {"median": self.median(col), "p5": lo, "p95": hi}
        return out


def default_chunk(s: Serving) -> int:
    """Replications per step: 16. The loop runs as long as its slowest replication
    and its per-request arrays stay in cache at this size; on a CPU 16 ran ~1.4×
    the replications per second of 64 for the continuous batcher (PERFORMANCE.md)."""
    return 16


def simulate(s: Serving, rate: float, replications: int = 200, *, seed: int = 0,
             percentile: float = 95.0, slo_ttft: float | None = None, chunk: int | None = None,
             devices: int | None = None, progress: bool | None = False) -> LatencyResult:
    """Replications ``0..K-1`` of ``s`` at ``rate`` requests/s; replication ``i``
    uses ``fold_in(key(seed), i)``, so nothing depends on ``chunk`` or ``devices``."""
    v.instance("s", s, Serving, "a Serving")
    p = s.params(rate, percentile=percentile, slo_ttft=slo_ttft)
    replications = v.count("replications", replications, lo=2, hi=MAX_REPLICATIONS)
    progress = v.progress("progress", progress)
    out = engine.summarise(replication, p, replications, SCHEMA, seed=seed,
                           chunk=default_chunk(s) if chunk is None else chunk, devices=devices,
                           progress=progress, keep=True, unit="replications")
    samples = pd.DataFrame(out.columns)
    return LatencyResult(s, float(p.rate), out.run.done, int(seed), float(p.percentile), slo_ttft,
                         out.summary, samples)


# -- the SLO rate -------------------------------------------------------------------------

@dataclass
class SLORating:
    """The highest rate meeting an SLO and what the card does there.

    ``rate``: requests/s; ``tok_s``: the median throughput at that rate (the card's
    SLO-rated tok/s); ``result``: the run at ``rate``; ``tried``: every rate tried
    with the share of replications meeting the SLO and the median percentile.
    """

    rate: float
    tok_s: float
    slo_ttft: float
    percentile: float
    share: float
    result: LatencyResult
    tried: list[dict]

    def tokens_per_dollar(self, hourly_price: float) -> float:
        return self.tok_s * 3600.0 / v.positive("price_per_hour", hourly_price)


def check_slo(slo_ttft: float, percentile: float = 95.0, share: float = 0.9,
              rel_tol: float = 0.01) -> tuple[float, float, float, float]:
    """The SLO search's fields, validated (one-line ``ParamError``s): ``slo_ttft``
    s in (0, 1e6], ``percentile`` in (0, 100), ``share`` in (0, 1], ``rel_tol``
    in [1e-6, 1]."""
    return (v.number("slo_ttft", slo_ttft, lo=0.0, lo_open=True, hi=1e6),
            v.number("percentile", percentile, lo=0.0, hi=100.0, lo_open=True, hi_open=True),
            v.number("share", share, lo=0.0, hi=1.0, lo_open=True),
            v.number("rel_tol", rel_tol, lo=1e-6, hi=1.0))


def slo_rate(s: Serving, slo_ttft: float, *, percentile: float = 95.0, share: float = 0.9,
             replications: int = 100, seed: int = 0, rel_tol: float = 0.01, chunk: int | None = None,
             progress: bool | None = False, log=None) -> SLORating:
    """The highest arrival rate at which percentile ``percentile`` of TTFT is at most
    ``slo_ttft`` in at least ``share`` of replications (SPEC §7), by bisection in
    log-rate to ``rel_tol``. Every rate uses the same unit-rate draws (the same
    seed), so only the gaps' scale changes.

    The search starts at ``Serving.capacity_rate``, doubles while the SLO holds and
    halves (at most 16 times) until it does.

    Raises:
        ParamError: bad SLO fields, or an SLO no rate tried meets (the message gives
        the percentile at the lowest rate tried).
        KeyboardInterrupt: a run was stopped by Ctrl-C (the search does not go on
        with a partial run).
    """
    v.instance("s", s, Serving, "a Serving")
    slo_ttft, percentile, share, rel_tol = check_slo(slo_ttft, percentile, share, rel_tol)
    replications = v.count("replications", replications, lo=2, hi=MAX_REPLICATIONS)
    progress = v.progress("progress", progress)
    if log is not None and not callable(log):
        raise TypeError(f"log must be a function of one str (e.g. print) or None, not {type(log).__name__}")
    tried: list[dict] = []
    runs: dict[float, LatencyResult] = {}

    def meets(rate: float) -> bool:
        r = simulate(s, rate, replications, seed=seed, percentile=percentile, slo_ttft=slo_ttft,
                     chunk=chunk, progress=progress)
        if r.summary.get("partial") or r.summary.get("interrupted"):  # Ctrl-C: stop the search, not just the run
            raise KeyboardInterrupt
        runs[rate] = r
        got = r.summary["pass"]["slo"]["rate"]
        row = {"rate": r.rate, "share": got, "ttft_q": r.median("ttft_q"), "meets": got >= share}
        tried.append(row)
        if log is not None:
            log(f"rate {rate:.4g} req/s: p{percentile:g} TTFT <= {slo_ttft:g} s in {got:.0%} of replications "
                f"(median {row['ttft_q']:.4g} s)")
        return row["meets"]

    start = s.capacity_rate()
    lo = hi = None
    if meets(start):
        lo = start
        for _ in range(16):
            r = lo * 2
            if not meets(r):
                hi = r
                break
            lo = r
        else:
            v.fail("slo_ttft", slo_ttft, f"is met at every rate tried, up to {lo:.4g} req/s")
    else:
        hi = start
        for _ in range(16):
            r = hi / 2
            if meets(r):
                lo = r
                break
            hi = r
        else:
            low = tried[-1]
            v.fail("slo_ttft", slo_ttft, f"no rate meets it: p{percentile:g} TTFT is {low['ttft_q']:.4g} s "
                   f"(median) at the lowest rate tried, {low['rate']:.4g} req/s")
    while hi / lo > 1 + rel_tol:
        mid = math.sqrt(lo * hi)
        if meets(mid):
            lo = mid
        else:
            hi = mid
    best = runs[lo]
    return SLORating(rate=best.rate, tok_s=best.median("throughput"), slo_ttft=slo_ttft, percentile=percentile,
                     share=share, result=best, tried=tried)
