"""Scenarios: validation where parameters enter, TOML, dotted replace."""

import re

import numpy as np
import pytest

import mc
from mc.fleet.scenario import field_names
from mc.files import load_scenario as load

BASE = mc.presets.get("golden-idler")


@pytest.mark.parametrize("update,field", [
    ({"eviction.share": 1.0}, "eviction.share"),
    ({"eviction.share": -0.1}, "eviction.share"),
    ({"eviction.theta": 0.0}, "eviction.theta"),
    ({"eviction.theta": -1}, "eviction.theta"),
    ({"eviction.policy": "random"}, "eviction.policy"),
    ({"window.hours": 0}, "window.hours"),
    ({"window.hours": -24}, "window.hours"),
    ({"window.hours": "fortnight"}, "window.hours"),
    ({"window.hours": float("nan")}, "window.hours"),
    ({"demand.level": -1.0}, "demand.level"),
    ({"demand.shape": "spiky"}, "demand.shape"),
    ({"runset": "half"}, "runset"),
    ({"pool": "0 x flagship"}, "pool.flagship.count"),
    ({"pool": "32 x tpu"}, "card"),
    ({"pool": []}, "pool"),
    ({"lottery.lemon_rate": 1.5}, "lottery.lemon_rate"),
    ({"dips.max_count": 2.5}, "dips.max_count"),
    ({"checks.max_shortfall": 2}, "checks.max_shortfall"),
    ({"eviction.sharee": 0.1}, "eviction.sharee"),
    ({"budget": 3}, "budget"),
])
def test_bad_fields_name_field_value_and_range(update, field):
    with pytest.raises(mc.ParamError) as err:
        BASE.replace(update)
    msg = str(err.value)
    assert "\n" not in msg
    assert msg.startswith(field + "="), msg


@pytest.mark.parametrize("card", [dict(name="x", rated=0, price=10), dict(name="x", rated=10, price=-5)])
def test_non_positive_rate_or_price(card):
    with pytest.raises(mc.ParamError, match=r"^x\.(rated|price)="):
        mc.CardClass(**card)


@pytest.mark.parametrize("trace,field", [
    (np.ones(729), "demand.trace"),
    (np.r_[np.ones(729), np.nan], r"demand.trace\[729\]"),
    (np.r_[-1.0, np.ones(729)], r"demand.trace\[0\]"),
    ("abc", "demand.trace"),
])
def test_bad_trace(trace, field):
    with pytest.raises(mc.ParamError, match="^" + field + "="):
        mc.Demand(shape="trace", trace=trace)


def test_pool_too_expensive_for_exact_cents():
    with pytest.raises(mc.ParamError, match="^pool="):
        mc.Pool.of(("flagship", 10_000))


def test_replace_and_dict_round_trip():
    sc = BASE.replace({"window.hours": "day", "eviction.share": 0.1, "pool": "8 x bargain + 4 x flagship"})
    assert sc.window.hours == 24.0 and sc.eviction.share == 0.1 and sc.pool.size == 12
    assert sc.evict_limit == 1
    again = mc.Scenario.from_dict(sc.to_dict())
    assert again.to_dict() == sc.to_dict()
    assert BASE.window.hours == 168.0  # the original is untouched


def test_field_names_cover_sections():
    names = field_names()
    assert {"pool", "runset", "window.hours", "eviction.share", "demand.shape", "lottery.lemon_rate"} <= set(names)


def test_toml_from_preset_with_trace_csv(tmp_path):
    (tmp_path / "trace.csv").write_text("demand\n" + "\n".join(str(50_000 + h) for h in range(730)))
    path = tmp_path / "s.toml"
    path.write_text('preset = "noise-evictor"\nrunset = "peak"\n[window]\nhours = "day"\n'
                    '[demand]\nshape = "trace"\ntrace_csv = "trace.csv"\n')
    sc = load(path)
    assert sc.runset == "peak" and sc.window.hours == 24.0 and sc.eviction.share == 0.375
    assert sc.demand.trace.shape == (730,) and sc.demand.trace[-1] == 50_729


def test_toml_full_scenario(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('pool = [{card = "flagship", count = 4}, {name = "mid", rated = 5000, price_month = 2000, count = 3}]\n'
                    '[eviction]\npolicy = "threshold"\ntheta = 0.9\n[demand]\nlevel = 20000\n')
    sc = load(path)
    assert sc.pool.size == 7 and sc.pool.classes[1].name == "mid" and sc.eviction.policy == "threshold"


@pytest.mark.parametrize("entry", ['{name = "mid", rated = 5000, price = 2000, count = 3}',
                                   '{card = "flagship", price = 2000, count = 3}',
                                   '{gpu = "h100", model = "8b", batch = 8, price = 2000, count = 3}'])
def test_a_pool_entry_s_older_price_is_refused_naming_the_new(entry, tmp_path):
    path = tmp_path / "old.toml"
    path.write_text(f"pool = [{entry}]\n")
    with pytest.raises(mc.ParamError, match=r"^pool\.[\w@]+\.price=2000: is the older name of price_month: write "
                       "price_month instead$"):
        load(path)


def test_toml_errors(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('pool = "4 x flagship"\n[eviction]\nshare = 1.5\n')
    with pytest.raises(mc.ParamError, match=r"^eviction\.share=1\.5: must be a number in \[0, 1\)$"):
        load(path)
    path.write_text('pool = "4 x flagship"\n[eviction\n')
    with pytest.raises(mc.ParamError, match="not valid TOML"):
        load(path)


def test_error_message_states_range():
    with pytest.raises(mc.ParamError) as err:
        BASE.replace({"eviction.share": 1.2})
    assert re.fullmatch(r"eviction\.share=1\.2: must be a number in \[0, 1\)", str(err.value))
