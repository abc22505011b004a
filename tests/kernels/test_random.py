"""The counter-hash bit generator and the variates built on it."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mc.kernels import bits, exponential, normal, poisson_capped, uniforms


def test_bits_are_a_pure_function_of_key_and_counter():
    key = jax.random.key(7)
    a = np.asarray(jax.jit(bits, static_argnums=1)(key, (16, 3)))
    b = np.asarray(bits(key, (48,))).reshape(16, 3)
    np.testing.assert_array_equal(a, b)
    assert len(np.unique(a)) == a.size
    assert not np.array_equal(a, np.asarray(bits(jax.random.key(8), (16, 3))))


def test_uniforms_are_on_the_open_interval():
    """Every 23-bit cell centre, the extremes included, is strictly inside (0, 1)."""
    words = jnp.array([0, 511, 2**32 - 1, 2**31], jnp.uint32)
    u = ((words >> 9).astype(jnp.float32) + 0.5) * jnp.float32(2.0**-23)
    assert float(u.min()) > 0.0 and float(u.max()) < 1.0
    x = np.asarray(uniforms(jax.random.key(0), (200_000,)))
    assert x.min() > 0.0 and x.max() < 1.0
    assert np.isfinite(np.asarray(normal(jnp.asarray(x)))).all()
    assert np.isfinite(np.asarray(exponential(jnp.asarray(x)))).all()


@pytest.mark.slow
def test_uniform_moments():
    """Mean 1/2 and variance 1/12 within 5 standard errors of n = 200,000."""
    x = np.asarray(uniforms(jax.random.key(1), (200_000,)), np.float64)
    se = np.sqrt(1 / 12 / x.size)
    assert abs(x.mean() - 0.5) < 5 * se
    assert abs(x.var() - 1 / 12) < 5 * np.sqrt(1 / 180 / x.size)


@pytest.mark.slow
@pytest.mark.parametrize("mean", [0.0, 0.5, 3.0])
def test_poisson_capped_inverts_the_cdf(mean):
    u = np.asarray(uniforms(jax.random.key(2), (100_000,)))
    k = np.asarray(poisson_capped(jnp.asarray(u), jnp.float32(mean), 16))
    assert k.min() >= 0 and k.max() <= 16
    se = np.sqrt(max(mean, 1e-9) / k.size)
    assert abs(k.mean() - mean) < 5 * se + 1e-9
