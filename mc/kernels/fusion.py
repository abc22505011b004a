"""Values computed once: a barrier against XLA recomputing a producer in every consumer."""

from __future__ import annotations

import jax
import jax.numpy as jnp


def materialise(x):
    """``x`` (an array or a pytree of arrays) unchanged, computed once into memory.

    XLA fuses cheap elementwise producers into every consumer, so a value read
    by many consumers (a month's block of random words, a card's score in a
    pairwise comparison) is recomputed in each of them. XLA:CPU drops
    ``optimization_barrier`` before fusion, but it does not fuse across a loop
    whose trip count it cannot know, nor hoist a value the body may change.
    The loop runs once and keeps ``x`` (its select can only pick ``x``).
    """
    leaves = jax.tree_util.tree_leaves(x)
    first = leaves[0].reshape(-1)[0]
    go = (first == first).astype(jnp.int32)  # 1 (0 for NaN), known only at run time

    def once(c):
        n, y = c
        return n - 1, jax.tree_util.tree_map(lambda a: jnp.where(n > 1, jnp.zeros_like(a), a), y)

    return jax.lax.while_loop(lambda c: c[0] > 0, once, (go, x))[1]
