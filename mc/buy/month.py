"""One month of buying the fleet (SPEC §4) on the device: draws, then a pure outcome.

Capacity per chip comes from each card's quality lottery (``mc.lottery``); demand
is the forecast's hourly profile times one lognormal error for the month; hour by
hour, owned capacity serves first, then rented, then spot, then the API (or nothing,
when the mix has no API). Owned cards that fail and spot cards taken back lose
capacity by the hour (``mc.buy.losses``); with every such term off (``p.terms``
None) the month is today's, bit for bit. Everything here is token arithmetic in
float32; money is settled on the host (``mc.buy.settle``) so bills stay exact.

``p`` is a ``mc.buy.Procurement``; this module reads only its derived
device fields (``slots``, ``api``, ``lottery``, ``sigma``, ``mean_rate``,
``profile``, ``card_rate``, ``owned_cards``, ``rented_cards``; with a term on,
``terms``, ``failures``, ``spot``, ``spot_cards``, ``spot_price``).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ..fleet import lottery
from ..kernels import normal, uniforms
from ..units import SECONDS
from . import losses

# Per-month device outputs, float32 tokens (and the demand error, a factor).
TOKENS = ("demand_tokens", "owned_capacity_tokens", "owned_tokens", "owned_idle_tokens",
          "rented_capacity_tokens", "rented_tokens", "api_tokens", "unserved_tokens")
# What capacity that goes away adds (all 0 with every term off): spot token flows,
# capacity lost, card-hours, counts and the $ that preempted hours did not bill.
LOST = ("spot_capacity_tokens", "spot_tokens", "owned_down_tokens", "spot_lost_tokens",
        "owned_down_card_hours", "spot_lost_card_hours", "n_failed", "n_preempted", "spot_unbilled")
OUTPUTS = TOKENS + ("demand_error",) + LOST


class Draws(NamedTuple):
    """Every random number one month uses."""

    demand_z: jax.Array  # () float32 standard normal: the month's log demand error
    quality: tuple[lottery.LotteryDraws, ...]  # per chip, (slots_c,) each: owned cards, then rented
    lost: losses.LossDraws | None = None  # with a term on (``p.terms``)


def draw(key: jax.Array, p) -> Draws:
    """A month's draws, one block of open uniforms per chip (generator calls dominate
    compile time on CPU). Chip ``c``'s cards draw from their own key, so a card's
    quality depends neither on the other chips' counts nor on padding; a chip with
    no slots draws nothing."""
    keys = jax.random.split(key, 1 + len(p.slots))
    empty = jnp.zeros((0,), jnp.float32)
    quality = tuple(lottery.draw(uniforms(keys[1 + c], (n, lottery.UNIFORMS))) if n
                    else lottery.LotteryDraws(empty, empty) for c, n in enumerate(p.slots))
    return Draws(normal(uniforms(keys[0], ())), quality, None if p.terms is None else losses.draw(key, p))


def qualities(d: Draws, p) -> list[jax.Array]:
    """Each chip's (slots_c,) float32 card qualities."""
    return [lottery.quality(draws, p.lottery) for draws in d.quality]


def quality_sums(d: Draws, p, qs: list[jax.Array] | None = None) -> tuple[jax.Array, jax.Array]:
    """(chips,) float32 sums of quality over each chip's owned and rented cards.

    A chip's slots hold its owned cards first, then its rented ones; slots past
    ``owned + rented`` are padding (so one compiled shape can serve many mixes).
    """
    owned, rented = [], []
    for c, q in enumerate(qualities(d, p) if qs is None else qs):
        i = jnp.arange(q.shape[0], dtype=jnp.float32)
        o, r = p.owned_cards[c], p.rented_cards[c]
        owned.append(jnp.sum(jnp.where(i < o, q, 0.0)))
        rented.append(jnp.sum(jnp.where((i >= o) & (i < o + r), q, 0.0)))
    return jnp.stack(owned), jnp.stack(rented)


def outcome(d: Draws, p) -> dict[str, jax.Array]:
    """The month's token flows, each a () float32 (``OUTPUTS``).

    Capacity is constant over the month (no dips in SPEC §4): ``C = Σ_c rate_c ·
    Σ q`` tok/s for owned and for rented cards. Hourly demand ``D_h = mean_rate ·
    e · profile_h`` tok/s with ``e = exp(σz − σ²/2)`` (mean one); owned serves
    ``min(D_h, C_owned)``, rented ``min(rest, C_rented)``, the API the remainder.
    """
    qs = qualities(d, p)
    own_q, rent_q = quality_sums(d, p, qs)
    cap_owned = jnp.sum(p.card_rate * own_q)  # tok/s
    cap_rented = jnp.sum(p.card_rate * rent_q)
    error = jnp.exp(p.sigma * d.demand_z - 0.5 * p.sigma * p.sigma)
    demand = p.mean_rate * error * p.profile  # (730,) tok/s
    zero = jnp.zeros((), jnp.float32)
    lost = None if p.terms is None else losses.lost(d.lost, p, qs)
    failing = lost is not None and p.terms.n_fail > 0
    # With failures on, owned capacity is hourly: what is up (the idle check's base).
    owned_now = jnp.maximum(0.0, cap_owned - lost.owned_hourly) if failing else cap_owned
    by_owned = jnp.minimum(demand, owned_now)
    rest = demand - by_owned  # exactly 0 where owned covers the hour
    by_rented = jnp.minimum(rest, cap_rented)
    left = rest - by_rented

    def tokens(rate):  # (730,) tok/s -> () tokens over the month's hours
        return jnp.sum(rate) * 3600.0

    out = {
        "demand_tokens": tokens(demand),
        "owned_capacity_tokens": tokens(owned_now) if failing else cap_owned * SECONDS,
        "owned_tokens": tokens(by_owned),
        "owned_idle_tokens": tokens(owned_now - by_owned),
    }
    extra = dict.fromkeys(LOST, zero)
    if lost is not None:
        spot_now = jnp.maximum(0.0, lost.spot_capacity - lost.spot_hourly)
        by_spot = jnp.minimum(left, spot_now)
        left = left - by_spot
        extra.update(spot_capacity_tokens=tokens(spot_now), spot_tokens=tokens(by_spot),
                     owned_down_tokens=tokens(cap_owned - owned_now),
                     spot_lost_tokens=tokens(lost.spot_capacity - spot_now),
                     owned_down_card_hours=lost.owned_card_hours, spot_lost_card_hours=lost.spot_card_hours,
                     n_failed=lost.n_failed, n_preempted=lost.n_preempted, spot_unbilled=lost.spot_unbilled)
    out.update({
        "rented_capacity_tokens": cap_rented * SECONDS,
        "rented_tokens": tokens(by_rented),
        "api_tokens": tokens(left) if p.api else zero,
        "unserved_tokens": zero if p.api else tokens(left),
        "demand_error": error,
    })
    out.update(extra)
    return out


def month(key: jax.Array, p) -> dict[str, jax.Array]:
    """One month: ``outcome(draw(key, p), p)``; the engine batches it."""
    return outcome(draw(key, p), p)
