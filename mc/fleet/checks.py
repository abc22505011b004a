"""The three checks (SPEC §1.9) and the wrong-eviction count they rest on."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .._fields import check_fields, declare
from .._pytree import pytree_dataclass
from ..kernels import masked_median
from ..kernels import median as _median
from .pool import Pool


@pytree_dataclass
class Checks:
    """Pass thresholds: shortfall ≤ ``max_shortfall``, convergence ≥
    ``min_convergence``, wrong evictions ≤ ``max_wrong``."""

    max_shortfall: float = declare(0.01, lo=0.0, hi=1.0, unit="share of demand tokens", doc="most unmet demand that passes")
    min_convergence: float = declare(0.90, lo=0.0, unit="ratio", doc="least ideal bill / bill that passes")
    max_wrong: int = declare(0, lo=0, kind="integer", unit="cards", doc="most wrong evictions that pass")

    def __post_init__(self):
        check_fields(self, "checks")


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
