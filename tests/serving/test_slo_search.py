"""The rate search (SPEC §7 "SLO rate"): each replication's own crossing on a fixed
grid, their Harrell–Davis quantile. Pure NumPy on synthetic percentile paths with
known answers: smooth in the rate where a raw pass count is a knife edge, correct
when paths are not monotone, and the statistic against plain references."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

from mc._validate import ParamError
from mc.serving import search as R

K, SLO = 32, 0.5


def paths(rate, crossing, jump=0.05, redrawn=0.05):
    """(K,) percentiles at ``rate``: ``SLO · (rate / crossing_i)^0.7`` (so replication
    ``i`` crosses the SLO at ``crossing_i`` in law), times a jitter of up to ``±jump``
    in log: a path's own, which changes every 0.1% of rate (so paths are not
    monotone), and for a share ``redrawn`` of replications a hash of the rate's
    float32 bits, so one ulp of the rate redraws them (one float step moved about
    0.5% of the real-traffic study's p95s, by up to 1%: this is ten times as many,
    by up to 5%)."""
    bits = struct.unpack("<I", struct.pack("<f", np.float32(rate)))[0]
    own = np.random.default_rng([int(math.floor(math.log(rate) * 1000) + 10**6), 7]).uniform(-jump, jump, crossing.size)
    hashed = np.random.default_rng([bits, 8])
    flip = hashed.uniform(size=crossing.size) < redrawn
    jitter = np.where(flip, hashed.uniform(-jump, jump, crossing.size), own)
    return SLO * (rate / crossing) ** 0.7 * np.exp(jitter)


CROSS = np.exp(np.random.default_rng(1).normal(math.log(6.0), 0.15, K))  # req/s


def hd_reference(c, p):
    """Harrell–Davis by integrating the Beta density numerically."""
    s = np.sort(c)
    k = s.size
    a, b = p * (k + 1), (1 - p) * (k + 1)
    t = np.linspace(0, 1, 400_001)[1:-1]
    dens = np.exp((a - 1) * np.log(t) + (b - 1) * np.log1p(-t) + math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b))
    cdf = np.concatenate([[0.0], np.cumsum((dens[1:] + dens[:-1]) / 2) * (t[1] - t[0])])
    w = np.diff(np.interp(np.arange(k + 1) / k, t, cdf / cdf[-1]))
    return float(w @ s)


def test_a_monotone_paths_crossing_is_where_it_meets_the_slo():
    x = np.log(np.geomspace(2.0, 16.0, 31))
    z = 0.7 * (x[:, None] - np.log(CROSS)[None, :])  # log(q / SLO), linear in log rate
    np.testing.assert_allclose(R.crossings(x, z), np.log(CROSS), atol=1e-12)


def test_a_path_that_dips_back_counts_each_stretch_it_passes():
    x = np.log(np.geomspace(1.0, 8.0, 61))
    # fails on [2, 3) in rate, passes again on [3, 5), fails from 5 on: far from the band's edges
    z = np.where((np.exp(x) >= 2) & (np.exp(x) < 3) | (np.exp(x) >= 5), 1.0, -1.0)[:, None]
    got = R.crossings(x, z)[0]
    steps = np.diff(x)
    # each change of side lies half way between grid rows, by the linear interpolation
    want = x[0] + (z[:-1, 0] + z[1:, 0] < 0).astype(float) @ steps + 0.5 * (np.abs(np.diff(z[:, 0])) > 0) @ steps
    assert got == pytest.approx(want, abs=1e-12)
    assert got == pytest.approx(math.log(1.0) + math.log(2 / 1) + math.log(5 / 3), abs=2 * steps.max())


def test_harrell_davis_against_a_numerical_beta():
    c = np.random.default_rng(3).normal(size=24)
    for p in (0.1, 0.5, 0.8):
        w = R.hd_weights(24, p)
        assert w.sum() == pytest.approx(1.0, abs=1e-12) and np.all(w >= 0)
        assert R.quantile(c, p)[0] == pytest.approx(hd_reference(c, p), abs=1e-6)
    assert R.quantile(c, 0.0)[0] == c.min()  # share 1: every replication
    assert R.quantile(c[:1], 0.1) == (c[0], c[0], c[0])  # a replay: its own crossing


@pytest.mark.parametrize("a, b, x", [(0.7, 3.0, 0.2), (3.3, 29.7, 0.1), (12.0, 2.5, 0.9), (1.0, 4.0, 0.3)])
def test_the_incomplete_beta_meets_its_identities(a, b, x):
    got = R._betainc(a, b, x)
    assert got + R._betainc(b, a, 1 - x) == pytest.approx(1.0, abs=1e-13)
    if a == 1.0:
        assert got == pytest.approx(1 - (1 - x) ** b, abs=1e-13)
    # I_x(a+1, b) = I_x(a, b) − x^a (1−x)^b / (a B(a, b))
    term = math.exp(a * math.log(x) + b * math.log1p(-x) - math.lgamma(a) - math.lgamma(b) + math.lgamma(a + b)) / a
    assert R._betainc(a + 1, b, x) == pytest.approx(got - term, abs=1e-13)


def test_the_rate_is_the_crossings_quantile_and_its_interval_holds_it():
    got = R.search(lambda r: paths(r, CROSS, jump=0.0), SLO, start=10.0, share=0.9, rel_tol=0.02)
    want = math.exp(hd_reference(np.log(CROSS), 0.1))
    assert got.rate == pytest.approx(want, rel=2e-3)  # the crossings, interpolated between rows of 2%
    assert got.lo <= got.rate <= got.hi
    assert got.tried == sorted(got.tried, key=lambda t: t["rate"])
    assert got.tried[0]["share"] == 1.0 and got.tried[-1]["share"] == 0.0


@pytest.mark.parametrize("start", [10.0, 7.3, 5.1])
def test_one_ulp_of_the_start_does_not_move_the_rate(start):
    """Every rate tried moves by one float32 step and a twentieth of the percentiles
    are redrawn within ±5%: the rate moves by less than a figure shows (0.5%)."""
    start = float(np.float32(start))
    ulp = float(np.nextafter(np.float32(start), np.float32(20.0)))
    a, b = (R.search(lambda r: paths(r, CROSS), SLO, start=s0, share=0.9, rel_tol=0.02).rate for s0 in (start, ulp))
    assert abs(b / a - 1) < 0.005


def test_the_rate_is_continuous_in_every_percentile():
    """Moving one replication's percentile at one rate by δ in log moves the rate by
    at most ``δ · step / (2·BAND)`` times that replication's largest weight."""
    x = np.log(10.0) + np.arange(-40, 20) * math.log(2) / 35
    z = np.log(np.stack([paths(math.exp(xi), CROSS) for xi in x]) / SLO)
    base = R.quantile(R.crossings(x, z), 0.1)[0]
    w = R.hd_weights(K, 0.1).max()
    step = x[1] - x[0]
    for i in range(K):
        for r in range(0, x.size, 7):
            moved = z.copy()
            moved[r, i] += 0.05
            got = R.quantile(R.crossings(x, moved), 0.1)[0]
            assert abs(got - base) <= w * 0.05 * step / (2 * R.BAND) + 1e-12


