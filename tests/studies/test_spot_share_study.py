"""The "how much spot?" study (experiments/spot_share.py) at a tiny size: its
stand-in for "never" gives the months "never" gives, bills add up month by month,
a pool with no spot card has no spot outputs, each figure sits inside its interval,
failures only ever add to an owned fleet's bill, and a second run finds its result
up to date."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _scripts import load

# Each pool shape compiles its own month: the slow tier.
pytestmark = pytest.mark.slow

N = 32


@pytest.fixture(scope="module")
def study():
    return load("spot_share")


@pytest.fixture(scope="module")
def run(study, tmp_path_factory):
    """The study on one pool size, one zone count, 0% and 50% spot."""
    out = tmp_path_factory.mktemp("spot_share")
    mp = pytest.MonkeyPatch()
    mp.setattr(study, "SHARES", (0.0, 0.5))
    mp.setattr(study, "ZONES", (1,))
    mp.setattr(study, "SPARES", (2,))
    mp.setattr(study, "REGIMES", {"days": 48.0})
    mp.setattr(study, "FAILOVER_OFF_SHARES", (0.5,))
    mp.setattr(study, "REPAIR_HOURS", (24.0, 168.0))
    argv = ["--n", str(N), "--out", str(out), "--quiet"]
    try:
        assert study.main(argv) == 0
        yield study, out, argv
    finally:
        mp.undo()


def test_never_is_the_hour_count_past_the_month(study):
    from mc.fleet import simulate

    s = dict(regime="days", share=0.5, zones=1, fallback=study.NEVER, spares=0, failover=True)
    a = simulate(study.scenario(s), N, keep_samples=True).samples
    b = simulate(study.scenario(s).replace({"spot.fallback_hours": "never"}), N, keep_samples=True).samples
    assert a["n_preempted"].sum() > 0  # a month where the fallback could matter
    pd.testing.assert_frame_equal(a, b)


def test_every_setting_once_with_its_months(run):
    study, out, _ = run
    points = pd.read_parquet(out / "points.parquet")
    months = pd.read_parquet(out / "months.parquet")
    assert len(points) == len(study.settings()) == 4  # share 0, share 0.5 x 2 fallbacks, failover off
    assert len(months) == len(points) * N
    assert np.allclose(months.bill, months.warm_bill + months.churn_bill, rtol=0, atol=0.011)
    none = months[months.share == 0]
    assert (none.spot_bill == 0).all() and (none.n_preempted == 0).all() and (none.fallback_hours == 0).all()
    spot = months[months.share == 0.5]
    assert (spot.spot_bill > 0).all()
    assert (months[months.fallback >= study.NEVER].fallback_hours == 0).all()


def test_figures_inside_their_intervals(run):
    _, out, _ = run
    p = pd.read_parquet(out / "points.parquet")
    for c in ("bill", "shortfall", "n_preempted"):
        assert ((p[f"{c}_lo"] <= p[c]) & (p[c] <= p[f"{c}_hi"])).all()
    assert ((p.p_fail_lo <= p.p_fail) & (p.p_fail <= p.p_fail_hi)).all()
    assert (p.meets == (1 - p.p_fail_hi >= 0.99)).all()


def test_failures_only_add_to_an_owned_bill(run):
    _, out, _ = run
    o = pd.read_parquet(out / "owned.parquet")
    assert list(o.repair_hours) == [24.0, 168.0]
    assert (o.extra >= 0).all() and (o.extra_lo <= o.extra).all() and (o.extra <= o.extra_hi).all()


def test_a_second_run_is_up_to_date(run, capsys):
    study, out, argv = run
    before = (out / "points.parquet").read_bytes()
    assert study.main([a for a in argv if a != "--quiet"]) == 0
    assert "up to date" in capsys.readouterr().err
    assert (out / "points.parquet").read_bytes() == before


def test_effects_are_paired_differences(run):
    study, out, _ = run
    e = pd.read_parquet(out / "effects.parquet")
    m = pd.read_parquet(out / "months.parquet")
    assert set(e.effect) == {"failover", "fallback"}  # one spare count: no spares effect
    f = e[e.effect == "failover"].iloc[0]
    on = m[(m.share == f.share) & (m.fallback == f.fallback) & m.failover].sort_values("month")
    off = m[(m.share == f.share) & (m.fallback == f.fallback) & ~m.failover].sort_values("month")
    assert f.d_bill == pytest.approx(float((on.bill.to_numpy() - off.bill.to_numpy()).mean()), rel=1e-9)
    assert (e.d_bill_lo <= e.d_bill).all() and (e.d_bill <= e.d_bill_hi).all()
    # An on-demand card in a spot slot bills the full price for the rest of the month.
    assert (e[e.effect == "fallback"].d_bill > 0).all()
