"""Pieces on disk: reused only when whole, this piece's and made by this arithmetic.

A piece's file records the arithmetic that made it (``mc.studies.madeby``); one
made by other arithmetic is recomputed with one line saying so, unless the study
asks to keep it (``stale``)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from mc import ParamError, files
from mc.studies import madeby, store

IDENTITY = {"point": "abc", "index": 3, "n": 64, "seed": 1}
OLD = "0.0.9+0123456789abcdef"


def frame() -> pd.DataFrame:
    return pd.DataFrame({"statistic": ["bill", "convergence"], "mean": np.array([1.5, 0.25])})


def reuse(path, stale=None):
    said = []
    got = store.reusable(path, IDENTITY, said.append, "grid point 3", stale=stale)
    return got, said


def test_a_piece_of_this_arithmetic_is_reused(tmp_path):
    path = tmp_path / "p.parquet"
    store.write_piece(path, IDENTITY, frame())
    meta = json.loads(files.read_parquet(path).schema.metadata[b"mc"])
    assert meta["identity"][store.ARITHMETIC] == madeby.arithmetic()
    got, said = reuse(path)
    pd.testing.assert_frame_equal(got, frame())
    assert said == []


def test_a_piece_made_by_other_arithmetic_is_recomputed_saying_so_in_one_line(tmp_path, monkeypatch):
    path = tmp_path / "p.parquet"
    monkeypatch.setattr(madeby, "arithmetic", lambda: OLD)
    store.write_piece(path, IDENTITY, frame())
    monkeypatch.undo()
    frame_, why = store.read_piece(path, IDENTITY)
    assert frame_ is None and why == f"was made by other arithmetic ({OLD}, now {madeby.arithmetic()})"
    got, said = reuse(path)
    assert got is None
    assert said == [f"{path}: was made by other arithmetic ({OLD}, now {madeby.arithmetic()}); "
                    "recomputing grid point 3"]


def test_a_stale_piece_is_kept_when_asked_and_its_arithmetic_told(tmp_path, monkeypatch):
    path = tmp_path / "p.parquet"
    monkeypatch.setattr(madeby, "arithmetic", lambda: OLD)
    store.write_piece(path, IDENTITY, frame())
    monkeypatch.undo()
    stale = []
    got, said = reuse(path, stale)
    pd.testing.assert_frame_equal(got, frame())
    assert said == [] and stale == [OLD]
    assert store.read_piece(path, IDENTITY, stale_ok=True)[0] is not None
    # A piece of this arithmetic is not stale, and a foreign one is refused all the same.
    store.write_piece(path, IDENTITY, frame())
    stale = []
    assert reuse(path, stale)[0] is not None and stale == []
    said = []
    assert store.reusable(path, {**IDENTITY, "seed": 2}, said.append, "x", stale=stale) is None
    assert stale == [] and len(said) == 1 and "belongs to another piece" in said[0]


def test_a_piece_that_records_no_arithmetic_is_stale(tmp_path):
    """Written before pieces recorded their arithmetic: recomputed, or kept as stale (None)."""
    path = tmp_path / "p.parquet"
    meta = json.dumps({"identity": IDENTITY, "rows": 2, "content": store.content_hash(frame())}, sort_keys=True)
    files.write_parquet(frame(), path, meta)
    got, said = reuse(path)
    assert got is None and len(said) == 1 and "records no arithmetic" in said[0] and "recomputing" in said[0]
    stale = []
    assert reuse(path, stale)[0] is not None and stale == [None]


def test_a_change_to_a_models_code_makes_its_pieces_stale(tmp_path, monkeypatch):
    """The whole path: the digest of a copy of the package, a constant in a model
    module changed, the piece written before is recomputed."""
    package = tmp_path / "mc"
    shutil.copytree(madeby.PACKAGE, package, ignore=lambda d, names: [n for n in names if n == "__pycache__"])
    monkeypatch.setattr(madeby, "PACKAGE", package)
    madeby.arithmetic.cache_clear()
    try:
        path = tmp_path / "p.parquet"
        store.write_piece(path, IDENTITY, frame())
        assert reuse(path)[0] is not None  # unchanged: reused
        before = madeby.arithmetic()
        module = package / "fleet" / "accounting.py"
        module.write_text(module.read_text() + "\nSCALE = 2.0\n")
        madeby.arithmetic.cache_clear()
        assert madeby.arithmetic() != before
        got, said = reuse(path)
        assert got is None and said == [f"{path}: was made by other arithmetic ({before}, now "
                                         f"{madeby.arithmetic()}); recomputing grid point 3"]
    finally:
        monkeypatch.undo()
        madeby.arithmetic.cache_clear()


# -- one writer per folder, one run's files in it -------------------------------------------

def test_a_second_writer_is_refused_in_one_line_before_it_writes(tmp_path):
    out = tmp_path / "d"
    with store.FolderLock(out, "calibration") as held:
        assert store.run_of(out) == held.run and len(held.run) == 32
        with pytest.raises(ParamError) as err:
            with store.FolderLock(out, "sweep"):
                pytest.fail("a second writer got in")
        msg = str(err.value)
        assert "\n" not in msg and msg.startswith(f"out={str(out)!r}: another sweep is writing to this folder")
        assert held.run in msg  # it says which run holds it
    assert store.run_of(out) is None
    assert sorted(p.name for p in out.iterdir()) == [".lock"]  # nothing but the lock itself


def test_a_command_s_hold_is_shared_with_the_study_it_runs(tmp_path):
    with store.FolderLock(tmp_path, "sweep", share=True) as outer:
        with store.FolderLock(tmp_path, "sweep") as inner:
            assert inner.run == outer.run == store.run_of(tmp_path)
        assert store.run_of(tmp_path) == outer.run  # the command still holds it
    with store.FolderLock(tmp_path, "sweep") as again:  # released: a new run
        assert again.run != outer.run


def test_a_writer_in_another_process_is_refused(tmp_path):
    code = ("import fcntl, sys, time; fh = open(sys.argv[1], 'a'); fcntl.flock(fh, fcntl.LOCK_EX); "
            "print('held', flush=True); sys.stdin.read()")
    proc = subprocess.Popen([sys.executable, "-c", code, str(tmp_path / ".lock")], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "held\n"
        with pytest.raises(ParamError, match="another calibration is writing to this folder"):
            with store.FolderLock(tmp_path, "calibration"):
                pass
    finally:
        proc.communicate("")
    with store.FolderLock(tmp_path, "calibration"):  # the holder ended: the lock is free
        pass


def test_one_run_s_files_verify_and_a_mix_of_two_runs_is_refused_naming_both(tmp_path):
    from mc.studies import manifest

    made = {}
    for name, seed in (("a", 1), ("b", 2)):
        out = tmp_path / name
        with store.FolderLock(out, "study") as held:
            table = frame().assign(mean=lambda f: f["mean"] * seed)
            manifest.write_sealed(out / "manifest.json", {"seed": seed},
                                  {out / "t.parquet": (table, store.tag(table, seed=seed))})
            made[name] = held.run
        got = manifest.verify(out / "manifest.json")
        assert got["run"] == made[name] and got["seed"] == seed
        said = json.loads(files.read_parquet(out / "t.parquet").schema.metadata[b"mc"])
        assert said["run"] == made[name] and said["seed"] == seed
    shutil.copy(tmp_path / "b" / "t.parquet", tmp_path / "a" / "t.parquet")  # what two writers could leave
    with pytest.raises(ParamError) as err:
        manifest.verify(tmp_path / "a" / "manifest.json")
    msg = str(err.value)
    assert "\n" not in msg and "mixes two runs' files" in msg
    assert f"t.parquet was written by run {made['b']}" in msg and f"manifest.json by run {made['a']}" in msg
