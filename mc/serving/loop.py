"""The queue's event loop (SPEC §7), batched by hand.

The loop takes one *iteration* per admission plus one *run* of decode steps:
within a run nobody joins or leaves, so its step durations grow by the same
amount each step and its length is closed-form (``mc.kernels.clock``). A run
ends at the first departure or, for the continuous batcher with an empty queue
and a free slot, at the first step boundary at or past the next arrival, where
that request joins. The clock and arrival times are double-float pairs, so a
replication of many simulated hours keeps sub-microsecond resolution.

``server`` runs one replication and is batched by ``custom_vmap``: a replication
that has finished is masked, and nothing outside its own row changes its bits,
so results do not depend on the chunk or the device count.

Choices beyond SPEC §7: mean batch counts the decode steps that begin at or
after the first measured arrival; busy time is counted from that arrival on.
"""

from __future__ import annotations

from functools import lru_cache, partial
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp

from ..kernels import clock
from ..kernels.exact import unfused, wide


class Queue(NamedTuple):
    """The loop's state for R replications, S slots and N requests."""

    t: clock.Time  # (R, 1) each: the card's clock, s
    head: jax.Array  # (R, 1) int32: the first request not yet admitted
    req: jax.Array  # (R, S) int32: the request in each slot (N: none)
    ctx: jax.Array  # (R, S) int32 tokens: its context
    left: jax.Array  # (R, S) int32: decode steps it has left (0: the slot is free)
    fin: jax.Array  # (R, S) int32 tokens: its final context
    wait: jax.Array  # (R, N) float32 s: arrival to the start of its batch or step
    ttft: jax.Array  # (R, N) float32 s: arrival to the end of its prefill
    e2e: jax.Array  # (R, N) float32 s: arrival to its last token
    busy: clock.Time  # (R, 1) each: s busy since the first measured arrival
    steps: jax.Array  # (R, 1) int32: decode steps counted
    active: jax.Array  # (R, 1) int32: active requests summed over those steps


CONSTS = ("max_batch", "max_wait", "step_base", "step_kv", "prefill_token", "kv_tokens", "step_req", "prefill_base")


def _gather(x, idx):
    return jnp.take_along_axis(x, idx, axis=1)


class View(NamedTuple):
    """How one card's loop sees its requests (card-local indices ``j``, (rows, k) int32).

    ``at(j)``: arrival times (a time, (rows, k) each word); ``length(x, j)``: a
    per-request (R, N) int32 array at ``j``; ``put(arr, j, mask, values)``: the
    per-request result array ``arr`` with ``values`` written where ``mask``;
    ``limit`` (rows, 1): requests the card may look at (the next arrival's index
    bound); ``known`` (rows, 1): requests the card holds; ``gate``: a function of
    the admission time ``t0`` that may hold a card back (None: never)."""

    at: Callable
    length: Callable
    put: Callable
    limit: jax.Array
    known: jax.Array
    gate: Callable | None = None


def going(st: Queue, known) -> jax.Array:
    """(rows, 1) bool: requests wait to be admitted or some slot is busy."""
    return (st.head < known) | jnp.any(st.left > 0, axis=1, keepdims=True)


def admission(st: Queue, v: View, mb, mw, static: bool) -> tuple[jax.Array, clock.Time]:
    """Whether each row's card moves in its next iteration (going, and passing
    ``v.gate``), (rows, 1) bool, and when that iteration admits, ``t0`` (a time,
    (rows, 1) each word): the clock while a batch runs, else the later of the clock
    and the batcher's trigger (static: the ``mb``-th request's arrival or the head's
    plus ``mw``; continuous: the head's arrival)."""
    t, head = st.t, st.head
    running = jnp.any(st.left > 0, axis=1, keepdims=True)
    a_head = v.at(head)
    if static:
        full_j = head + mb - 1
        a_full = v.at(full_j)
        inside = full_j < v.limit
        a_full = (jnp.where(inside, a_full[0], jnp.inf), jnp.where(inside, a_full[1], 0.0))
        trigger = clock.minimum(a_full, clock.add(a_head, mw))
    else:
        trigger = a_head
    t0 = clock.where(running, t, clock.maximum(t, trigger))
    go = going(st, v.known)
    if v.gate is not None:
        go = go & v.gate(t0)
    return go, t0


