"""The quality lottery (SPEC §1.2): each card's true rate at boot."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from .._fields import check_fields, declare
from .._pytree import pytree_dataclass
from ..kernels import NORMAL_MAX, normal


@pytree_dataclass
class Lottery:
    """Quality ``q ~ Normal(mean, sd²)`` clipped to ``[lo, hi]``; a lemon (with
    probability ``lemon_rate``) has its clipped ``q`` multiplied by ``lemon_factor``."""

    mean: float = declare(0.96, lo=0.0, lo_open=True, unit="× rated", doc="centre of a card's quality q")
    sd: float = declare(0.05, lo=0.0, unit="× rated", doc="spread (1 sd) of q")
    lo: float = declare(0.5, lo=0.0, unit="× rated", doc="lowest q (clip)")
    hi: float = declare(1.5, lo="lo", lo_open=True, unit="× rated", doc="highest q (clip)")
    lemon_rate: float = declare(0.0, lo=0.0, hi=1.0, unit="share of cards", doc="chance a card is a lemon")
    lemon_factor: float = declare(0.67, lo=0.0, lo_open=True, hi=1.0, unit="× q", doc="a lemon's quality multiplier")

    def __post_init__(self):
        check_fields(self, "lottery")


def max_quality(p: Lottery) -> float:
    """The largest ``q`` a card can draw (float64): ``mean + sd·z`` is clipped to
    ``[lo, hi]`` and ``|z| <= NORMAL_MAX``; a lemon's factor is at most 1."""
    return max(p.lo, min(p.hi, p.mean + p.sd * NORMAL_MAX))


class LotteryDraws(NamedTuple):
    z: jax.Array  # (pool,) float32, standard normal
    u_lemon: jax.Array  # (pool,) float32, uniform (0, 1)


UNIFORMS = 2  # per card


def draw(u: jax.Array) -> LotteryDraws:
    """From (pool, 2) open uniforms."""
    return LotteryDraws(normal(u[:, 0]), u[:, 1])


def lemon(d: LotteryDraws, p: Lottery) -> jax.Array:
    """(pool,) bool: the cards whose ticket is a lemon."""
    return d.u_lemon < p.lemon_rate


def quality(d: LotteryDraws, p: Lottery) -> jax.Array:
    """(pool,) float32 quality ``q``; true rate is ``rated · q``. Any shape of
    draws gives that shape of qualities (a month's replacement tickets: (rounds, pool))."""
    q = jnp.clip(p.mean + p.sd * d.z, p.lo, p.hi)
    return jnp.where(lemon(d, p), q * p.lemon_factor, q)
