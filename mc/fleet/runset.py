"""The run set (SPEC §1.6): a whole-card greedy on tokens per dollar."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .. import _validate as v
from ..kernels import greedy_prefix, tree_sum

MODES = ("steady", "peak", "all")


def check_mode(mode: str) -> str:
    return v.choice("runset", mode, MODES)


def target(demand: jax.Array, mode: str) -> jax.Array:
    """() float32 tok/s the run set must reach: mean or peak hourly demand."""
    return jnp.max(demand) if mode == "peak" else tree_sum(demand) / demand.shape[-1]


def run_set(score: jax.Array, price: jax.Array, evicted: jax.Array, tgt: jax.Array,
            mode: str) -> jax.Array:
    """(pool,) bool cards kept warm.

    Survivors in descending tokens-per-dollar (``s / p``, the same order as
    ``s · 2,628,000 / p``; ties by lower index) are added while the scores
    already added sum below ``tgt``.

    Arguments:
        score: (pool,) float32 tok/s. price: (pool,) $ per card-month.
        evicted: (pool,) bool. tgt: () float32 tok/s.
    """
    survivors = ~evicted
    if mode == "all":
        return survivors
    # The sum ahead of each card is compensated (``greedy_prefix``), so a sum
    # within an ulp of the target is decided as SPEC §1.6's exact arithmetic does.
    key = jnp.where(survivors, -(score / price), jnp.inf)
    return survivors & greedy_prefix(key, jnp.where(survivors, score, 0.0), tgt)
