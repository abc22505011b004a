"""Nothing lost, nothing claimed that is not there: interrupts at exact moments
(a hook after k chunks), damaged or foreign state on resume, sealed results.

Interrupts are driven from inside: ``mc.engine.faults.CHUNK_HOOKS`` runs after every
merged chunk, and a hook sends this process SIGINT (the engine's Ctrl-C path) or
raises KeyboardInterrupt (a second Ctrl-C) at the chunk chosen.
"""

from __future__ import annotations

import json
import os

import pandas as pd
import pytest

from _interrupts import at_chunk
from conftest import one_fast
from mc import ParamError
from mc.cli import main
from mc.fleet import presets
from mc.studies import manifest
from mc.studies import store
from mc.studies import sweep as sw

N, CHUNK = 1024, 256  # four chunks a grid point
GRID = {"window.hours": [24, 168], "eviction.share": [0.0, 0.2]}


def small(**kw) -> sw.Sweep:
    return sw.Sweep(base=presets.get("golden-idler-steady"), grid=dict(GRID), n=N, seed=kw.pop("seed", 3), **kw)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The uninterrupted sweep's table."""
    out = tmp_path_factory.mktemp("clean")
    return sw.run(small(), out, chunk=CHUNK, progress=False).table


def kept_points(k: int, how: str, per: int = N // CHUNK) -> int:
    """Whole points after a Ctrl-C at chunk ``k``: the first (SIGINT) lets the run
    finish the chunk in hand (the next one, when the point has one); a second
    (raise) stops at once. A point whose last chunk was merged is whole and kept."""
    done = k + 1 if how == "SIGINT" and k % per else k  # chunks merged in the interrupted point's run
    return done // per


def point_files(out):
    return sorted((out / "points").glob("*.parquet"))


# -- a sweep interrupted at chosen moments ---------------------------------------------------

# (chunk at which to interrupt, how): the first chunk of point 0, its last but one and
# its last (the point ends whole and is kept), the middle of point 1, the sweep's last
# chunks (nothing is lost, or the last point is not kept), with either Ctrl-C.
MOMENTS = [(1, "SIGINT"), (3, "SIGINT"), (4, "SIGINT"), (6, "SIGINT"), (15, "SIGINT"), (1, "raise"), (8, "raise"),
           (15, "raise")]


@pytest.mark.slow
@pytest.mark.parametrize("k, how", one_fast(MOMENTS, unpack=True))
def test_interrupted_sweep_keeps_only_whole_points_and_resumes_bit_for_bit(k, how, tmp_path, reference):
    out = tmp_path / "s"
    whole = kept_points(k, how)
    if whole == 4:  # after the sweep's very last chunk: the sweep is whole, nothing is lost
        with at_chunk(k, how):
            done = sw.run(small(), out, chunk=CHUNK, progress=False)
        pd.testing.assert_frame_equal(done.table, reference)
        pd.testing.assert_frame_equal(sw.read(out)[0], reference)
        return
    with at_chunk(k, how), pytest.raises(sw.Interrupted) as err:
        sw.run(small(), out, chunk=CHUNK, progress=False)
    msg = str(err.value)
    assert "\n" not in msg and f"{whole} of 4 grid points are saved" in msg and "resume" in msg
    assert len(point_files(out)) == whole
    assert not (out / "manifest.json").exists() and not (out / "sweep.parquet").exists()
    kept = {p.key: p for p in sw.points(small())}  # every kept file is a whole point
    for path in point_files(out):
        frame, why = store.read_piece(path, sw.identity(kept[path.stem], small()))
        assert frame is not None, why
        assert (frame["n"] == N).all()
    with pytest.raises(ParamError, match="no manifest"):
        sw.read(out)
    resumed = sw.run(small(), out, chunk=CHUNK, progress=False)
    assert (resumed.reused, resumed.computed) == (whole, 4 - whole)
    pd.testing.assert_frame_equal(resumed.table, reference)
    table, made = sw.read(out)
    pd.testing.assert_frame_equal(table, reference)
    assert made["n"] == N and made["points"] == 4


@pytest.mark.slow
def test_interrupt_while_a_point_file_is_written_keeps_no_half_file(tmp_path, reference, monkeypatch):
    out = tmp_path / "s"
    real = os.replace
    calls = []

    def replace(src, dst):
        calls.append(dst)
        if len(calls) == 2:  # the second point's file, before it takes its name
            raise KeyboardInterrupt
        return real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(sw.Interrupted, match="1 of 4 grid points are saved"):
        sw.run(small(), out, chunk=CHUNK, progress=False)
    monkeypatch.setattr(os, "replace", real)
    assert len(point_files(out)) == 1 and not list((out / "points").glob(".*"))
    pd.testing.assert_frame_equal(sw.run(small(), out, chunk=CHUNK, progress=False).table, reference)


@pytest.mark.slow
def test_cli_sweep_interrupted_exits_130_and_says_what_is_kept(tmp_path, capsys):
    path = tmp_path / "s.toml"
    path.write_text('preset = "golden-idler-steady"\nseed = 3\n[grid]\n"window.hours" = [24, 168]\n'
                    '"eviction.share" = [0.0, 0.2]\n')
    with at_chunk(6):
        code = main(["sweep", str(path), "--out", str(tmp_path / "o"), "--n", str(N), "--chunk", str(CHUNK),
                     "--quiet"])
    assert code == 130
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "interrupted" in err[0] and "1 of 4 grid points are saved" in err[0]
    assert not (tmp_path / "o" / "manifest.json").exists()
    assert main(["sweep", str(path), "--out", str(tmp_path / "o"), "--n", str(N), "--chunk", str(CHUNK)]) == 0
    assert "3 computed, 1 reused" in capsys.readouterr().out


# -- damaged, foreign and misplaced point files -------------------------------------------------

def _damage(kind: str, target, other):
    if kind == "empty":
        target.write_bytes(b"")
    elif kind == "truncated":
        target.write_bytes(target.read_bytes()[: target.stat().st_size // 2])
    elif kind == "garbage":
        target.write_bytes(os.urandom(3000))
    elif kind == "zero rows":
        pd.read_parquet(target).iloc[:0].to_parquet(target, index=False)
    elif kind == "no identity":  # the same rows, written by something else
        pd.read_parquet(target).to_parquet(target, index=False)
    elif kind == "another point":
        target.write_bytes(other.read_bytes())
    elif kind == "rows changed":  # a plausible edit that keeps the metadata
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pq.read_table(target)
        frame = table.to_pandas()
        frame.loc[0, "mean"] = frame.loc[0, "mean"] + 1.0
        changed = pa.Table.from_pandas(frame, preserve_index=False).replace_schema_metadata(table.schema.metadata)
        pq.write_table(changed, target)
    elif kind == "another seed":
        sw.run(small(seed=4), target.parent.parent.parent / "other", chunk=CHUNK, progress=False)
        twin = sorted((target.parent.parent.parent / "other" / "points").glob("*.parquet"))
        target.write_bytes(twin[0].read_bytes())
    else:
        raise AssertionError(kind)


@pytest.mark.parametrize("kind", one_fast(["empty", "truncated", "garbage", "zero rows", "no identity",
                                           "another point", "rows changed", "another seed"]))
def test_damaged_or_foreign_point_file_is_recomputed_with_a_warning(kind, tmp_path, reference):
    out = tmp_path / "a" / "s"
    sw.run(small(), out, chunk=CHUNK, progress=False)
    pts = sw.points(small())
    target = out / "points" / f"{pts[1].key}.parquet"
    _damage(kind, target, out / "points" / f"{pts[2].key}.parquet")
    said = []
    again = sw.run(small(), out, chunk=CHUNK, progress=False, warn=said.append)
    assert (again.computed, again.reused) == (1, 3)
    assert len(said) == 1 and str(target) in said[0] and "recomputing grid point 1" in said[0]
    pd.testing.assert_frame_equal(again.table, reference)
    pd.testing.assert_frame_equal(sw.read(out)[0], reference)


def test_a_folder_where_a_point_file_belongs_is_refused_in_one_line(tmp_path):
    out = tmp_path / "s"
    pts = sw.points(small())
    (out / "points" / f"{pts[0].key}.parquet").mkdir(parents=True)
    with pytest.raises(ParamError) as err:
        sw.run(small(), out, chunk=CHUNK, progress=False)
    assert "\n" not in str(err.value) and pts[0].key in str(err.value) and "not a regular file" in str(err.value)


def test_cli_prints_each_recomputed_point_as_one_warning(tmp_path, capsys):
    path = tmp_path / "s.toml"
    path.write_text('preset = "golden-idler-steady"\nseed = 3\n[grid]\n"eviction.share" = [0.0, 0.2]\n')
    args = ["sweep", str(path), "--out", str(tmp_path / "o"), "--n", str(N), "--chunk", str(CHUNK), "--quiet"]
    assert main(args) == 0
    for f in point_files(tmp_path / "o"):
        f.write_bytes(b"")
    capsys.readouterr()
    assert main(args[:-1]) == 0  # without --quiet
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("mc sweep: warning: ") and "recomputing" in line for line in err)
    for f in point_files(tmp_path / "o"):
        f.write_bytes(b"")
    assert main(args) == 0 and capsys.readouterr().err == ""  # --quiet: nothing on stderr but errors


# -- sealed results -----------------------------------------------------------------------------

def test_a_sweep_table_that_changed_after_it_was_sealed_is_refused(tmp_path):
    out = tmp_path / "s"
    sw.run(small(), out, chunk=CHUNK, progress=False)
    made = json.loads((out / "manifest.json").read_text())
    assert set(made["outputs"]) == {"sweep.parquet"}
    table = pd.read_parquet(out / "sweep.parquet")
    table.iloc[:-1].to_parquet(out / "sweep.parquet", index=False)  # a row lost
    with pytest.raises(ParamError, match="sweep.parquet.*differs"):
        sw.read(out)
    (out / "sweep.parquet").unlink()
    with pytest.raises(ParamError, match="missing"):
        sw.read(out)
    (out / "manifest.json").write_text("{not json")
    with pytest.raises(ParamError, match="cannot be read as JSON"):
        sw.read(out)


def test_seal_lists_only_files_beside_it(tmp_path):
    (tmp_path / "x.csv").write_text("a\n1\n")
    with pytest.raises(ValueError):
        manifest.seal(tmp_path / "sub" / "m.json", {}, [tmp_path / "x.csv"])
    made = manifest.verify(manifest.seal(tmp_path / "m.json", {"n": 1}, [tmp_path / "x.csv"]))
    assert made["outputs"]["x.csv"]["bytes"] == 4


# -- two writers ----------------------------------------------------------------------------------

@pytest.mark.slow
def test_a_second_writer_of_one_folder_is_refused_in_one_line(tmp_path):
    from mc.studies import calibrate as cal

    out = tmp_path / "s"
    out.mkdir()
    with store.FolderLock(out, "sweep"):
        with pytest.raises(ParamError, match="another sweep is writing to this folder") as err:
            sw.run(small(), out, chunk=CHUNK, progress=False)
        assert "\n" not in str(err.value)
        assert not list(out.glob("points/*.parquet"))
    result = cal.calibrate(presets.get("golden-idler-steady"), {"eviction.share": [0.0, 0.2]}, n=32, first=16)
    with store.FolderLock(out, "calibration"):
        with pytest.raises(ParamError, match="another calibration is writing"):
            cal.save(result, out, "golden-idler-steady")
    saved = cal.save(result, out, "golden-idler-steady")
    assert manifest.verify(out / "calibration.json") == saved
