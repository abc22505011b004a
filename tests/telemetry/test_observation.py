"""SPEC §8's observation model against a plain NumPy reference fed the same draws,
the truth tables against the draws, and the sampling's and layout's arithmetic."""

from __future__ import annotations

import math
from functools import partial

import jax
import numpy as np
import pytest

import mc
import ref_telemetry
from mc import engine, telemetry
from mc.fleet import dips as fleet_dips
from mc.fleet import lottery as fleet_lottery
from mc.kernels import uniforms
from mc.telemetry import observe
from mc.telemetry.emit import params_of

HOURS = 730


@partial(jax.jit, static_argnums=(2,))
def _draws(seed, first, n, p):
    keys = engine.month_keys(seed, first, n)
    return jax.vmap(observe.draw, in_axes=(0, None))(keys, p)


def card_draws(p, n, seed=0, first=0):
    """The draws of cards ``first..first+n-1`` as the engine makes them, one per card, as NumPy."""
    host = jax.tree_util.tree_map(np.asarray, _draws(seed, np.uint32(first), n, p))
    return [jax.tree_util.tree_map(lambda x: x[i], host) for i in range(n)]


# Busy dips (many overlap, some run past a month's end), lemons, and an interval
# that does not divide the span: 250 h every 7 minutes over a second month.
SC = mc.presets.get("golden-idler").replace({"dips.rate": 12.0, "dips.mean_hours": 6.0, "dips.max_count": 16,
                                             "lottery.lemon_rate": 0.3, "window.sigma_hour": 0.1})
SAMPLING = telemetry.Sampling(every=7.0, hours=1000.0)
CARDS = 6


@pytest.fixture(scope="module")
def emitted():
    return telemetry.emit(SC, SAMPLING, cards=CARDS, seed=3)


def test_samples_match_the_numpy_reference(emitted):
    p = params_of(SC, SAMPLING, SC.pool.classes[0])
    n = SAMPLING.samples
    rows = emitted.samples
    assert len(rows) == CARDS * n
    span = HOURS * SAMPLING.months
    for i, d in enumerate(card_draws(p, CARDS, seed=3)):
        ref = ref_telemetry.card(d, SC.pool.classes[0].rated, p)
        got = rows.rate.to_numpy()[i * n:(i + 1) * n].astype(np.float64)
        # float32 hours: a dip's edges are placed within a few ulps of the span, each
        # edge moves a sample's loss by at most its depth times that share of Δ; the
        # fixed-point loss and the float32 products add a few parts in 10^6.
        edge = 4 * span * 2.0**-24 / SAMPLING.delta
        lost = sum(dd for _, _, dd in ref["dips"]) * 2 * edge + 1e-5
        eps = np.abs(np.asarray(d.noise, np.float64))
        tol = ref["true_rate"] * (1 + p.sigma_hour * math.sqrt(1 / SAMPLING.delta) * eps) * lost + 1e-5 * ref["rate"]
        assert np.all(np.abs(got - ref["rate"]) <= tol), (i, np.max(np.abs(got - ref["rate"]) - tol))
        # The dips change many samples: the comparison is not of noise alone.
        assert len(ref["dips"]) > 10


def test_truth_is_the_draws(emitted):
    p = params_of(SC, SAMPLING, SC.pool.classes[0])
    cards, dips = emitted.cards, emitted.dips
    assert list(cards.columns) == list(telemetry.emit.__globals__["CARD_COLUMNS"])
    for i, d in enumerate(card_draws(p, CARDS, seed=3)):
        ref = ref_telemetry.card(d, SC.pool.classes[0].rated, p)
        row = cards.iloc[i]
        assert row.card == i and row["class"] == "flagship" and row.rated == 7000.0
        assert row.q == pytest.approx(ref["q"], rel=1e-6) and bool(row.lemon) == ref["lemon"]
        assert row.true_rate == pytest.approx(ref["true_rate"], rel=1e-6)
        seen = sorted(x for x in ref["dips"] if x[0] < SAMPLING.span)
        mine = dips[dips.card == i].sort_values("start")
        assert row.dips == len(seen) == len(mine)
        tol = 4 * HOURS * SAMPLING.months * 2.0**-24
        np.testing.assert_allclose(mine.start, [b for b, _, _ in seen], atol=tol)
        np.testing.assert_allclose(mine.start + mine.hours, [e for _, e, _ in seen], atol=2 * tol)
        np.testing.assert_allclose(mine.depth, [x for _, _, x in seen], rtol=1e-6)
    assert cards.lemon.any() and not cards.lemon.all()


