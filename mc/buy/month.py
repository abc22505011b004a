"""One month of buying the fleet (SPEC §4) on the device: draws, then a pure outcome.

Capacity per chip comes from each card's quality lottery (``mc.lottery``); demand
is the forecast's hourly profile times one lognormal error for the month; hour by
hour, owned capacity serves first, then rented, then the API (or nothing, when the
mix has no API). Everything here is token arithmetic in float32; money is settled
on the host (``mc.buy.settle``) so bills stay exact.

``p`` is a ``mc.buy.Procurement``; this module reads only its derived
device fields (``slots``, ``api``, ``lottery``, ``sigma``, ``mean_rate``,
``profile``, ``card_rate``, ``owned_cards``, ``rented_cards``).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ..fleet import lottery
from ..kernels import normal, uniforms
from ..units import SECONDS

# Per-month device outputs, float32 tokens (and the demand error, a factor).
TOKENS = ("demand_tokens", "owned_capacity_tokens", "owned_tokens", "owned_idle_tokens",
          "rented_capacity_tokens", "rented_tokens", "api_tokens", "unserved_tokens")
OUTPUTS = TOKENS + ("demand_error",)


class Draws(NamedTuple):
    """Every random number one month uses."""

    demand_z: jax.Array  # () float32 standard normal: the month's log demand error
    quality: tuple[lottery.LotteryDraws, ...]  # per chip, (slots_c,) each: owned cards, then rented


def draw(key: jax.Array, p) -> Draws:
    """A month's draws, one block of open uniforms per chip (generator calls dominate
    compile time on CPU). Chip ``c``'s cards draw from their own key, so a card's
    quality depends neither on the other chips' counts nor on padding; a chip with
    no slots draws nothing."""
    keys = jax.random.split(key, 1 + len(p.slots))
    empty = jnp.zeros((0,), jnp.float32)
    quality = tuple(lottery.draw(uniforms(keys[1 + c], (n, lottery.UNIFORMS))) if n
                    else lottery.LotteryDraws(empty, empty) for c, n in enumerate(p.slots))
    return Draws(normal(uniforms(keys[0], ())), quality)


def quality_sums(d: Draws, p) -> tuple[jax.Array, jax.Array]:
    """(chips,) float32 sums of quality over each chip's owned and rented cards.

    A chip's slots hold its owned cards first, then its rented ones; slots past
    ``owned + rented`` are padding (so one compiled shape can serve many mixes).
    """
    owned, rented = [], []
    for c, draws in enumerate(d.quality):
        q = lottery.quality(draws, p.lottery)
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
    own_q, rent_q = quality_sums(d, p)
    cap_owned = jnp.sum(p.card_rate * own_q)  # tok/s
    cap_rented = jnp.sum(p.card_rate * rent_q)
    error = jnp.exp(p.sigma * d.demand_z - 0.5 * p.sigma * p.sigma)
    demand = p.mean_rate * error * p.profile  # (730,) tok/s
    by_owned = jnp.minimum(demand, cap_owned)
    rest = demand - by_owned  # exactly 0 where owned covers the hour
    by_rented = jnp.minimum(rest, cap_rented)
    left = rest - by_rented
    zero = jnp.zeros((), jnp.float32)

    def tokens(rate):  # (730,) tok/s -> () tokens over the month's hours
        return jnp.sum(rate) * 3600.0

    return {
        "demand_tokens": tokens(demand),
        "owned_capacity_tokens": cap_owned * SECONDS,
        "owned_tokens": tokens(by_owned),
        "owned_idle_tokens": tokens(cap_owned - by_owned),
        "rented_capacity_tokens": cap_rented * SECONDS,
        "rented_tokens": tokens(by_rented),
        "api_tokens": tokens(left) if p.api else zero,
        "unserved_tokens": zero if p.api else tokens(left),
        "demand_error": error,
    }


def month(key: jax.Array, p) -> dict[str, jax.Array]:
    """One month: ``outcome(draw(key, p), p)``; the engine batches it."""
    return outcome(draw(key, p), p)
