"""Capacity a mix loses within the month (SPEC §4 with §10's terms), on the device.

- **Owned failures.** Owned card ``i`` of a chip fails at ``failures.rate`` per 730 h
  of serving and is down ``repair_hours`` after each failure: its ``k``-th failure is
  at ``G_k · 730/rate + (k − 1) · repair_hours``, ``G_k`` the sum of ``k``
  Exponential(1) gaps (time up is what the rate runs on), if that is before 730 h.
  It comes back the same card (its quality unchanged).
- **Spot cards.** Each spot card sits in a zone (round-robin over the spot cards,
  chips in catalogue order) whose up and down spells are §10's (``mc.fleet.outages
  .events.zone_paths``: a stationary start, exponential spells). In each down spell
  the card is taken back at its start with probability ``wave_share`` (the zone's
  wave), else at its first lone preemption inside it (``spot.rate`` per 730 h), and
  is away until the zone comes up, when a fresh spot card takes its place at once
  (serving at the rate of the card it replaces: one quality draw per spot card a
  month). A lone preemption while the zone is up is replaced at once and costs no
  hour. A preempted card bills nothing while it is away.

Both give loss intervals, spread over the month's hours by ``mc.kernels.per_hour``.
Every draw comes from ``fold_in(month key, STREAM)``, one key per chip and one for
the zones, so a month with every term off draws what it drew before, and a chip's
draws depend neither on the other chips' counts nor on padding.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ..fleet import lottery
from ..fleet.outages.events import STREAM, candidate_times, down_begins, down_ends, zone_paths
from ..kernels import exponential, per_hour, uniforms
from ..units import HOURS


class LossDraws(NamedTuple):
    """The month's draws for the terms that are on (empty arrays for the rest)."""

    fail: tuple[jax.Array, ...]  # per chip (slots_c, n_fail) Exponential(1) gaps: owned cards first
    quality: tuple[lottery.LotteryDraws, ...]  # per chip (spot_slots_c,) each: spot cards
    lone: tuple[jax.Array, ...]  # per chip (spot_slots_c, n_lone) Exponential(1) gaps
    wave: tuple[jax.Array, ...]  # per chip (spot_slots_c, n_cycles) uniforms: taken by the j-th down spell
    zone_u: jax.Array  # (zones,) uniforms: each zone's state at hour 0
    spells: jax.Array  # (zones, 2·n_cycles) Exponential(1) spell lengths


def draw(key: jax.Array, p) -> LossDraws:
    t = p.terms
    k = jax.random.fold_in(key, STREAM)
    fail, quality, lone, wave = [], [], [], []
    for c, (n, s) in enumerate(zip(p.slots, t.spot_slots)):
        kc = [jax.random.fold_in(jax.random.fold_in(k, c), i) for i in range(4)]
        fail.append(exponential(uniforms(kc[0], (n, t.n_fail))) if n and t.n_fail else jnp.zeros((n, 0)))
        spot = s and t.n_cycles
        quality.append(lottery.draw(uniforms(kc[1], (s, lottery.UNIFORMS))) if spot
                       else lottery.LotteryDraws(jnp.zeros((s,)), jnp.zeros((s,))))
        lone.append(exponential(uniforms(kc[2], (s, t.n_lone))) if spot and t.n_lone else jnp.zeros((s, 0)))
        wave.append(uniforms(kc[3], (s, t.n_cycles)) if spot else jnp.zeros((s, t.n_cycles)))
    kz = jax.random.fold_in(k, len(p.slots))
    zone_u = uniforms(jax.random.fold_in(kz, 0), (t.zones,))
    spells = exponential(uniforms(jax.random.fold_in(kz, 1), (t.zones, 2 * t.n_cycles)))
    return LossDraws(tuple(fail), tuple(quality), tuple(lone), tuple(wave), zone_u, spells)


class Lost(NamedTuple):
    """What the month loses, each () float32 unless stated."""

    owned_hourly: jax.Array  # (730,) tok/s of owned capacity down
    owned_card_hours: jax.Array  # owned card-hours down in [0, 730)
    n_failed: jax.Array
    spot_capacity: jax.Array  # tok/s of the spot cards when all are there
    spot_hourly: jax.Array  # (730,) tok/s of spot capacity away
    spot_card_hours: jax.Array  # spot card-hours away in [0, 730)
    spot_unbilled: jax.Array  # $ the away hours did not bill
    n_preempted: jax.Array


def _owned(d: LossDraws, p, owned_q: list[jax.Array]):
    """Owned cards' down intervals: (begin, end, weight) rows, card-hours, failures."""
    rate, repair = p.failures.rate, p.failures.repair_hours
    begins, ends, weights, hours, count = [], [], [], jnp.zeros(()), jnp.zeros(())
    for c, (gaps, q) in enumerate(zip(d.fail, owned_q)):
        if not gaps.shape[0] or not gaps.shape[1]:
            continue
        k = jnp.arange(gaps.shape[1], dtype=jnp.float32)
        t = candidate_times(gaps, rate, True) + k[None, :] * repair  # inf stays inf
        card = jnp.arange(gaps.shape[0], dtype=jnp.float32)[:, None] < p.owned_cards[c]
        on = card & (t < HOURS)
        b = jnp.where(on, t, HOURS)
        e = jnp.where(on, t + repair, HOURS)
        begins.append(b)
        ends.append(e)
        weights.append(jnp.where(on, p.card_rate[c] * q[:, None], 0.0))
        hours = hours + jnp.sum(jnp.minimum(e, HOURS) - b)
        count = count + jnp.sum(on, dtype=jnp.float32)
    if not begins:
        return jnp.zeros(HOURS, jnp.float32), hours, count
    cat = [jnp.concatenate([x.ravel() for x in xs]) for xs in (begins, ends, weights)]
    return per_hour(*cat), hours, count


