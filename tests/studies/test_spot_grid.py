"""SPEC §10's fields in sweeps, calibration and sensitivity: every one a grid field
and (where numeric and continuous) a range, the spot share and the spares a grid
can vary, refusals in one line, and a sensitivity's points sharing one §10 shape."""

from __future__ import annotations

import json

import jax
import numpy as np
import pandas as pd
import pytest

import mc
from mc.cli import main
from mc.fleet.outages import plan
from mc.studies import grid as g
from mc.studies import sensitivity as sens
from mc.studies import sweep as sw

# A tiny §10 month: 4 cards, weekly rounds, failures on (compiles in about a minute).
TINY = {"pool": "4 x flagship", "runset": "peak", "window": {"hours": 24}, "demand": {"level": 15_000},
        "autoscaler": {"period": 168}, "failures": {"rate": 0.5}, "spot": {"share": 0.5, "down_hours": 20}}
# One grid list per §10 field (and the pool: the spares).
TEN = {"failures.rate": [0.0, 0.014], "failures.replace_hours": [4, 72], "spot.price_factor": [0.2, 0.5],
       "spot.zones": [1, 2], "spot.up_hours": [10, 5840], "spot.down_hours": [1.7, 48],
       "spot.wave_share": [0.5, 1.0], "spot.rate": [0.0, 0.1], "spot.fallback_hours": ["inf", 0, 2],
       "spot.share": [0.0, 0.25, 1.0], "autoscaler.failover": [True, False],
       "pool": ["4 x flagship", "6 x flagship"]}


def _tiny() -> mc.Scenario:
    return mc.Scenario.from_dict(TINY)


@pytest.mark.parametrize("field", list(TEN))
def test_every_field_is_a_grid_field(field):
    settings = g.settings(_tiny(), {field: TEN[field]})
    assert len(settings) == len(TEN[field])
    for s, value in zip(settings, TEN[field]):
        got = g.label(s.scenario, field)
        assert got == (None if value == "inf" else value), (field, value, got)


def test_settings_are_named_in_words_and_the_pool_as_written():
    settings = g.settings(_tiny(), {"spot.share": [0.0, 0.5], "pool": ["4 x flagship", "6 x flagship"],
                                    "autoscaler.failover": [True, False]})
    names = [s.name for s in settings]
    assert names[0] == "spot share 0, 4 x flagship, failover"
    assert names[-1] == "spot share 0.5, 6 x flagship, no failover"
    six = settings[-1].scenario
    assert g.label(six, "pool") == "6 x flagship" and six.pool.size == 6 and int(six.pool.spot().sum()) == 3


@pytest.mark.parametrize("grid, needle", [
    ({"spot.share": [0.0, 1.5]}, "setting {spot.share=1.5}: spot.share=1.5: must be a number in [0, 1]"),
    ({"failures.rate": [-1]}, "failures.rate=-1"),
    ({"spot.zones": [0]}, "spot.zones=0"),
    ({"spot.fallback_hours": ["soon"]}, "spot.fallback_hours='soon'"),
    ({"autoscaler.failover": ["yes"]}, "autoscaler.failover='yes'"),
    ({"spot.shares": [0.5]}, "grid.spot.shares"),
])
def test_a_bad_setting_is_one_line(grid, needle):
    with pytest.raises(mc.ParamError) as err:
        g.settings(_tiny(), grid)
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_sweep_points_name_their_share_and_pool():
    spec = sw.Sweep(base=_tiny(), grid={"spot.share": [0.0, 1.0], "pool": ["4 x flagship", "5 x flagship"]}, n=16)
    points = sw.points(spec)
    assert [p.labels for p in points][-1] == {"spot.share": 1.0, "pool": "5 x flagship"}
    assert points[0].scenario.outages.spot == (False,) * 4 and points[-1].scenario.outages.spot == (True,) * 5
    assert len({p.key for p in points}) == 4


def test_cli_refuses_bad_section_10_values_with_exit_2(tmp_path, capsys):
    base = tmp_path / "tiny.toml"
    base.write_text('pool = "4 x flagship"\n[failures]\nrate = 0.5\n')
    (tmp_path / "sweep.toml").write_text('n = 16\n[scenario]\npool = "4 x flagship"\n'
                                         '[grid]\n"spot.share" = [0.5, 2]\n')
    (tmp_path / "r.toml").write_text('[ranges]\n"spot.share" = [0, 2]\n')
    (tmp_path / "f.toml").write_text('[ranges]\n"autoscaler.failover" = [0, 1]\n')
    for argv, needle in [
        (["sweep", str(tmp_path / "sweep.toml"), "--out", str(tmp_path / "out")], "spot.share=2"),
        (["calibrate", str(base), "--vary", "spot.share=0,1.5"], "spot.share=1.5"),
        (["calibrate", str(base), "--vary", "pool=4 x flagship,4 x nosuchcard"], "nosuchcard"),
        (["sensitivity", str(base), "--ranges", str(tmp_path / "r.toml")], "spot.share=2"),
        (["sensitivity", str(base), "--ranges", str(tmp_path / "f.toml")], "ranges.autoscaler.failover"),
    ]:
        assert main(argv + ["--quiet"]) == 2, argv
        err = capsys.readouterr().err
        assert needle in err and err.count("\n") == 1, (argv, err)
    assert not (tmp_path / "out").exists()


# -- sensitivity ------------------------------------------------------------------------------

CONTINUOUS = ("failures.rate", "failures.replace_hours", "spot.price_factor", "spot.up_hours", "spot.down_hours",
              "spot.wave_share", "spot.rate", "spot.fallback_hours", "spot.share")


