"""Random-variate transforms shared by the models."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.special as jss


def poisson_capped(u: jax.Array, mean: jax.Array, cap: int) -> jax.Array:
    """``min(Poisson(mean), cap)`` by inverting the CDF at uniform ``u``: exact,
    one uniform per draw, no rejection loop. Same shape as ``u``, int32."""
    k = jnp.arange(cap, dtype=jnp.float32)
    # N >= j+1 exactly when u >= P(N <= j) = Q(j + 1, mean).
    cdf = jss.gammaincc(k + 1.0, mean)
    return jnp.sum(u[..., None] >= cdf, axis=-1).astype(jnp.int32)
