"""The O(intervals + hours) spreading of intervals over the month's hours."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mc.kernels import EVENT_SIZES, flat_month_sums, month_sums, overlap, per_hour, round_sums
from mc.kernels import capacity as capacity_mod
from mc.kernels import hours as hours_mod
from mc.units import HOURS


def brute(begin, end, weight):
    h = np.arange(HOURS, dtype=np.float64)
    out = np.zeros(HOURS)
    for b, e, w in zip(begin, end, weight):
        out += w * np.clip(np.minimum(e, h + 1) - np.maximum(b, h), 0, None)
    return out


_per_hour = jax.jit(per_hour)
# One jitted function per kernel for the module: a test with a shape compiled
# before reuses that program (a fresh jax.jit(jax.vmap(...)) would trace, lower
# and load it again for every parametrization).
_AXES = (0, 0, 0, 0, 0, None)
_month_sums = jax.jit(month_sums)
_batched_month_sums = jax.jit(jax.vmap(month_sums, in_axes=_AXES))
_flat_month_sums = jax.jit(flat_month_sums)
_batched_flat_month_sums = jax.jit(jax.vmap(flat_month_sums, in_axes=_AXES))
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


def brute_sums(begin, end, weight, count, rate, demand):
    """The four month totals in float64 from the hourly definition."""
    live = np.arange(begin.shape[1])[None, :] < count[:, None]
    lost = brute(begin[live], end[live], weight[live])
    cap = np.maximum(0.0, rate - lost)
    return np.array([demand.sum(), np.minimum(demand, cap).sum(), cap.sum(), np.maximum(0.0, demand - cap).sum()])


@pytest.mark.parametrize("busiest", [30, 60, 200])
def test_month_sums_in_each_gather_size(busiest):
    """The hourly pass gathers a chunk's live intervals into an eighth, a quarter
    or all of the slots (32, 64, 256 here) by its busiest month: each month's
    bits are those it has alone, and the sums are the brute force's."""
    assert hours_mod._sizes(256) == [32, 64, 256]
    rng = np.random.default_rng(busiest)
    B, G, S = 4, 32, 8
    begin = rng.uniform(-50, 730, (B, G, S)).astype(np.float32)
    end = (begin + rng.exponential(20, (B, G, S))).astype(np.float32)
    weight = rng.uniform(0, 300, (B, G, S)).astype(np.float32)
    count = np.zeros((B, G), np.int32)
    for b, live in enumerate([busiest, 3, busiest // 2]):  # the busiest month first; the last has none
        cards = rng.permutation(G)[:-(-live // S)]
        count[b, cards] = S
        count[b, cards[-1]] -= len(cards) * S - live
    rate = rng.uniform(5000, 9000, B).astype(np.float32)
    demand = rng.uniform(0, 9000, HOURS).astype(np.float32)
    args = tuple(jnp.asarray(x) for x in (begin, end, weight, count, rate))
    batched = np.asarray(_batched_month_sums(*args, jnp.asarray(demand)))
    one = _month_sums
    for b in range(B):
        assert np.array_equal(np.asarray(one(*(x[b] for x in args), jnp.asarray(demand))), batched[b])
        want = brute_sums(begin[b], end[b], weight[b], count[b], np.float64(rate[b]), demand.astype(np.float64))
        np.testing.assert_allclose(batched[b], want, rtol=1e-6, atol=2e-6 * 9000 * HOURS)


@pytest.mark.parametrize("demand_kind", ["flat", "varying"])
def test_month_sums_match_brute_force_and_any_batch(demand_kind):
    rng = np.random.default_rng(3)
    B, G, S = 6, 4, 5
    begin = rng.uniform(-50, 730, (B, G, S)).astype(np.float32)
    end = (begin + rng.exponential(30, (B, G, S))).astype(np.float32)
    weight = rng.uniform(0, 3000, (B, G, S)).astype(np.float32)
    count = rng.integers(0, S + 1, (B, G)).astype(np.int32)
    count[0] = S  # a month using every slot: the batch takes the largest static size
    count[1] = [1, 0, 0, 0]
    rate = rng.uniform(5000, 20000, B).astype(np.float32)
    rate[2] = 1000.0  # dips can take all of it: capacity clamps at zero
    flat = np.full(HOURS, 9000.0, np.float32)
    demand = flat if demand_kind == "flat" else rng.uniform(0, 20000, (B, HOURS)).astype(np.float32)
    in_axes = (0, 0, 0, 0, 0, None if demand_kind == "flat" else 0)
    args = tuple(jnp.asarray(x) for x in (begin, end, weight, count, rate, demand))
    batched = np.asarray(jax.jit(jax.vmap(month_sums, in_axes=in_axes))(*args))
    one = _month_sums
    for b in range(B):
        d = demand if demand_kind == "flat" else demand[b]
        single = np.asarray(one(*(x[b] for x in args[:5]), jnp.asarray(d)))
        # Bit-identical alone and in a batch that needed a larger static size.
        assert np.array_equal(single, batched[b])
        expect = brute_sums(begin[b], end[b], weight[b], count[b], np.float64(rate[b]), d.astype(np.float64))
        np.testing.assert_allclose(batched[b], expect, rtol=1e-6, atol=2e-6 * max(rate[b], d.max()) * HOURS)
    # Served + unmet is demand exactly (the sums are exact in fixed point).
    np.testing.assert_allclose(batched[:, 1] + batched[:, 3], batched[:, 0], rtol=1e-7, atol=0)


def test_round_sums_is_month_sums_in_one_round():
    """One round, every row live: ``month_sums``'s bits, whatever zero-weight
    group follows."""
    rng = np.random.default_rng(5)
    G, S = 6, 4
    begin = rng.uniform(-30, 730, (G, S)).astype(np.float32)
    end = (begin + rng.exponential(8, (G, S))).astype(np.float32)
    weight = rng.uniform(0, 3000, (G, S)).astype(np.float32)
    demand = rng.uniform(0, 30000, HOURS).astype(np.float32)
    rate = np.float32(25000.0)
    want = _month_sums(begin, end, weight, np.full(G, S, np.int32), rate, demand)
    zeros = np.zeros(3, np.float32)
    groups = ((begin, end, weight, np.arange(G)[:, None]), (zeros, zeros, zeros, np.int32(G)))
    got = jax.jit(round_sums, static_argnums=4)(groups, np.ones((1, G + 1), bool), np.array([rate]), demand, HOURS)
    np.testing.assert_array_equal(got, want)


# A day (a part round at the month's end) and half the month (two whole rounds) in the
# fast tier; an hour, a week and one round (``test_round_sums_is_month_sums_in_one_round``
# checks that one too) in the full tier: each period is its own compiled program.
@pytest.mark.parametrize("period", [pytest.param(1, marks=pytest.mark.slow), pytest.param(7, marks=pytest.mark.slow),
                                    24, 365, pytest.param(HOURS, marks=pytest.mark.slow)])
def test_round_sums_match_brute_force(period):
    rng = np.random.default_rng(period)
    R, S = 5, 6
    K = -(-HOURS // period)
    begin = rng.uniform(-30, 730, (R, S)).astype(np.float32)
    end = (begin + rng.exponential(3 * period, (R, S))).astype(np.float32)
    weight = rng.uniform(0, 2000, (R, S)).astype(np.float32)
    live = rng.random((K, R)) < 0.7
    live[:, 4] = False  # a row never live counts for nothing, however heavy
    weight[4] = 1e9
    rate = rng.uniform(0, 15000, K).astype(np.float32)
    demand = rng.uniform(0, 15000, HOURS).astype(np.float32)
    row = np.broadcast_to(np.arange(R)[:, None], (R, S))
    got = np.asarray(jax.jit(round_sums, static_argnums=4)(((begin, end, weight, row),), live, rate, demand, period))
    of_hour = np.minimum(np.arange(HOURS) // period, K - 1)
    lost = sum(np.where(live[of_hour, r], brute(begin[r], end[r], weight[r]), 0.0) for r in range(R))
    cap = np.maximum(0.0, rate.astype(np.float64)[of_hour] - lost)
    d = demand.astype(np.float64)
    want = np.array([d.sum(), np.minimum(d, cap).sum(), cap.sum(), np.maximum(0.0, d - cap).sum()])
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-5 * 15000 * HOURS)
    np.testing.assert_allclose(got[1] + got[3], got[0], rtol=1e-7, atol=0)


def _flat_case(rng, B, G, S, live_per_month, mean_hours=4.0, whole_hours=False):
    begin = rng.uniform(-168, 730, (B, G, S)).astype(np.float32)
    end = begin + rng.exponential(mean_hours, (B, G, S)).astype(np.float32)
    if whole_hours:  # interval edges on hour boundaries: empty partial hours
        begin, end = np.round(begin), np.round(end)
    count = np.zeros((B, G), np.int32)
    for b, n in enumerate(live_per_month):  # n live slots spread over the groups
        for j in range(n):
            count[b, j % G] += 1
    count = np.minimum(count, S)
    weight = rng.uniform(500, 4000, (B, G, S)).astype(np.float32)
    weight = np.where(np.arange(S)[None, None, :] < count[..., None], weight, 0.0).astype(np.float32)
    rate = rng.uniform(20000, 30000, B).astype(np.float32)
    rate[0] = 3000.0  # dips can take all of it: capacity clamps at zero
    return begin.astype(np.float32), end.astype(np.float32), weight, count, rate


# One chunk shape (months, groups, slots) for every test of the event-hour pass, so the
# pass and its hourly reference compile once for the module: a chunk of 48 months has
# room for 3 past its event size on the hourly route, and 128 slots hold the busiest month.
_FLAT = (48, 16, 8)

# Live intervals of the busiest month: at and just above each event size, and far past them.
_BUSIEST = sorted({1, *EVENT_SIZES, *(s + 1 for s in EVENT_SIZES), 3 * EVENT_SIZES[-1]})


def _flat_against_hourly(begin, end, weight, count, rate, level):
    """``flat_month_sums`` batched and alone, checked bit for bit against
    ``month_sums`` with 730 copies of the level; returns the batched sums."""
    args = tuple(jnp.asarray(x) for x in (begin, end, weight, count, rate))
    want = np.asarray(_batched_month_sums(*args, jnp.full(HOURS, level)))
    got = np.asarray(_batched_flat_month_sums(*args, level))
    np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32))
    return got


@pytest.mark.parametrize("busiest", _BUSIEST)
def test_flat_month_sums_is_month_sums_bit_for_bit(busiest):
    """The event-hour pass gives ``month_sums``'s bits for 730 copies of the level,
    on either route, alone and batched, and matches the hourly definition."""
    rng = np.random.default_rng(busiest)
    B, G, S = _FLAT
    live = [busiest] + list(rng.integers(0, busiest + 1, B - 1))
    begin, end, weight, count, rate = _flat_case(rng, B, G, S, live, whole_hours=busiest % 2 == 0)
    level = np.float32(24000.0)
    got = _flat_against_hourly(begin, end, weight, count, rate, level)
    one = _flat_month_sums
    args = tuple(jnp.asarray(x) for x in (begin, end, weight, count, rate))
    for b in (0, 1, B - 1):
        np.testing.assert_array_equal(np.asarray(one(*(x[b] for x in args), level)), got[b])
        expect = brute_sums(begin[b], end[b], weight[b], count[b], np.float64(rate[b]), np.full(HOURS, 24000.0))
        np.testing.assert_allclose(got[b], expect, rtol=1e-6, atol=2e-6 * 30000 * HOURS)


@pytest.mark.parametrize("usual, spilling", [pytest.param(8, 0, marks=pytest.mark.slow), (8, 2), (16, 3), (32, 0), (32, 1), (32, 3), (32, 5),
                                             (32, 48)])
def test_flat_month_sums_routes_each_month(usual, spilling):
    """A chunk of 48 months has room for 48 // SPILL_SHARE = 3 months past its
    event size on the hourly route; more send the whole chunk hourly. Months of
    up to ``usual`` live intervals and ``spilling`` busier ones, wherever they
    sit in the chunk, give the hourly pass's bits, and each month the bits it
    has in a chunk of its own."""
    rng = np.random.default_rng(100 * usual + spilling)
    B, G, S = _FLAT
    assert B // capacity_mod.SPILL_SHARE == 3 and usual in EVENT_SIZES
    live = rng.integers(0, usual + 1, B)
    where = rng.choice(B, spilling, replace=False)
    live[where] = rng.integers(usual + 1, G * S + 1, spilling)
    begin, end, weight, count, rate = _flat_case(rng, B, G, S, list(live), mean_hours=12.0)
    assert np.sum(count.sum(axis=1) > usual) == spilling
    level = np.float32(22000.0)
    got = _flat_against_hourly(begin, end, weight, count, rate, level)
    for b in sorted(where)[:2]:
        alone = tuple(jnp.asarray(x[b]) for x in (begin, end, weight, count, rate))
        np.testing.assert_array_equal(np.asarray(_flat_month_sums(*alone, level)), got[b])


def test_event_totals_matches_brute_force_at_shared_event_hours():
    """Intervals sharing first and last hours (an hour counted once), sub-hour
    intervals, one running to the month's end and one before it: the event
    pass alone against the hour-by-hour definition."""
    b = np.array([[10.2, 10.7, 12.0, 10.5, 729.3, -5.0, 100.0, 100.0]], np.float32)
    e = np.array([[12.0, 10.9, 15.5, 15.5, 731.0, -1.0, 100.0, 101.0]], np.float32)
    w = np.array([[3000.0, 5000.0, 4000.0, 2500.0, 7000.0, 9000.0, 8000.0, 100.0]], np.float32)
    rate, level = np.float32([12000.0]), np.float32([9000.0])
    _, top = jnp.frexp(jnp.float32(12000.0))
    k = jnp.minimum(hours_mod._scale(jnp.asarray(w), capacity_mod._LOSS), capacity_mod._RATE - top)
    totals = jax.jit(capacity_mod._event_totals, static_argnums=6)
    got = np.asarray(totals(*(jnp.asarray(x) for x in (b, e, w)), k, jnp.asarray(rate), jnp.asarray(level), HOURS))[0]
    expect = brute_sums(b, e, w, np.array([8]), 12000.0, np.full(HOURS, 9000.0))
    np.testing.assert_allclose(got, expect, rtol=1e-6, atol=1e-3)


def test_flat_month_sums_overlaps_long_intervals_and_edges():
    """Overlapping and long intervals, intervals before the month, past its end,
    and a month without a live interval: the hourly pass's bits."""
    rng = np.random.default_rng(11)
    B, G, S = _FLAT
    live = [12, 6, 0, 20, 3, 9] + list(rng.integers(0, 9, B - 6))  # months 0, 3 and 5 spill past 8
    begin, end, weight, count, rate = _flat_case(rng, B, G, S, live, mean_hours=80.0)
    begin[1, 0, :3] = [-10.0, 725.5, 729.0]
    end[1, 0, :3] = [-2.0, 740.0, 730.0]
    begin[3, :, :] = 100.0  # every interval on the same hours
    end[3, :, :] = 103.5
    level = np.float32(15000.0)
    args = tuple(jnp.asarray(x) for x in (begin, end, weight, count, rate))
    want = np.asarray(_batched_month_sums(*args, jnp.full(HOURS, level)))
    got = np.asarray(_batched_flat_month_sums(*args, level))
    np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32))
    assert got[2, 2] == pytest.approx(rate[2] * HOURS, rel=1e-6)  # no live dip: full capacity


def test_flat_month_sums_without_interval_slots():
    """No slots at all (``dips.max_count = 0``): the hourly pass's bits, full capacity."""
    B, G = 3, 5
    empty = jnp.zeros((B, G, 0), jnp.float32)
    count = jnp.zeros((B, G), jnp.int32)
    rate = jnp.asarray([3000.0, 24000.0, 30000.0], jnp.float32)
    level = np.float32(20000.0)
    want = np.asarray(_batched_month_sums(empty, empty, empty, count, rate, jnp.full(HOURS, level)))
    got = np.asarray(_batched_flat_month_sums(empty, empty, empty, count, rate, level))
    np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32))
    np.testing.assert_allclose(got[:, 2], np.asarray(rate) * HOURS, rtol=1e-6)


