"""Random-variate transforms shared by the models."""

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


GAMMA_ROUNDS = 64  # most Marsaglia-Tsang proposals a draw makes (each is accepted with probability >= 0.95)
BOOST_FLOOR = -80.0  # log of the smallest boost u^(1/shape): below it, e^-80 (a normal float32)


def gamma(key: jax.Array, shape: jax.Array, n: int) -> jax.Array:
    """(n,) float32 Gamma(``shape``, 1) variates, ``shape`` > 0 a float32 scalar, by
    Marsaglia and Tsang's method from this module's uniforms and normals: only
    arithmetic, ``sqrt``, ``log`` and ``exp`` (XLA's own; no ``pow``, which XLA
    hands to the C library, whose last bits differ between machines).

    With ``a = max(shape, shape + 1 if shape < 1)``, ``d = a − 1/3``, ``c = 1/√(9d)``:
    round ``r`` (r = 1, 2, ...) proposes ``v = (1 + c·x)³`` from the normal ``x`` of
    ``uniforms(fold_in(key, r), (2, n))[0]`` and accepts ``d·v`` when ``v > 0`` and
    ``log u < x²/2 + d − d·v + d·log v`` (``u``: row 1); each draw keeps its first
    accepted proposal (after ``GAMMA_ROUNDS`` rounds, about ``0.05^64`` of the time,
    its last). For ``shape < 1`` the value is boosted by ``u₀^(1/shape) =
    exp(max(log u₀ / shape, BOOST_FLOOR))``, ``u₀ = uniforms(key, (n,))``. Draw ``j``
    uses only lane ``j`` of each round, so nothing depends on ``n`` beyond it or
    on how the draws are batched."""
    shape = jnp.asarray(shape, jnp.float32)
    small = shape < 1.0
    a = jnp.where(small, shape + 1.0, shape)
    d = a - jnp.float32(1.0 / 3.0)
    c = 1.0 / jnp.sqrt(9.0 * d)

    def propose(r):
        u = uniforms(jax.random.fold_in(key, r), (2, n))
        x = normal(u[0])
        t = 1.0 + c * x
        v = t * t * t
        ok = (v > 0) & (jnp.log(u[1]) < 0.5 * x * x + d - d * v + d * jnp.log(jnp.maximum(v, 1e-30)))
        return ok, d * v

    def body(st):
        r, done, g = st
        ok, y = propose(r)
        take = ~done & (ok | (r >= GAMMA_ROUNDS))
        return r + 1, done | take, jnp.where(take, y, g)

    init = (jnp.int32(1), jnp.zeros(n, bool), jnp.zeros(n, jnp.float32))
    _, _, g = jax.lax.while_loop(lambda st: ~jnp.all(st[1]), body, init)
    boost = jnp.exp(jnp.maximum(jnp.log(uniforms(key, (n,))) / shape, BOOST_FLOOR))
    return jnp.where(small, g * boost, g)
