"""Sweeps: rejection before anything runs, resume after a hard kill, reproducible manifests."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from mc import ParamError
from mc.fleet import presets
from mc.studies import madeby
from mc.studies import sweep as sw
from mc.cli import main

N = 1000  # one engine compilation per scenario shape at this size, shared by the tests
BASE = "golden-idler-steady"


def small(grid, **kw) -> sw.Sweep:
    return sw.Sweep(base=presets.get(BASE), grid=grid, n=kw.pop("n", N), **kw)


def write_toml(path: Path, body: str) -> Path:
    path.write_text(f'preset = "{BASE}"\nn = {N}\n' + body)
    return path


# -- bad input is rejected before anything runs -------------------------------------------

@pytest.mark.parametrize("grid, names", [
    ({"window.hour": [1, 24]}, ["grid.window.hour", "not a scenario field"]),
    ({"bogus": [1]}, ["grid.bogus", "not a scenario field"]),
    ({}, ["grid", "at least one field"]),
    ({"window.hours": []}, ["grid.window.hours", "non-empty"]),
    ({"window.hours": 24}, ["grid.window.hours", "list"]),
    ({"window.hours": [24, 24]}, ["grid.window.hours", "distinct"]),
    ({"window.hours": [24, 168], "eviction.share": [0.1, 1.5]},
     ["grid point 1", "window.hours=24", "eviction.share=1.5", "eviction.share=1.5: must be"]),
    ({"pool": ["16 x flagship", "16 x nosuchcard"]}, ["grid point 1", "pool='16 x nosuchcard'"]),
    ({"window.hours": [1, 0]}, ["grid point 1", "window.hours=0"]),
])
def test_bad_grid_is_rejected_naming_field_and_point(grid, names, tmp_path):
    with pytest.raises(ParamError) as err:
        sw.run(small(grid), tmp_path / "out")
    msg = str(err.value)
    assert "\n" not in msg
    for name in names:
        assert name in msg
    assert not (tmp_path / "out").exists(), "nothing may be written for a rejected sweep"


@pytest.mark.parametrize("body, names", [
    ('[grid]\n"eviction.share" = [0.1, 2.0]\n', ["grid point 1", "eviction.share=2.0"]),
    ("[grid]\nwindow.hourz = [1]\n", ["grid.window.hourz"]),
    ("[grid]\n", ["grid"]),
    ('grids = 1\n[grid]\n"window.hours" = [1]\n', ["grids", "not a sweep setting"]),
])
def test_cli_rejects_bad_sweep_files_with_exit_2(body, names, tmp_path, capsys):
    path = write_toml(tmp_path / "bad.toml", body)
    assert main(["sweep", str(path), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    for name in names:
        assert name in err
    assert not (tmp_path / "out").exists()


# -- the table -----------------------------------------------------------------------------

@pytest.mark.slow
def test_table_is_tidy_with_canonical_grid_columns(tmp_path):
    grid = {"window.hours": ["day", 168], "eviction.share": [0.0, 0.2]}
    table = sw.run(small(grid), tmp_path / "out", progress=False).table
    stats = set(table["statistic"])
    assert {"bill", "convergence", "n_wrong", "shortfall", "pass_capacity", "pass_eviction"} <= stats
    assert len(table) == 4 * len(stats)
    assert table.groupby(["window.hours", "eviction.share"]).size().eq(len(stats)).all()
    assert sorted(set(table["window.hours"])) == [24.0, 168.0]  # "day" stored as hours
    conv = sw.wide(table, "convergence")
    assert conv[["mean", "p5", "p50", "p95"]].notna().all().all() and conv["rate"].isna().all()
    ev = sw.wide(table, "pass_eviction")
    assert ((ev["lo"] <= ev["rate"]) & (ev["rate"] <= ev["hi"])).all()
    # No eviction cannot evict wrongly; the bill's mode is reported.
    assert (ev[ev["eviction.share"] == 0.0]["rate"] == 1.0).all()
    assert sw.wide(table, "bill")["mode"].notna().all()


@pytest.mark.slow
def test_pool_strings_and_derived_columns(tmp_path):
    spec = sw.Sweep.from_dict({"preset": BASE, "n": N, "grid": {"demand": {"level": [20_000.0, 60_000.0]}},
                               "derive": {"idle_share": "idle_burn / bill"}})
    table = sw.run(spec, tmp_path / "out", progress=False).table
    idle = sw.wide(table, "idle_share")
    assert list(idle["demand.level"]) == [20_000.0, 60_000.0]
    assert ((idle["mean"] >= 0) & (idle["mean"] <= 1)).all()
    assert sw.label(presets.get(BASE).replace(pool="16 x flagship"), "pool") == "16 x flagship"


# -- reproducibility and resume ---------------------------------------------------------------

@pytest.mark.slow
def test_rerunning_from_the_manifest_gives_the_same_table(tmp_path):
    spec = small({"window.hours": [24, 168], "lottery.lemon_rate": [0.0, 0.1]}, seed=7)
    first = sw.run(spec, tmp_path / "a", progress=False)
    table, manifest = sw.read(tmp_path / "a")
    for key in ("config", "config_hash", "seed", "n", "versions", "backend", "git", "wall_s"):
        assert key in manifest
    assert manifest["seed"] == 7 and manifest["n"] == N and manifest["computed"] == 4
    again = sw.Sweep.from_dict(json.loads(json.dumps(manifest["config"])))
    assert again.config_hash() == manifest["config_hash"]
    second = sw.run(again, tmp_path / "b", progress=False)
    pd.testing.assert_frame_equal(second.table, table)
    pd.testing.assert_frame_equal(first.table, table)
    # Run again in place: every point is reused, the table is unchanged.
    third = sw.run(spec, tmp_path / "a", progress=False)
    assert (third.computed, third.reused) == (0, 4)
    pd.testing.assert_frame_equal(third.table, table)


@pytest.mark.slow
def test_sweep_killed_mid_run_resumes_to_the_same_table(tmp_path):
    body = '[grid]\n"window.hours" = [1, 4, 24, 72, 168]\n"eviction.share" = [0.0, 0.1, 0.2, 0.3]\n'
    path = write_toml(tmp_path / "resume.toml", body)
    killed, clean = tmp_path / "killed", tmp_path / "clean"
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    proc = subprocess.Popen([sys.executable, "-m", "mc.cli", "sweep", str(path), "--out", str(killed), "--quiet"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while not list((killed / "points").glob("*.parquet")):
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline, "no grid point finished in time"
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait()
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    done = len(list((killed / "points").glob("*.parquet")))
    assert 1 <= done < 20
    assert not (killed / "sweep.parquet").exists()
    spec = sw.load(path)
    resumed = sw.run(spec, killed, progress=False)
    assert resumed.reused == done and resumed.computed == 20 - done
    assert not list((killed / "points").glob(".*"))  # no temporary leftovers
    reference = sw.run(spec, clean, progress=False)
    pd.testing.assert_frame_equal(pd.read_parquet(killed / "sweep.parquet"), pd.read_parquet(clean / "sweep.parquet"))
    pd.testing.assert_frame_equal(resumed.table, reference.table)


@pytest.mark.slow
def test_cli_sweep_writes_table_and_manifest(tmp_path, capsys):
    path = write_toml(tmp_path / "s.toml", "seed = 3\n[grid]\nrunset = [\"steady\"]\n\"eviction.share\" = [0.0, 0.1]\n")
    assert main(["sweep", str(path), "--out", str(tmp_path / "o"), "--n", str(N), "--seed", "5"]) == 0
    table, manifest = sw.read(tmp_path / "o")
    assert manifest["seed"] == 5 and manifest["config"]["seed"] == 5
    assert list(table.columns[:3]) == ["runset", "eviction.share", "point"]
    assert "2 computed" in capsys.readouterr().out


# -- a point knows the arithmetic that made it ------------------------------------------------

SMALL_N = 64  # two points of a few months: what is reused, not what the months say


def test_points_of_other_arithmetic_are_recomputed_unless_kept_as_asked(tmp_path, capsys, monkeypatch):
    path = tmp_path / "s.toml"
    path.write_text(f'preset = "{BASE}"\nn = {SMALL_N}\n[grid]\n"window.hours" = [24, 168]\n')
    out = tmp_path / "o"
    cmd = ["sweep", str(path), "--out", str(out), "--chunk", str(SMALL_N)]
    assert main(cmd) == 0
    first, made = sw.read(out)
    now = madeby.arithmetic()
    assert made["arithmetic"] == now and made["stale_points"] == [] and made["computed"] == 2
    capsys.readouterr()

    # The same arithmetic: every point is reused, nothing is said.
    assert main(cmd) == 0
    said = capsys.readouterr()
    assert "0 computed, 2 reused," in said.out and said.err == ""

    # Other arithmetic (a model's code changed): each point is recomputed, one line each.
    monkeypatch.setattr(madeby, "arithmetic", lambda: "0.1.0+changedchanged1")
    assert main(cmd) == 0
    said = capsys.readouterr()
    lines = said.err.splitlines()
    assert len(lines) == 2 and "2 computed, 0 reused," in said.out
    for i, line in enumerate(lines):
        assert line.startswith(f"mc sweep: warning: {out / 'points'}")
        assert line.endswith(f": was made by other arithmetic ({now}, now 0.1.0+changedchanged1); "
                             f"recomputing grid point {i}")
    table, made = sw.read(out)
    assert made["arithmetic"] == "0.1.0+changedchanged1" and made["stale_points"] == []
    pd.testing.assert_frame_equal(table, first)  # the months themselves did not change here

    # --reuse-stale keeps them, and the manifest says which and what made them.
    monkeypatch.setattr(madeby, "arithmetic", lambda: "0.1.0+changedagain22")
    assert main(cmd + ["--reuse-stale"]) == 0
    said = capsys.readouterr()
    assert "0 computed, 2 reused (2 made by other arithmetic)," in said.out and said.err == ""
    table, made = sw.read(out)
    assert made["arithmetic"] == "0.1.0+changedagain22" and made["reused"] == 2
    assert made["stale_points"] == [{"point": 0, "arithmetic": "0.1.0+changedchanged1"},
                                    {"point": 1, "arithmetic": "0.1.0+changedchanged1"}]
    pd.testing.assert_frame_equal(table, first)


def test_fresh_and_reuse_stale_are_refused_together(tmp_path, capsys):
    path = write_toml(tmp_path / "s.toml", '[grid]\n"window.hours" = [24]\n')
    with pytest.raises(SystemExit) as stop:
        main(["sweep", str(path), "--fresh", "--reuse-stale"])
    err = capsys.readouterr().err.strip()
    assert stop.value.code == 2 and "\n" not in err and "--reuse-stale" in err and "--fresh" in err


def test_a_grid_over_what_the_rule_ranks_names_both():
    """``eviction.evict`` is every policy's: its default is named, never None."""
    sc = presets.get(BASE)
    assert sw.label(sc, "eviction.evict") == "replica"
    assert sw.label(sc.replace({"eviction.evict": "member"}), "eviction.evict") == "member"
