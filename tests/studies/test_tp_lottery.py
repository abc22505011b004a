"""The lottery-at-tensor-parallel study (experiments/tp_lottery.py): its services are
rated and loaded as it says (fast), and at a tiny size (slow) every cell answers, each
figure sits inside its interval, the saving is no eviction's bill less the pick's, the
share of replicas holding a lemon follows 1 − (1 − π)^tp, and a second run finds its
result up to date."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _scripts import load

from mc.serving import card

N = 16


@pytest.fixture(scope="module")
def study():
    return load("tp_lottery")


def test_every_tp_is_rated_by_its_replica_and_serves_the_first_demand(study):
    seats = card(study.MODEL, study.GPU, weight_bytes_per_param=1, batch=1, tp=1).seats
    assert seats < study.BATCH and study.entry(1)["batch"] == seats  # one card seats fewer than 32
    assert all(study.entry(tp)["batch"] == study.BATCH for tp in (2, 4, 8))
    rated = {tp: study.service(tp, 0.0, 0.0).pool.classes[0].rated * study.CARDS for tp in study.TPS}
    for tp in study.TPS:  # the pool's rate is the card's §5 aggregate over its replica, times the replicas
        c = card(study.MODEL, study.GPU, weight_bytes_per_param=1, batch=study.entry(tp)["batch"], tp=tp)
        assert rated[tp] == pytest.approx(c.aggregate_tok_s * study.CARDS / tp, rel=1e-9)
    lv = study.levels()
    for name, tps in study.DEMANDS.items():
        peak = lv[name] * 1.3
        smallest = min(rated[tp] for tp in tps)
        assert peak == pytest.approx(study.PEAK_SHARE * smallest, abs=130.0)  # the level rounded to 100
        assert all(peak < rated[tp] for tp in tps)
    assert lv["every tp"] * 1.3 > 0.8 * rated[1] and lv["tp 2-8"] * 1.3 > rated[1]  # tp 1 cannot serve the second


@pytest.fixture(scope="module")
def run(study, tmp_path_factory):
    """Two replica sizes at one demand and lemon rate, a grid of two settings."""
    out = tmp_path_factory.mktemp("tp_lottery")
    mp = pytest.MonkeyPatch()
    mp.setattr(study, "TPS", (1, 4))
    mp.setattr(study, "LEMONS", (0.0, 0.1))
    mp.setattr(study, "DEMANDS", {"every tp": (1, 4)})
    mp.setattr(study, "GRID", {"window.hours": [24.0], "eviction.policy": ["threshold"], "eviction.theta": [0.85, 0.95],
                               "autoscaler.strikes": [1]})
    argv = ["--n", str(N), "--out", str(out), "--quiet"]
    try:
        assert study.main(argv) == 0
        yield study, out, argv
    finally:
        mp.undo()


@pytest.mark.slow
def test_every_cell_answers_inside_its_intervals(run):
    study, out, _ = run
    svc, ev = (pd.read_parquet(out / f) for f in ("service.parquet", "eviction.parquet"))
    assert len(svc) == 4 and set(svc["tp"]) == {1, 4}
    # tp 1 runs one form (a card is a replica of one), tp 4 both.
    assert sorted(ev.loc[ev["tp"] == 1, "form"]) == ["either", "either"]
    assert sorted(ev.loc[ev["tp"] == 4, "form"]) == ["member", "member", "replica", "replica"]
    for table, names in ((svc, ("lemon_share", "capacity_ratio", "bill", "lottery_cost", "p_capacity_fail")),
                         (ev, ("saving", "bill", "wrong", "p_wrong_eviction", "n_evicted", "members_evicted",
                               "lemon_end", "capacity_ratio"))):
        for name in names:
            lo, val, hi = (table[c].to_numpy(float) for c in (f"{name}_lo", name, f"{name}_hi"))
            assert np.all(np.isfinite(val)) and np.all((lo <= val + 1e-9) & (val <= hi + 1e-9)), name
    assert ev.loc[ev["form"] != "member", "member_over_replica"].isna().all()
    assert ev.loc[ev["form"] == "member", "member_over_replica"].notna().all()
    # No lemons: none at the start, none left, no lottery cost; capacity at most the ticket's clip.
    none = svc[svc["lemon_rate"] == 0.0]
    assert (none["lemon_share"] == 0).all() and (none["lottery_cost"] == 0).all()
    assert (svc["capacity_ratio"] > 0.8).all() and (svc["capacity_ratio"] < 1.0).all()
    # The saving is no eviction's bill less the pick's, over the same fresh months.
    bills = svc.set_index(["tp", "lemon_rate"])["bill"]
    want = bills.loc[list(zip(ev["tp"], ev["lemon_rate"]))].to_numpy() - ev["bill"].to_numpy()
    np.testing.assert_allclose(ev["saving"], want, atol=1e-6)
    # Evictions count members at least as often as replicas: a replica's eviction takes its tp cards.
    assert (ev["members_evicted"] >= ev["n_evicted"] - 1e-9).all()


@pytest.mark.slow
def test_the_share_of_replicas_with_a_lemon_is_one_less_the_chance_of_none(run):
    _, out, _ = run
    svc = pd.read_parquet(out / "service.parquet")
    for _, r in svc[svc["lemon_rate"] > 0].iterrows():
        theory = 1 - (1 - r["lemon_rate"]) ** r["tp"]
        assert r["lemon_share_theory"] == pytest.approx(theory)
        # 64 fresh months of 64/tp replicas: within 4 standard errors of the binomial share.
        se = np.sqrt(theory * (1 - theory) / (r["months"] * r["replicas"]))
        assert abs(r["lemon_share"] - theory) < 4 * se


@pytest.mark.slow
def test_the_result_is_sealed_and_a_second_run_reuses_it(run, capsys):
    from mc.studies import manifest

    study, out, argv = run
    made = manifest.verify(out / "manifest.json")
    assert set(made["outputs"]) == set(study.FILES) and made["config"]["n"] == N
    before = (out / "manifest.json").read_bytes()
    assert study.main([a for a in argv if a != "--quiet"]) == 0
    assert "up to date" in capsys.readouterr().err
    assert (out / "manifest.json").read_bytes() == before
