"""The double-float clock and closed-form runs of steps (``mc.kernels.clock``)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mc.kernels import clock


def f64(t):
    return np.asarray(t[0], np.float64) + np.asarray(t[1], np.float64)


def test_cumsum_keeps_double_precision():
    rng = np.random.default_rng(0)
    x = rng.exponential(0.01, size=(3, 100_000)).astype(np.float32)
    got = f64(jax.jit(clock.cumsum)(jnp.asarray(x)))
    want = np.cumsum(x.astype(np.float64), axis=-1)
    # float32 alone would be ~1e3 · 6e-8 = 6e-5 s off at the end
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)


def test_cumsum_bits_do_not_depend_on_the_batch():
    x = np.random.default_rng(1).exponential(1.0, size=(5, 777)).astype(np.float32)
    cumsum = jax.jit(clock.cumsum)
    full = cumsum(jnp.asarray(x))
    one = cumsum(jnp.asarray(x[2:3]))
    np.testing.assert_array_equal(np.asarray(full[0][2]), np.asarray(one[0][0]))
    np.testing.assert_array_equal(np.asarray(full[1][2]), np.asarray(one[1][0]))


def test_add_sub_many_small_steps():
    t = (jnp.float32(1000.0), jnp.float32(0.0))
    step = jnp.float32(0.0048)

    def body(i, t):
        return clock.add(t, step)

    t = jax.lax.fori_loop(0, 10_000, body, t)
    want = 1000.0 + 10_000 * float(step)
    assert abs(f64(t) - want) < 1e-8
    assert abs(float(clock.sub(t, (jnp.float32(1000.0), jnp.float32(0.0)))) - 48.0) < 1e-4


def test_min_max_where():
    a = (jnp.float32(5.0), jnp.float32(1e-7))
    b = (jnp.float32(5.0), jnp.float32(-1e-7))
    assert f64(clock.maximum(a, b)) == f64(a) and f64(clock.minimum(a, b)) == f64(b)
    assert f64(clock.where(jnp.bool_(False), a, b)) == f64(b)


def test_run_time_is_the_sum_of_its_steps():
    a, b = np.float32(0.0048), np.float32(3.9e-7)
    for k in (0, 1, 2, 17, 4095):
        want = sum(float(a) + float(b) * i for i in range(1, k + 1))
        assert float(clock.run_time(a, b, jnp.int32(k))) == pytest.approx(want, rel=1e-6, abs=0)


@pytest.mark.parametrize("a, b", [(0.0048, 0.0), (0.0048, 3.9e-7), (1e-3, 1e-3), (2.0, 0.5)])
def test_steps_to_reach_is_the_first_boundary_at_or_past_the_gap(a, b):
    a, b = np.float32(a), np.float32(b)
    rng = np.random.default_rng(2)
    kmax = jnp.int32(5000)
    gaps = np.concatenate([rng.uniform(-1, 30, 500), [0.0, float(a), float(a) * 2 + float(b) * 3]]).astype(np.float32)
    got = np.asarray(jax.vmap(lambda g: clock.steps_to_reach(a, b, g, kmax))(jnp.asarray(gaps)))
    T = np.asarray(clock.run_time(a, b, jnp.arange(5001, dtype=jnp.int32)))  # T[k], the same function
    for g, k in zip(gaps, got):
        reach = np.flatnonzero(T[1:] >= g)
        want = 5000 if reach.size == 0 else int(reach[0]) + 1
        assert k == want, (g, k, want)


def test_steps_to_reach_caps_at_kmax():
    assert int(clock.steps_to_reach(np.float32(1.0), np.float32(0.0), np.float32(100.0), jnp.int32(7))) == 7
    assert int(clock.steps_to_reach(np.float32(1.0), np.float32(0.0), np.float32(-3.0), jnp.int32(7))) == 1


def _pairs(x: np.ndarray):
    hi = x.astype(np.float32)
    return hi, (x - hi.astype(np.float64)).astype(np.float32)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_count_before_is_a_float64_searchsorted(seed):
    rng = np.random.default_rng(seed)
    # times up to a month, many closer together than a float32 ulp, some repeated
    x = np.sort(np.concatenate([rng.uniform(0, 2.6e6, 300), 1e6 + rng.uniform(0, 1e-3, 50), [5e5] * 4]))
    xs = tuple(map(jnp.asarray, _pairs(x)))
    queries = np.concatenate([x[::7], x[::11] + 1e-9, x[::13] - 1e-9, [-1.0, 0.0, 3e6], 1e6 + rng.uniform(0, 1e-3, 20)])
    f = jax.jit(jax.vmap(lambda h, l: clock.count_before(xs, (h, l))))
    qh, ql = _pairs(queries)
    got = np.asarray(f(qh, ql))
    # times and queries as the clock holds them (hi + lo), counted in float64
    held = f64(_pairs(x))
    assert (np.diff(held) >= 0).all()
    want = np.searchsorted(held, f64((qh, ql)), side="left")
    np.testing.assert_array_equal(got, want)


def test_count_before_of_one_time():
    xs = (jnp.asarray([2.0], jnp.float32), jnp.asarray([0.0], jnp.float32))
    for t, want in ((1.0, 0), (2.0, 0), (3.0, 1)):
        assert int(clock.count_before(xs, (jnp.float32(t), jnp.float32(0.0)))) == want
