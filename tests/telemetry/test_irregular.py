"""Irregular telemetry (SPEC §8.3): each sample's own interval, slots in time order,
the observation over intervals against a plain float64 recomputation, and bad input
as one line with exit 2."""

from __future__ import annotations

import math

import jax
import numpy as np
import pandas as pd
import pytest

from mc.cli import main
from mc.fleet.dips import Dips
from mc.fleet.swing import Swing
from mc.fleet.wander import Wander
from mc.telemetry import intervals, series, slots
from mc.telemetry.observe import Params


def test_interval_widths_outages_and_probes():
    card = np.array([0, 0, 0, 0, 0, 1, 1, 1])
    time = np.array([1.0, 2.0, 3.1, 10.0, 11.0, 0.5, 1.5, 2.5])
    a, w, out = slots.intervals(card, time, 2)
    # card 0's median gap is 1.05 (gaps 1, 1.1, 6.9, 1): its first sample and the one after the 6.9 h outage report it
    assert np.allclose(w, [1.05, 1.0, 1.1, 1.05, 1.0, 1.0, 1.0, 1.0]) and np.allclose(a, time - w)
    assert out.tolist() == [False, False, False, True, False, False, False, False]
    a, w, out = slots.intervals(card, time, 2, probe=36.0)
    assert np.allclose(w, 0.01) and np.allclose(a, time) and out.sum() == 1
    _, _, out = slots.intervals(card, time, 2, max_gap=10.0)
    assert not out.any()


def test_slots_follow_time_and_never_collide():
    rng = np.random.default_rng(0)
    t = np.sort(rng.uniform(0, 50, 80))
    card = np.zeros(80, np.int64)
    k = slots.slots(card, t, 0.6, 0.0)
    assert (np.diff(k) >= 1).all() and np.abs(k - t / 0.6).max() < 80


def test_irregular_rows_keep_their_own_intervals():
    rng = np.random.default_rng(1)
    rows = []
    for c in range(3):
        t = np.cumsum(rng.uniform(0.5, 1.5, 40))
        t = np.concatenate([t[:20], t[20:] + 30.0])  # a 30 h outage
        rows.append(pd.DataFrame({"card": c, "time": t, "rate": 7000 * (1 + 0.1 * rng.standard_normal(40))}))
    f = pd.concat(rows)
    s = series.from_frame(f)
    assert s.kind == "interval" and s.outages == 3 and not s.regular
    assert np.isfinite(s.y).sum() == 120
    assert np.allclose(np.sort(s.y[np.isfinite(s.y)]), np.sort(f.rate.to_numpy()))
    end = (s.start + s.width)[np.isfinite(s.y)] + s.t0
    assert np.allclose(np.sort(end), np.sort(f.time.to_numpy()))  # an interval ends at its sample's time
    p = series.from_frame(f, probe=60.0)
    assert p.kind == "probe" and np.allclose(p.width[np.isfinite(p.y)], 1 / 60)


def test_samples_over_intervals_match_a_float64_recomputation():
    """``intervals.card`` against a loop over hours and dips in float64, from the path
    and the dips it returns (noise off, so each sample is its mean rate): the hourly rate
    ``t·(1 + c)·(1 + u − Σ δ·overlap)`` averaged over the sample (SPEC §1.4.1 as amended)."""
    p = Params(every=60.0, hours=100.0, rated=7000.0, sigma_hour=0.0,
               dips=Dips(rate=20.0, mean_hours=3.0, depth_lo=0.2, depth_hi=0.6, max_count=32))
    shared = intervals.swing_path(4, Swing(diurnal=0.03, hot_hour=15.0, sd=0.01, hours=12.0), p.hours)
    a = np.array([0.0, 0.25, 3.7, 10.0, 47.9, 60.5, 98.0], np.float32)
    w = np.array([1.0, 0.01, 2.6, 5.0, 0.2, 1.0, 1.5], np.float32)
    card = jax.jit(intervals.card)  # as the engine runs it: one program, not one per operation
    out = card(jax.random.key(7), p, Wander(sd=0.05, hours=24.0), shared, a, w)
    u, c = np.asarray(out["wander"], np.float64), np.asarray(shared, np.float64)
    dips = [(float(b), float(e), float(d)) for b, e, d in zip(out["begin"], out["end"], out["depth"]) if d > 0]
    assert dips
    for j in range(len(a)):
        lo, hi = float(a[j]), float(a[j] + w[j])
        total = 0.0
        for h in range(math.floor(lo), math.ceil(hi)):
            x, y = max(h, lo), min(h + 1, hi)  # the sample's part of hour h
            down = sum(d * max(0.0, min(e, y) - max(b, x)) for b, e, d in dips)
            total += (1 + c[h]) * ((1 + u[h]) * max(0.0, y - x) - down)
        want = float(out["true_rate"]) * max(0.0, total / (hi - lo))
        assert float(out["rate"][j]) == pytest.approx(want, rel=2e-4)


