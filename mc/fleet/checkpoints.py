"""Wander sampled exactly at the month's checkpoints (SPEC §1.4.1 as amended).

A card's wander enters what the month computes in two ways only: the window sums
``∫(1 + c)·u_i`` the autoscaler scores (each window's ends fall on a few hours), and
the run set's hourly capacity ``Σ_run t_i·u_i(h)``. So a card's path is needed only at
the *checkpoints*: the hours holding a window's start (``⌊t_k − W⌋``), each round's
start ``t_k``, each replacement's first serving hour (``⌊t_k + boot⌋``) and the
grid's first hour. Between two checkpoints its weighted sum and its value at the next
are two Gaussians given its value at the last (``mc.kernels.blocks``): a card costs
two normals a checkpoint, not one an hour.

The hourly capacity needs the run cards' sum between checkpoints: given every card's
draws it is one AR(1) bridge, scaled by the run cards' rates, so one fresh path a
month serves every card (``hourly``); after the last checkpoint nothing observes the
path, and the same fresh path runs it forward (§1: every hour of the month). A replacement's path starts afresh at its
placement ``t_j``: the slot's path plus ``ρ^{h − t_j}·Δ`` with ``Δ = sd·ζ − u(t_j)``,
equal in law to a new stationary path from ``t_j`` (``unit`` carries ``ρ^{h − t_j}``
through the checkpoints).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..kernels import TOKEN_BITS, blocks, fixed_totals, round_levels, tree_sum
from ..units import HOURS, SECONDS
from .accounting import Tokens
from .structure import Static, rho
from .wander import Wander


# The largest hourly capacity the fixed point holds (730 such hours fit int32).
_TOP = float(2**TOKEN_BITS - 1)


def count(rounds: int, replace: bool) -> int:
    """The month's checkpoints (static): the grid's first hour, each round's window
    start and start, each round's first serving hour of a replacement. After the last
    one nothing observes the path but the hourly capacity, which runs it forward."""
    return 1 + 2 * rounds + (rounds if replace else 0)


class Field(NamedTuple):
    """What every card's chain and the hourly bridge share in one month."""

    hours: jax.Array  # (M,) int32 the checkpoints, sorted (−G first)
    a: jax.Array  # (G + 731,) float32 ``1 + c(h)`` at hours −G .. 730 (1 at 730)
    mark: jax.Array  # (G + 731,) bool the hour is a checkpoint
    laws: blocks.BlockLaws  # (G + span + 1,) each: the blocks' laws hour by hour, hours −G .. span
    at: blocks.BlockLaws  # (M − 1,) each: the law of the block ending at checkpoint m + 1
    start_weight: jax.Array  # (M − 1,) float32 ``a`` of the block's first hour (0: an empty block)
    bridge: blocks.Bridge  # (731,) each: hours 0 .. 730 (0 from the last checkpoint on)


def span(starts: np.ndarray, boot) -> int:
    """The last hour a checkpoint can fall on (static): the last round's start, or
    the month's end when replacements add their first serving hours."""
    return HOURS if boot is not None else int(np.max(starts))


def field(one_c: jax.Array, st: Static, p: Wander, window_hours: jax.Array, starts: np.ndarray,
          boot: jax.Array | None) -> Field:
    """The checkpoints and their laws for windows of ``window_hours`` before rounds
    starting at ``starts`` ((rounds,) int, static), replacements serving ``boot``
    hours after placement (None: no replacements).

    The blocks' laws and the bridge's coefficients are computed up to ``span`` only
    (§1: the window's end): past the last checkpoint the path is not observed, and
    the hourly capacity runs it forward from there (coefficients 0).

    Arguments:
        one_c: (G + 730,) float32 the fleet's factor ``1 + c(h)`` (``structure.fleet_factor``).
    """
    G = st.grid
    t = jnp.asarray(starts, jnp.float32)
    parts = [jnp.full((1,), -G, jnp.int32), jnp.floor(t - window_hours).astype(jnp.int32),
             jnp.asarray(starts, jnp.int32)]
    if boot is not None:
        parts.append(jnp.minimum(jnp.floor(t + boot), HOURS).astype(jnp.int32))
    hours = jnp.sort(jnp.concatenate(parts))
    a = jnp.concatenate([one_c, jnp.ones((1,), one_c.dtype)])
    mark = jnp.zeros(G + HOURS + 1, bool).at[hours + G].set(True)
    r, sd = rho(p.hours), jnp.asarray(p.sd, jnp.float32)
    end = span(starts, boot)
    laws = blocks.block_laws(a[:G + end + 1], mark[:G + end + 1], r, sd)
    empty = hours[1:] == hours[:-1]
    at = blocks.BlockLaws(*(jnp.where(empty, fill, v[hours[1:] + G]) for v, fill in
                            zip(laws, (0.0, 1.0, 0.0, 0.0, 0.0))))
    start_weight = jnp.where(empty, 0.0, a[hours[:-1] + G])
    if end > 0:
        month = blocks.BlockLaws(*(v[G:] for v in laws))
        bridge = blocks.bridge_coefficients(a[G:G + end + 1], mark[G:G + end + 1], r, sd, month)
        bridge = blocks.Bridge(*(jnp.pad(v, (0, HOURS - end)) for v in bridge))
    else:  # no checkpoint after hour 0: the month's hours all run forward
        bridge = blocks.Bridge(*(jnp.zeros(HOURS + 1, jnp.float32),) * 2)
    return Field(hours, a, mark, laws, at, start_weight, bridge)


