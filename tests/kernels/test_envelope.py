"""The lower envelope of step functions against a brute-force minimum at every instant."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mc.kernels import covering, pieces, tree_sum


def step_minimum(level, begin, end, depth):
    """The lower envelope on the pieces: ``min_k level_k · (1 − Σ covering depth)``."""
    lo, hi = pieces(begin, end)
    lost = tree_sum(jnp.where(covering(lo, begin, end), depth[None], 0.0))
    return lo, hi, jnp.min(level[None] * (1.0 - lost), axis=-1)


def brute(level, begin, end, depth, t):
    return min(level[k] * (1.0 - sum(depth[k, d] for d in range(begin.shape[1]) if begin[k, d] <= t < end[k, d]))
               for k in range(len(level)))


@pytest.mark.parametrize("K,D,seed", [(1, 3, 0), (2, 4, 1), (4, 2, 2), (8, 8, 3)])
def test_pieces_hold_the_minimum_at_every_instant(K, D, seed):
    rng = np.random.default_rng(seed)
    level = rng.uniform(0.5, 1.2, K).astype(np.float32)
    begin = rng.uniform(-24, 100, (K, D)).astype(np.float32)
    end = (begin + rng.exponential(8, (K, D))).astype(np.float32)
    depth = np.where(rng.uniform(size=(K, D)) < 0.7, rng.uniform(0.1, 0.6, (K, D)), 0.0).astype(np.float32)
    lo, hi, value = map(np.asarray, jax.jit(step_minimum)(level, begin, end, depth))
    assert lo.shape == (2 * K * D - 1,) and np.all(hi >= lo) and np.array_equal(lo[1:], hi[:-1])
    # Disjoint pieces that cover the span of the points exactly.
    order = np.argsort(lo, kind="stable")
    live = [(a, b) for a, b in zip(lo[order], hi[order]) if b > a]
    assert all(b0 == a1 for (_, b0), (a1, _) in zip(live[:-1], live[1:]))
    assert live[0][0] == min(begin.min(), end.min()) and live[-1][1] == max(begin.max(), end.max())
    for a, b, x in zip(lo, hi, value):
        if b > a:  # the minimum at the piece's start, middle and last instant
            for t in (a, 0.5 * (a + b), np.nextafter(b, a)):
                assert x == pytest.approx(brute(level, begin, end, depth, t), rel=1e-6, abs=1e-7)
    # Outside the pieces every function is at its level.
    assert brute(level, begin, end, depth, lo.min() - 1.0) == pytest.approx(level.min())
    assert brute(level, begin, end, depth, hi.max()) == pytest.approx(level.min())


def test_equal_points_hold_one_piece():
    begin = np.array([[1.0, 5.0], [1.0, 3.0]], np.float32)
    end = np.array([[3.0, 6.0], [2.0, 5.0]], np.float32)
    lo, hi, _ = map(np.asarray, step_minimum(np.ones(2, np.float32), begin, end, np.full((2, 2), 0.5, np.float32)))
    live = sorted((a, b) for a, b in zip(lo, hi) if b > a)
    assert live == [(1.0, 2.0), (2.0, 3.0), (3.0, 5.0), (5.0, 6.0)]


def test_no_intervals_is_the_lowest_level():
    level = np.array([1.0, 0.8, 0.9], np.float32)
    z = np.zeros((3, 2), np.float32)
    _, _, value = step_minimum(level, z, z, z)
    assert np.all(np.asarray(value) == np.float32(0.8))
