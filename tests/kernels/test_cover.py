"""Greedy covers on both size branches against exact (float64 and rational) sums."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mc.kernels import PAIRWISE_MAX, best_first, greedy_prefix

SIZES = [8, PAIRWISE_MAX, PAIRWISE_MAX + 1, 200]


def ref_greedy(key, x, budget):
    order = np.argsort(key, kind="stable")
    before = np.concatenate([[0.0], np.cumsum(x[order].astype(np.float64))[:-1]])
    take = np.zeros(len(x), bool)
    take[order] = before < budget
    return take


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("frac", [0.0, 0.3, 0.77, 2.0])
def test_greedy_prefix_matches_reference(n, frac):
    rng = np.random.default_rng(n)
    key = rng.integers(0, 7, n).astype(np.float32)  # ties, broken by index
    x = rng.uniform(100, 8000, n).astype(np.float32)
    budget = np.float32(frac * x.astype(np.float64).sum())
    got = jax.jit(greedy_prefix)(jnp.asarray(key), jnp.asarray(x), jnp.asarray(budget))
    np.testing.assert_array_equal(got, ref_greedy(key, x, float(budget)))


def test_greedy_prefix_decides_an_exact_tie_as_exact_arithmetic():
    """Integers summing exactly to the budget: the element after them is not taken."""
    x = jnp.array([2.0**24, 1.0, 1.0, 5.0], jnp.float32)  # float32 sums lose the 1s
    key = jnp.arange(4, dtype=jnp.float32)
    take = jax.jit(greedy_prefix)(key, x, jnp.float32(2.0**24 + 2.0))
    assert np.asarray(take).tolist() == [True, True, True, False]


@pytest.mark.parametrize("n", SIZES)
def test_best_first_matches_reference(n):
    x = np.random.default_rng(n).uniform(0, 7000, n).astype(np.float32)
    hi, lo = jax.jit(best_first)(jnp.asarray(x))
    want = np.concatenate([[0.0], np.cumsum(np.sort(x.astype(np.float64))[::-1])])
    got = np.asarray(hi, np.float64) + np.asarray(lo, np.float64)
    assert got.shape == (n + 1,)
    np.testing.assert_allclose(got, want, rtol=1e-6 if n > PAIRWISE_MAX else 1e-12, atol=0)
    assert np.all(np.diff(np.asarray(hi)) >= 0)
