"""A pool's queues behind a router (SPEC §9), batched by hand: every card runs the §7
batcher's iteration (``mc.serving.loop.iteration``) on its own requests.

Cards advance together in time. Each pass routes the next pool arrival when no
card can move without knowing where it goes, then lets every card take one
iteration whose admission lies strictly before that arrival: a card whose next
admission is at or past it waits, so an arrival at a step boundary is routed
first, on the state just before, and joins at that boundary if it goes there.
A continuous card with a free slot and nobody waiting ends its run at the first
boundary at or past the next *pool* arrival, since that request may come to it
(with one card that is exactly §7's rule, so one card is §7 bit for bit).

A card sees its requests through ``seq`` (the pool's arrival indices routed to
it, in order): the request after its last is the next pool arrival, and beyond
that nothing has arrived.

The router sees, just before an arrival at ``h``, per card: ``requests`` waiting
or running (a request that leaves at ``h`` or later still counts) and
``tokens`` outstanding (waiting: prompt + answer; running, its prefill
included: the answer tokens still to come, counting the steps of the card's
last run that end before ``h``).
"""

from __future__ import annotations

from functools import lru_cache, partial
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ..kernels import clock
from .loop import CONSTS, Queue, View, admission, going, iteration, start
from .routers import ROUTERS


class Pool(NamedTuple):
    q: Queue  # R·C rows, one per card
    seq: jax.Array  # (R·C, N) int32: the pool's arrival indices routed to each card, in order (N: none)
    count: jax.Array  # (R·C, 1) int32: requests routed to each card
    tokens: jax.Array  # (R·C, 1) int32: prompt + answer tokens of its waiting requests
    g: jax.Array  # (R, 1) int32: the next arrival to route
    stuck: jax.Array  # (R, 1) bool: no card can move before the next arrival is routed
    card: jax.Array  # (R, N) int32: where each arrival went
    last: dict  # the card's last iteration (``iteration``'s info): t1, A, B, k, c, m, one, done


def visible(p: Pool, h: clock.Time) -> tuple[jax.Array, jax.Array]:
    """(R·C, 1) int32 each: requests waiting or running and tokens outstanding just
    before the time ``h`` ((R·C, 1) each word)."""
    q, L = p.q, p.last
    i32 = jnp.int32
    t1_late = clock.sub(L["t1"], h) >= 0
    t2_late = clock.sub(q.t, h) >= 0
    n_run = jnp.sum(q.left > 0, axis=1, keepdims=True, dtype=i32)
    requests = (p.count - q.head) + n_run + jnp.where(t1_late, L["one"], 0) + jnp.where(t2_late, L["done"], 0)
    gap = clock.sub(h, L["t1"])  # steps of the last run that end before h: run_time(i) < gap
    k = L["k"]
    whole = clock.run_time(L["A"], L["B"], k) < gap
    part = clock.steps_to_reach(L["A"], L["B"], gap, jnp.maximum(k, 1)) - 1
    ended = jnp.where((k == 0) | (gap <= 0), 0, jnp.where(whole, k, part))
    tokens = (p.tokens + jnp.sum(q.left, axis=1, keepdims=True, dtype=i32) + L["c"] * (k - ended)
              + jnp.where(t1_late, L["m"], 0))
    return requests, tokens


