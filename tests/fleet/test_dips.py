"""Dips: Poisson counts over [−W, 730), uniform starts, exponential lengths."""

import math

import jax
import numpy as np
import pytest

import mc
from conftest import batch_draws
from mc.fleet import dips

N_MONTHS = 2000  # × 32 cards
# 99.9% quantiles of chi-square by degrees of freedom.
CHI2_999 = {5: 20.515, 6: 22.458, 7: 24.322, 8: 26.124, 9: 27.877, 10: 29.588}


def placed(hours, max_count=24, rate=2.0):
    sc = mc.presets.get("golden-idler").replace({"window.hours": hours, "dips.max_count": max_count,
                                                 "dips.rate": rate})
    d = batch_draws(sc, N_MONTHS)
    cd = jax.jit(jax.vmap(lambda x: dips.place(x, sc.window.hours, sc.dips)))(d.dips)  # per month
    out = {k: np.asarray(v).reshape(-1, max_count) for k, v in cd._asdict().items() if k != "count"}
    out["count"] = np.asarray(cd.count).reshape(-1)
    return sc, out


@pytest.mark.slow
@pytest.mark.parametrize("hours", [1, 24, 168])
def test_counts_are_poisson(hours):
    _, cd = placed(hours)
    counts = cd["count"]
    # The live slots are the leading ``count`` of each card (the token pass relies on it).
    assert np.array_equal(cd["depth"] > 0, np.arange(24)[None, :] < counts[:, None])
    lam = 2.0 * (730 + hours) / 730
    n = counts.size
    assert abs(counts.mean() - lam) < 5 * math.sqrt(lam / n)
    assert abs(counts.var() - lam) < 5 * lam * math.sqrt(2 / n + 1 / (lam * n))
    # Chi-square goodness of fit over 0..7 and a tail bin.
    pmf = [math.exp(-lam) * lam**k / math.factorial(k) for k in range(8)]
    expected = np.array(pmf + [1 - sum(pmf)]) * n
    observed = np.array([np.sum(counts == k) for k in range(8)] + [np.sum(counts >= 8)])
    chi2 = float(np.sum((observed - expected) ** 2 / expected))
    assert chi2 < CHI2_999[len(expected) - 1]


def test_cap_truncates_counts():
    _, cd = placed(168, max_count=2, rate=20.0)
    counts = (cd["depth"] > 0).sum(axis=1)
    assert counts.max() == 2 and counts.mean() > 1.99


@pytest.mark.parametrize("hours", [1, 168])
def test_starts_lengths_depths(hours):
    sc, cd = placed(hours)
    live = cd["depth"] > 0
    b, length, depth = cd["begin"][live], (cd["end"] - cd["begin"])[live], cd["depth"][live]
    n = b.size
    span = 730 + hours
    assert b.min() >= -hours and b.max() < 730
    assert abs(b.mean() - (730 - hours) / 2) < 5 * span / math.sqrt(12 * n)
    assert abs(length.mean() - 4.0) < 5 * 4.0 / math.sqrt(n)
    assert abs(length.std() - 4.0) < 5 * 4.0 * math.sqrt(8 / n)  # exponential: sd = mean
    assert depth.min() >= 0.2 and depth.max() <= 0.6
    assert abs(depth.mean() - 0.4) < 5 * 0.4 / math.sqrt(12 * n)


def test_no_dip_slots_means_full_capacity():
    # dips.max_count = 0: no dips at all; the run set's capacity is its true rate all month.
    sc = mc.presets.get("golden-idler-steady").replace({"dips.max_count": 0})
    d = batch_draws(sc, 16)
    out = jax.jit(jax.vmap(lambda x: mc.fleet.outcome(x, sc, cards=True)))(d)
    rate = np.where(np.asarray(out["run"]), np.asarray(out["true_rate"], np.float64), 0.0).sum(axis=1)
    np.testing.assert_allclose(np.asarray(out["capacity_tokens"]), rate * 730 * 3600, rtol=1e-6)
