"""Calibration: the recommendation meets its limits and carries its intervals."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mc.studies import calibrate as cal
from mc.fleet import presets
from mc.cli import main

N = 1000  # the engine size the sweep tests compile too
SMALL = {"windows": (24.0, 168.0), "shares": (0.0, 0.2), "thetas": (0.8,)}


@pytest.mark.parametrize("judge", cal.JUDGES)
@pytest.mark.parametrize("max_wrong, max_cap", [(0.05, 0.05), (0.5, 0.01), (1.0, 1.0)])
def test_recommendation_meets_its_limits(judge, max_wrong, max_cap):
    res = cal.calibrate(presets.get("golden-idler-steady"), max_wrong=max_wrong, max_shortfall_risk=max_cap,
                        n=N, judge=judge, progress=False, **SMALL)
    c = res.candidates
    assert len(c) == 2 * 2 + 2 * 1
    best = res.recommendation
    assert best is not None
    wrong = best["wrong_hi"] if judge == "upper" else best["wrong_risk"]
    cap = best["cap_hi"] if judge == "upper" else best["cap_risk"]
    assert wrong <= max_wrong and cap <= max_cap
    # No feasible setting converges better on average.
    assert best["conv_mean"] == c[c["feasible"]]["conv_mean"].max()
    for lo, val, hi in (("conv_lo", "conv_mean", "conv_hi"), ("wrong_lo", "wrong_risk", "wrong_hi"),
                        ("cap_lo", "cap_risk", "cap_hi")):
        assert (c[lo] <= c[val] + 1e-12).all() and (c[val] <= c[hi] + 1e-12).all()
    assert c["current"].sum() == 1  # the scenario's own setting (week, share 0.2) is in the table


def test_no_feasible_setting_says_so():
    sc = presets.get("golden-idler-steady").replace({"demand.level": 400_000.0})  # beyond the whole pool
    res = cal.calibrate(sc, n=N, progress=False, **SMALL)
    assert res.best is None and res.to_dict()["recommendation"] is None
    assert not res.candidates["feasible"].any()


def test_pareto_front():
    conv = np.array([0.9, 0.95, 0.95, 0.8, 1.0])
    risk = np.array([0.0, 0.1, 0.2, 0.0, 0.3])
    assert cal.pareto(conv, risk).tolist() == [True, True, False, False, True]


def test_cli_json_done_when(capsys, tmp_path):
    rc = main(["calibrate", "golden-idler-steady", "--max-wrong", "0.05", "--max-shortfall-risk", "0.05",
               "--json", "--n", str(N), "--out", str(tmp_path)])
    assert rc == 0
    report = json.loads(capsys.readouterr().out)
    rec = report["recommendation"]
    assert rec["window_hours"] in cal.WINDOWS and rec["policy"] in ("share", "threshold")
    for key in ("convergence_mean", "p_wrong_eviction", "p_capacity_fail"):
        assert rec[key]["lo"] <= rec[key]["value"] <= rec[key]["hi"]
    assert rec["p_wrong_eviction"]["hi"] <= 0.05 and rec["p_capacity_fail"]["hi"] <= 0.05
    assert report["searched"] == len(cal.WINDOWS) * (len(cal.SHARES) + len(cal.THETAS))
    assert report["runners_up"] and report["pareto_front"] and report["current"]["share"] == 0.2
    assert (tmp_path / "candidates.parquet").exists()
    assert json.loads((tmp_path / "calibration.json").read_text()) == report


@pytest.mark.parametrize("args, name", [(["--max-wrong", "1.5"], "max_wrong"),
                                        (["--max-shortfall-risk", "-0.1"], "max_shortfall_risk")])
def test_cli_rejects_limits_out_of_range(args, name, capsys):
    assert main(["calibrate", "golden-idler-steady", "--n", str(N), *args]) == 2
    err = capsys.readouterr().err
    assert name in err and len(err.strip().splitlines()) == 1
