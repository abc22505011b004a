"""The quality lottery (SPEC §1.2): each card's true rate at boot."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from .. import _validate as v
from .._pytree import pytree_dataclass, set_field
from ..kernels import NORMAL_MAX, normal


@pytree_dataclass
class Lottery:
    """Quality ``q ~ Normal(mean, sd²)`` clipped to ``[lo, hi]``; a lemon (with
    probability ``lemon_rate``) has its clipped ``q`` multiplied by ``lemon_factor``."""

    mean: float = 0.96
    sd: float = 0.05
    lo: float = 0.5
    hi: float = 1.5
    lemon_rate: float = 0.0
    lemon_factor: float = 0.67

    def __post_init__(self):
        set_field(self, "mean", v.positive("lottery.mean", self.mean))
        set_field(self, "sd", v.nonneg("lottery.sd", self.sd))
        set_field(self, "lo", v.number("lottery.lo", self.lo, lo=0.0))
        set_field(self, "hi", v.number("lottery.hi", self.hi, lo=self.lo, lo_open=True))
        set_field(self, "lemon_rate", v.number("lottery.lemon_rate", self.lemon_rate, lo=0.0, hi=1.0))
        set_field(self, "lemon_factor",
                  v.number("lottery.lemon_factor", self.lemon_factor, lo=0.0, lo_open=True, hi=1.0))


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
