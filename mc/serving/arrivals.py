"""Arrivals and lengths (SPEC §7, §7.1): one replication's requests from its key.

Every arrival process hands the queue the same thing: (N,) float32 *gaps* in raw
time (gap ``j`` precedes arrival ``j``) that the queue scales by ``gap_scale`` and
sums in double-float (``arrivals``), and (N,) prompt and answer tokens.

- ``poisson``: unit-mean exponential gaps; raw time is seconds at rate 1.
- ``gamma``: unit-mean Gamma gaps of shape ``1/cv²`` (``cv = 1`` is Poisson in law),
  ``mc.kernels.exact.gamma`` of ``fold_in(key, GAMMA_STREAM)`` over the shape.
- ``log``, bootstrap: raw time is log time. Block ``k`` starts at raw time
  ``float32(k)·block`` (a float32 product) and holds the log's requests arriving in
  ``[o_k, o_k + block)``, shifted by ``k·block − o_k``; ``o_k`` is
  ``u_k · (span − block)`` with ``u_k`` the open uniform of ``fold_in(fold_in(key,
  2), k)``. Blocks are placed until ``warmup + n`` requests are; a gap is the
  difference of consecutive raw times (double-float, rounded once to float32).
- ``log``, replay: the log's own times, every row once.

Lengths are lognormal (as §7 draws them) or, from a log, the (prompt, answer) of
a row: the placed row for log arrivals, else a row uniform over the log.

Every draw has the same bits on every CPU: the uniforms are integer arithmetic, a
block's offset one product, and each transcendental step (exponential and gamma
gaps, lognormal lengths) runs in float64 and is rounded once (``mc.kernels.exact``).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from .._pytree import pytree_dataclass
from ..kernels import clock
from ..kernels import exact
from ..kernels.random import uniforms
from .queue import Params

GAMMA_STREAM, BLOCK_STREAM = 1, 2  # fold_in(key, ·) streams beside the key's own uniforms


@pytree_dataclass
class Draws:
    """One replication's random inputs: ``gap`` (N,) float32 raw-time gaps (gap
    ``j`` precedes arrival ``j``); ``prompt``, ``answer`` (N,) int32 tokens;
    ``row`` (N,) int32 the log row of each request (None without log lengths)."""

    gap: Any
    prompt: Any
    answer: Any
    row: Any = None


def _length(u, mu, sigma, fixed, cap):
    """Tokens ``clip(ceil(exp(mu + sigma·z)), 1, cap)``, ``z`` the normal at ``u``,
    in float64 (``fixed`` when ``sigma`` is 0)."""
    with exact.wide():
        x = jnp.exp(jnp.minimum(mu.astype(exact.F64) + sigma.astype(exact.F64) * exact.normal64(u), 80.0))
        drawn = jnp.clip(jnp.ceil(x), 1.0, cap.astype(exact.F64)).astype(jnp.int32)
    return jnp.where(sigma > 0, drawn, fixed)


def block_offset(key: jax.Array, k: jax.Array, p: Params) -> jax.Array:
    """Bootstrap block ``k``'s start in the log, () float32 s since its first
    arrival: ``u_k · (span − block)``. ``key``: the replication's key."""
    u = uniforms(jax.random.fold_in(jax.random.fold_in(key, BLOCK_STREAM), k), (1,))[0]
    return u * p.offset_top


def _bootstrap(key: jax.Array, p: Params, N: int) -> tuple[clock.Time, jax.Array]:
    """(N,) raw times (double-float s) and log rows of the moving-block bootstrap."""
    t = (p.log_hi, p.log_lo)
    lane = jnp.arange(N, dtype=jnp.int32)

    def body(st):
        k, filled, row, blk, off = st
        o = block_offset(key, k, p)
        first = clock.count_before(t, (o, jnp.float32(0.0)))
        end = clock.count_before(t, clock.pair(o, p.block))
        j = lane - filled
        inside = (j >= 0) & (j < end - first)
        return (k + 1, filled + (end - first), jnp.where(inside, first + j, row), jnp.where(inside, k, blk),
                jnp.where(inside, o, off))

    zi = jnp.zeros(N, jnp.int32)
    init = (jnp.int32(0), jnp.int32(0), zi, zi, jnp.zeros(N, jnp.float32))
    _, _, row, blk, off = jax.lax.while_loop(lambda st: st[1] < N, body, init)
    within = clock.add((p.log_hi[row], p.log_lo[row]), -off)  # s after the block's start
    return clock.add(within, blk.astype(jnp.float32) * p.block), row


def _gaps(raw: clock.Time, first: jax.Array) -> jax.Array:
    """(N,) float32 differences of consecutive raw times; gap 0 is ``first``."""
    later = clock.sub((raw[0][1:], raw[1][1:]), (raw[0][:-1], raw[1][:-1]))
    return jnp.concatenate([first[None], later])


def draw(key: jax.Array, p: Params) -> Draws:
    """The replication's draws from its key: one block of open uniforms (3, N) for
    exponential gaps and lognormal lengths (or a log row), and the streams above."""
    N = p.n + p.warmup
    u = uniforms(key, (3, N))
    row = None
    if p.arrivals == "log":
        if p.replay:
            raw, row = (p.log_hi[:N], p.log_lo[:N]), jnp.arange(N, dtype=jnp.int32)
            gap = _gaps(raw, jnp.float32(0.0))
        else:
            raw, row = _bootstrap(key, p, N)
            gap = _gaps(raw, raw[0][0] + raw[1][0])
    elif p.arrivals == "gamma":
        gap = exact.gamma(jax.random.fold_in(key, GAMMA_STREAM), p.gamma_shape, N) / p.gamma_shape
    else:
        gap = exact.exponential(u[0])
    if p.lengths == "log":
        if row is None:
            rows = p.log_hi.shape[0]
            row = jnp.minimum(jnp.floor(u[1] * rows).astype(jnp.int32), rows - 1)
        return Draws(gap=gap, prompt=p.log_prompt[row], answer=p.log_answer[row], row=row)
    return Draws(gap=gap,
                 prompt=_length(u[1], p.prompt_mu, p.prompt_sigma, p.prompt_fixed, p.prompt_max),
                 answer=_length(u[2], p.answer_mu, p.answer_sigma, p.answer_fixed, p.answer_max))


def arrivals(d: Draws, p: Params) -> clock.Time:
    """(N,) arrival times (double-float seconds): prefix sums of ``gap · gap_scale``
    (a product, exactly rounded on every backend, where a division may not be, and
    rounded before it is summed, ``exact.unfused``)."""
    return clock.cumsum(exact.unfused(d.gap * p.gap_scale))