class Chain(NamedTuple):
    """Each card's wander at the checkpoints (its slot's path, SPEC §1.4.1)."""

    u: jax.Array  # (pool, M) float32 ``u_i`` in the checkpoint's hour
    total: jax.Array  # (pool, M) float32 ``Σ (1 + c(h))·u_i(h)`` over the whole hours before it
    j: jax.Array  # (pool, M − 1) float32 each block's middle sum, less its mean given its start
    e: jax.Array  # (pool, M − 1) float32 the next checkpoint's value, less its mean


def chain(z: jax.Array, f: Field, p: Wander) -> Chain:
    """Every card's chain from (pool, 2M − 1) standard normals: its stationary value
    at the grid's first hour, then two normals a block (``blocks.chain``)."""
    pool = z.shape[0]
    u0 = p.sd * z[:, 0]
    u, total, j, e = blocks.chain(f.at, f.start_weight, u0, z[:, 1:].reshape(pool, -1, 2))
    return Chain(u, total, j, e)


def prefix(u: jax.Array, total: jax.Array, f: Field, st: Static, y: jax.Array) -> jax.Array:
    """``∫_{−G}^{y} (1 + c(h))·u(h) dh`` at hours ``y`` (rows,) whose hour is a
    checkpoint, from a chain's (rows, M) values and sums there."""
    fl = jnp.floor(y)
    m = jnp.searchsorted(f.hours, fl.astype(jnp.int32), side="left")[:, None]
    pick = lambda v: jnp.take_along_axis(v, m, axis=1)[:, 0]  # noqa: E731
    return pick(total) + (y - fl) * f.a[fl.astype(jnp.int32) + st.grid] * pick(u)


def window(c: Chain, f: Field, st: Static, lo: jax.Array, hi: jax.Array) -> jax.Array:
    """(pool,) float32 h: each card's ``∫_lo^hi (1 + c)·u_i`` (its slot's path)."""
    return prefix(c.u, c.total, f, st, hi) - prefix(c.u, c.total, f, st, lo)


class Unit(NamedTuple):
    """``ρ^{h − t_k}`` from each round's start on, at the checkpoints (SPEC §6's
    fresh paths): its values and weighted sums, (rounds, M) each."""

    u: jax.Array
    total: jax.Array


def unit(f: Field, starts: np.ndarray) -> Unit:
    """The unit chains started at each round's start ``t_k`` (static (rounds,))."""
    started = f.hours[None, :] >= jnp.asarray(starts, jnp.int32)[:, None]
    u, total = blocks.unit_chain(f.at, f.start_weight, started)
    return Unit(u, total)


def restart(c: Chain, f: Field, p: Wander, zeta: jax.Array, starts: np.ndarray) -> jax.Array:
    """(rounds, pool) float32 ``Δ = sd·ζ − u(t_k)``: what a card placed in the slot at
    ``t_k`` adds, times ``ρ^{h − t_k}``, to the slot's path."""
    m = jnp.searchsorted(f.hours, jnp.asarray(starts, jnp.int32), side="left")
    return p.sd * zeta - c.u[:, m].T


def restarted_window(un: Unit, f: Field, st: Static, tau: jax.Array, corr: jax.Array, lo: jax.Array,
                     hi: jax.Array) -> jax.Array:
    """(pool,) float32 h: what a replacement's own path adds to its window
    ``∫_lo^hi (1 + c)·u``: ``Δ`` (``corr``) times its unit chain's (row ``tau``;
    −1: an original card, nothing)."""
    row = jnp.maximum(tau, 0)
    u, total = un.u[row], un.total[row]
    return jnp.where(tau >= 0, corr * (prefix(u, total, f, st, hi) - prefix(u, total, f, st, lo)), 0.0)


