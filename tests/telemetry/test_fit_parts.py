"""The fit's parts on data whose answer is known: rows back onto a grid, the clipped
noise's moments and ``σ`` from censored residuals, the lemon mixture, and dips seen
in a series with one dip planted. Tolerances are standard errors of the sample size."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import mc
from mc import telemetry
from mc.telemetry import detect, dipfit, mixture, noise, series
from mc.telemetry.series import Series

Z = 5.0


def test_rows_back_onto_their_grid():
    e = telemetry.emit(mc.Scenario(pool=mc.Pool.of(("bargain", 2), ("flagship", 1))), telemetry.Sampling(15.0, 10.0))
    s = series.from_frame(e.samples)
    assert s.delta == pytest.approx(0.25) and s.t0 == pytest.approx(0.25) and s.y.shape == (3, 40)
    assert list(s.cards) == [0, 1, 2] and list(s.classes) == ["bargain", "bargain", "flagship"]
    assert np.array_equal(s.y.ravel(), e.samples.rate.to_numpy().astype(np.float64))
    gappy = e.samples.drop(index=[5, 6, 50]).sample(frac=1.0, random_state=1)  # missing samples, any order
    g = series.from_frame(gappy)
    assert g.y.shape == (3, 40) and np.isnan(g.y).sum() == 3 and np.isnan(g.y[0, 5:7]).all()


@pytest.mark.parametrize("change, field", [
    (lambda f: f.drop(columns="rate"), "rows"), (lambda f: f.assign(rate=-f.rate), "rows.rate"),
    (lambda f: pd.concat([f, f.iloc[:1]]), "rows.time"), (lambda f: f.iloc[:1], "rows"),
    (lambda f: f.assign(rate=np.where(f.index == 2, np.nan, f.rate)), "rows.rate")])
def test_bad_rows_are_one_line(change, field):
    f = pd.DataFrame({"card": np.repeat([0, 1], 10), "time": np.tile(np.arange(1, 11) / 12, 2),
                      "rate": np.linspace(1, 2, 20)})
    with pytest.raises(mc.ParamError, match=rf"^{field}=") as err:
        series.from_frame(change(f))
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("sigma", [0.1, 0.5, 0.87, 2.0])
def test_clipped_moments_and_sigma_from_censored_residuals(sigma):
    rng = np.random.default_rng(int(sigma * 100))
    n = 200_000
    x = np.maximum(0.0, 1.0 + sigma * rng.standard_normal(n))
    assert abs(x.mean() - noise.clipped_mean(sigma)) < Z * x.std() / math.sqrt(n)
    assert abs(x.std() - noise.clipped_sd(sigma)) < Z * x.std() / math.sqrt(n / 2) * 2
    y = x.reshape(100, -1) * 7000.0
    total = noise.sums(y, np.full(100, 7000.0), np.ones(y.shape, bool)).sum(axis=0)
    assert total[0] + total[2] == n and total[2] == (x == 0).sum()
    got = noise.sigma_mle(total)
    assert abs(got - sigma) < Z * sigma / math.sqrt(2 * n * (1 - noise._N.cdf(-1 / sigma)))


def test_baselines_undo_the_clip():
    rng = np.random.default_rng(3)
    t = rng.uniform(5000, 8000, 50)
    sigma = 0.87
    y = np.maximum(0.0, t[:, None] * (1 + sigma * rng.standard_normal((50, 20_000))))
    b = noise.baselines(y, np.ones(y.shape, bool), sigma)
    assert np.all(np.abs(b / t - 1) < Z * noise.clipped_sd(sigma) / noise.clipped_mean(sigma) / math.sqrt(20_000))


def test_the_k_sample_law_on_independent_noise():
    rng = np.random.default_rng(4)
    z = 1 + 0.3 * rng.standard_normal((20, 4096))
    rows = noise.k_spread(z, np.ones(z.shape, bool), (1, 4, 16, 64))
    for r in rows:
        assert abs(r["ratio"] - 1) < Z / math.sqrt(2 * r["means"]) + 0.01, r
    corr = np.repeat(z[:, ::4], 4, axis=1)  # each value held for 4 samples: correlated noise
    held = noise.k_spread(corr, np.ones(corr.shape, bool), (1, 4, 16))
    assert held[-1]["ratio"] > 1.6  # the law overstates what a longer window buys


def test_mixture_finds_lemons_and_no_lemons():
    rng = np.random.default_rng(5)
    n = 2000
    q = rng.normal(0.96, 0.05, n)
    lemon = rng.random(n) < 0.1
    got = mixture.fit(np.where(lemon, q * 0.67, q))
    assert got["lemons"]
    assert abs(got["lemon_rate"] - 0.1) < Z * math.sqrt(0.09 / n)
    assert abs(got["lemon_factor"] - 0.67) < 0.02 and abs(got["mean"] - 0.96) < 0.005
    assert abs(got["sd"] - 0.05) < Z * 0.05 / math.sqrt(2 * n * 0.9)
    plain = mixture.fit(q)
    assert not plain["lemons"] and plain["lemon_rate"] == 0.0 and math.isnan(plain["lemon_factor"])
    # A measurement error is taken out of the spread.
    noisy = mixture.fit(q + rng.normal(0, 0.03, n), err_var=0.03**2)
    assert abs(noisy["sd"] - 0.05) < 0.006



def test_the_mixture_refits_the_model_it_is_told():
    """``lemons=False`` fits one normal whatever the data, with the unbiased variance;
    ``lemons=True`` fits the mixture even where the criterion would not keep it (a
    bootstrap resample refits the model the data chose); None chooses."""
    rng = np.random.default_rng(6)
    q = rng.normal(0.96, 0.05, 64)
    one = mixture.fit(q)
    assert not one["lemons"] and one["sd"] == pytest.approx(float(np.std(q, ddof=1)), rel=1e-12)
    lemony = np.where(np.arange(64) < 8, q * 0.67, q)
    assert mixture.fit(lemony)["lemons"]
    forced_one = mixture.fit(lemony, lemons=False)
    assert not forced_one["lemons"] and forced_one["sd"] == pytest.approx(float(np.std(lemony, ddof=1)), rel=1e-12)
    forced_two = mixture.fit(q, lemons=True)
    assert forced_two["lemons"] and 0 < forced_two["lemon_rate"] < 1 and forced_two["lemon_factor"] < 1

def test_a_planted_dip_is_seen_and_noise_alone_rarely():
    rng = np.random.default_rng(6)
    delta, sd = 1 / 12, 0.3
    z = 1 + sd * rng.standard_normal((50, 8760))
    z[7, 1000:1096] -= 0.4  # 8 hours at 40%
    got = detect.seen(z, sd, delta)
    at7 = np.flatnonzero(got["card"] == 7)
    assert len(at7) == 1
    i = at7[0]
    assert abs(got["start"][i] - 1000) <= 12 and abs(got["length"][i] - 96) <= 24
    assert abs(got["depth"][i] - 0.4) < 0.1
    assert len(got["card"]) <= 2  # false alarms: at most one in 50 card-months of pure noise
    limits = detect.smallest(sd, delta)
    assert limits[0]["hours"] == 0.5 and limits[0]["depth"] == pytest.approx(5 * 0.3 / math.sqrt(6))


def test_a_large_fleets_dips_are_fitted_on_an_even_subset_of_its_cards():
    """The dips' simulated data sets hold at most ``SIM_SAMPLES`` samples: the data's
    cards up to that, never fewer than ``MIN_SIM_CARDS`` (or the data's own)."""
    def series(cards, n):  # a read-only view of one sample: the shape alone, without its gigabytes
        return Series(np.arange(cards), np.full(cards, ""), np.broadcast_to(1.0, (cards, n)), 1 / 12, 0.0)

    per_card = 8760  # a month of 5-minute samples
    assert dipfit.sim_cards(series(512, per_card)) == dipfit.SIM_SAMPLES // per_card
    assert dipfit.sim_cards(series(512, 730)) == min(512, dipfit.SIM_SAMPLES // 730)
    assert dipfit.sim_cards(series(8, per_card)) == 8
    assert dipfit.sim_cards(series(512, 10**6)) == dipfit.MIN_SIM_CARDS


def test_the_noise_bias_is_a_plane_over_the_fitted_dips_that_ignores_wild_draws():
    """``dipfit._noise_bias``: ``log r`` that is a plane in ``φ`` plus each simulation's
    own noise gives back the plane at every draw (the noise taken out, within a few
    standard errors of a 5-parameter least-squares fit over 400 draws), and a tenth of
    the draws thrown far off (dips covering their month) do not move it."""
    rng = np.random.default_rng(3)
    phi = np.column_stack([rng.normal(0.7, 0.3, 400), rng.normal(1.4, 0.3, 400), rng.uniform(0.3, 0.5, 400),
                           rng.uniform(0.1, 0.3, 400)])
    plane = 0.003 + phi @ np.array([0.002, 0.001, 0.01, 0.004])
    noise_sd = 0.0025
    log_r = plane + rng.normal(0, noise_sd, 400)
    fitted = dipfit._noise_bias(phi, log_r)
    assert np.abs(fitted - plane).max() < Z * noise_sd * math.sqrt(5 / 400) * 3
    assert np.std(fitted - plane) < np.std(log_r - plane) / 4  # the noise is taken out
    wild = log_r.copy()
    wild[::10] += 2.0
    assert np.abs(dipfit._noise_bias(phi, wild) - fitted).max() < 0.2 * noise_sd
    few = dipfit._noise_bias(phi[:6], log_r[:6])  # too few draws for a plane: their median
    assert np.allclose(few, np.median(log_r[:6]))


def test_cards_with_a_handful_of_samples_stay_out_of_the_lottery():
    """Four of 64 cards that joined two hours before the month's end (3 samples each):
    their baselines err by ±20%, more than the cards differ, so the lottery is fitted
    without them (a note names them) and its spread is the other cards' (before, the
    pooled error term pushed lottery.sd toward 0: 0.027 for a true 0.05 at seed 2).
    ``mixture.precise`` keeps every card where fewer than two would stay."""
    e = telemetry.emit(mc.presets.get("golden-idler"), telemetry.Sampling(30.0, 730.0), cards=64, seed=2)
    f = e.samples
    late = f["card"].isin([0, 1, 2, 3]) & (f["time"] < 728.0)
    quick = {"sims": 0, "bootstrap": 0}
    whole = telemetry.fit(telemetry.from_frame(f[~f["card"].isin([0, 1, 2, 3])]), {"flagship": 7000.0}, **quick)
    cut = telemetry.fit(telemetry.from_frame(f[~late]), {"flagship": 7000.0}, **quick)
    assert any(n.startswith("4 of 64 cards left out of the lottery (0, 1, 2, 3)") for n in cut["notes"]), cut["notes"]
    assert cut["fields"]["lottery.sd"]["value"] == pytest.approx(whole["fields"]["lottery.sd"]["value"], rel=1e-3)  # sigma differs by their 12 samples
    assert not any("left out" in n for n in whole["notes"])
    x = np.array([1.0, 1.1, 0.9, 1.05, 0.95])
    assert mixture.precise(x, np.array([1e-4, 1e-4, 1e-4, 1e-4, 1.0])).tolist() == [True] * 4 + [False]
    assert mixture.precise(x, np.full(5, 1.0)).all() and mixture.precise(np.ones(5), np.full(5, 1e-9)).all()
