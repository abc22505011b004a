"""Eviction: share and threshold policies, ranking ties, exact counts."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mc
from mc.fleet import eviction


_evict = jax.jit(eviction.evict)


@pytest.mark.parametrize("share,size,expect", [
    (0.2, 32, 6), (0.375, 32, 12), (0.10, 32, 3), (0.35, 20, 7), (0.0, 32, 0), (0.99, 10, 9),
])
def test_share_limit_is_exact_floor(share, size, expect):
    # 0.35 × 20 is 6.999… in floating point; the spec's +1e-9 makes it 7.
    assert mc.Eviction(share=share).limit(size) == expect


def test_share_evicts_lowest_ties_by_index():
    rel = jnp.array([0.9, 0.5, 0.5, 0.7, 0.5, 1.0])
    got = np.asarray(_evict(rel, 2, mc.Eviction(share=0.34)))
    assert got.tolist() == [False, True, True, False, False, False]


@pytest.mark.parametrize("theta,limit,expect", [
    # median of [0.5, 0.6, 0.9, 1.0, 1.0, 1.1] is 0.95
    (0.8, 3, [True, True, False, False, False, False]),  # below 0.76
    (1.0, 3, [True, True, True, False, False, False]),  # below 0.95, capped at 3
    (1.0, 1, [True, False, False, False, False, False]),  # cap keeps the lowest
    (0.5, 3, [False] * 6),  # nobody below 0.475
])
def test_threshold(theta, limit, expect):
    rel = jnp.array([0.5, 0.6, 0.9, 1.0, 1.0, 1.1])
    p = mc.Eviction(policy="threshold", theta=theta, max_share=0.5)
    assert np.asarray(_evict(rel, limit, p)).tolist() == expect


def test_threshold_uses_max_share_for_limit():
    assert mc.Eviction(policy="threshold", max_share=0.25).limit(32) == 8
    with pytest.raises(mc.ParamError, match=r"^eviction.share=0.0: is not a field of the threshold policy"):
        mc.Eviction(policy="threshold", share=0.0, max_share=0.25)  # share's field, once accepted and ignored


@pytest.mark.parametrize("pool", [6, 100])
def test_evictions_past_the_pairwise_size_take_ties_by_index(pool):
    rel = jnp.asarray(np.resize(np.float32([0.9, 0.5, 0.5, 0.7, 0.5, 1.0]), pool))
    got = np.asarray(_evict(rel, 4, mc.Eviction(share=0.1)))
    want = np.zeros(pool, bool)
    want[np.argsort(np.asarray(rel), kind="stable")[:4]] = True
    assert got.tolist() == want.tolist()
