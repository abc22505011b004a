"""The O(intervals + hours) spreading of intervals over the month's hours."""

import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from mc._hours import HOURS, overlap, per_hour


def brute(begin, end, weight):
    h = np.arange(HOURS, dtype=np.float64)
    out = np.zeros(HOURS)
    for b, e, w in zip(begin, end, weight):
        out += w * np.clip(np.minimum(e, h + 1) - np.maximum(b, h), 0, None)
    return out


_per_hour = jax.jit(per_hour)
interval = st.tuples(st.floats(-200, 800, width=32), st.floats(0, 300, width=32),
                     st.floats(0, 5000, width=32))


@settings(max_examples=60, deadline=None)
@given(st.lists(interval, min_size=1, max_size=12))
def test_per_hour_matches_brute_force(intervals):
    b = np.array([i[0] for i in intervals], np.float32)
    e = b + np.array([i[1] for i in intervals], np.float32)
    w = np.array([i[2] for i in intervals], np.float32)
    # Padded to 12 intervals of zero weight: one compiled shape for every example.
    pad = 12 - b.size
    bp, ep, wp = (np.pad(x, (0, pad)) for x in (b, e, w))
    got = np.asarray(_per_hour(jnp.asarray(bp), jnp.asarray(ep), jnp.asarray(wp)))
    np.testing.assert_allclose(got, brute(b, e, w), atol=1e-3 * max(1.0, w.sum()), rtol=1e-5)


def test_per_hour_edges():
    # Inside one hour, across hour edges, before the month, past its end.
    b = jnp.array([3.25, 9.5, -5.0, 728.5, 100.0])
    e = jnp.array([3.75, 12.25, 1.5, 740.0, 100.0])
    w = jnp.array([1.0, 2.0, 4.0, 8.0, 16.0])
    got = np.asarray(_per_hour(b, e, w))
    expect = np.zeros(HOURS)
    expect[3] = 0.5
    expect[9], expect[10], expect[11], expect[12] = 1.0, 2.0, 2.0, 0.5
    expect[0], expect[1] = 4.0, 2.0
    expect[728], expect[729] = 4.0, 8.0
    np.testing.assert_allclose(got, expect, atol=1e-5)


def test_overlap():
    assert float(overlap(jnp.float32(-3), jnp.float32(2), -1.0, 0.0)) == 1.0
    assert float(overlap(jnp.float32(5), jnp.float32(6), 0.0, 1.0)) == 0.0