def hourly(c: Chain, f: Field, st: Static, p: Wander, xi: jax.Array, rate: jax.Array, run: jax.Array,
           start: jax.Array, period: int, restarts: tuple | None = None) -> jax.Array:
    """(730,) float32 tok/s ``Σ_run t_i·serving_i(h)·u_i(h)`` hour by hour, exactly in law
    given every card's chain: at a checkpoint from the chains, between two by one
    bridge of the month's fresh path ``xi`` ((731,) standard normals).

    Arguments:
        rate, run, start: (rounds, pool) each round's true rates (tok/s), run set and
            the hour each card serves from (time-weighted in that hour).
        restarts: None, or ``(unit, tau, corr)``: the rounds' unit chains and each
            round's (rounds, pool) ``Slots.tau``, ``Slots.corr``.
    """
    G, rounds = st.grid, rate.shape[0]
    H = f.hours
    M = H.shape[0]
    k = jnp.clip(H // period, 0, rounds - 1)
    live = ((H >= 0) & (H < HOURS)).astype(jnp.float32)[:, None]
    w = jnp.where(run[k], rate[k], 0.0) * live  # (M, pool)
    hf = H.astype(jnp.float32)[:, None]
    phi = jnp.clip(hf + 1.0 - start[k], 0.0, 1.0)
    sigma = (start[k] <= hf + 1.0).astype(jnp.float32)
    u = c.u.T
    if restarts is not None:
        un, tau, corr = restarts
        t = tau[k]
        u = u + jnp.where(t >= 0, corr[k] * un.u[jnp.maximum(t, 0), jnp.arange(M)[:, None]], 0.0)
    pad = jnp.zeros((c.j.shape[0], 1), c.j.dtype)
    j, e = jnp.concatenate([c.j, pad], axis=1).T, jnp.concatenate([c.e, pad], axis=1).T
    wb = w * sigma
    state = tree_sum(w * phi * u)
    block, jw, ew = tree_sum(wb * u), tree_sum(wb * j), tree_sum(wb * e)
    norm = jnp.sqrt(tree_sum(wb * wb))

    r = rho(p.hours)
    upto = f.laws.beta.shape[0] - G  # hours 0 .. span (``span``) hold the checkpoints from 0 on
    z, jz, ez = blocks.fresh_path(xi, f.a[G:], f.mark[G:], r, jnp.asarray(p.sd, jnp.float32), upto=upto)
    h = jnp.arange(HOURS, dtype=jnp.int32)
    mh = jnp.searchsorted(H, h, side="right") - 1
    nxt = jnp.clip(H[jnp.minimum(jnp.arange(M) + 1, M - 1)], 0, upto - 1)  # each block's next checkpoint
    # Each hour's block, by one gather of the blocks' five columns.
    per = jnp.stack([block, norm, jw - norm * jz[nxt], ew - norm * ez[nxt], state], axis=-1)[mh]
    beta = jnp.exp((h - H[mh]).astype(jnp.float32) * jnp.log(r))  # ρ^{h − s}, as ``blocks.block_laws``
    mid = (beta * per[:, 0] + per[:, 1] * z[:HOURS] + f.bridge.k_j[:HOURS] * per[:, 2]
           + f.bridge.k_e[:HOURS] * per[:, 3])
    return jnp.where(H[mh] == h, per[:, 4], mid)


def tokens(one_c: jax.Array, st: Static, groups, live: jax.Array, rate: jax.Array, demand: jax.Array, period: int,
           wander: jax.Array | None):
    """The month's token totals (``accounting.Tokens``) with SPEC §1.4.1's terms:
    ``C_h = (1 + c(h))·max(0, R_k − L_h + W_h)``, the round's run rate less its dips
    and booting cards (``mc.kernels.round_levels``; see ``round_sums`` for ``groups``,
    ``live``, ``rate``) plus the wander's part ``W_h`` (``hourly``, None: no wander).

    Every hour's capacity is rounded to the month's fixed point, two bits below
    ``round_levels``'s (the factor and the wander can at most double a rate each:
    ``structure.static`` keeps both below 2), and the hours are summed as integers:
    exact, in any order. An hour is capped at the fixed point's top (never reached
    while ``|W_h|`` stays below the run rate)."""
    level, d, k = round_levels(groups, live, rate, demand, period, spare=2)
    if wander is not None:
        level = level + jnp.round(wander * jnp.ldexp(jnp.float32(1.0), k))
    cap = jnp.minimum(jnp.round(one_c[st.grid:] * jnp.maximum(0.0, level)), _TOP)
    t = fixed_totals(d, cap, k) * (SECONDS / HOURS)
    return Tokens(t[0], t[1], t[2], t[3])
