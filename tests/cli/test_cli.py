"""The mc command line: JSON shape, exit codes, one-line errors."""

import json
import subprocess
import sys

import pandas as pd
import pytest

from mc.cli import main

PRESET_KEYS = ["name", "n", "bill_mode", "bill_mode_share", "n_run_mode", "n_evicted_mode",
               "convergence_p50", "delivered_rate_p50", "idle_burn_p50", "n_wrong_mean", "n_wrong_p5",
               "n_wrong_p95", "shortfall_p50", "pass_capacity", "pass_convergence", "pass_eviction",
               "pass_capacity_lo", "pass_capacity_hi", "pass_convergence_lo", "pass_convergence_hi",
               "pass_eviction_lo", "pass_eviction_hi",  # the original keys, then the Wilson intervals
               "figures", "provenance"]  # then every figure in the one JSON shape, and what made it


# Same N, seed and chunk as test_presets, so the compiled steps are shared.
N = "3000"
CHUNK = "256"


@pytest.mark.slow
def test_presets_json(capsys):
    assert main(["presets", "--n", N, "--seed", "1", "--chunk", CHUNK, "--json", "--quiet"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in rows][:3] == ["golden-idler", "noise-evictor", "bargain-shortfall"]
    for r in rows:
        assert list(r) == PRESET_KEYS
        assert r["n"] == 3000
        for key in ("pass_capacity", "pass_convergence", "pass_eviction", "bill_mode_share"):
            assert 0.0 <= r[key] <= 1.0
    golden = rows[0]
    assert golden["bill_mode"] == 69_940.0 and golden["delivered_rate_p50"] == pytest.approx(60_000, rel=1e-4)


@pytest.mark.slow
def test_presets_table(capsys):
    assert main(["presets", "--n", N, "--seed", "1", "--chunk", CHUNK, "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "golden-idler" in out and "69,940.00" in out and "28,840.00" in out


@pytest.mark.slow
def test_run_writes_parquet(tmp_path, capsys):
    out = tmp_path / "r" / "months.parquet"
    assert main(["run", "golden-idler", "--n", "200", "--out", str(out), "--quiet"]) == 0
    df = pd.read_parquet(out)
    assert len(df) == 200 and df.bill.iloc[0] == 69_940.0
    assert "modal bill $69,940.00" in capsys.readouterr().out
    assert sorted(p.name for p in out.parent.iterdir()) == ["months.parquet", "months.parquet.manifest.json"]  # no temporary
    # Another format of the same name keeps its own manifest; both stay verified.
    from mc.studies import manifest

    assert main(["run", "golden-idler", "--n", "100", "--out", str(out.with_suffix(".csv")), "--quiet"]) == 0
    assert manifest.verify(out.parent / "months.parquet.manifest.json")["n"] == 200
    assert manifest.verify(out.parent / "months.csv.manifest.json")["n"] == 100


@pytest.mark.slow
def test_run_toml(tmp_path, capsys):
    path = tmp_path / "s.toml"
    path.write_text('preset = "golden-idler"\nrunset = "steady"\n')
    assert main(["run", str(path), "--n", N, "--json", "--quiet"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["modes"]["bill"]["value"] == 25_740.0


@pytest.mark.parametrize("argv,needle", [
    (["run", "no-such-preset"], "scenario='no-such-preset'"),
    (["run", "golden-idler", "--n", "0"], "n=0"),
    (["run", "golden-idler", "--n", "-5"], "n=-5"),
    (["run", "golden-idler", "--chunk", "0"], "chunk=0"),
    (["run", "missing.toml"], "missing.toml"),
    (["presets", "--n", "0"], "n=0"),
])
def test_bad_input_exits_2(argv, needle, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1


def test_no_traceback_from_console():
    proc = subprocess.run([sys.executable, "-m", "mc.cli", "run", "golden-idler", "--n", "0"],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "n=0" in proc.stderr


@pytest.mark.slow
def test_help_lists_commands():
    proc = subprocess.run([sys.executable, "-m", "mc.cli", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "presets" in proc.stdout and "run" in proc.stdout


@pytest.mark.slow
def test_run_prints_units_thresholds_and_no_scientific_notation(capsys):
    assert main(["run", "noise-evictor-day", "--n", "500", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "e+" not in out.split("binned quantiles")[0] and "e-0" not in out.split("binned quantiles")[0]
    assert "unit" in out and "M tokens" in out and "$" in out
    assert "(shortfall <= 0.01)" in out and "(convergence >= 0.9)" in out and "(wrong evictions <= 0)" in out


@pytest.mark.slow
def test_run_out_carries_a_month_index_and_its_provenance(tmp_path, capsys):
    import json

    import pyarrow.parquet as pq

    from mc.studies import manifest

    out = tmp_path / "m.parquet"
    assert main(["run", "golden-idler", "--n", "40", "--seed", "3", "--out", str(out), "--quiet"]) == 0
    table = pq.read_table(out)
    assert table.column_names[0] == "month" and table.column("month").to_pylist() == list(range(40))
    meta = json.loads(table.schema.metadata[b"mc"])
    beside = json.loads((tmp_path / "m.parquet.manifest.json").read_text())
    # The manifest beside it is the same, sealing the file (its sha256, written last).
    sealed = beside.pop("outputs")
    assert set(sealed) == {"m.parquet"} and len(sealed["m.parquet"]["sha256"]) == 64
    assert manifest.verify(tmp_path / "m.parquet.manifest.json")["outputs"] == sealed
    assert meta == beside and meta["seed"] == 3 and meta["n"] == 40 and meta["config"]["scenario"] == "golden-idler"
    assert {"versions", "backend", "devices", "git", "created"} <= set(meta)
    capsys.readouterr()
    assert main(["run", "golden-idler", "--n", "40", "--json"]) == 0
    prov = json.loads(capsys.readouterr().out)["provenance"]
    assert prov["n"] == 40 and prov["scenario"]["pool"] == "32 x flagship" and prov["versions"]["mc"]
