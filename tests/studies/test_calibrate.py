"""Calibration: settings evaluated exactly as single runs, identical settings merged,
a race that only drops what is surely worse or surely over a limit, and an answer
that meets its limits and says when nothing does."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from mc import _validate as v
from mc.cli import main
from mc.fleet import presets, simulate
from mc.studies import blocks
from mc.studies import calibrate as cal

N, FIRST = 512, 256
BASE = "golden-idler-steady"
# theta 0.05 never evicts: the same months as share 0 (merged).
SMALL = {"window.hours": [24.0, 168.0], "eviction.policy": ["share", "threshold"],
         "eviction.share": [0.0, 0.2], "eviction.theta": [0.05, 0.8]}


@pytest.fixture(scope="module")
def small():
    return cal.calibrate(presets.get(BASE), SMALL, n=N, first=FIRST, progress=False)


@pytest.mark.slow
def test_block_months_equal_single_runs():
    """Each setting's per-month figures are its own run's, from any first month."""
    sc = presets.get(BASE)
    scs = [sc.replace({"window.hours": h}) for h in (1.0, 24.0, 168.0)]
    got = blocks.run(scs, cal.month_figures, 64, first=32, progress=False, most=4)
    for j, s in enumerate(scs):
        ref = simulate(s, 96, keep_samples=True).samples.iloc[32:]
        np.testing.assert_array_equal(got["bill"][:, j], np.round(ref["bill"].to_numpy() * 100).astype(np.int64))
        np.testing.assert_array_equal(got["wrong_mean"][:, j], ref["n_wrong"].to_numpy())
        np.testing.assert_array_equal(got["p_capacity_fail"][:, j], ~ref["pass_capacity"].to_numpy())
        np.testing.assert_allclose(got["convergence"][:, j], np.minimum(ref["convergence"].to_numpy(), 1.0), rtol=1e-6)


def test_summarise_matches_plain_arithmetic():
    rng = np.random.default_rng(1)
    months = {"bill": rng.integers(2_000_000, 3_000_000, 400), "convergence": rng.random(400),
              "p_capacity_fail": rng.random(400) < 0.1, "p_wrong_eviction": rng.random(400) < 0.3,
              "p_convergence_fail": np.zeros(400, bool), "wrong_mean": rng.integers(0, 3, 400),
              "shortfall": rng.random(400) * 0.01, "n_evicted": rng.integers(0, 5, 400),
              "n_replaced": np.zeros(400, int)}
    s = cal.summarise(months)
    bill = months["bill"] / 100
    half = 1.959963984540054 * bill.std(ddof=1) / np.sqrt(400)  # the sample sd over the root of n
    assert s["bill"] == pytest.approx((bill.mean(), bill.mean() - half, bill.mean() + half))
    k = int(months["p_capacity_fail"].sum())
    assert s["p_capacity_fail"][0] == k / 400 and s["p_capacity_fail"][1] < k / 400 < s["p_capacity_fail"][2]
    assert s["p_convergence_fail"] == (0.0, 0.0, pytest.approx(s["p_convergence_fail"][2]))


def test_policy_lists_given_alone_pick_the_policies():
    """Over the default grid, a policy's own list chooses the policies that declare
    it (of those the grid names, when some do); a file's grid is only updated."""
    base = presets.get("golden-idler")  # share, with share and threshold in its default grid
    g = cal.with_given(cal.default_grid(base), {"eviction.share": [0.0, 0.2]}, default=True)
    assert g["eviction.policy"] == ["share"] and "eviction.theta" not in g and g["eviction.share"] == [0.0, 0.2]
    g = cal.with_given(cal.default_grid(base), {"eviction.max_share": [0.5]}, default=True)
    assert g["eviction.policy"] == ["threshold"] and "eviction.share" not in g and "eviction.theta" in g
    g = cal.with_given(cal.default_grid(base), {"eviction.share": [0.1], "eviction.theta": [0.8]}, default=True)
    assert g["eviction.policy"] == ["share", "threshold"]
    g = cal.with_given({"window.hours": [24.0]}, {"eviction.share": [0.1]}, default=False)
    assert g == {"window.hours": [24.0], "eviction.share": [0.1]}


def test_grid_expansion_follows_the_policy():
    found = cal.settings(presets.get(BASE), SMALL)
    names = [s.name for s in found]
    assert len(found) == 2 * 2 + 2 * 2 and len(set(names)) == len(names)
    for s in found:
        assert ("eviction.share" in s.values) == (s.values["eviction.policy"] == "share")
        assert ("eviction.theta" in s.values) == (s.values["eviction.policy"] == "threshold")
    assert "24h window, share 0" in names[0]


