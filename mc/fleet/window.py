"""The measurement window (SPEC §1.4): what the autoscaler sees of each card."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .. import _validate as v
from ..kernels import NORMAL_MAX, normal, overlap, tree_sum
from .._fields import check_fields, declare
from .._pytree import pytree_dataclass
from .dips import CardDips

NAMED = {"hour": 1.0, "day": 24.0, "week": 168.0}


def _named(field: str, value):
    """``hour``/``day``/``week`` as hours; anything else as given, for the declaration's
    range to check."""
    if isinstance(value, str):
        v.choice(field, value, NAMED)
        return NAMED[value]
    return value


@pytree_dataclass
class Window:
    """A window of ``hours`` before the month; an hour window errs by ``sigma_hour`` per
    card, and by ``common_hour`` shared by every card scored on it (SPEC §1.4.1)."""

    hours: float = declare(168.0, lo=0.0, lo_open=True, hi=1e6, unit="h", parse=_named,
                           doc="window W the cards are scored on")
    sigma_hour: float = declare(0.25, lo=0.0, unit="share", doc="score error (1 sd) of an hour's window")
    common_hour: float = declare(0.0, lo=0.0, hi=1.0, unit="share",
                                 doc="score error (1 sd) of an hour's window shared by every card")

    def __post_init__(self):
        check_fields(self, "window")


def max_gain(p: Window) -> float:
    """The most a score can exceed the window's mean rate, as a factor (float64):
    ``1 + σ(W)·NORMAL_MAX``."""
    return 1.0 + p.sigma_hour * (1.0 / p.hours) ** 0.5 * NORMAL_MAX


def draw(u: jax.Array) -> jax.Array:
    """(pool,) float32 standard normal measurement errors ``ε``, from (pool,) open uniforms."""
    return normal(u)


def sigma_of(sigma_hour: jax.Array, length: jax.Array) -> jax.Array:
    """Relative error of a window of ``length`` hours: ``sigma_hour · sqrt(1 h / length)``."""
    return sigma_hour * jnp.sqrt(1.0 / length)


def sigma(p: Window) -> jax.Array:
    """Relative error of the window: ``sigma_hour · sqrt(1 h / W)``."""
    return sigma_of(p.sigma_hour, p.hours)


def mean_rate_over(true_rate: jax.Array, dips: CardDips, lo: jax.Array, hi: jax.Array,
                   length: jax.Array) -> jax.Array:
    """(pool,) float32 tok/s: each card's mean rate ``m`` over its window ``[lo, hi)``
    of ``length`` hours (SPEC §1.4; §6 scores every round on a window of its own).

    Arguments:
        true_rate: (pool,) float32 tok/s. dips: (pool, dips) intervals.
        lo, hi: hours, broadcasting against (pool, dips). length: hours, (pool,) or ().
    """
    lost = tree_sum(dips.depth * overlap(dips.begin, dips.end, lo, hi))
    return true_rate * jnp.maximum(0.0, 1.0 - lost / length)


def mean_rate(true_rate: jax.Array, dips: CardDips, p: Window) -> jax.Array:
    """(pool,) float32 tok/s: the window's mean rate ``m``."""
    return mean_rate_over(true_rate, dips, -p.hours, 0.0, p.hours)


def noisy(m: jax.Array, eps: jax.Array, sig: jax.Array) -> jax.Array:
    """(pool,) float32 tok/s: ``max(0, m·(1 + σ·ε))``."""
    return jnp.maximum(0.0, m * (1.0 + sig * eps))


def score(m: jax.Array, eps: jax.Array, p: Window) -> jax.Array:
    """(pool,) float32 tok/s: the score ``s = max(0, m·(1 + σ(W)·ε))``."""
    return noisy(m, eps, sigma(p))