# At the threshold and one past it in the fast tier; below it and far above in the full.
@pytest.mark.parametrize("groups", [pytest.param(hours_mod.COMPARE_GROUPS - 1, marks=pytest.mark.slow),
                                    hours_mod.COMPARE_GROUPS, hours_mod.COMPARE_GROUPS + 1,
                                    pytest.param(300, marks=pytest.mark.slow)])
def test_gather_live_groups_below_and_above_the_search_threshold(groups):
    """The gather's group lookup compares up to COMPARE_GROUPS groups and counts
    above: the same intervals either way, and ``month_sums`` as the brute force."""
    rng = np.random.default_rng(groups)
    B, S = 3, 4
    count = rng.integers(0, 3, (B, groups)).astype(np.int32)
    count[:, ::7] = 0
    upto = np.cumsum(count, axis=1)
    size = 16
    got = np.asarray(jax.jit(hours_mod._group_of, static_argnums=1)(jnp.asarray(upto), size))
    want = np.minimum(np.sum(upto[:, None, :] <= np.arange(size)[None, :, None], axis=2), groups - 1)
    np.testing.assert_array_equal(got, want)
    begin = rng.uniform(-50, 730, (B, groups, S)).astype(np.float32)
    end = (begin + rng.exponential(6, (B, groups, S))).astype(np.float32)
    weight = rng.uniform(0, 50, (B, groups, S)).astype(np.float32)
    rate = np.full(B, 40000.0, np.float32)
    demand = np.full(HOURS, 30000.0, np.float32)
    args = tuple(jnp.asarray(x) for x in (begin, end, weight, count, rate))
    sums = np.asarray(_batched_month_sums(*args, jnp.asarray(demand)))
    for b in range(B):
        expect = brute_sums(begin[b], end[b], weight[b], count[b], 40000.0, demand.astype(np.float64))
        np.testing.assert_allclose(sums[b], expect, rtol=1e-6, atol=2e-6 * 40000 * HOURS)
