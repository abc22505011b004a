"""Eviction (SPEC §1.5): rank by relative score, evict the lowest."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from .. import _validate as v
from .._pytree import pytree_dataclass
from ..kernels import lowest as lowest_of, masked_median, median

POLICIES = ("share", "threshold")


@pytree_dataclass(static=("policy",))
class Eviction:
    """``share``: evict ``floor(share·P)`` lowest; ``threshold``: evict those below
    ``theta ×`` the median relative score, at most ``floor(max_share·P)``.
    An evicted card bills ``churn × price``."""

    policy: str = "share"
    share: float = 0.2
    theta: float = 0.8
    max_share: float = 0.5
    churn: float = 0.15

    def __post_init__(self):
        v.choice("eviction.policy", self.policy, POLICIES)
        object.__setattr__(self, "share", v.number("eviction.share", self.share, lo=0.0, hi=1.0, hi_open=True))
        object.__setattr__(self, "theta", v.positive("eviction.theta", self.theta))
        object.__setattr__(self, "max_share",
                           v.number("eviction.max_share", self.max_share, lo=0.0, hi=1.0, hi_open=True))
        object.__setattr__(self, "churn", v.nonneg("eviction.churn", self.churn))

    def limit(self, pool_size: int) -> int:
        """Most cards this policy may evict from a pool (exact, in float64)."""
        frac = self.share if self.policy == "share" else self.max_share
        return math.floor(frac * pool_size + 1e-9)


def evict(rel: jax.Array, limit: jax.Array, p: Eviction) -> jax.Array:
    """(pool,) bool evicted cards.

    Arguments:
        rel: (pool,) float32 relative score ``s / r``.
        limit: () int32, ``Eviction.limit(P)``.
    """
    lowest = lowest_of(rel, limit)
    if p.policy == "share":
        return lowest
    # Cards below the threshold are a prefix of the ascending order, so the
    # cap keeps the lowest of them.
    return lowest & (rel < p.theta * median(rel))


def mark(rel: jax.Array, eligible: jax.Array, limit: jax.Array, p: Eviction) -> jax.Array:
    """(pool,) bool: the cards the policy marks among the eligible ones (SPEC §6):
    ``share`` the ``limit`` lowest relative scores, ``threshold`` those below
    ``theta ×`` the eligible cards' median, at most ``limit`` (lowest first, ties
    by index). With every card eligible it is ``evict``.

    Arguments:
        rel: (pool,) float32 relative score ``s / r``. eligible: (pool,) bool.
        limit: () int32, ``Eviction.limit(P)`` with ``P`` every slot.
    """
    lowest = eligible & lowest_of(jnp.where(eligible, rel, jnp.inf), limit)
    if p.policy == "share":
        return lowest
    return lowest & (rel < p.theta * masked_median(rel, eligible))
