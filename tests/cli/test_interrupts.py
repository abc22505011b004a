"""Every command that writes results, interrupted at chosen moments: it exits 130,
says what it kept, writes nothing that claims more than it holds, and a rerun (or
resume) gives the uninterrupted result bit for bit.

In-process cases interrupt from a chunk hook (``mc.engine.faults.CHUNK_HOOKS``); the
subprocess cases (slow) make the command signal itself after its k-th chunk
(``MC_FAULT_AFTER_CHUNKS="k:INT"`` or ``"k:KILL"``), so no case races a timer.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pandas as pd
import pytest

from _interrupts import at_chunk
from conftest import one_fast
from mc.cli import main
from mc.studies import manifest
from mc.studies import sweep as sw


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# -- mc run --out ----------------------------------------------------------------------------

RUN = ["run", "golden-idler", "--n", "1024", "--chunk", "256", "--seed", "5", "--quiet"]


@pytest.mark.slow
@pytest.mark.parametrize("k", one_fast([1, 2]))  # of 4 chunks (a Ctrl-C lets the chunk in hand finish)
def test_run_out_interrupted_writes_nothing_and_keeps_a_whole_earlier_file(k, tmp_path, capsys):
    out = tmp_path / "m.parquet"
    with at_chunk(k):
        assert main(RUN + ["--out", str(out)]) == 130
    assert "nothing was written" in one_line(capsys.readouterr().err)
    assert not out.exists() and not manifest.beside(out).exists()
    assert main(RUN + ["--out", str(out)]) == 0
    whole = pd.read_parquet(out)
    sealed = manifest.verify(manifest.beside(out))
    with at_chunk(k):
        assert main(RUN + ["--out", str(out)]) == 130
    capsys.readouterr()
    assert manifest.verify(manifest.beside(out)) == sealed  # the whole run's file is left as it was
    pd.testing.assert_frame_equal(pd.read_parquet(out), whole)
    assert len(whole) == 1024 and sealed["n"] == 1024


# -- mc calibrate --out ----------------------------------------------------------------------

CAL = ["calibrate", "golden-idler-steady", "--window", "day,week", "--share", "0,0.2", "--runset", "steady",
       "--n", "512", "--first", "256", "--chunk", "128", "--quiet"]


def _report(folder):
    made = manifest.verify(folder / "calibration.json")
    for key in ("provenance", "wall_s", "outputs", "run"):  # run: each run's own identity
        made.pop(key, None)
    return made


@pytest.mark.slow
@pytest.mark.parametrize("k", [1, 7])
def test_calibrate_out_interrupted_writes_nothing_and_a_rerun_matches(k, tmp_path, capsys):
    clean, cut = tmp_path / "clean", tmp_path / "cut"
    main(CAL + ["--out", str(clean)])
    with at_chunk(k):
        assert main(CAL + ["--out", str(cut)]) == 130
    assert "interrupted" in one_line(capsys.readouterr().err)
    assert not (cut / "calibration.json").exists() and not (cut / "candidates.parquet").exists()
    main(CAL + ["--out", str(cut)])
    pd.testing.assert_frame_equal(pd.read_parquet(cut / "candidates.parquet"),
                                  pd.read_parquet(clean / "candidates.parquet"))
    assert _report(cut) == _report(clean)
    with at_chunk(k):  # interrupted over a whole earlier result: that result stays whole
        assert main(CAL + ["--out", str(cut)]) == 130
    assert _report(cut) == _report(clean)


# -- mc sensitivity --out --------------------------------------------------------------------

@pytest.mark.slow
def test_sensitivity_out_interrupted_writes_nothing(tmp_path, capsys):
    (tmp_path / "r.toml").write_text('[ranges]\n"window.hours" = [1, 168]\n"lottery.sd" = [0.01, 0.1]\n')
    out = tmp_path / "out"
    args = ["sensitivity", "noise-evictor", "--ranges", str(tmp_path / "r.toml"), "--samples", "64",
            "--months", "32", "--out", str(out), "--quiet"]
    with at_chunk(2):
        assert main(args) == 130
    assert "interrupted" in one_line(capsys.readouterr().err)
    assert not (out / "manifest.json").exists() and not (out / "sensitivity.parquet").exists()


# -- signals from outside the process (slow) ---------------------------------------------------

SWEEP = ('preset = "golden-idler-steady"\nseed = 3\n[grid]\n"window.hours" = [24, 168]\n'
         '"eviction.share" = [0.0, 0.2]\n')


def _mc(args, fault=None, cwd=None):
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    env.pop("MC_FAULT_AFTER_CHUNKS", None)
    if fault:
        env["MC_FAULT_AFTER_CHUNKS"] = fault
    return subprocess.run([sys.executable, "-m", "mc.cli", *args], env=env, capture_output=True, text=True,
                          timeout=600, cwd=cwd)


@pytest.fixture(scope="module")
def clean_sweep(tmp_path_factory):
    folder = tmp_path_factory.mktemp("clean")
    (folder / "s.toml").write_text(SWEEP)
    assert _mc(["sweep", str(folder / "s.toml"), "--out", str(folder / "o"), "--n", "1024", "--chunk", "256",
                "--quiet"]).returncode == 0
    return sw.read(folder / "o")[0]


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["2:INT", "4:INT", "9:INT", "3:KILL", "8:KILL", "13:KILL"])
def test_sweep_signalled_at_a_chosen_chunk_resumes_bit_for_bit(fault, tmp_path, clean_sweep):
    (tmp_path / "s.toml").write_text(SWEEP)
    args = ["sweep", str(tmp_path / "s.toml"), "--out", str(tmp_path / "o"), "--n", "1024", "--chunk", "256",
            "--quiet"]
    k, _, sig = fault.partition(":")
    done = _mc(args, fault)
    k = int(k)
    # chunks merged by the interrupted point's run: SIGINT lets it finish the chunk in hand
    whole = (k + 1 if sig == "INT" and k % 4 else k if sig == "INT" else k - 1) // 4
    if sig == "INT":
        assert done.returncode == 130
        assert f"{whole} of 4 grid points are saved" in one_line(done.stderr)
    else:
        assert done.returncode == -signal.SIGKILL
    assert len(list((tmp_path / "o" / "points").glob("*.parquet"))) == whole
    assert not (tmp_path / "o" / "manifest.json").exists()
    again = _mc(args)
    assert again.returncode == 0, again.stderr
    pd.testing.assert_frame_equal(sw.read(tmp_path / "o")[0], clean_sweep)


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["2:INT", "2:KILL"])
def test_run_out_signalled_leaves_no_file(fault, tmp_path):
    out = tmp_path / "m.csv"
    done = _mc(RUN + ["--out", str(out)], fault)
    assert done.returncode == (130 if fault.endswith("INT") else -signal.SIGKILL)
    assert not out.exists() and not manifest.beside(out).exists()
    assert not [p for p in tmp_path.iterdir()]  # no temporary file either


@pytest.mark.slow
def test_calibrate_killed_leaves_nothing_and_reruns_equal(tmp_path):
    done = _mc(CAL + ["--out", str(tmp_path / "cut")], "5:KILL")
    assert done.returncode == -signal.SIGKILL
    assert not (tmp_path / "cut" / "calibration.json").exists()
    assert _mc(CAL + ["--out", str(tmp_path / "cut")]).returncode in (0, 1)
    assert _mc(CAL + ["--out", str(tmp_path / "clean")]).returncode in (0, 1)
    assert _report(tmp_path / "cut") == _report(tmp_path / "clean")
    assert json.loads((tmp_path / "cut" / "calibration.json").read_text())["outputs"]


SENS = ["sensitivity", "noise-evictor", "--ranges", "{tmp}/r.toml", "--samples", "64", "--months", "32", "--quiet"]


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["2:INT", "3:KILL"])
def test_sensitivity_signalled_writes_nothing_and_reruns_equal(fault, tmp_path):
    (tmp_path / "r.toml").write_text('[ranges]\n"window.hours" = [1, 168]\n"lottery.sd" = [0.01, 0.1]\n')
    args = [a.replace("{tmp}", str(tmp_path)) for a in SENS]
    done = _mc(args + ["--out", str(tmp_path / "cut")], fault)
    assert done.returncode == (130 if fault.endswith("INT") else -signal.SIGKILL)
    assert not (tmp_path / "cut" / "manifest.json").exists()
    assert not (tmp_path / "cut" / "sensitivity.parquet").exists()
    for folder in ("cut", "clean"):
        assert _mc(args + ["--out", str(tmp_path / folder)]).returncode == 0
        manifest.verify(tmp_path / folder / "manifest.json")
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "cut" / "sensitivity.parquet"),
                                  pd.read_parquet(tmp_path / "clean" / "sensitivity.parquet"))


BUY = ["buy", "api-tax", "--n", "1024", "--chunk", "256", "--json"]


def _figures(text: str) -> dict:
    got = json.loads(text)
    got.pop("provenance")
    return got


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["1:INT", "2:INT", "2:KILL"])
def test_buy_signalled_is_marked_partial_and_reruns_equal(fault, tmp_path):
    done = _mc(BUY, fault)
    if fault.endswith("KILL"):
        assert done.returncode == -signal.SIGKILL and not done.stdout
    else:
        assert done.returncode == 130
        cut = json.loads(done.stdout)
        k = int(fault.partition(":")[0])
        assert cut["partial"] is True and cut["requested"] == 1024 and cut["n"] == 256 * (k + 1)
    again, clean = _mc(BUY), _mc(BUY)
    assert again.returncode == clean.returncode == 0
    assert _figures(again.stdout) == _figures(clean.stdout)
