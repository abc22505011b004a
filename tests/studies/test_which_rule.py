"""The "which eviction rule?" study (experiments/which_rule.py) at a tiny size: every
rule family answers on every pool, each figure sits inside its interval, the savings
are the yardstick's bill less the rule's, and a second run finds its result up to date."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from _scripts import load

from mc.studies import manifest

# Every rule family compiles its own month, however small the grid: the slow tier.
pytestmark = pytest.mark.slow

N = 32


@pytest.fixture(scope="module")
def study():
    return load("which_rule")


@pytest.fixture(scope="module")
def run(study, tmp_path_factory):
    """The study on one pool, one window and two values of each knob."""
    out = tmp_path_factory.mktemp("which_rule")
    mp = pytest.MonkeyPatch()
    mp.setattr(study, "LEMONS", (0.2,))
    mp.setattr(study, "HEADROOM", (1.1,))
    mp.setattr(study, "WINDOWS", (24.0,))
    mp.setattr(study, "STRIKES", (2,))
    mp.setattr(study, "RULES", {rule: (field, values[1:3]) for rule, (field, values) in study.RULES.items()})
    argv = ["--n", str(N), "--out", str(out), "--quiet"]
    try:
        assert study.main(argv) == 0
        yield study, out, argv
    finally:
        mp.undo()


def test_every_family_answers_on_every_pool(run):
    study, out, _ = run
    best = pd.read_parquet(out / "best.parquet")
    cand = pd.read_parquet(out / "candidates.parquet")
    pools = best.groupby(["lemon_rate", "headroom"])
    assert pools.ngroups == len(study.LEMONS) * len(study.HEADROOM)
    for _, b in pools:
        assert list(b["rule"]) == list(study.RULES)
        assert b["top"].sum() <= 1 and b.loc[b["top"], "meets_limits"].all()
    assert set(cand["rule"]) == {study.NONE, *study.RULES}
    for _, r in best.iterrows():
        field, values = study.RULES[r["rule"]]
        assert r["knob_field"] == field and r["knob"] in values and r["window"] in study.WINDOWS
        assert r["strikes"] in study.STRIKES and r["months"] == N
        # The pick is one of the settings its family's calibration raced.
        mine = cand[(cand["rule"] == r["rule"]) & (cand["lemon_rate"] == r["lemon_rate"])
                    & (cand["headroom"] == r["headroom"])]
        assert any(r["setting"] in names.split("; ") for names in mine["names"])


def test_figures_sit_inside_their_intervals(run):
    _, out, _ = run
    best = pd.read_parquet(out / "best.parquet")
    for name in ("saving", "bill", "p_wrong_eviction", "p_capacity_fail", "lemons_end", "lemons_evicted",
                 "n_evicted", "none_p_capacity_fail", "none_lemons_end"):
        lo, val, hi = (best[c].to_numpy(float) for c in (f"{name}_lo", name, f"{name}_hi"))
        assert np.all(np.isfinite(val)), name
        assert np.all((lo <= val + 1e-9) & (val <= hi + 1e-9)), name
    for name in ("p_wrong_eviction", "p_capacity_fail", "none_p_capacity_fail"):
        assert best[f"{name}_lo"].min() >= 0 and best[f"{name}_hi"].max() <= 1
    assert (best["lemons_end"] >= 0).all() and (best["lemons_evicted"] <= best["n_evicted"] + 1e-9).all()
    # The saving is the yardstick's bill less the pick's, over the same fresh months.
    np.testing.assert_allclose(best["saving"], best["none_bill"] - best["bill"], atol=1e-6)


def test_the_result_is_sealed_and_a_second_run_reuses_it(run, capsys):
    study, out, argv = run
    made = manifest.verify(out / "manifest.json")
    assert set(made["outputs"]) == set(study.FILES) and made["config"]["n"] == N
    before = (out / "manifest.json").read_bytes()
    assert study.main([a for a in argv if a != "--quiet"]) == 0
    assert "up to date" in capsys.readouterr().err
    assert (out / "manifest.json").read_bytes() == before
    assert json.loads(before)["config"]["lemons"] == list(study.LEMONS)