def iteration(st: Queue, v: View, lin, lout, final, consts, s_t, static: bool, S: int):
    """One admission and one run of decode steps for every row of ``st`` whose card
    is going (and passes ``v.gate``); other rows keep their state. Returns the new
    state and what the iteration did: ``moved`` (rows, 1) bool, the prefill's end
    ``t1``, the run's ``A``, ``B``, ``k`` and active count ``c``, joiners ``m``,
    one-token joiners ``one``, departures at the run's end ``done`` and the joiners'
    final contexts summed, ``tokens``."""
    mb, mw, base, kvs, pf, kvt, sreq, pfb = (consts[k] for k in CONSTS)
    f32, i32 = jnp.float32, jnp.int32
    lane = jnp.arange(S, dtype=i32)[None, :]
    at, limit = v.at, v.limit
    t, head = st.t, st.head
    live = st.left > 0
    n_run = jnp.sum(live, axis=1, keepdims=True, dtype=i32)
    # -- admission: when, and who ------------------------------------------------
    go, t0 = admission(st, v, mb, mw, static)
    admit = ~(n_run > 0) if static else jnp.ones_like(go)
    j = head + lane  # (R, S) candidates, first come first served
    arrived = (j < limit) & (clock.sub(at(j), t0) <= 0)
    max_run = jnp.max(jnp.where(live, st.fin, 0), axis=1, keepdims=True)
    count = n_run + lane + 1
    need = count * jnp.maximum(max_run, jax.lax.cummax(v.length(final, j), axis=1))
    ok = arrived & (count <= S) & (count <= mb) & (need <= kvt) & admit & go
    take = jnp.cumprod(ok.astype(i32), axis=1) > 0  # every candidate so far fits
    m = jnp.sum(take, axis=1, keepdims=True, dtype=i32)
    joiner_lin = v.length(lin, j)
    prompt_tokens = jnp.sum(jnp.where(take, joiner_lin, 0), axis=1, keepdims=True, dtype=i32)
    pf_s = unfused(pf * prompt_tokens.astype(f32))  # rounded before any sum: the same bits with or without FMA
    pf_s = jnp.where(m > 0, pf_s + pfb, pf_s)  # a replica's prefill: its all-reduces' latency (0 on one card)
    t1 = clock.add(t0, pf_s)
    aj = at(j)
    w_j, f_j = clock.sub(t0, aj), clock.sub(t1, aj)
    wait = v.put(st.wait, j, take, w_j)
    ttft = v.put(st.ttft, j, take, f_j)
    one = take & (v.length(lout, j) == 1)
    e2e = v.put(st.e2e, j, one, f_j)
    # joiners fill the free slots in order: the i-th free slot gets joiner i
    free = ~live
    rank = jnp.cumsum(free.astype(i32), axis=1) - 1
    joins = free & (rank < m)
    jr = head + rank
    req = jnp.where(joins, jr, st.req)
    ctx = jnp.where(joins, v.length(lin, jr), st.ctx)
    left = jnp.where(joins, v.length(lout, jr) - 1, st.left)
    fin = jnp.where(joins, v.length(final, jr), st.fin)
    head2 = head + m
    since = clock.sub(t0, s_t)
    busy = clock.add(st.busy, jnp.where(since >= 0, pf_s, jnp.maximum(clock.sub(t1, s_t), 0.0)))
    # -- one run of decode steps -------------------------------------------------
    act = left > 0
    c = jnp.sum(act, axis=1, keepdims=True, dtype=i32)
    X = jnp.sum(jnp.where(act, ctx, 0), axis=1, keepdims=True, dtype=i32)
    with wide():  # base + kvs·X (+ a replica's all-reduce, sreq·c) rounded once, on every CPU
        A = (base.astype(jnp.float64) + kvs.astype(jnp.float64) * X.astype(jnp.float64)
             + sreq.astype(jnp.float64) * c.astype(jnp.float64)).astype(f32)
    B = kvs * c.astype(f32)
    kmax = jnp.min(jnp.where(act, left, 2**30), axis=1, keepdims=True)
    if static:
        k = kmax
    else:
        # The next request joins at the first boundary at or past its arrival,
        # unless it was there at this admission and did not fit (then it waits
        # for a departure) or every slot is taken.
        a_next = at(head2)
        fresh = clock.sub(a_next, t0) > 0
        stop = (head2 < limit) & fresh & (c < S)
        gap = clock.sub(a_next, t1)
        k = jnp.where(stop, clock.steps_to_reach(A, B, gap, kmax), kmax)
        # A joiner with a one-token answer leaves at its prefill: the seats it held
        # may let a waiting request join at the next step boundary.
        freed = jnp.any(one, axis=1, keepdims=True) & (head2 < limit)
        k = jnp.where(freed, jnp.minimum(k, 1), k)
    k = jnp.where(c > 0, k, 0)
    T = clock.run_time(A, B, k)
    t2 = clock.add(t1, T)
    ctx = jnp.where(act, ctx + k, ctx)
    left = jnp.where(act, left - k, left)
    done = act & (left == 0)
    e2e = v.put(e2e, req, done & go, clock.sub(t2, at(req)))
    gs = clock.sub(s_t, t1)
    before = jnp.where(gs > 0, clock.steps_to_reach(A, B, gs, jnp.maximum(k, 1)), 0)
    counted = jnp.maximum(k - before, 0)
    since = clock.sub(t1, s_t)
    busy = clock.add(busy, jnp.where(since >= 0, T, jnp.maximum(clock.sub(t2, s_t), 0.0)))
    step = dict(t=t2, head=head2, req=req, ctx=ctx, left=left, fin=fin, busy=busy,
                steps=st.steps + counted, active=st.active + counted * c)
    kept = {k: (clock.where if isinstance(x, tuple) else jnp.where)(go, x, getattr(st, k)) for k, x in step.items()}
    info = dict(moved=go, t1=t1, A=A, B=B, k=k, c=c, m=m, one=jnp.sum(one, axis=1, keepdims=True, dtype=i32),
                done=jnp.sum(done, axis=1, keepdims=True, dtype=i32),
                tokens=jnp.sum(jnp.where(take, v.length(final, j), 0), axis=1, keepdims=True, dtype=i32))
    return st._replace(wait=wait, ttft=ttft, e2e=e2e, **kept), info


