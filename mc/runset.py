"""The run set (SPEC §1.6): a whole-card greedy on tokens per dollar."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from . import _validate as v

from ._reduce import PAIRWISE_MAX, masked_sum, pairwise_rank, scan_sum, tree_sum

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
    key = jnp.where(survivors, -(score / price), jnp.inf)
    if key.shape[0] <= PAIRWISE_MAX:
        # Scores of the cards ahead of each card, as an exact-to-float64-ish
        # compensated sum, so a sum within an ulp of the target is decided
        # as the exact arithmetic of SPEC §1.6 decides it.
        r = pairwise_rank(key)
        hi, lo = masked_sum(r[None, :] < r[:, None], jnp.where(survivors, score, 0.0))
        return survivors & ((hi - tgt) + lo < 0)
    order = jnp.argsort(key, stable=True)
    s_sorted = jnp.where(survivors[order], score[order], 0.0)
    before = jnp.concatenate([jnp.zeros(1, s_sorted.dtype), scan_sum(s_sorted)[:-1]])
    take = survivors[order] & (before < tgt)
    return jnp.zeros_like(survivors).at[order].set(take)
