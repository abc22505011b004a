"""``mc fit FILE --figure PATH``: the data against the fitted model in three panels
(the cards' baselines with the fitted lottery, the dips seen in the data and in
telemetry simulated from the fit, the noise against window length). The flag writes
the figure, refuses a bad path in one line before anything runs, and the panels hold
the right data; (slow) on emitted telemetry, the simulated dips come from the fitted
scenario and the same fit draws the same bytes."""

from __future__ import annotations

import copy
import math

import numpy as np
import pandas as pd
import pytest

import mc
from mc import telemetry
from mc.cli import main
from mc.cli.fit import FIGURE_FORMATS
from mc.telemetry import fitting, plot

CARDS, HOURS = 16, 730  # 16 cards sampled every hour for a month
LEMONS = (3, 7, 12)  # cards at 0.67x
QUICK = ["--sims", "0", "--bootstrap", "0", "--quiet"]


def frame(seed: int = 4) -> pd.DataFrame:
    """Rows of a small fleet made with NumPy alone (no compilation): qualities
    Normal(0.96, 0.05) with three lemons, hourly noise 0.25 clipped at zero, and two
    deep dips a card."""
    rng = np.random.default_rng(seed)
    q = rng.normal(0.96, 0.05, CARDS)
    q[list(LEMONS)] *= 0.67
    factor = np.ones((CARDS, HOURS))
    for c in range(CARDS):
        for start in rng.integers(0, HOURS - 12, 2):
            factor[c, start:start + rng.integers(3, 10)] = 1 - rng.uniform(0.4, 0.8)
    rate = np.maximum(0.0, 7000 * q[:, None] * factor * (1 + 0.25 * rng.standard_normal((CARDS, HOURS))))
    return pd.DataFrame({"card": np.repeat(np.arange(CARDS), HOURS), "time": np.tile(np.arange(1.0, HOURS + 1), CARDS),
                         "rate": rate.ravel()})


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    path = tmp_path_factory.mktemp("fig") / "t.csv"
    frame().to_csv(path, index=False)
    return str(path)


@pytest.fixture(scope="module")
def fitted():
    s = telemetry.from_frame(frame())
    return s, telemetry.fit(s, bootstrap=0, sims=0)  # as the flag's test runs it: rated at the healthy mean


