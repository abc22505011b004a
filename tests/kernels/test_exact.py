"""Variates whose bits do not depend on the CPU (``mc.kernels.exact``): each is the
float64 value rounded once, so it equals a plain NumPy/Python float64 reference
rounded to float32; the laws (Kolmogorov–Smirnov and moments, tolerances from the
sample size); and a product kept apart from the sum that follows it."""

from __future__ import annotations

import math
from statistics import NormalDist

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mc.kernels import exact, uniforms

_gamma = jax.jit(exact.gamma, static_argnums=2)  # one program a size, for every shape (a traced float32)


def _u(seed: int, n: int) -> np.ndarray:
    return np.asarray(uniforms(jax.random.key(seed), (n,)))


def test_unfused_rounds_the_product_before_the_sum():
    """``unfused(a·b) + c`` is NumPy's float32 ``a*b + c`` (two roundings) bit for
    bit, whether or not the CPU has fused multiply-add; NaN stays NaN."""
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(20_000).astype(np.float32) for _ in range(3))
    got = np.asarray(jax.jit(lambda a, b, c: exact.unfused(a * b) + c)(a, b, c))
    np.testing.assert_array_equal(got, a * b + c)
    fused = (a.astype(np.float64) * b + c).astype(np.float32)
    assert (fused != a * b + c).any()  # the sample tells a fused sum from a plain one
    assert np.isnan(float(exact.unfused(jnp.float32(np.nan))))


def test_exponential_and_normal_are_the_float64_values_rounded_once():
    u = _u(3, 4096)
    expo = np.asarray(jax.jit(exact.exponential)(u))
    want = (-np.log(u.astype(np.float64))).astype(np.float32)
    assert (expo == want).mean() > 0.999 and np.abs(expo.view(np.int32) - want.view(np.int32)).max() <= 1
    z = np.asarray(jax.jit(exact.normal)(u[:1000]))
    want = np.array([NormalDist().inv_cdf(float(t)) for t in u[:1000]], np.float32)
    assert (z == want).mean() > 0.998 and np.abs(z.view(np.int32) - want.view(np.int32)).max() <= 1
    assert z.dtype == np.float32 and expo.dtype == np.float32


def gamma_reference(key, shape: float, n: int) -> np.ndarray:
    """Marsaglia and Tsang in NumPy float64 on the kernel's own uniforms (inverted to
    normals by ``NormalDist``), with ``c = sqrt(1/(9d))`` and the boost as the kernel
    defines them."""
    a = shape + 1.0 if shape < 1 else shape
    d = a - 1 / 3
    c = math.sqrt(1 / (9 * d))
    out = np.full(n, np.nan)
    for r in range(1, exact.GAMMA_ROUNDS + 1):
        u = np.asarray(uniforms(jax.random.fold_in(key, r), (2, n)), np.float64)
        x = np.array([NormalDist().inv_cdf(t) for t in u[0]])
        v = (1 + c * x) ** 3
        ok = (v > 0) & (np.log(u[1]) < 0.5 * x * x + d - d * v + d * np.log(np.maximum(v, 1e-300)))
        out = np.where(np.isnan(out) & ok, d * v, out)
        if not np.isnan(out).any():
            break
    if shape < 1:
        u0 = np.asarray(uniforms(key, (n,)), np.float64)
        out = out * np.exp(np.maximum(np.log(u0) / shape, exact.BOOST_FLOOR))
    return out


@pytest.mark.parametrize("shape", [1 / 16, 0.25, 1.0, 4.0])
def test_gamma_is_the_float64_reference_rounded_once(shape):
    key = jax.random.key(11)
    got = np.asarray(_gamma(key, np.float32(shape), 2000))
    want = gamma_reference(key, shape, 2000)
    # the same accepted proposals; the float32 rounding of the same float64 value
    np.testing.assert_allclose(got, want, rtol=1.2e-7, atol=0)
    assert (got == want.astype(np.float32)).mean() > 0.999


def gamma_cdf(x: np.ndarray, shape: float) -> np.ndarray:
    """The regularised lower incomplete gamma by its series (exact enough below 60)."""
    k = np.arange(200)
    terms = np.exp(-x[:, None] + (shape + k) * np.log(np.maximum(x[:, None], 1e-300))
                   - np.array([math.lgamma(shape + j + 1) for j in k]))
    return np.where(x > 60, 1.0, terms.sum(axis=1))


@pytest.mark.parametrize("shape", [1 / 16, 0.25, 1.0, 4.0])
def test_gamma_follows_the_gamma_law(shape):
    """Kolmogorov–Smirnov against the Gamma CDF, D_n < 1.63/sqrt(n) (99%); mean and
    variance (both ``shape``) within 4 standard errors of n = 20,000."""
    n = 20_000
    x = np.sort(np.asarray(_gamma(jax.random.key(12), np.float32(shape), n), np.float64))
    cdf = gamma_cdf(x, shape)
    e = np.arange(1, n + 1) / n
    assert np.max(np.maximum(e - cdf, cdf - (e - 1 / n))) < 1.63 / math.sqrt(n)
    assert abs(x.mean() - shape) < 4 * math.sqrt(shape / n)
    # the sample variance's standard error: sqrt((mu4 - sigma^4)/n), mu4 = 3a(a + 2)
    assert abs(x.var() - shape) < 4 * math.sqrt((3 * shape * (shape + 2) - shape**2) / n)


def test_exponential_and_normal_follow_their_laws():
    """Kolmogorov–Smirnov at the 99% level, n = 20,000."""
    u = _u(5, 20_000)
    n = u.size
    e = np.arange(1, n + 1) / n
    expo = np.asarray(jax.jit(exact.exponential)(u), np.float64)
    z = np.asarray(jax.jit(exact.normal)(u), np.float64)
    phi = np.vectorize(lambda t: 0.5 * math.erfc(-t / math.sqrt(2)))
    for x, cdf in ((expo, lambda t: 1.0 - np.exp(-t)), (z, phi)):
        f = cdf(np.sort(x))
        assert np.max(np.maximum(e - f, f - (e - 1 / n))) < 1.63 / math.sqrt(n)


def test_gamma_forms_no_reciprocal_square_root():
    """XLA rewrites ``1/sqrt(x)`` into an approximate reciprocal square root (``rsqrtss``
    and a Newton step on x86, whose tables differ between Intel and AMD): the
    compiled sampler holds none, and no ``pow`` (the C library's)."""
    text = jax.jit(exact.gamma, static_argnums=2).lower(jax.random.key(0), np.float32(0.25), 16).compile().as_text()
    assert "rsqrt" not in text and "power" not in text and "sqrt" in text
