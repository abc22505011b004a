"""SPEC §10's fields: declared, validated where they enter (one line naming the
field, exit 2 from the CLI), round-tripping through the TOML layout, and off by
default."""

import pytest

import mc
from mc.fleet.outages import Failures, Spot

SPOT_POOL = [{"card": "flagship", "count": 4}, {"card": "flagship", "count": 4, "market": "spot"}]


def _spot(**kw):
    return mc.Scenario.from_dict({"pool": SPOT_POOL}).replace(kw)


@pytest.mark.parametrize("field, value, needle", [
    ("failures.rate", -0.1, "failures.rate=-0.1"), ("failures.rate", float("nan"), "failures.rate=nan"),
    ("failures.replace_hours", -1, "failures.replace_hours=-1"),
    ("spot.price_factor", 0, "spot.price_factor=0"), ("spot.price_factor", 1.5, "spot.price_factor=1.5"),
    ("spot.zones", 0, "spot.zones=0"), ("spot.zones", 1.5, "spot.zones=1.5"),
    ("spot.wave_share", 1.2, "spot.wave_share=1.2"), ("spot.wave_share", -0.1, "spot.wave_share=-0.1"),
    ("spot.up_hours", 0, "spot.up_hours=0"), ("spot.down_hours", -2, "spot.down_hours=-2"),
    ("spot.rate", -1, "spot.rate=-1"), ("spot.fallback_hours", -1, "spot.fallback_hours=-1"),
    ("spot.fallback_hours", "soon", "spot.fallback_hours='soon'"),
    ("autoscaler.failover", "yes", "autoscaler.failover='yes'"), ("spot.bogus", 1, "spot.bogus"),
])
def test_bad_fields_are_one_line_errors(field, value, needle):
    with pytest.raises(mc.ParamError) as err:
        _spot(**{field: value})
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_a_market_must_be_known_and_spot_fields_need_a_spot_card():
    with pytest.raises(mc.ParamError, match=r"pool.flagship.market='reserved'"):
        mc.Scenario.from_dict({"pool": [{"card": "flagship", "count": 4, "market": "reserved"}]})
    with pytest.raises(mc.ParamError, match=r"^spot=.*needs a spot card in the pool"):
        mc.Scenario.from_dict({"pool": "8 x flagship", "spot": {"zones": 2}})


def test_terms_are_off_by_default_and_given_off_change_nothing():
    sc = mc.presets.get("lemon-hunter")
    assert sc.outages is None and sc.failures is None and sc.spot is None and sc.autoscaler.failover
    assert sc.replace({"failures.rate": 0.0}).outages is None
    assert Failures().rate == 0 and Spot().fallback_hours is None and Spot().wave_share == 1.0


def test_a_spot_pool_round_trips_and_implies_the_sections():
    sc = _spot(**{"failures.rate": 0.02, "spot.fallback_hours": float("inf")})
    assert sc.spot.fallback_hours is None and sc.autoscaler is not None
    assert sc.outages.spot == (False,) * 4 + (True,) * 4 and sc.outages.zone_of[4:] == (0, 0, 0, 0)
    data = sc.to_dict()
    assert data["pool"][1]["market"] == "spot" and data["failures"]["rate"] == 0.02
    assert mc.Scenario.from_dict(data).to_dict() == data
    three = _spot(**{"spot.zones": 3})
    assert three.outages.zone_of[4:] == (0, 1, 2, 0)
    assert "failures.rate" in mc.fleet.field_names() and "spot.wave_share" in mc.fleet.field_names()


def test_outages_refuse_wander_and_swing():
    with pytest.raises(mc.ParamError, match=r"^failures=.*wander, swing"):
        mc.presets.get("lemon-hunter").replace({"failures.rate": 0.02, "wander.sd": 0.01})


def test_cli_exits_2_on_bad_input(tmp_path, capsys):
    from mc.cli import main

    bad = tmp_path / "bad.toml"
    bad.write_text('pool = "8 x flagship"\n[spot]\nwave_share = 2\n')
    assert main(["run", str(bad), "--n", "16", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "spot.wave_share=2" in err and err.count("\n") == 1
    bad.write_text('pool = [{card = "flagship", count = 4, market = "owned"}]\n')
    assert main(["run", str(bad), "--n", "16", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "pool.flagship.market='owned'" in err and err.count("\n") == 1


@pytest.mark.slow
def test_cli_run_takes_the_sections(tmp_path, capsys):
    import json

    from mc.cli import main

    good = tmp_path / "s.toml"
    good.write_text('pool = [{card = "flagship", count = 6}, {card = "flagship", count = 4, market = "spot"}]\n'
                    '[demand]\nlevel = 30000\n[failures]\nrate = 0.5\n[spot]\nzones = 2\nfallback_hours = inf\n'
                    '[autoscaler]\nperiod = 365\n')
    assert main(["run", str(good), "--n", "16", "--json", "--quiet"]) == 0
    stats = json.loads(capsys.readouterr().out)["stats"]
    for col in ("n_failed", "n_preempted", "empty_slot_hours", "fallback_hours", "spot_share", "spot_bill"):
        assert col in stats
    assert stats["n_preempted"]["mean"] > 0