def test_swing_path_is_the_diurnal_cosine_with_no_shared_noise():
    c = intervals.swing_path(0, Swing(diurnal=0.02, hot_hour=15.0, start_hour=6.0), 48.0)
    clock = (6 + np.arange(len(c))) % 24
    assert np.allclose(c, -0.02 * np.cos(2 * np.pi * (clock - 15) / 24), atol=1e-7)
    assert int(np.argmin(c[:24])) == 9  # clock 15 is hour 9 of a month starting at 06:00


@pytest.mark.parametrize("args, field", [
    (["--probe", "0"], "--probe=0.0"),
    (["--tz", "Mars/Olympus"], "--tz='Mars/Olympus'"),
    (["--max-gap", "0"], "--max-gap=0.0"),
])
def test_bad_reading_flags_are_one_line(args, field, tmp_path, capsys):
    path = tmp_path / "t.csv"
    pd.DataFrame({"card": [0, 0, 1, 1], "time": [0.0, 1.3, 0.2, 1.1], "rate": [5.0, 6.0, 5.0, 4.0]}).to_csv(
        path, index=False)
    assert main(["fit", str(path), "--quiet", *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and field in err[0]


def test_irregular_times_going_backwards_are_refused(tmp_path, capsys):
    path = tmp_path / "t.csv"
    pd.DataFrame({"card": [0, 0, 1, 1], "time": [1.3, 0.2, 0.2, 1.1], "rate": [5.0, 6.0, 5.0, 4.0]}).to_csv(
        path, index=False)
    assert main(["fit", str(path), "--quiet", "--probe", "30"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "file.time=" in err[0] and "back in time" in err[0]


def test_mc_telemetry_writes_a_gappy_probe_series_that_mc_fit_reads(tmp_path, capsys):
    import json

    out = tmp_path / "t.csv"
    assert main(["telemetry", "golden-idler", "--out", str(out), "--cards", "6", "--every", "90", "--hours", "240",
                 "--jitter", "0.5", "--splay", "1", "--missed", "0.1", "--outages", "3", "--outage-hours", "24",
                 "--probe", "60", "--structure", "wander.sd=0.02,swing.diurnal=0.01", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["cadence"]["probe"] == 60.0 and doc["wander"]["sd"] == 0.02 and doc["swing"]["diurnal"] == 0.01
    rows = pd.read_csv(out)
    assert len(rows) == doc["samples"] < 6 * 160  # missed scrapes and outages left out
    t = rows.sort_values(["card", "time"])
    assert (t.groupby("card").time.diff().dropna() > 0).all()
    assert not np.allclose((t.time / 1.5) % 1, 0)  # off the grid
    s = series.read(out, probe=60.0)
    assert s.kind == "probe" and np.allclose(s.width[np.isfinite(s.y)], 1 / 60)


def test_the_clock_is_the_data_s_hour_of_day():
    stamps = pd.to_datetime(["2024-06-01T15:30:00Z", "2024-06-01T16:30:00Z", "2024-06-01T17:30:00Z"] * 2)
    f = pd.DataFrame({"card": [0, 0, 0, 1, 1, 1], "time": stamps, "rate": [1.0, 2, 3, 2, 3, 4]})
    assert series.from_frame(f).clock0 == 15.5
    assert series.from_frame(f, tz="Europe/Paris").clock0 == 17.5  # CEST, UTC+2
    hours = f.assign(time=[10.0, 11, 12, 10, 11, 12])
    assert series.from_frame(hours).clock0 == 10.0  # numeric hours: hours since a midnight
    hours.attrs["unix_start"] = 1717200000.0 + 5 * 3600  # a Prometheus export's time 0: 05:00 UTC
    assert series.from_frame(hours).clock0 == 15.0


def test_one_hour_of_the_day_leaves_the_diurnal_swing_unidentified():
    """A daily probe at 03:00: the diurnal terms are said to be not identifiable, left
    out of the fitted values, and the window-spread table still reads."""
    from mc import telemetry

    rng = np.random.default_rng(3)
    cards, days = 8, 40
    t = np.tile(24.0 * np.arange(days) + 3.0, cards) + rng.uniform(-0.1, 0.1, cards * days)
    f = pd.DataFrame({"card": np.repeat(np.arange(cards), days), "time": t,
                      "rate": 7000 * (1 + 0.05 * rng.standard_normal(cards * days))})
    r = telemetry.fit(series.from_frame(f, probe=60.0), {"": 7000.0}, bootstrap=20, sims=0)
    st = r["structure"]
    assert math.isnan(st["fields"]["swing.diurnal"]["value"]) and math.isnan(st["fields"]["swing.hot_hour"]["value"])
    assert any("hour(s) of the day observed" in n and "not identifiable" in n for n in r["notes"])
    assert [x["window"] for x in st["spread"]] == ["1 h", "4 h", "a day", "a week"]


def test_the_dips_simulation_samples_the_data_s_own_intervals():
    """Each simulated card has a sample exactly where the data's card has one, over its
    interval: with no noise and no dips every simulated sample is its card's quality."""
    from mc.fleet.lottery import Lottery
    from mc.telemetry import dipfit

    rng = np.random.default_rng(5)
    rows = [pd.DataFrame({"card": c, "time": np.cumsum(rng.uniform(0.5, 2.5, 30)), "rate": rng.uniform(1, 2, 30)})
            for c in range(3)]
    s = series.from_frame(pd.concat(rows))
    y = dipfit.simulate_over([Dips(rate=0.0), Dips(rate=0.0)], Lottery(mean=1.0, sd=0.1), 0.0, s, seed=1)
    assert y.shape == (2,) + s.y.shape
    assert (np.isfinite(y) == np.isfinite(s.y)[None]).all()
    per_card = np.nanmax(y, axis=2) - np.nanmin(y, axis=2)
    assert np.allclose(per_card, 0.0, atol=1e-6) and not np.allclose(y[0], y[1], equal_nan=True)


def test_a_level_step_across_an_outage_is_a_replacement_only_past_the_given_step():
    rng = np.random.default_rng(6)
    rows = []
    for c, jump in ((0, 1.0), (1, 1.3), (2, 1.03)):
        t = np.cumsum(rng.uniform(0.8, 1.2, 60))
        t[30:] += 100.0  # an outage of 100 h after sample 30
        level = np.where(np.arange(60) < 30, 7000.0, 7000.0 * jump)
        rows.append(pd.DataFrame({"card": c, "time": t, "rate": level * (1 + 0.02 * rng.standard_normal(60))}))
    f = pd.concat(rows)
    assert series.from_frame(f).n_cards == 3  # a step is wander unless a step size is given
    s = series.from_frame(f, step=0.1)
    assert s.replaced == 1 and list(map(str, s.cards)) == ["0", "1", "1~2", "2"]
    assert s.outages == 2 and np.isfinite(s.y).sum() == 180
    assert np.nanmedian(s.y[2]) > 1.2 * np.nanmedian(s.y[1])
