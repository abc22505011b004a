"""SPEC §10's draws: each slot's candidate events, each zone's spells.

Everything comes from ``fold_in(month key, STREAM)``, so a month with every term
off draws exactly what it drew before. Events are fixed-length streams of
exponential gaps (their lengths: ``plan.Static``):

- failure candidates at ``failures.rate`` per 730 h on every slot; a candidate
  fails the card that holds the slot then, and passes an empty slot by (a constant
  rate while a card holds the slot is exactly this thinned stream);
- lone preemption candidates at ``spot.rate`` on spot slots, acting on a spot card;
- each zone's alternating up and down spells, started in the stationary law (up
  with probability ``up/(up + down)``; an exponential spell's remainder is again
  exponential), and a uniform per spot slot and down spell for the wave;
- the slots' dips (SPEC §1.3) that begin in the month, so that each is given to
  the card holding its slot when it begins.

Per slot the candidates are merged in time order (``Events``); the k-th of them
carries the k-th replacement delay and lottery ticket of the slot.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ...kernels import exponential, uniforms
from ...units import HOURS
from .. import lottery
from .plan import Static

STREAM = 10  # fold_in(month key, STREAM): §6's rounds use 6, §1.4.1's structure 7
FAIL, LONE, WAVE, DIP = 0, 1, 2, 3  # candidate kinds


class Raw(NamedTuple):
    """The month's §10 uniforms, before they meet the scenario's rates."""

    fail: jax.Array  # (pool, n_fail) float32 Exponential(1) gaps
    lone: jax.Array  # (pool, n_lone)
    zone_u: jax.Array  # (zones,) float32 uniform: the zone's state at hour 0
    spells: jax.Array  # (zones, 2·n_cycles) float32 Exponential(1) spell lengths
    wave: jax.Array  # (pool, n_cycles) float32 uniforms: preempted by the zone's j-th down spell
    delay: jax.Array  # (pool, n) float32 Exponential(1): the k-th candidate's replacement wait
    tickets: lottery.LotteryDraws  # (pool, n) each: the k-th candidate's fresh card


def size(st: Static, dips: int) -> int:
    """Candidates per slot: failures, lone preemptions, down spells, dips."""
    return st.n_fail + st.n_lone + st.n_cycles + dips


def draw(key: jax.Array, st: Static, pool_size: int, dips: int) -> Raw:
    k = jax.random.fold_in(key, STREAM)
    n = size(st, dips)
    part = [jax.random.fold_in(k, i) for i in range(6)]
    per = uniforms(part[5], (pool_size, n, 1 + lottery.UNIFORMS))
    t = lottery.draw(per[..., 1:].reshape(pool_size * n, lottery.UNIFORMS))
    return Raw(fail=exponential(uniforms(part[0], (pool_size, st.n_fail))),
               lone=exponential(uniforms(part[1], (pool_size, st.n_lone))),
               zone_u=uniforms(part[2], (st.zones,)),
               spells=exponential(uniforms(part[3], (st.zones, 2 * st.n_cycles))),
               wave=uniforms(part[4], (pool_size, st.n_cycles)),
               delay=exponential(per[..., 0]),
               tickets=lottery.LotteryDraws(t.z.reshape(pool_size, n), t.u_lemon.reshape(pool_size, n)))


class Zones(NamedTuple):
    """Each spot slot's zone path (a row per slot, its zone's)."""

    ends: jax.Array  # (pool, 2·n_cycles) float32 h each spell's end
    down0: jax.Array  # (pool,) bool: the zone is down at hour 0


def zone_paths(zone_u: jax.Array, spells: jax.Array, spot) -> Zones:
    """Each zone's spells, a row per zone: ``zone_u`` (zones,) uniforms give the state
    at hour 0 (down with probability ``down/(up + down)``), ``spells`` (zones, 2·cycles)
    Exponential(1) the spells' lengths in mean units; spell ``m`` is down when
    ``(m even) == down0``."""
    share_down = spot.down_hours / (spot.up_hours + spot.down_hours)
    down0 = zone_u < share_down
    m = jnp.arange(spells.shape[1])
    down = (m[None, :] % 2 == 0) == down0[:, None]
    ends = jnp.cumsum(spells * jnp.where(down, spot.down_hours, spot.up_hours), axis=1)
    return Zones(ends, down0)


def zones(raw: Raw, st: Static, spot) -> Zones:
    """The zones' spells (``zone_paths``), as rows of their spot slots."""
    z = zone_paths(raw.zone_u, raw.spells, spot)
    rows = np.asarray(st.zone_of)
    return Zones(z.ends[rows], z.down0[rows])


