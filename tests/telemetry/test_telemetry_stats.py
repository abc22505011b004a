"""The law the samples follow, checked on many of them: outside dips a sample is the
true rate times ``1 + σ(Δ)·ε`` (clipped at zero), inside a dip it loses the dip's
depth, the mean of ``k`` consecutive samples errs by ``σ(Δ)/sqrt(k)``, and dips keep
their rate over a span of many months. Every tolerance is a number of standard
errors of the sample size at hand."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest

import mc
from mc import telemetry

Z = 5.0  # standard errors: a false failure about once in 3.5 million checks
CARDS = 64
EVERY = 5.0  # minutes


def _run(sigma_hour: float, seed: int = 11):
    sc = mc.presets.get("golden-idler").replace({"window.sigma_hour": sigma_hour})
    s = telemetry.Sampling(EVERY, 730.0)
    e = telemetry.emit(sc, s, cards=CARDS, seed=seed)
    y = e.samples.rate.to_numpy().astype(np.float64).reshape(CARDS, s.samples)
    t = e.cards.true_rate.to_numpy().astype(np.float64)
    return e, s, y / t[:, None]


def touched(e, s) -> np.ndarray:
    """(cards, samples) int: how many dips overlap each sample's window."""
    n = s.samples
    out = np.zeros((CARDS, n + 1), np.int64)
    for row in e.dips.itertuples():
        lo = int(math.floor(row.start / s.delta))
        hi = min(n, int(math.ceil((row.start + row.hours) / s.delta)))
        if hi > lo:
            out[row.card, lo] += 1
            out[row.card, hi] -= 1
    return np.cumsum(out, axis=1)[:, :n]


@pytest.fixture(scope="module")
def quiet():
    """σ(5 min) = 0.05·sqrt(12) ≈ 0.17: the clip at zero is 5.8 sd away (never met)."""
    return _run(0.05)


def test_outside_dips_the_mean_is_the_true_rate(quiet):
    e, s, rel = quiet
    sigma = s.sigma(0.05)
    clean = touched(e, s) == 0
    x = rel[clean]
    assert x.size > 0.9 * rel.size
    assert abs(x.mean() - 1.0) < Z * sigma / math.sqrt(x.size)
    for i in range(CARDS):  # each card's own mean is its own true rate
        xi = rel[i][clean[i]]
        assert abs(xi.mean() - 1.0) < Z * sigma / math.sqrt(xi.size), i


def test_outside_dips_the_spread_is_sigma_of_delta(quiet):
    e, s, rel = quiet
    sigma = s.sigma(0.05)
    x = rel[touched(e, s) == 0]
    assert abs(x.std(ddof=1) - sigma) < Z * sigma / math.sqrt(2 * x.size)
    assert sigma == pytest.approx(0.05 * math.sqrt(60 / EVERY))


def test_the_mean_of_k_samples_errs_by_sigma_over_sqrt_k(quiet):
    e, s, rel = quiet
    sigma = s.sigma(0.05)
    clean = touched(e, s) == 0
    spreads = {}
    for k in (1, 4, 16, 64):
        blocks = s.samples // k
        r = rel[:, :blocks * k].reshape(CARDS, blocks, k)
        ok = clean[:, :blocks * k].reshape(CARDS, blocks, k).all(axis=2)
        means = r.mean(axis=2)[ok]
        sd = means.std(ddof=1)
        want = sigma / math.sqrt(k)
        assert abs(sd - want) < Z * want / math.sqrt(2 * means.size), (k, sd, want)
        spreads[k] = sd
    slope = np.polyfit(np.log(list(spreads)), np.log(list(spreads.values())), 1)[0]
    assert abs(slope + 0.5) < 0.03


def test_inside_a_dip_a_sample_loses_its_depth(quiet):
    e, s, rel = quiet
    sigma = s.sigma(0.05)
    n = touched(e, s)
    got = []
    for row in e.dips.itertuples():
        lo = int(math.ceil(row.start / s.delta))  # samples whose whole window is inside the dip
        hi = min(s.samples, int(math.floor((row.start + row.hours) / s.delta)))
        for j in range(lo + 1, hi + 1):  # sample j-1 covers [(j-1)Δ, jΔ)
            if n[row.card, j - 1] == 1:
                got.append(rel[row.card, j - 1] / (1.0 - row.depth))
    got = np.asarray(got)
    assert got.size > 1000
    assert abs(got.mean() - 1.0) < Z * sigma / math.sqrt(got.size)


def test_the_clip_at_zero_at_the_default_noise():
    """At ``sigma_hour = 0.25`` a 5-minute sample errs by 87%: a share
    ``Φ(−1/σ)`` of samples outside dips read 0, and their mean is that of
    ``max(0, 1 + σ·ε)``, ``Φ(1/σ) + σ·φ(1/σ)``, above the true rate."""
    e, s, rel = _run(0.25, seed=12)
    sigma = s.sigma(0.25)
    x = rel[touched(e, s) == 0]
    nd = NormalDist()
    zero = nd.cdf(-1 / sigma)
    assert abs((x == 0).mean() - zero) < Z * math.sqrt(zero * (1 - zero) / x.size)
    mean = nd.cdf(1 / sigma) + sigma * nd.pdf(1 / sigma)
    assert abs(x.mean() - mean) < Z * x.std() / math.sqrt(x.size)
    assert mean > 1.05


@pytest.mark.slow
def test_dips_keep_their_rate_over_a_year():
    """A year is twelve months of the fleet's dips: 2 per card per 730 h each (the cap
    of 8 applies per month, so it does not bind the year), uniform starts,
    exponential lengths, uniform depths."""
    sc = mc.presets.get("golden-idler")
    s = telemetry.Sampling(60.0, 8760.0)
    cards = 256
    e = telemetry.emit(sc, s, cards=cards, seed=5)
    counts = e.cards.dips.to_numpy()
    lam = 2.0 * 12
    assert abs(counts.mean() - lam) < Z * math.sqrt(lam / cards)
    d = e.dips
    assert len(d) == counts.sum()
    per_month = d.groupby([d.card, (d.start // 730).astype(int)]).size()
    assert per_month.max() <= sc.dips.max_count and (d.start >= 0).all() and (d.start < 8760).all()
    m = len(d)
    assert abs(d.start.mean() - 4380) < Z * 8760 / math.sqrt(12 * m)
    assert abs(d.hours.mean() - 4.0) < Z * 4.0 / math.sqrt(m)
    assert abs(d.depth.mean() - 0.4) < Z * 0.4 / math.sqrt(3 * m)
    assert d.depth.between(0.2, 0.6).all()
