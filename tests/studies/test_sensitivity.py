"""Global sensitivity (``mc.studies.sensitivity``): known indices recovered through
the same code path, points vmapped exactly as single runs, bad input in one line."""

import json
import math

import numpy as np
import pytest

import mc
from mc.cli import main
from mc.studies import sensitivity as sens

BASE = mc.presets.get("noise-evictor")
PI = math.pi


def ishigami(x, a=7.0, b=0.1):
    return np.sin(x[:, 0]) + a * np.sin(x[:, 1]) ** 2 + b * x[:, 2] ** 4 * np.sin(x[:, 0])


def test_ishigami_indices_are_recovered_within_their_intervals():
    # Known values for a = 7, b = 0.1 (Ishigami and Homma 1990; Sobol 2001).
    v1, v2, v3, v13 = 0.5 * (1 + 0.1 * PI**4 / 5) ** 2, 49 / 8, 0.0, 0.01 * PI**8 * (1 / 18 - 1 / 50)
    total = v1 + v2 + v13
    s1 = np.array([v1, v2, v3]) / total
    st = np.array([v1 + v13, v2, v13]) / total
    ranges = {f"x{i}": (-PI, PI) for i in (1, 2, 3)}
    res = sens.indices_of(ranges, lambda x: ({"y": ishigami(x)}, {"y": np.zeros(len(x))}), 4096, seed=1)
    ind = res.indices["y"]
    assert np.all(np.abs(ind["S1"] - s1) <= ind["S1_conf"]), (ind["S1"], s1, ind["S1_conf"])
    assert np.all(np.abs(ind["ST"] - st) <= ind["ST_conf"]), (ind["ST"], st, ind["ST_conf"])
    assert np.all(ind["S1_conf"] < 0.05) and res.noise_share["y"] == 0.0


@pytest.mark.parametrize("seed", [0, 1, 2**31 - 1])
def test_intervals_are_the_same_on_every_run_of_a_seed(seed):
    ranges = {f"x{i}": (-PI, PI) for i in (1, 2, 3)}
    y = ishigami(sens.sample(ranges, 64, seed))
    np.random.seed(None)  # NumPy's global state must not matter (seed 0 included)
    first = sens.analyze(ranges, y, resamples=50, seed=seed)
    np.random.seed(12345)
    again = sens.analyze(ranges, y, resamples=50, seed=seed)
    for k in ("S1_conf", "ST_conf"):
        np.testing.assert_array_equal(first[k], again[k])
    other = sens.analyze(ranges, y, resamples=50, seed=seed ^ 1)
    assert not np.array_equal(first["S1_conf"], other["S1_conf"])


def test_a_figure_that_never_varies_has_no_indices():
    ranges = {"a": (0.0, 1.0), "b": (0.0, 1.0)}
    res = sens.indices_of(ranges, lambda x: ({"y": np.ones(len(x))}, {"y": np.zeros(len(x))}), 64)
    assert np.all(np.isnan(res.indices["y"]["S1"])) and res.report()["figures"]["y"]["varies"] is False


@pytest.mark.slow
def test_vmapped_points_equal_single_runs():
    ranges = {"window.hours": (1.0, 168.0), "eviction.share": (0.0, 0.4)}
    x = sens.sample(ranges, 64, seed=3)[:5]
    figures, noise = sens.fleet_evaluator(BASE, list(ranges), 48, seed=2)(x)
    for i, row in enumerate(x):
        sc = BASE.replace(dict(zip(ranges, row.tolist())))
        s = mc.simulate(sc, 48, seed=2, keep_samples=True).samples
        assert figures["p_capacity"][i] == pytest.approx(s["pass_capacity"].mean(), abs=1e-12)
        assert figures["p_eviction"][i] == pytest.approx(s["pass_eviction"].mean(), abs=1e-12)
        assert figures["bill_mean"][i] == pytest.approx(s["bill"].mean(), rel=1e-6)
        assert figures["shortfall_mean"][i] == pytest.approx(s["shortfall"].mean(), rel=1e-5, abs=1e-9)
        assert noise["bill_mean"][i] == pytest.approx(s["bill"].var(ddof=0) / 48, rel=1e-3, abs=1e-6)