def _down_spell(z: Zones, n_cycles: int) -> jax.Array:
    """(rows, n_cycles) int32: the index among a row's spells of its ``j``-th down spell."""
    j = jnp.arange(n_cycles)
    return 2 * j[None, :] + jnp.where(z.down0, 0, 1)[:, None]


def down_begins(z: Zones, n_cycles: int) -> jax.Array:
    """(rows, n_cycles) float32 h: when each row's ``j``-th down spell begins (0 for
    a zone down at hour 0)."""
    m = _down_spell(z, n_cycles)
    return jnp.where(m == 0, 0.0, jnp.take_along_axis(z.ends, jnp.maximum(m - 1, 0), axis=1))


def down_ends(z: Zones, n_cycles: int) -> jax.Array:
    """(rows, n_cycles) float32 h: when each row's ``j``-th down spell ends."""
    return jnp.take_along_axis(z.ends, _down_spell(z, n_cycles), axis=1)


def candidate_times(gaps: jax.Array, rate, on) -> jax.Array:
    """A Poisson stream at ``rate`` per 730 h from its Exponential(1) ``gaps`` (last
    axis): its times within ``[0, 730)``, ``inf`` past the month, where ``on`` is
    false or the rate is 0."""
    t = jnp.cumsum(gaps, axis=1) * (HOURS / jnp.where(rate > 0, rate, 1.0))
    return jnp.where(on & (rate > 0) & (t < HOURS), t, jnp.float32(jnp.inf))


def up_after(z: Zones, r: jax.Array) -> jax.Array:
    """(pool,) float32 h: the first time from ``r`` (pool,) at which each slot's zone
    is up (``r`` itself when up; past the streams' end, up)."""
    n = z.ends.shape[1]
    m = jnp.sum(z.ends <= r[:, None], axis=1, dtype=jnp.int32)  # the spell holding r
    down = (m % 2 == 0) == z.down0
    end = jnp.take_along_axis(z.ends, jnp.minimum(m, n - 1)[:, None], axis=1)[:, 0]
    return jnp.where((m < n) & down, end, r)


class Events(NamedTuple):
    """Each slot's candidates in time order (``inf``: none)."""

    time: jax.Array  # (pool, n) float32 h
    kind: jax.Array  # (pool, n) int32: FAIL, LONE, WAVE or DIP
    index: jax.Array  # (pool, n) int32: a wave's down spell j, a dip's index
    u_wave: jax.Array  # (pool, n) float32: a wave's uniform
    delay: jax.Array  # (pool, n) float32 Exponential(1)
    tickets: lottery.LotteryDraws  # (pool, n)


def events(raw: Raw, st: Static, z: Zones | None, failures, spot, dip_begin: jax.Array) -> Events:
    """The slots' merged candidates in ``[0, 730)``; ``dip_begin`` (pool, dips) h."""
    p = dip_begin.shape[0]
    inf = jnp.float32(jnp.inf)
    spot_slot = jnp.asarray(np.asarray(st.spot))[:, None]
    parts = [(candidate_times(raw.fail, failures.rate, True) if st.n_fail else jnp.zeros((p, 0)), FAIL)]
    if st.n_cycles:
        parts.append((candidate_times(raw.lone, spot.rate, spot_slot), LONE))
        begin = down_begins(z, st.n_cycles)
        parts.append((jnp.where(spot_slot & (begin < HOURS), begin, inf), WAVE))
    parts.append((jnp.where(dip_begin >= 0, dip_begin, inf), DIP))
    time = jnp.concatenate([t.astype(jnp.float32) for t, _ in parts], axis=1)
    kind = jnp.concatenate([jnp.full(t.shape, c, jnp.int32) for t, c in parts], axis=1)
    index = jnp.concatenate([jnp.broadcast_to(jnp.arange(t.shape[1], dtype=jnp.int32), t.shape) for t, _ in parts],
                            axis=1)
    order = jnp.argsort(time, axis=1, stable=True)
    take = lambda x: jnp.take_along_axis(x, order, axis=1)  # noqa: E731
    time, kind, index = take(time), take(kind), take(index)
    u_wave = jnp.ones_like(time)
    if st.n_cycles:
        u_wave = jnp.where(kind == WAVE, jnp.take_along_axis(raw.wave, jnp.minimum(index, st.n_cycles - 1), axis=1),
                           1.0)
    return Events(time, kind, index, u_wave, raw.delay, raw.tickets)


__all__ = ["DIP", "Events", "FAIL", "LONE", "Raw", "STREAM", "WAVE", "Zones", "candidate_times", "down_begins", "down_ends", "draw",
           "events", "size", "up_after", "zone_paths", "zones"]
