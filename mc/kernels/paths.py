"""Stationary AR(1) paths: a linear recurrence as fixed passes of elementwise ops."""

from __future__ import annotations

import jax
import jax.numpy as jnp


def ar1(z: jax.Array, rho: jax.Array, sd: jax.Array) -> jax.Array:
    """(..., n) stationary AR(1) path from (..., n) standard normals ``z``:
    ``x_0 = sd·z_0``, ``x_h = rho·x_{h−1} + sqrt(1 − rho²)·sd·z_h``, so every ``x_h`` is
    ``Normal(0, sd²)`` and ``corr(x_h, x_{h+k}) = rho^k``. ``rho`` in [0, 1) and ``sd``
    are scalars or broadcast against ``z[..., 0]``.

    Computed as a Hillis–Steele scan (log2 n passes of ``x_h += rho^k·x_{h−k}``), so a
    path's bits do not depend on the batch shape.
    """
    col = z.shape[:-1] + (1,)
    rho = jnp.broadcast_to(jnp.asarray(rho, z.dtype)[..., None], col)
    sd = jnp.broadcast_to(jnp.asarray(sd, z.dtype)[..., None], col)
    n = z.shape[-1]
    first = jnp.broadcast_to(jnp.arange(n) == 0, z.shape)
    x = sd * z * jnp.where(first, jnp.ones(z.shape, z.dtype), jnp.sqrt(jnp.maximum(1 - rho * rho, 0)))
    a, k = rho, 1
    while k < n:
        shifted = jnp.concatenate([jnp.zeros(x.shape[:-1] + (k,), x.dtype), x[..., :n - k]], axis=-1)
        x = x + a * shifted
        a, k = a * a, 2 * k
    return x