def test_quality_and_dips_are_the_fleets_own():
    """A card's ticket and each month's dips are ``mc.fleet.lottery`` and
    ``mc.fleet.dips`` on the card's uniforms (a month with no window)."""
    p = params_of(SC, SAMPLING, SC.pool.classes[0])

    @jax.jit
    def both(key):
        t = observe.truth(observe.draw(key, p), p)
        k_lottery, k_dips, _ = jax.random.split(key, 3)
        lot = fleet_lottery.draw(uniforms(k_lottery, (1, fleet_lottery.UNIFORMS)))
        u = uniforms(k_dips, (SAMPLING.months, fleet_dips.uniforms_needed(SC.dips)))
        return t, fleet_lottery.quality(lot, SC.lottery)[0], fleet_dips.place(fleet_dips.draw(u, SC.dips),
                                                                             np.float32(0.0), SC.dips)

    t, q, placed = both(jax.random.fold_in(jax.random.key(3), 2))
    assert float(t.q) == float(q)
    start = np.arange(SAMPLING.months, dtype=np.float32)[:, None] * np.float32(HOURS)
    # Equal to the last bit but for XLA's order of one product and sum (it may fuse them).
    np.testing.assert_allclose(np.asarray(t.begin), (np.asarray(placed.begin) + start).ravel(), rtol=2.0**-22)
    np.testing.assert_allclose(np.asarray(t.depth), np.asarray(placed.depth).ravel(), rtol=2.0**-22)
    np.testing.assert_array_equal(np.asarray(t.depth) > 0, np.asarray(placed.depth).ravel() > 0)


def test_classes_keep_the_pools_shares():
    pool = mc.Pool.of(("bargain", 24), ("flagship", 8))
    assert [(c.name, f, n) for c, f, n in telemetry.layout(pool)] == [("bargain", 0, 24), ("flagship", 24, 8)]
    assert [(c.name, f, n) for c, f, n in telemetry.layout(pool, 10)] == [("bargain", 0, 8), ("flagship", 8, 2)]
    assert [(c.name, f, n) for c, f, n in telemetry.layout(pool, 1)] == [("bargain", 0, 1)]
    for n in (1, 3, 31, 33, 1000):
        blocks = telemetry.layout(pool, n)
        assert sum(k for _, _, k in blocks) == n
        assert all(f == sum(k for _, _, k in blocks[:j]) for j, (_, f, _) in enumerate(blocks))


def test_a_mixed_pool_rates_each_class():
    sc = mc.Scenario(pool=mc.Pool.of(("bargain", 3), ("flagship", 1)))
    e = telemetry.emit(sc, telemetry.Sampling(60.0, 5.0))
    assert list(e.cards["class"]) == ["bargain"] * 3 + ["flagship"]
    assert list(e.cards.rated) == [3150.0] * 3 + [7000.0]
    assert np.allclose(e.cards.true_rate, e.cards.rated * e.cards.q, rtol=1e-6)
    assert list(e.samples.groupby("card", observed=True)["class"].first()) == list(e.cards["class"])


def test_sampling_arithmetic():
    s = telemetry.Sampling()
    assert (s.samples, s.months, s.delta) == (8760, 1, pytest.approx(1 / 12))
    assert s.times()[0] == pytest.approx(1 / 12) and s.times()[-1] == pytest.approx(730.0)
    assert s.sigma(0.25) == pytest.approx(0.25 * math.sqrt(12))
    odd = telemetry.Sampling(every=7.0, hours=1000.0)
    assert odd.samples == 8571 and odd.months == 2 and odd.span == pytest.approx(8571 * 7 / 60)
    year = telemetry.Sampling(every=60.0, hours=8760.0)
    assert (year.samples, year.months) == (8760, 12)


@pytest.mark.parametrize("kw, field", [
    ({"every": 0.0}, "every"), ({"every": -5.0}, "every"), ({"every": float("nan")}, "every"),
    ({"hours": 0.0}, "hours"), ({"hours": -1.0}, "hours"), ({"hours": float("inf")}, "hours"),
    ({"hours": 2e6}, "hours"), ({"every": 61.0, "hours": 1.0}, "every"),
    ({"every": 1e-3, "hours": 1e6}, "hours"), ({"every": True}, "every")])
def test_sampling_refuses_in_one_line(kw, field):
    with pytest.raises(mc.ParamError, match=rf"^{field}=") as err:
        telemetry.Sampling(**kw)
    assert "\n" not in str(err.value)


def test_cards_and_types_are_checked():
    sc = mc.presets.get("golden-idler")
    for bad in (0, -1, 2**31, 1.5):
        with pytest.raises(mc.ParamError, match=r"^cards="):
            telemetry.emit(sc, cards=bad)
    with pytest.raises(TypeError, match="scenario must be"):
        telemetry.emit("golden-idler")
    with pytest.raises(TypeError, match="sampling must be"):
        telemetry.emit(sc, 5.0)
