"""Batched evaluation of a per-month function over fleet-month indices.

Every month ``i`` gets its own key ``fold_in(key(seed), i)``; months run in
fixed-shape chunks (the last padded), so one compilation serves a scenario shape
and a month's outcome never depends on the chunk size.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from . import _validate as v

MonthFn = Callable[[jax.Array, Any], dict]
DEFAULT_CHUNK = 65536


def month_keys(seed: int, start: jax.Array, size: int) -> jax.Array:
    """(size,) keys ``fold_in(key(seed), start + j)``."""
    base = jax.random.key(seed)
    idx = (start + jnp.arange(size, dtype=jnp.uint32)).astype(jnp.uint32)
    return jax.vmap(jax.random.fold_in, in_axes=(None, 0))(base, idx)


@lru_cache(maxsize=None)
def batched(month_fn: MonthFn, size: int) -> Callable:
    """jit(vmap(month_fn)) over ``size`` consecutive month indices from ``start``."""

    def run(seed, start, params):
        keys = month_keys(seed, start, size)
        return jax.vmap(month_fn, in_axes=(0, None))(keys, params)

    return jax.jit(run)


def check_run_args(n: Any, seed: Any, chunk: Any) -> tuple[int, int, int]:
    n = v.count("n", n, lo=1, hi=2**32)
    seed = v.count("seed", seed, lo=0, hi=2**31 - 1)
    chunk = DEFAULT_CHUNK if chunk is None else v.count("chunk", chunk, lo=1, hi=2**24)
    return n, seed, min(chunk, n)


def sample(month_fn: MonthFn, params: Any, n: int, *, seed: int = 0,
           chunk: int | None = None) -> dict[str, np.ndarray]:
    """All per-month outputs of months ``0..n-1``: a dict of ``(n,)`` NumPy arrays."""
    n, seed, chunk = check_run_args(n, seed, chunk)
    fn = batched(month_fn, chunk)
    parts: list[dict] = []
    for start in range(0, n, chunk):
        out = fn(seed, np.uint32(start), params)
        take = min(chunk, n - start)
        parts.append({k: np.asarray(x)[:take] for k, x in out.items()})
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