def start(R: int, S: int, N: int, rows: int | None = None) -> Queue:
    """An empty queue: ``rows`` cards (default R) over R replications' N requests."""
    f32, i32 = jnp.float32, jnp.int32
    rows = R if rows is None else rows
    zr = jnp.zeros((rows, 1), f32)
    return Queue(t=(zr, zr), head=jnp.zeros((rows, 1), i32), req=jnp.full((rows, S), N, i32),
                 ctx=jnp.zeros((rows, S), i32), left=jnp.zeros((rows, S), i32), fin=jnp.zeros((rows, S), i32),
                 wait=jnp.zeros((R, N), f32), ttft=jnp.zeros((R, N), f32), e2e=jnp.zeros((R, N), f32),
                 busy=(zr, zr), steps=jnp.zeros((rows, 1), i32), active=jnp.zeros((rows, 1), i32))


def _serve_batch(a_hi, a_lo, lin, lout, consts, batcher: str, S: int, warmup: int) -> dict:
    """The event loop of R replications at once: inputs (R, N), consts (R,) each.

    Returns per request (R, N) float32 ``wait``, ``ttft``, ``e2e`` (seconds after
    arrival) and per replication ``busy`` (s in [first measured arrival, ∞)),
    ``steps``/``active`` (decode steps counted and active requests summed over
    them), ``end`` (the clock at the end, s after the first measured arrival).
    """
    R, N = lin.shape
    cs = {k: consts[k][:, None] for k in CONSTS}
    rows = jnp.arange(R, dtype=jnp.int32)[:, None]
    s_t = (a_hi[:, warmup:warmup + 1], a_lo[:, warmup:warmup + 1])  # first measured arrival
    final = lin + lout
    a = (a_hi, a_lo)
    n = jnp.full((R, 1), N, jnp.int32)

    def at(j):  # (R, k) gather of an (R, N) time at indices clipped into range
        return _gather(a[0], jnp.minimum(j, N - 1)), _gather(a[1], jnp.minimum(j, N - 1))

    def put(arr, j, mask, x):
        return arr.at[rows, jnp.where(mask, j, N)].set(x, mode="drop")

    view = View(at=at, length=lambda x, j: _gather(x, jnp.minimum(j, N - 1)), put=put, limit=n, known=n)
    st = jax.lax.while_loop(lambda s: jnp.any(going(s, n)),
                            lambda s: iteration(s, view, lin, lout, final, cs, s_t, batcher == "static", S)[0],
                            start(R, S, N))
    return {"wait": st.wait, "ttft": st.ttft, "e2e": st.e2e,
            "busy": (st.busy[0] + st.busy[1])[:, 0], "steps": st.steps[:, 0],
            "active": st.active[:, 0], "end": clock.sub(st.t, s_t)[:, 0]}


@lru_cache(maxsize=None)
def server(batcher: str, slots: int, warmup: int):
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