@pytest.mark.slow
def test_the_command_writes_indices_and_a_manifest(tmp_path, capsys):
    (tmp_path / "r.toml").write_text('[ranges]\n"window.hours" = [1, 168]\n"lottery.sd" = [0.01, 0.1]\n')
    out = tmp_path / "out"
    assert main(["sensitivity", "noise-evictor", "--ranges", str(tmp_path / "r.toml"), "--samples", "64",
                 "--months", "32", "--out", str(out), "--json", "--quiet"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["points"] == 64 * 4 and set(rep["figures"]) == set(sens.FIGURES)
    assert set(rep["figures"]["bill_mean"]["parameters"]) == {"window.hours", "lottery.sd"}
    import pandas as pd

    table = pd.read_parquet(out / "sensitivity.parquet")
    assert len(table) == len(sens.FIGURES) * 2 and {"S1", "S1_conf", "ST", "ST_conf"} <= set(table.columns)
    assert json.loads((out / "manifest.json").read_text())["n"] == 32


BAD_RANGES = [
    ('"window.hours" = [168, 1]', "lo < hi"),
    ('"window.hours" = [5, 5]', "lo < hi"),
    ('"window.colour" = [1, 2]', "is not a numeric scenario field"),
    ('"pool" = [1, 2]', "is not a numeric scenario field"),
    ('"demand.shape" = [0, 1]', "cannot vary continuously"),
    ('"dips.max_count" = [1, 8]', "cannot vary continuously"),
    ('"checks.max_wrong" = [0, 3]', "cannot vary continuously"),
    ('"eviction.share" = [0.0, 1.5]', "eviction.share=1.5"),
    ('"window.hours" = [-1, 5]', "window.hours=-1"),
    ('"window.hours" = 5', r"must be \[lo, hi\]"),
    ('"window.hours" = [1, nan]', "ranges.window.hours"),
]


@pytest.mark.parametrize("line,match", BAD_RANGES, ids=[b[0] for b in BAD_RANGES])
def test_bad_ranges_are_one_line(tmp_path, capsys, line, match):
    (tmp_path / "r.toml").write_text(f"[ranges]\n{line}\n")
    assert main(["sensitivity", "noise-evictor", "--ranges", str(tmp_path / "r.toml"), "--samples", "64"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    import re

    assert re.search(match, err), err


@pytest.mark.parametrize("samples,match", [(32, "samples=32"), (100, "power of two"), (1 << 19, "at most")])
def test_too_few_or_too_many_samples(tmp_path, capsys, samples, match):
    (tmp_path / "r.toml").write_text('[ranges]\n"window.hours" = [1, 168]\n')
    assert main(["sensitivity", "noise-evictor", "--ranges", str(tmp_path / "r.toml"),
                 "--samples", str(samples)]) == 2
    assert match in capsys.readouterr().err


@pytest.mark.parametrize("text", ["", '"window.hours" = [1, 2]\n', "[ranges]\n", "[other]\nx = 1\n"])
def test_a_ranges_file_needs_one_ranges_table(tmp_path, capsys, text):
    (tmp_path / "r.toml").write_text(text)
    assert main(["sensitivity", "noise-evictor", "--ranges", str(tmp_path / "r.toml")]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_autoscaler_fields_can_vary_but_not_its_period():
    base = mc.presets.get("lemon-hunter")
    assert sens.check_ranges(base, {"autoscaler.boot_hours": [0, 6]}) == {"autoscaler.boot_hours": (0.0, 6.0)}
    with pytest.raises(mc.ParamError, match="cannot vary continuously"):
        sens.check_ranges(base, {"autoscaler.period": [1, 48]})
