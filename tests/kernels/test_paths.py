import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mc.kernels import ar1

_ar1 = jax.jit(ar1)  # as the models run it: one program a shape, not one per operation


def ar1_loop(z, rho, sd):
    x = np.zeros(z.shape, np.float64)
    x[..., 0] = sd * z[..., 0]
    for h in range(1, z.shape[-1]):
        x[..., h] = rho * x[..., h - 1] + np.sqrt(1 - rho * rho) * sd * z[..., h]
    return x


@pytest.mark.parametrize("n", [1, 2, 37, 730])
@pytest.mark.parametrize("rho", [0.0, 0.5, 0.99])
def test_ar1_is_the_recurrence(n, rho):
    z = np.random.default_rng(n).standard_normal((4, n)).astype(np.float32)
    got = np.asarray(_ar1(jnp.asarray(z), rho, 0.05))
    np.testing.assert_allclose(got, ar1_loop(z.astype(np.float64), rho, 0.05), atol=2e-7 * max(1, n ** 0.5))


def test_ar1_bits_do_not_depend_on_the_batch():
    z = np.random.default_rng(3).standard_normal((64, 100)).astype(np.float32)
    whole = np.asarray(_ar1(jnp.asarray(z), 0.9, 0.1))
    one = np.asarray(_ar1(jnp.asarray(z[5:6]), 0.9, 0.1))
    assert (whole[5:6] == one).all()
