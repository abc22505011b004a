"""The three checks (SPEC §1.9) and the wrong-eviction count they rest on."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .. import _validate as v
from .._pytree import pytree_dataclass, set_field
from ..kernels import masked_median
from ..kernels import median as _median
from .pool import Pool


@pytree_dataclass
class Checks:
    """Pass thresholds: shortfall ≤ ``max_shortfall``, convergence ≥
    ``min_convergence``, wrong evictions ≤ ``max_wrong``."""

    max_shortfall: float = 0.01
    min_convergence: float = 0.90
    max_wrong: int = 0

    def __post_init__(self):
        set_field(self, "max_shortfall", v.number("checks.max_shortfall", self.max_shortfall, lo=0.0, hi=1.0))
        set_field(self, "min_convergence", v.nonneg("checks.min_convergence", self.min_convergence))
        set_field(self, "max_wrong", v.count("checks.max_wrong", self.max_wrong, lo=0))


def wrong(true_rate: jax.Array, evicted: jax.Array, pool: Pool, present: jax.Array | None = None) -> jax.Array:
    """(pool,) bool: evicted cards at or above their class's median true rate,
    the median taken over the cards ``present`` (every card when None; SPEC §6:
    the cards in slots at the round, before its evictions)."""
    def med(s):
        return _median(true_rate[s]) if present is None else masked_median(true_rate[s], present[s])

    median = jnp.concatenate([jnp.broadcast_to(med(s), (s.stop - s.start,)) for s in pool.slices])
    return evicted & (true_rate >= median)


def verdict(shortfall: jax.Array, convergence: jax.Array, n_wrong: jax.Array, p: Checks) -> dict:
    return {"pass_capacity": shortfall <= p.max_shortfall,
            "pass_convergence": convergence >= p.min_convergence,
            "pass_eviction": n_wrong <= p.max_wrong}