def test_sensitivity_takes_every_continuous_section_10_field():
    ranges = {"failures.rate": [0.005, 0.05], "failures.replace_hours": [4, 72], "spot.price_factor": [0.1, 0.5],
              "spot.up_hours": [10, 14_600], "spot.down_hours": [0.8, 48], "spot.wave_share": [0.5, 1],
              "spot.rate": [0, 0.2], "spot.fallback_hours": [0, 24], "spot.share": [0, 1]}
    assert set(ranges) == set(CONTINUOUS)
    assert sens.check_ranges(_tiny(), ranges) == {k: tuple(float(x) for x in b) for k, b in ranges.items()}
    for field in ("spot.zones", "autoscaler.failover"):
        with pytest.raises(mc.ParamError, match=f"^ranges.{field}=.*cannot vary continuously"):
            sens.check_ranges(_tiny(), {field: [0, 1]})


def test_points_that_differ_in_rates_and_spells_share_one_shape():
    ranges = sens.check_ranges(_tiny(), {"spot.share": [0, 1], "spot.up_hours": [2, 20],
                                         "failures.rate": [0.01, 0.5]})
    points = [_tiny().replace(dict(zip(ranges, row.tolist()))) for row in sens.sample(ranges, 64)]
    shapes = {jax.tree_util.tree_structure(s) for s in points}
    common = sens.common_shapes(points)
    # One shape per split of the 4 cards (0..4 on spot), whatever the rates and spells.
    assert len(shapes) > 20 and len({jax.tree_util.tree_structure(s) for s in common}) == 5
    for before, after in zip(points, common):
        assert after.to_dict() == before.to_dict() and after.pool == before.pool
        wide, own = after.outages, before.outages
        assert plan.bare(wide) == plan.bare(own)
        assert wide.n_fail >= own.n_fail and wide.n_lone >= own.n_lone and wide.n_cycles >= own.n_cycles
    group = [p.outages for p in common if p.pool.spot().sum() == 2]
    assert len(set(group)) == 1
    own = [p.outages for p, q in zip(points, common) if q.pool.spot().sum() == 2]
    assert group[0] == plan.widen(own) and group[0].n_cycles == max(o.n_cycles for o in own)


# -- end to end (a spot month compiles in about a minute) ---------------------------------------

@pytest.mark.slow
def test_a_sweep_over_the_spot_share_runs_each_point_as_its_own_run(tmp_path):
    spec = sw.Sweep(base=_tiny(), grid={"spot.share": [0.0, 1.0]}, n=32, seed=4)
    table = sw.run(spec, tmp_path / "out", progress=False).table
    bill = sw.wide(table, "bill").set_index("spot.share")["mean"]
    for share in (0.0, 1.0):
        ref = mc.simulate(_tiny().replace({"spot.share": share}), 32, seed=4, keep_samples=True).samples
        assert bill[share] == pytest.approx(ref["bill"].mean(), rel=1e-6)
    assert "n_preempted" in set(table["statistic"])


@pytest.mark.slow
def test_calibrate_recommends_a_spot_share_and_spares(tmp_path, capsys):
    path = tmp_path / "tiny.toml"
    path.write_text('runset = "peak"\npool = "4 x flagship"\n[window]\nhours = 24\n[demand]\nlevel = 15000\n'
                    '[autoscaler]\nperiod = 168\n[failures]\nrate = 0.5\n[spot]\nshare = 0.5\ndown_hours = 20\n')
    # The default grid's rule and run set fixed, so that only the shares and pools race.
    argv = ["calibrate", str(path), "--window", "24", "--policy", "threshold", "--theta", "0.8", "--runset", "peak",
            "--strikes", "1", "--vary", "spot.share=0,0.5", "--vary", "pool=4 x flagship,5 x flagship",
            "--n", "64", "--first", "32", "--max-capacity-risk", "0.5", "--json", "--quiet",
            "--out", str(tmp_path / "cal")]
    assert main(argv) in (0, 1)  # 1: no setting meets the limits (the closest is named)
    got = json.loads(capsys.readouterr().out)
    named = (got["recommendation"] or got["closest"])["setting"]
    assert {"spot.share", "pool"} <= set(named) and named["pool"] in ("4 x flagship", "5 x flagship")
    table = pd.read_parquet(tmp_path / "cal" / "candidates.parquet")
    names = " | ".join(table["names"])
    for share, pool in [("0", "4"), ("0", "5"), ("0.5", "4"), ("0.5", "5")]:
        assert f"strikes 1, spot share {share}, {pool} x flagship" in names, (share, pool)
    assert set(table["spot.share"].dropna()) == {0.0, 0.5}


@pytest.mark.slow
def test_sensitivity_over_section_10_ranges_runs_in_one_shape(tmp_path):
    base = _tiny().replace({"spot.share": 1.0})
    res = sens.sensitivity(base, {"failures.rate": [0.0, 1.0], "spot.down_hours": [1, 100]},
                           samples=64, months=16, seed=1)
    assert res.points.shape == (256, 2)
    assert np.ptp(res.y["bill_mean"]) > 0
    assert np.isfinite(res.indices["bill_mean"]["ST"]).all()


def test_a_base_without_section_10_reads_its_terms_off():
    """A calibration compares its grid with the scenario's own setting: an absent
    [failures] or [spot] holds the defaults (every term off), an absent [autoscaler]
    does not apply."""
    lemon, golden = mc.presets.get("lemon-hunter"), mc.presets.get("golden-idler")
    assert g.own_value(lemon, "failures.rate") == 0.0 and g.own_value(lemon, "spot.zones") == 1
    assert g.own_value(lemon, "spot.share") is None and g.own_value(lemon, "spot.fallback_hours") is None
    assert g.own_value(golden, "autoscaler.failover") is None
    assert len(g.settings(lemon, {"failures.rate": [0.0, 0.014], "spot.share": [0.0, 0.5]})) == 4
