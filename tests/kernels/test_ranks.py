"""Ranks and medians: every size branch (pairwise up to PAIRWISE_MAX, sort above)
against a plain NumPy reference, ties included."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mc.kernels import PAIRWISE_MAX, in_rank_order, masked_median, median, pairwise_rank, rank, select_rank, sort_rank

SIZES = [1, 8, PAIRWISE_MAX, PAIRWISE_MAX + 1, 200]


def ref_rank(x):
    """Ascending position, ties by index (a stable argsort's inverse)."""
    out = np.empty(len(x), np.int64)
    out[np.argsort(x, kind="stable")] = np.arange(len(x))
    return out


def sample(n, seed, ties):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 5, n).astype(np.float32) if ties else rng.normal(size=n).astype(np.float32)
    return x


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("ties", [False, True])
def test_rank_every_branch_matches_reference(n, ties):
    x = sample(n, n, ties)
    want = ref_rank(x)
    np.testing.assert_array_equal(jax.jit(rank)(jnp.asarray(x)), want)
    np.testing.assert_array_equal(jax.jit(pairwise_rank)(jnp.asarray(x)), want)
    np.testing.assert_array_equal(jax.jit(sort_rank)(jnp.asarray(x)), want)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("ties", [False, True])
def test_median_every_branch_matches_numpy(n, ties):
    x = sample(n, 100 + n, ties)
    assert float(jax.jit(median)(jnp.asarray(x))) == pytest.approx(float(np.median(x)), rel=1e-7, abs=0)


def test_select_rank_picks_one_element():
    x = jnp.array([3.0, -1.0, 2.5])
    r = rank(x)
    assert [float(select_rank(x, r, k)) for k in range(3)] == [-1.0, 2.5, 3.0]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("ties", [False, True])
def test_masked_median_every_branch(n, ties):
    x = sample(n, 200 + n, ties)
    mask = np.random.default_rng(n).random(n) < 0.6
    f = jax.jit(masked_median)
    got = float(f(jnp.asarray(x), jnp.asarray(mask)))
    assert got == (float(np.median(x[mask])) if mask.any() else 0.0)
    # Every element in: median's own bits.
    assert f(jnp.asarray(x), jnp.ones(n, bool)) == jax.jit(median)(jnp.asarray(x))
    assert float(f(jnp.asarray(x), jnp.zeros(n, bool))) == 0.0


@pytest.mark.parametrize("n", [1, 8, 33])
def test_in_rank_order_places_each_element_at_its_rank(n):
    rng = np.random.default_rng(n)
    x = rng.integers(0, 5, n).astype(np.float32)  # ties: ranks break them by index
    r = jax.jit(pairwise_rank)(jnp.asarray(x))
    got = np.asarray(jax.jit(in_rank_order)(jnp.asarray(x), r))
    np.testing.assert_array_equal(got, x[np.argsort(x, kind="stable")])
