"""Round trips of wander and swing (SPEC §8.3): irregular, gappy telemetry emitted
with known structure is fitted back within the fit's intervals, and with the terms
zero their intervals include zero. The small one runs with every test; the larger one
counts coverage over seeds (slow)."""

from __future__ import annotations

import math

import pytest

from mc import presets, telemetry
from mc.fleet.swing import Swing
from mc.fleet.wander import Wander
from mc.telemetry.cadence import Cadence

GAPPY = Cadence(jitter=0.5, splay=1.0, missed=0.05, outage_rate=0.5, outage_hours=72.0)


def _fit(wander: Wander, swing: Swing, cards: int, seed: int, bootstrap: int = 60) -> dict:
    sc = presets.get("golden-idler").replace({"dips.rate": 0.0})
    e = telemetry.emit(sc, telemetry.Sampling(every=84, hours=730), cards=cards, seed=seed, cadence=GAPPY,
                       wander=wander, swing=swing)
    s = telemetry.from_frame(e.samples)
    assert s.kind == "interval" and s.outages > 0
    return telemetry.fit(s, {"flagship": 7000.0}, bootstrap=bootstrap, sims=0, seed=seed)["structure"]["fields"]


def _within(f: dict, name: str, truth: float) -> bool:
    hi = math.inf if "bound" in f[name] else f[name]["hi"]  # a bound: the interval is open above
    return f[name]["lo"] <= truth <= hi


def test_known_wander_and_swing_come_back_and_zero_is_covered():
    f = _fit(Wander(sd=0.04, hours=48.0), Swing(diurnal=0.02, hot_hour=15.0), cards=48, seed=1)
    assert _within(f, "wander.sd", 0.04) and _within(f, "swing.diurnal", 0.02)
    assert _within(f, "swing.hot_hour", 15.0) and f["wander.sd"]["lo"] > 0  # seen, not just allowed
    zero = _fit(Wander(), Swing(), cards=48, seed=2)
    for name in ("wander.sd", "swing.diurnal", "swing.sd"):
        assert zero[name]["lo"] == 0.0, (name, zero[name])


@pytest.mark.slow
def test_coverage_over_seeds():
    """Each term's interval holds its truth in most of 12 runs (95% nominal: at least 9
    of 12 fails by chance under 1% of the time where the true rate is 0.95)."""
    truth = {"wander.sd": 0.03, "wander.hours": 48.0, "swing.diurnal": 0.015, "swing.hot_hour": 15.0,
             "swing.sd": 0.01, "swing.hours": 24.0}
    hits = dict.fromkeys(truth, 0)
    for seed in range(12):
        f = _fit(Wander(sd=0.03, hours=48.0), Swing(diurnal=0.015, hot_hour=15.0, sd=0.01, hours=24.0), cards=128,
                 seed=100 + seed, bootstrap=100)
        for name, x in truth.items():
            hits[name] += _within(f, name, x)
    print(hits)
    assert all(h >= 9 for h in hits.values()), hits


@pytest.mark.slow
def test_dips_fitted_on_irregular_telemetry():
    """golden-idler's dips (2 a month of 4 h) fitted back from gappy, jittered samples,
    the simulation sampling the data's own intervals."""
    sc = presets.get("golden-idler")
    e = telemetry.emit(sc, telemetry.Sampling(every=30, hours=730), cards=64, seed=7, cadence=GAPPY)
    s = telemetry.from_frame(e.samples)
    r = telemetry.fit(s, {"flagship": 7000.0}, bootstrap=50, sims=64, seed=7)
    f = r["fields"]
    for name, truth in (("dips.rate", 2.0), ("dips.mean_hours", 4.0), ("window.sigma_hour", 0.25)):
        assert f[name]["lo"] <= truth <= f[name]["hi"], (name, f[name])
