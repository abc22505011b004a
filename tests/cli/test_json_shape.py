"""One shape for a figure in every --json (run, presets, buy, sweep), and a
provenance block in every one of them."""

import json
import math

import pytest

import mc.serving.arithmetic

from mc.cli import main
from mc.engine import Z95, mean_figure, pass_figure
from mc.studies import figures

PROVENANCE = {"scenario", "seed", "n", "wall_s", "versions", "backend", "devices", "git", "created"}


def check_figure(name, f):
    assert set(f) in ({"value", "lo", "hi", "units"}, {"value", "units"}), (name, f)
    assert isinstance(f["units"], str)
    if "lo" in f and f["value"] is not None:  # an undefined figure is null in strict JSON
        assert f["lo"] <= f["value"] <= f["hi"], (name, f)
    if name.startswith("pass_"):
        assert f["units"] == "share" and 0.0 <= f["lo"] <= f["hi"] <= 1.0


def check_figures(block, means, passes):
    for name, f in block.items():
        check_figure(name, f)
    assert {f"{c}_mean" for c in means} <= set(block) and {f"pass_{c}" for c in passes} <= set(block)


def check_provenance(prov, n, seed):
    assert PROVENANCE <= set(prov)
    assert prov["n"] == n and prov["seed"] == seed and prov["versions"]["mc"] and prov["versions"]["jax"]
    assert prov["devices"] and prov["wall_s"] >= 0


def test_mean_and_pass_figures():
    f = mean_figure(10.0, 2.0, 101, "$")
    assert f == {"value": 10.0, "lo": pytest.approx(10 - Z95 * 0.2), "hi": pytest.approx(10 + Z95 * 0.2), "units": "$"}
    assert mean_figure(3.0, 0.0, 1, "cards") == {"value": 3.0, "units": "cards"}  # no interval from one month
    assert pass_figure({"rate": 0.5, "lo": 0.4, "hi": 0.6, "n": 100}) == {"value": 0.5, "lo": 0.4, "hi": 0.6,
                                                                          "units": "share"}
    assert figures.units_of("idle_share", figures.FLEET_UNITS) == "share"
    assert figures.units_of("bill", figures.FLEET_UNITS) == "$"


@pytest.mark.slow
def test_run_json(capsys):
    assert main(["run", "noise-evictor", "--n", "300", "--seed", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"stats", "pass", "modes", "figures", "provenance"} <= set(out)  # stats and pass kept as they were
    check_figures(out["figures"], ["bill", "convergence", "shortfall", "n_wrong"], ["capacity", "eviction"])
    f, st = out["figures"]["bill_mean"], out["stats"]["bill"]
    assert f["value"] == st["mean"] and f["units"] == "$"
    assert f["hi"] - f["value"] == pytest.approx(Z95 * st["std"] / math.sqrt(299))
    p = out["pass"]["eviction"]
    assert out["figures"]["pass_eviction"] == {"value": p["rate"], "lo": p["lo"], "hi": p["hi"], "units": "share"}
    assert out["figures"]["delivered_tokens_mean"]["units"] == "tokens"
    check_provenance(out["provenance"], 300, 2)


@pytest.mark.slow
def test_presets_json_keeps_its_keys_and_adds_intervals_figures_and_provenance(capsys):
    assert main(["presets", "--n", "200", "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""  # --json: no progress bar
    rows = json.loads(captured.out)
    for row in rows:
        for c in ("capacity", "convergence", "eviction"):
            assert row[f"pass_{c}_lo"] <= row[f"pass_{c}"] <= row[f"pass_{c}_hi"]
            assert row["figures"][f"pass_{c}"]["value"] == row[f"pass_{c}"]
        check_figures(row["figures"], ["bill", "convergence", "n_wrong"], ["capacity", "convergence", "eviction"])
        check_provenance(row["provenance"], 200, 0)
        assert row["figures"]["n_wrong_mean"]["value"] == pytest.approx(row["n_wrong_mean"])


@pytest.mark.slow
def test_buy_json(capsys):
    assert main(["buy", "api-tax", "--n", "100", "--seed", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    check_figures(out["figures"], ["bill", "idle_share", "api_share", "blended_ratio"],
                  ["idle", "margin", "overflow", "all"])
    assert out["figures"]["bill_mean"]["units"] == "$" and out["figures"]["api_tokens_mean"]["units"] == "tokens"
    assert out["figures"]["pass_all"]["value"] == out["pass_all"]
    check_provenance(out["provenance"], 100, 1)


@pytest.mark.slow
def test_sweep_json(tmp_path, capsys):
    path = tmp_path / "s.toml"
    path.write_text('preset = "golden-idler"\nn = 200\n[grid]\n"eviction.share" = [0.0, 0.2]\n'
                    '[derive]\nidle_share = "idle_burn / bill"\n')
    assert main(["sweep", str(path), "--out", str(tmp_path / "out"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [p["fields"] for p in out["points"]] == [{"eviction.share": 0.0}, {"eviction.share": 0.2}]
    for p in out["points"]:
        check_figures(p["figures"], ["bill", "convergence", "idle_share"], ["capacity", "convergence", "eviction"])
        assert p["figures"]["idle_share_mean"]["units"] == "share"
    assert out["points"][0]["figures"]["bill_mean"]["value"] == 83_200.0  # 32 cards warm, none evicted
    check_provenance(out["provenance"], 200, 0)
    assert out["provenance"]["scenario"]["grid"] == {"eviction.share": [0.0, 0.2]}


@pytest.mark.slow
def test_card_json_has_exact_figures_with_units_and_provenance(capsys):
    assert main(["card", "--model", "llama-3-8b", "--gpu", "h100", "--batch", "8", "--price-hour", "3",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["figures"]) == set(figures.column_units(mc.serving.arithmetic.OUTPUTS))
    for name, f in out["figures"].items():
        check_figure(name, f)
        assert f["value"] == out[name]
    assert out["figures"]["aggregate_tok_s"]["units"] == "tok/s" and out["figures"]["batch"]["value"] == 8
    prov = out["provenance"]
    assert {"scenario", "versions", "git", "created"} <= set(prov) and prov["backend"] is None
    assert prov["scenario"]["model"] == "llama-3-8b" and prov["scenario"]["price_hour"] == 3.0
