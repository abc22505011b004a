"""Order statistics by bitwise search (no sort) against plain NumPy: keys in float
order, the lowest m with ties by index, ranks' values, greedy prefixes and cover
counts decided as exact arithmetic decides them, on both size branches."""

from fractions import Fraction

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mc.kernels import PAIRWISE_MAX, compensated_scan, compensated_sum, cover_count, greedy_prefix, kth, lowest, order_key
from mc.kernels.select import key_value

SIZES = [1, 8, PAIRWISE_MAX, PAIRWISE_MAX + 1, 300]
# No subnormals: XLA's CPU backend compares them as zero (and so do the keys).
SPECIAL = np.array([-np.inf, -3e38, -1.0, -1.18e-38, -0.0, 0.0, 1.18e-38, 1.0, 2.5, 3e38, np.inf], np.float32)


def sample(n, seed, ties):
    rng = np.random.default_rng(seed)
    return rng.integers(-3, 4, n).astype(np.float32) if ties else rng.normal(size=n).astype(np.float32)


def test_keys_follow_float_order_and_invert():
    k = np.asarray(jax.jit(order_key)(jnp.asarray(SPECIAL)))
    assert np.all(k[:-1] <= k[1:]) and k[4] == k[5]  # -0.0 and 0.0 are one key
    assert np.sum(k[:-1] == k[1:]) == 1
    back = np.asarray(jax.jit(key_value)(jnp.asarray(k)))
    np.testing.assert_array_equal(back[back != 0], SPECIAL[SPECIAL != 0])


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("ties", [False, True])
def test_lowest_is_a_stable_sort_prefix(n, ties):
    x = sample(n, n, ties)
    order = np.argsort(x, kind="stable")
    f = jax.jit(lowest)
    for m in sorted({-1, 0, 1, n // 3, n - 1, n, n + 5}):
        want = np.zeros(n, bool)
        want[order[:max(m, 0)]] = True
        np.testing.assert_array_equal(f(jnp.asarray(x), jnp.int32(m)), want, err_msg=f"m={m}")


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("ties", [False, True])
def test_kth_is_the_sorted_element(n, ties):
    x = np.concatenate([sample(n, 7 + n, ties)[:-2], [np.inf, -np.inf]]).astype(np.float32)[:n]
    s = np.sort(x)
    f = jax.jit(kth)
    for k in sorted({0, n // 2, n - 1}):
        assert f(jnp.asarray(x), jnp.int32(k)) == s[k]


def ref_greedy(key, x, budget):
    """Exact: rational sums in stable key order."""
    order = np.argsort(key, kind="stable")
    take, before = np.zeros(len(x), bool), Fraction(0)
    for i in order:
        take[i] = before < Fraction(float(budget))
        before += Fraction(float(x[i]))
    return take


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("frac", [-0.1, 0.0, 0.3, 0.77, 1.0, 2.0])
def test_greedy_prefix_matches_exact_arithmetic(n, frac):
    rng = np.random.default_rng(n)
    key = np.where(rng.random(n) < 0.2, np.inf, rng.integers(0, 7, n)).astype(np.float32)  # ties, and inf
    x = rng.uniform(100, 8000, n).astype(np.float32)
    budget = np.float32(frac * x.astype(np.float64).sum())
    got = jax.jit(greedy_prefix)(jnp.asarray(key), jnp.asarray(x), jnp.asarray(budget))
    np.testing.assert_array_equal(got, ref_greedy(key, x, budget))


@pytest.mark.parametrize("n", [4, PAIRWISE_MAX + 1, 300])
def test_an_exact_tie_is_decided_as_exact_arithmetic(n):
    """Integers summing exactly to the budget, where float32 sums lose the small
    ones: the element after them is not taken, and the count stops there."""
    x = np.full(n, 5.0, np.float32)
    x[:3] = [2.0**24, 1.0, 1.0]
    key = np.arange(n, dtype=np.float32)
    budget = np.float32(2.0**24 + 2.0)
    take = np.asarray(jax.jit(greedy_prefix)(jnp.asarray(key), jnp.asarray(x), jnp.asarray(budget)))
    assert take[:4].tolist() == [True, True, True, False] and not take[4:].any()
    # Best first: 2**24, a 5, then 1 (n = 4) or another 5: the covers are 0, 2**24,
    # 2**24 + 5, then 2**24 + 6 or + 10; float32 would round 2**24 + 5 to 2**24 + 4.
    count = jax.jit(cover_count)
    assert int(count(jnp.asarray(x), jnp.float32(2.0**24 + 4.0))) == 2
    assert int(count(jnp.asarray(x), jnp.float32(2.0**24 + 6.0))) == 3


def ref_cover_count(x, budget):
    covers = np.concatenate([[Fraction(0)], np.cumsum([Fraction(float(v)) for v in np.sort(x)[::-1]])])
    return int(sum(c < Fraction(float(budget)) for c in covers))


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("frac", [0.0, 0.4, 1.0, 1.5])
def test_cover_count_matches_exact_arithmetic(n, frac):
    x = np.random.default_rng(3 + n).uniform(0, 7000, n).astype(np.float32)
    budget = np.float32(frac * x.astype(np.float64).sum())
    assert int(jax.jit(cover_count)(jnp.asarray(x), jnp.asarray(budget))) == ref_cover_count(x, budget)


@pytest.mark.parametrize("n", [0, 1, 7, 300])
def test_compensated_sums_are_twice_float32(n):
    x = np.random.default_rng(n).uniform(0, 1e6, n).astype(np.float32)
    want = np.cumsum(x.astype(np.float64))
    hi, lo = jax.jit(compensated_sum)(jnp.asarray(x))
    assert abs(float(hi) + float(lo) - (want[-1] if n else 0.0)) <= 1e-12 * max(1.0, want[-1] if n else 1.0)
    if n:
        hi, lo = jax.jit(compensated_scan)(jnp.asarray(x))
        np.testing.assert_allclose(np.asarray(hi, np.float64) + np.asarray(lo), want, rtol=1e-12, atol=0)
