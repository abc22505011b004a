"""Random-variate transforms shared by the models, in float32 (the fleet's and the
telemetry's; the serving model draws from ``mc.kernels.exact``, whose bits do not
depend on the CPU)."""

from __future__ import annotations

import math
from statistics import NormalDist

import jax
import jax.numpy as jnp

from .bits import bits
from .sums import scan_sum


# The open uniforms lie in [2**-24, 1 - 2**-24], so the variates below are bounded:
# |normal(u)| <= NORMAL_MAX (about 5.3) and exponential(u) <= EXPONENTIAL_MAX (about 16.6).
UNIFORM_MIN = 2.0**-24
NORMAL_MAX = -NormalDist().inv_cdf(UNIFORM_MIN)
EXPONENTIAL_MAX = -math.log(UNIFORM_MIN)


def poisson_cdf(mean: jax.Array, cap: int) -> jax.Array:
    """(cap,) float32 ``P(N <= k)`` for k = 0..cap-1, ``N ~ Poisson(mean)``."""
    k = jnp.arange(cap, dtype=jnp.float32)
    log_pmf = k * jnp.log(jnp.maximum(mean, 1e-30)) - mean - jax.lax.lgamma(k + 1.0)
    pmf = jnp.where(mean > 0, jnp.exp(log_pmf), (k == 0).astype(jnp.float32))
    return scan_sum(pmf)


def poisson_capped(u: jax.Array, mean: jax.Array, cap: int) -> jax.Array:
    """``min(Poisson(mean), cap)`` by inverting the CDF at uniform ``u``: exact,
    one uniform per draw, no rejection loop. Same shape as ``u``, int32."""
    # N >= j+1 exactly when u >= P(N <= j).
    cdf = poisson_cdf(mean, cap).reshape((1,) * u.ndim + (cap,))
    return jnp.sum(u[..., None] >= cdf, axis=-1).astype(jnp.int32)


def uniforms(key: jax.Array, shape: tuple[int, ...]) -> jax.Array:
    """Float32 uniforms on the open interval (0, 1), from one call of the counter-hash
    bit generator (``mc.kernels.bits``; one call compiles and runs far faster than many).

    The top 23 bits of each word, centred in their cell: never 0 or 1, so
    ``log`` and ``ndtri`` stay finite.
    """
    words = bits(key, shape)
    return ((words >> 9).astype(jnp.float32) + 0.5) * jnp.float32(2.0**-23)


def normal(u: jax.Array) -> jax.Array:
    """Standard normals by inverting the CDF at open uniforms ``u``."""
    return jax.scipy.special.ndtri(u)


def exponential(u: jax.Array) -> jax.Array:
    """Standard exponentials (mean 1) by inversion at open uniforms ``u``."""
    return -jnp.log(u)