@pytest.mark.parametrize("grid, match", [
    ({"window.nope": [1]}, "is not a scenario field"),
    ({"window.hours": []}, "non-empty"),
    ({"window.hours": [24, 24]}, "distinct"),
    ({"eviction.theta": [0.5]}, "threshold policy"),  # the base's policy is share
    ({"window.hours": list(range(1, 65)), "eviction.share": [i / 100 for i in range(65)]}, "too large"),
    ({"autoscaler.strikes": [0]}, "autoscaler.strikes"),
    ({}, "at least one field"),
])
def test_bad_grids_are_refused_before_anything_runs(grid, match):
    with pytest.raises(v.ParamError, match=match):
        cal.settings(presets.get(BASE), grid)


@pytest.mark.slow
def test_identical_settings_are_one_row(small):
    t = small.table
    merged = t[t["settings"] > 1]
    assert len(merged) >= 1
    for _, row in merged.iterrows():
        names = row["names"].split("; ")
        assert len(names) == row["settings"]
    # share 0 and theta 0.05 evict nobody: one row per window.
    zero = t[t["names"].str.contains("share 0(?!\\.)", regex=True)]
    assert all("theta 0.05" in r for r in zero["names"])
    # Members agree month by month: run them singly.
    sc = presets.get(BASE)
    a = simulate(sc.replace({"window.hours": 168.0, "eviction.share": 0.0}), 64, keep_samples=True).samples
    b = simulate(sc.replace({"window.hours": 168.0, "eviction.policy": "threshold", "eviction.theta": 0.05}), 64,
                 keep_samples=True).samples
    pd.testing.assert_frame_equal(a, b)


@pytest.mark.slow
def test_answer_meets_limits_and_is_the_cheapest_finisher(small):
    t = small.table
    best = small.recommendation
    assert best is not None and best["status"] == "recommended"
    assert best["p_capacity_fail_hi"] <= 0.05 and best["p_wrong_eviction_hi"] <= 0.05
    finishers = t[(t["status"].isin(["recommended", "finished"])) & t["feasible"]]
    assert best["bill"] == finishers["bill"].min()
    assert (finishers["months"] == N).all()
    for name in cal.FIGURES:
        assert (t[f"{name}_lo"] <= t[name] + 1e-9).all() and (t[name] <= t[f"{name}_hi"] + 1e-9).all()
    # A row out of the race stopped early and is either over a limit or worse than the leader.
    out = t[t["status"].isin(["raced out", "breaks a limit"])]
    assert (out["months"] < N).all()
    assert (out[out["status"] == "breaks a limit"][["p_capacity_fail_lo", "p_wrong_eviction_lo"]]
            .gt([0.05, 0.05]).any(axis=1)).all()
    assert t["current"].sum() == 1


@pytest.mark.slow
def test_setting_figures_do_not_depend_on_the_rest_of_the_grid(small):
    alone = cal.calibrate(presets.get(BASE), {"window.hours": [168.0], "eviction.share": [0.0]}, n=N,
                          first=FIRST, progress=False)
    a = alone.table.loc[alone.best]
    b = small.table.loc[small.best]
    for name in cal.FIGURES:
        assert a[name] == b[name]


@pytest.mark.slow
@pytest.mark.parametrize("judge", cal.JUDGES)
def test_limits_are_judged_as_asked(judge):
    res = cal.calibrate(presets.get(BASE), {"window.hours": [24.0], "eviction.share": [0.0, 0.2]}, n=FIRST,
                        first=FIRST, max_wrong=0.2, judge=judge, progress=False)
    t = res.table
    k = "_hi" if judge == "upper" else ""
    feasible = (t["p_wrong_eviction" + k] <= 0.2) & (t["p_capacity_fail" + k] <= 0.05)
    assert (t["feasible"] == feasible).all()


@pytest.mark.slow
def test_no_setting_meets_the_limits_says_so():
    sc = presets.get(BASE).replace({"demand.level": 400_000.0})  # beyond the whole pool
    res = cal.calibrate(sc, {"window.hours": [24.0], "eviction.share": [0.0, 0.2]}, n=FIRST, first=FIRST,
                        progress=False)
    assert res.best is None and res.closest is not None
    rep = res.to_dict()
    assert rep["recommendation"] is None and rep["closest"] is not None
    assert any("no setting meets the limits" in w for w in rep["warnings"])
    assert any("capacity check" in w for w in rep["warnings"])