def test_an_slo_met_everywhere_or_nowhere_is_refused():
    with pytest.raises(ParamError, match=r"^slo_ttft=0.5: is met at every rate tried, up to 6\.554e\+05 req/s"):
        R.search(lambda r: np.full(4, 0.1), 0.5, start=10.0, unit="req/s")
    with pytest.raises(ParamError, match=r"^slo_ttft=0.5: no rate meets it: p95 TTFT is 2 \(median\) at the lowest"):
        R.search(lambda r: np.full(4, 2.0), 0.5, start=10.0, what="p95 TTFT")


def test_the_grid_is_the_fewest_steps_a_doubling_within_the_tolerance():
    for tol in (0.01, 0.02, 0.05, 0.1, 1.0):
        g = R.steps_per_doubling(tol)
        assert 2 ** (1 / g) - 1 <= tol + 1e-12 and (g == 1 or 2 ** (1 / (g - 1)) - 1 > tol)


@pytest.mark.parametrize("kw, match", [(dict(start=0.0), "start=0.0"), (dict(share=0.0), "share=0.0"),
                                       (dict(rel_tol=1e-4), "rel_tol=0.0001"), (dict(bound=-1.0), "slo_ttft=-1.0")])
def test_bad_search_fields_are_refused(kw, match):
    args = {"bound": SLO, "start": 10.0, **kw}
    with pytest.raises(ParamError, match=match):
        R.search(lambda r: paths(r, CROSS), args.pop("bound"), **args)
