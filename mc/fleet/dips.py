"""Silent dips (SPEC §1.3): Poisson arrivals over the window and the month."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from .._fields import check_fields, declare
from ..units import HOURS
from .._pytree import pytree_dataclass
from ..kernels import exponential, poisson_capped


@pytree_dataclass(static=("max_count",))
class Dips:
    """Dips arrive at ``rate`` per 730 h on each card over ``[-W, 730)``; each lasts
    ``Exponential(mean_hours)`` and loses ``Uniform(depth_lo, depth_hi)`` of the rate.
    A card holds at most ``max_count`` dips (a static shape)."""

    rate: float = declare(2.0, lo=0.0, unit="dips per card-month", doc="how often a card's rate dips silently")
    mean_hours: float = declare(4.0, lo=0.0, lo_open=True, unit="h", doc="mean dip duration")
    depth_lo: float = declare(0.2, lo=0.0, hi=1.0, unit="share of true rate", doc="shallowest dip")
    depth_hi: float = declare(0.6, lo="depth_lo", hi=1.0, unit="share of true rate", doc="deepest dip")
    max_count: int = declare(8, lo=0, hi=64, kind="integer", unit="dips per card",
                             doc="cap on dips (fixes array shapes)")

    def __post_init__(self):
        check_fields(self, "dips")


class DipDraws(NamedTuple):
    u_count: jax.Array  # (pool,) float32 uniform: the Poisson count by inversion
    u_begin: jax.Array  # (pool, max_count) float32 uniform
    e_length: jax.Array  # (pool, max_count) float32 standard exponential
    u_depth: jax.Array  # (pool, max_count) float32 uniform


class CardDips(NamedTuple):
    begin: jax.Array  # (pool, max_count) float32 h, in [-W, 730)
    end: jax.Array  # (pool, max_count) float32 h
    depth: jax.Array  # (pool, max_count) float32, zero where no dip
    count: jax.Array | None = None  # (pool,) int32 live (leading) slots; None: all


def uniforms_needed(p: Dips) -> int:
    """Open uniforms per card: the count, then begin, length, depth per slot."""
    return 1 + 3 * p.max_count


def draw(u: jax.Array, p: Dips) -> DipDraws:
    """From (pool, uniforms_needed(p)) open uniforms."""
    k = p.max_count
    return DipDraws(u[:, 0], u[:, 1:1 + k], exponential(u[:, 1 + k:1 + 2 * k]), u[:, 1 + 2 * k:1 + 3 * k])


def expected_count(window: jax.Array, p: Dips) -> jax.Array:
    """Mean dips per card over ``[-W, 730)``: ``rate · (730 + W) / 730``."""
    return p.rate * (HOURS + window) / HOURS


def place(d: DipDraws, window: jax.Array, p: Dips) -> CardDips:
    """Dips of every card; unused slots get depth zero."""
    n = poisson_capped(d.u_count, expected_count(window, p), p.max_count)
    live = jnp.arange(p.max_count)[None, :] < n[:, None]
    begin = -window + d.u_begin * (HOURS + window)
    end = begin + p.mean_hours * d.e_length
    depth = p.depth_lo + d.u_depth * (p.depth_hi - p.depth_lo)
    return CardDips(begin, end, jnp.where(live, depth, 0.0), n)
