"""Shape-free sums: tree, prefix, compensated and integer sums against NumPy."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mc.kernels import int_cumsum, materialise, scan_sum, tree_sum, two_sum


@pytest.mark.parametrize("n", [0, 1, 7, 64, 65])
def test_tree_and_scan_sums(n):
    x = np.random.default_rng(n).uniform(-1, 1, (3, n)).astype(np.float32)
    np.testing.assert_allclose(jax.jit(tree_sum)(x), x.astype(np.float64).sum(-1), rtol=1e-5, atol=1e-5)
    if n:
        np.testing.assert_allclose(jax.jit(scan_sum)(x), np.cumsum(x.astype(np.float64), -1), rtol=1e-5, atol=1e-5)


def test_tree_sum_is_the_same_bits_in_any_batch():
    x = np.random.default_rng(0).uniform(0, 1e6, (4096, 37)).astype(np.float32)
    whole = np.asarray(jax.jit(jax.vmap(tree_sum))(x))
    one = np.asarray(jax.jit(tree_sum)(x[5]))
    assert whole[5] == one


def test_two_sum_is_exact():
    a, b = jnp.float32(2.0**24), jnp.float32(1.0)
    s, err = two_sum(a, b)
    assert float(s) + float(err) == 2.0**24 + 1.0


@pytest.mark.parametrize("n", [1, 31, 32, 33, 730])
def test_int_cumsum_exact(n):
    x = np.random.default_rng(n).integers(-2**20, 2**20, (2, n)).astype(np.int32)
    np.testing.assert_array_equal(jax.jit(int_cumsum)(x), np.cumsum(x, -1))


def test_materialise_is_the_identity():
    tree = {"a": jnp.arange(5.0), "b": (jnp.ones((2, 3), jnp.int32),)}
    out = jax.jit(materialise)(tree)
    np.testing.assert_array_equal(out["a"], tree["a"])
    np.testing.assert_array_equal(out["b"][0], tree["b"][0])