def _serve_pool(a_hi, a_lo, lin, lout, u, consts, router: str, batcher: str, S: int, warmup: int) -> dict:
    """R replications of a pool of C cards: inputs (R, N), consts (R, C) each, ``u``
    (R, N) the router's uniforms. Returns per request (R, N) ``wait``, ``ttft``,
    ``e2e`` (s) and ``card`` (int32), per card (R, C) ``busy``, ``steps``,
    ``active``, ``end`` as ``mc.serving.loop`` gives them for one card."""
    R, N = lin.shape
    C = consts["step_base"].shape[1]
    RC = R * C
    f32, i32 = jnp.float32, jnp.int32
    choose = ROUTERS[router].choose
    cs = {k: consts[k].reshape(RC, 1) for k in CONSTS}
    rep = (jnp.arange(RC, dtype=i32) // C)[:, None]
    rows = jnp.arange(RC, dtype=i32)[:, None]
    first = (a_hi[:, warmup:warmup + 1], a_lo[:, warmup:warmup + 1])
    s_t = (first[0][rep[:, 0]], first[1][rep[:, 0]])
    final = lin + lout
    z = jnp.zeros((RC, 1), i32)
    zt = (jnp.zeros((RC, 1), f32), jnp.zeros((RC, 1), f32))
    last = dict(t1=zt, A=jnp.zeros((RC, 1), f32), B=jnp.zeros((RC, 1), f32), k=z, c=z, m=z, one=z, done=z)
    init = Pool(q=start(R, S, N, rows=RC), seq=jnp.full((RC, N), N, i32), count=z, tokens=z,
                g=jnp.zeros((R, 1), i32), stuck=jnp.ones((R, 1), bool), card=jnp.full((R, N), -1, i32), last=last)

    def arrival(g):  # (R, 1) the g-th arrival, +inf past the last
        gc = jnp.minimum(g, N - 1)
        more = g < N
        return (jnp.where(more, jnp.take_along_axis(a_hi, gc, 1), jnp.inf),
                jnp.where(more, jnp.take_along_axis(a_lo, gc, 1), 0.0))

    def per_card(x):  # (R, 1) -> (R·C, 1)
        return x[rep[:, 0]]

    def body(p: Pool) -> Pool:
        # -- route the next arrival where no card could move without it ---------------
        g = p.g
        now = p.stuck & (g < N)
        h = clock.where(per_card(now), tuple(per_card(x) for x in arrival(g)), (jnp.zeros_like(s_t[0]),) * 2)
        requests, tokens = visible(p, h)
        gc = jnp.minimum(g, N - 1)
        choice = choose(requests.reshape(R, C), tokens.reshape(R, C), g, jnp.take_along_axis(u, gc, 1))
        to = per_card(now) & (rows % C == per_card(choice))
        seq = p.seq.at[rows, jnp.where(to, p.count, N)].set(per_card(g), mode="drop")
        count = p.count + to.astype(i32)
        new = jnp.take_along_axis(final, gc, 1)
        waiting = p.tokens + jnp.where(to, per_card(new), 0)
        card = p.card.at[jnp.arange(R)[:, None], jnp.where(now, g, N)].set(choice, mode="drop")
        g = g + now.astype(i32)
        # -- every card takes one iteration whose admission is before the next arrival -
        hr = tuple(per_card(x) for x in arrival(g))
        more = per_card(g < N)

        def at(j):
            jc = jnp.minimum(j, N - 1)
            gid = jnp.minimum(jnp.take_along_axis(seq, jc, 1), N - 1)
            inside = j < count
            nxt = j == count
            return (jnp.where(inside, a_hi[rep, gid], jnp.where(nxt, hr[0], jnp.inf)),
                    jnp.where(inside, a_lo[rep, gid], jnp.where(nxt, hr[1], 0.0)))

        def length(x, j):
            return x[rep, jnp.minimum(jnp.take_along_axis(seq, jnp.minimum(j, N - 1), 1), N - 1)]

        def put(arr, j, mask, x):
            gid = jnp.take_along_axis(seq, jnp.minimum(j, N - 1), 1)
            return arr.at[rep, jnp.where(mask, gid, N)].set(x, mode="drop")

        view = View(at=at, length=length, put=put, limit=count + more.astype(i32), known=count,
                    gate=lambda t0: clock.sub(t0, hr) < 0)
        q, info = iteration(p.q, view, lin, lout, final, cs, s_t, batcher == "static", S)
        moved = info["moved"]
        last = {k: (clock.where if isinstance(x, tuple) else jnp.where)(moved, info[k], x) for k, x in p.last.items()}
        # Stuck: no card can move in the next pass without the next arrival, so that
        # pass routes it (a pass that moved no card would change nothing).
        ahead, _ = admission(q, view, cs["max_batch"], cs["max_wait"], batcher == "static")
        stuck = ~jnp.any(ahead.reshape(R, C), axis=1, keepdims=True)
        return Pool(q=q, seq=seq, count=count, tokens=waiting - jnp.where(moved, info["tokens"], 0), g=g,
                    stuck=stuck, card=card, last=last)

    def cond(p: Pool):
        return jnp.any(p.g < N) | jnp.any(going(p.q, p.count))

    p = jax.lax.while_loop(cond, body, init)
    q = p.q
    return {"wait": q.wait, "ttft": q.ttft, "e2e": q.e2e, "card": p.card,
            "busy": (q.busy[0] + q.busy[1]).reshape(R, C), "steps": q.steps.reshape(R, C),
            "active": q.active.reshape(R, C), "end": clock.sub(q.t, s_t).reshape(R, C)}


@lru_cache(maxsize=None)
def pool_server(router: str, batcher: str, slots: int, warmup: int):
    """``serve(a_hi, a_lo, lin, lout, u, consts)`` for one replication ((N,) each,
    consts (C,) each), batched by ``_serve_pool`` under ``vmap``."""
    run = partial(_serve_pool, router=router, batcher=batcher, S=slots, warmup=warmup)

    @jax.custom_batching.custom_vmap
    def serve(a_hi, a_lo, lin, lout, u, consts):
        out = run(a_hi[None], a_lo[None], lin[None], lout[None], u[None], {k: x[None] for k, x in consts.items()})
        return {k: x[0] for k, x in out.items()}

    @serve.def_vmap
    def _rule(axis_size, in_batched, a_hi, a_lo, lin, lout, u, consts):
        def full(x, b):
            return x if b else jnp.broadcast_to(x, (axis_size,) + x.shape)

        args = [full(x, b) for x, b in zip((a_hi, a_lo, lin, lout, u), in_batched[:5])]
        cs = {k: full(consts[k], in_batched[5][k]) for k in consts}
        out = run(*args, cs)
        return out, {k: True for k in out}

    return serve


__all__ = ["Pool", "pool_server", "visible"]