def _spot(d: LossDraws, p):
    """Spot cards' time away and preemptions. A card's spell away begins at its zone's
    down spell (a wave) or at a lone preemption within it, and ends with the spell; the
    waves' hours are spread over the month per zone and spell (their cards' weights
    summed), the lone ones per card and candidate, so the hourly pass holds
    ``zones × cycles + cards × lone candidates`` intervals, not ``cards × cycles``."""
    t = p.terms
    lone_on = t.n_lone > 0
    zone = zone_paths(d.zone_u, d.spells, p.spot)
    zone_begin, zone_end = down_begins(zone, t.n_cycles), down_ends(zone, t.n_cycles)  # (zones, n_cycles)
    offset = jnp.concatenate([jnp.zeros(1, jnp.float32), jnp.cumsum(p.spot_cards)[:-1]])
    waves = jnp.zeros((t.zones, t.n_cycles), jnp.float32)  # tok/s a zone's j-th down spell takes
    cap = jnp.zeros(())
    begins, ends, weights, away, unbilled, count = [], [], [], jnp.zeros(()), jnp.zeros(()), jnp.zeros(())
    for c, s in enumerate(t.spot_slots):
        if not s:
            continue
        zi = (offset[c] + jnp.arange(s, dtype=jnp.float32)).astype(jnp.int32) % t.zones  # round-robin
        q = lottery.quality(d.quality[c], p.lottery)
        w = p.card_rate[c] * q  # (s,) tok/s
        card = jnp.arange(s, dtype=jnp.float32) < p.spot_cards[c]
        begin, end = zone_begin[zi], zone_end[zi]  # (s, n_cycles)
        live = card[:, None] & (begin < HOURS)
        wave = d.wave[c] < p.spot.wave_share
        if lone_on:
            lone = candidate_times(d.lone[c], p.spot.rate, card[:, None])  # (s, n_lone)
            inside = (lone[:, :, None] >= begin[:, None, :]) & (lone[:, :, None] < end[:, None, :])
            first = jnp.min(jnp.where(inside, lone[:, :, None], jnp.inf), axis=1)
        else:
            first = jnp.full(begin.shape, jnp.inf, jnp.float32)
        gone = jnp.where(wave, begin, first)
        hit = live & (gone < HOURS)
        b = jnp.where(hit, gone, HOURS)
        e = jnp.where(hit, jnp.minimum(end, HOURS), HOURS)
        onehot = (zi[:, None] == jnp.arange(t.zones)[None, :]).astype(jnp.float32)  # (s, zones)
        waves = waves + jnp.einsum("sz,sj->zj", onehot, jnp.where(hit & wave, w[:, None], 0.0),
                                   precision=jax.lax.Precision.HIGHEST)
        hours_c = jnp.sum(e - b)
        away = away + hours_c
        unbilled = unbilled + hours_c * (p.spot_price[c] / HOURS)
        cap = cap + jnp.sum(jnp.where(card, w, 0.0))
        count = count + jnp.sum(hit, dtype=jnp.float32)
        if lone_on:
            # The lone candidate that begins a spell away: the first in its spell, the wave spared the card.
            starts = inside & (lone[:, :, None] == first[:, None, :]) & (hit & ~wave)[:, None, :]
            begins.append(jnp.where(jnp.any(starts, axis=2), lone, HOURS))
            ends.append(jnp.minimum(jnp.max(jnp.where(starts, end[:, None, :], 0.0), axis=2), HOURS))
            weights.append(jnp.where(jnp.any(starts, axis=2), w[:, None], 0.0))
            # A lone preemption takes a card that is there: not inside a spell away.
            within = (lone[:, :, None] > b[:, None, :]) & (lone[:, :, None] < e[:, None, :])
            count = count + jnp.sum((lone < HOURS) & ~jnp.any(within, axis=2), dtype=jnp.float32) \
                - jnp.sum(hit & ~wave, dtype=jnp.float32)  # a spell's first lone one is counted once
    begins.append(zone_begin)
    ends.append(zone_end)
    weights.append(waves)
    cat = [jnp.concatenate([x.ravel() for x in xs]) for xs in (begins, ends, weights)]
    return cap, per_hour(*cat), away, unbilled, count


def lost(d: LossDraws, p, owned_q: list[jax.Array]) -> Lost:
    """The month's losses; ``owned_q`` each chip's (slots_c,) qualities."""
    o_hourly, o_hours, n_failed = _owned(d, p, owned_q)
    cap, s_hourly, s_hours, unbilled, n_pre = _spot(d, p)
    return Lost(o_hourly, o_hours, n_failed, cap, s_hourly, s_hours, unbilled, n_pre)


__all__ = ["LossDraws", "Lost", "draw", "lost"]
