"""The whole-card greedy run set."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mc.fleet import runset

_run_set = jax.jit(runset.run_set, static_argnums=4)
SCORE = jnp.array([3000.0, 7000.0, 5000.0, 6000.0])
PRICE = jnp.array([1000.0, 2600.0, 2600.0, 1400.0])  # $/card-month
# tokens per dollar order: card 3 (4.29), card 0 (3.0), card 1 (2.69), card 2 (1.92)


@pytest.mark.parametrize("target,expect", [
    (1.0, [False, False, False, True]),  # one card already covers it
    (6000.0, [False, False, False, True]),  # 6000 added is not below 6000: stop
    (6000.5, [True, False, False, True]),
    (9000.0, [True, False, False, True]),
    (9000.5, [True, True, False, True]),
    (1e9, [True, True, True, True]),  # short of target: everyone runs
    (0.0, [False, False, False, False]),
])
def test_greedy(target, expect):
    got = _run_set(SCORE, PRICE, jnp.zeros(4, bool), jnp.float32(target), "steady")
    assert np.asarray(got).tolist() == expect


def test_evicted_never_run():
    evicted = jnp.array([False, False, False, True])
    got = _run_set(SCORE, PRICE, evicted, jnp.float32(6500.0), "peak")
    assert np.asarray(got).tolist() == [True, True, False, False]
    assert np.asarray(_run_set(SCORE, PRICE, evicted, jnp.float32(0.0), "all")).tolist() == [
        True, True, True, False]


def test_ties_break_by_lower_index():
    s = jnp.array([5000.0, 5000.0, 5000.0])
    got = _run_set(s, jnp.full(3, 2600.0), jnp.zeros(3, bool), jnp.float32(9000.0), "steady")
    assert np.asarray(got).tolist() == [True, True, False]


@pytest.mark.parametrize("mode,expect", [("steady", 2.0), ("peak", 4.0)])
def test_target(mode, expect):
    assert float(runset.target(jnp.array([1.0, 4.0, 1.0, 2.0]), mode)) == expect