def test_the_flag_writes_a_png_and_the_same_fit_draws_the_same_bytes(rows, fitted, tmp_path, capsys):
    out = tmp_path / "new" / "fit.png"  # a missing folder is made
    assert main(["fit", rows, *QUICK, "--figure", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    png = out.read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 20_000
    assert b"Software" not in png and b"matplotlib" not in png.lower()
    s, r = fitted
    again = tmp_path / "again.png"
    plot.write(again, plot.panels(s, r))
    assert again.read_bytes() == png


@pytest.mark.parametrize("figure, why", [
    ("{dir}/x.svg", "must be a file path ending in .png, .pdf"),
    ("{dir}/x.png.txt", "must be a file path ending in .png, .pdf"),
    ("{rows}/x.png", "is inside a file"),
    ("{dir}", "must be a file path ending in .png, .pdf")])
def test_a_bad_figure_path_is_one_line_exit_2(rows, tmp_path, figure, why, capsys):
    figure = figure.format(dir=tmp_path, rows=rows)
    assert main(["fit", rows, *QUICK, "--figure", figure]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"mc fit: error: --figure={figure!r}: {why}"), err
    assert not list(tmp_path.iterdir())


def test_the_cli_and_the_module_agree_on_formats():
    assert FIGURE_FORMATS == plot.FORMATS


def test_the_baselines_panel_is_the_fitted_mixture_over_the_cards(fitted):
    s, r = fitted
    p = plot.panels(s, r)
    a, f = p["baselines"], p["fields"]
    o = fitting.observe(s)
    assert np.allclose(a["q"], o["base"] / r["rated"][""])
    assert np.histogram(a["q"], a["edges"])[0].sum() == CARDS  # every card inside the histogram's range
    assert a["x"][0] == a["edges"][0] and a["x"][-1] == a["edges"][-1]
    # The density (lemons found: 3 of 16 cards) integrates to 1 over the range, each
    # component to its weight, and the lemons' peak sits at lemon_factor x mean.
    assert 0.1 < f["lottery.lemon_rate"] < 0.3 and a["lemon"] is not None
    assert np.trapezoid(a["total"], a["x"]) == pytest.approx(1.0, abs=2e-3)
    assert np.trapezoid(a["lemon"], a["x"]) == pytest.approx(f["lottery.lemon_rate"], abs=2e-3)
    assert a["x"][np.argmax(a["lemon"])] == pytest.approx(f["lottery.lemon_factor"] * f["lottery.mean"], abs=3e-3)
    assert a["err_var"] > 0
    one = plot.mixture_density(a["x"], {**f, "lottery.lemon_rate": 0.0, "lottery.lemon_factor": math.nan},
                               a["err_var"])
    assert one["lemon"] is None and np.trapezoid(one["total"], a["x"]) == pytest.approx(1.0, abs=2e-3)


def test_the_dips_and_noise_panels_hold_the_fits_data(fitted):
    s, r = fitted
    p = plot.panels(s, r)
    seen = fitting.observe(s)["seen"]
    d = p["dips"]
    assert np.array_equal(d["data"]["hours"], seen["length"] * s.delta) and len(d["data"]["hours"]) == r["seen"]["dips"]
    assert d["model"] is None and d["scenario"] is None  # --sims 0: no dips fitted, nothing simulated
    assert d["smallest"] and all(x["depth"] <= 1 for x in d["smallest"])
    n = p["noise"]
    law = r["noise"]["k_means"]
    assert list(n["k"]) == [x["k"] for x in law] and np.allclose(n["hours"], n["k"] * s.delta)
    assert np.allclose(n["ratio"], [x["ratio"] for x in law]) and n["lo"] is None
    assert np.all(np.diff(n["band"]) > 0)  # fewer windows, a wider band
    with_intervals = copy.deepcopy(r)
    for x in with_intervals["noise"]["k_means"]:
        x.update(lo=x["ratio"] - 0.01, hi=x["ratio"] + 0.02)
    n = plot.panels(s, with_intervals)["noise"]
    assert np.allclose(n["hi"] - n["ratio"], 0.02) and np.allclose(n["ratio"] - n["lo"], 0.01)
    assert "16 cards, a sample every 60 min over 730 h" in plot.subtitle(p) and "dips not fitted" in plot.subtitle(p)


def test_the_simulated_scenario_is_the_fitted_one(fitted):
    _, r = fitted
    assert plot.model_scenario(r) is None
    r = copy.deepcopy(r)
    dips = {"dips.rate": 1.7, "dips.mean_hours": 3.5, "dips.depth_lo": 0.25, "dips.depth_hi": 0.55}
    for name, x in dips.items():
        r["fields"][name]["value"] = x
    base = mc.presets.get("lemon-hunter")
    sc = plot.model_scenario(r, base)
    got, want = sc.to_dict(), fitting.scenario_of(r, base)[0].to_dict()
    assert got["dips"] == want["dips"] and got["lottery"] == want["lottery"] and sc.pool == base.pool
    assert (sc.dips.rate, sc.dips.mean_hours, sc.dips.depth_lo, sc.dips.depth_hi) == pytest.approx(tuple(dips.values()))
    assert sc.lottery.mean == pytest.approx(r["fields"]["lottery.mean"]["value"])
    assert sc.window.sigma_hour == pytest.approx(r["fields"]["window.sigma_hour"]["value"])
    assert plot.model_scenario(r).pool == mc.presets.get("golden-idler").pool


@pytest.mark.slow
def test_simulated_dips_look_like_the_datas_on_emitted_telemetry(tmp_path):
    """A month of 30-minute samples of 48 cards from known parameters, fitted with
    the dips: panel b's dips are simulated from the fitted scenario (48 cards
    more), as many seen per card as in the data (within the counts' chance
    spread), the same seed simulates the same dips, and the PDF is the same bytes
    twice."""
    sc = mc.presets.get("golden-idler").replace({"lottery.lemon_rate": 0.15})
    e = telemetry.emit(sc, telemetry.Sampling(30.0, 730.0), cards=48, seed=5)
    s = telemetry.from_frame(e.samples)
    r = telemetry.fit(s, {"flagship": 7000.0}, bootstrap=0, seed=3, sims=32)
    assert all(math.isfinite(r["fields"][name]["value"]) for name in fitting.DIP_FIELDS)
    p = plot.panels(s, r, seed=3, sim_cards=48)  # as many as the data: no new compilation
    d = p["dips"]
    fit_dips = tuple(r["fields"][name]["value"] for name in fitting.DIP_FIELDS)
    assert (d["scenario"].dips.rate, d["scenario"].dips.mean_hours, d["scenario"].dips.depth_lo,
            d["scenario"].dips.depth_hi) == pytest.approx(fit_dips, rel=1e-6)
    model, data = d["model"], d["data"]
    assert model["cards"] == 48 and len(model["hours"]) > 0
    per_data, per_model = len(data["hours"]) / 48, len(model["hours"]) / 48
    z = abs(per_model - per_data) / math.sqrt(2 * per_model / 48)  # two Poisson counts
    assert z < 4, (per_data, per_model)
    again = plot.simulated_dips(d["scenario"], s, seed=(3 + plot.SIM_SEED_SALT) % 2**31, cards=48,
                                k=r["seen"]["threshold_se"])
    assert np.array_equal(again["hours"], model["hours"]) and np.array_equal(again["depth"], model["depth"])
    a, b = tmp_path / "a.pdf", tmp_path / "b.pdf"
    plot.write(a, p)
    plot.write(b, p)
    pdf = a.read_bytes()
    assert pdf.startswith(b"%PDF") and pdf == b.read_bytes()
    assert b"CreationDate" not in pdf and b"matplotlib" not in pdf.lower()