def test_pareto_front():
    bill = np.array([100.0, 90.0, 90.0, 120.0, 80.0])
    risk = np.array([0.0, 0.1, 0.2, 0.0, 0.3])
    assert cal.pareto(bill, risk).tolist() == [True, True, False, False, True]


@pytest.mark.slow
def test_cli_json_and_files_share_one_set_of_names(capsys, tmp_path):
    rc = main(["calibrate", BASE, "--window", "day,week", "--share", "0,0.2", "--json", "--n", str(N),
               "--first", str(FIRST), "--out", str(tmp_path)])
    assert rc == 0
    report = json.loads(capsys.readouterr().out)
    rec = report["recommendation"]
    assert rec["setting"]["window.hours"] in (24.0, 168.0)
    for name, fig in rec["figures"].items():
        assert set(fig) == {"value", "lo", "hi", "units"} and fig["lo"] <= fig["value"] <= fig["hi"]
    assert rec["figures"]["bill"]["units"] == "$"
    table = pd.read_parquet(tmp_path / "candidates.parquet")
    for name in rec["figures"]:
        assert {name, f"{name}_lo", f"{name}_hi"} <= set(table.columns)
    assert json.loads((tmp_path / "calibration.json").read_text()) == report
    assert report["searched"] == 2 * 2 * 3 and report["race"][0]["months"] == FIRST


def test_cli_help_shows_the_grid_flags(capsys):
    with pytest.raises(SystemExit):
        main(["calibrate", "--help"])
    out = capsys.readouterr().out
    for flag in ("--grid", "--window", "--policy", "--share", "--theta", "--runset", "--period", "--strikes",
                 "--min-age", "--objective", "--max-capacity-risk", "--max-wrong-mean", "--first"):
        assert flag in out


@pytest.mark.parametrize("args, name", [
    (["--max-wrong", "1.5"], "--max-wrong="), (["--max-capacity-risk", "-0.1"], "--max-capacity-risk="),
    (["--window", "1,,2"], "--window"), (["--strikes", "0"], "autoscaler.strikes"),
    (["--period", "0"], "autoscaler.period"), (["--first", "8"], "--first="),
    (["--window", "24", "--share", "0.1", "--policy", "threshold"], "share policy"),
])
def test_cli_rejects_bad_input_in_one_line(args, name, capsys):
    assert main(["calibrate", BASE, "--n", str(FIRST), *args]) == 2
    err = capsys.readouterr().err
    assert name in err and len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_cli_grid_file(tmp_path, capsys):
    grid = tmp_path / "grid.toml"
    grid.write_text('[grid]\n"window.hours" = [24, 168]\n"eviction.share" = [0.0]\n')
    assert main(["calibrate", BASE, "--grid", str(grid), "--n", str(FIRST), "--first", str(FIRST), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["searched"] == 2
    grid.write_text('[grid]\n"window.hours" = []\n')
    assert main(["calibrate", BASE, "--grid", str(grid)]) == 2
    grid.write_text('[other]\nx = 1\n')
    assert main(["calibrate", BASE, "--grid", str(grid)]) == 2


@pytest.mark.slow
def test_a_daily_round_lemon_scenario_gets_an_answer():
    """§6: replacement, strikes and period in the grid; a recommendation with intervals."""
    res = cal.calibrate(presets.get("lemon-hunter"),
                        {"window.hours": [4.0, 24.0], "eviction.theta": [0.6, 0.8], "autoscaler.strikes": [1, 2],
                         "autoscaler.period": [24, 168]}, n=512, first=128, progress=False)
    t = res.table
    assert res.best is not None
    assert t["n_replaced"].max() > 0
    assert res.to_dict()["recommendation"]["figures"]["n_replaced"]["units"] == "cards"


@pytest.mark.slow
def test_block_months_equal_single_runs_for_the_autoscaler_month():
    sc = presets.get("lemon-hunter")
    scs = [sc.replace({"autoscaler.strikes": k}) for k in (1, 2)]
    got = blocks.run(scs, cal.month_figures, 32, first=16, progress=False, most=2)
    for j, s in enumerate(scs):
        ref = simulate(s, 48, keep_samples=True).samples.iloc[16:]
        np.testing.assert_array_equal(got["bill"][:, j], np.round(ref["bill"].to_numpy() * 100).astype(np.int64))
        np.testing.assert_array_equal(got["n_replaced"][:, j], ref["n_replaced"].to_numpy())
