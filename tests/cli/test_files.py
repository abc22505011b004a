"""Files in and out: every bad path is one line and exit 2, checked before a run."""

import os
from pathlib import Path

import pandas as pd
import pytest

from mc.cli import main

ROOT_USER = hasattr(os, "geteuid") and os.geteuid() == 0


def run(capsys, argv):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def bad_input(tmp_path: Path, kind: str) -> str:
    p = tmp_path / "in.toml"
    if kind == "folder":
        return str(tmp_path)
    if kind == "empty-name":
        return ""
    if kind == "binary":
        p.write_bytes(b"\x00\xff\xfe\x89PNG\r\n")
    elif kind == "latin-1":
        p.write_bytes('pool = "32 x flagship"\n# caf\xe9\n'.encode("latin-1"))
    elif kind == "not-toml":
        p.write_text("pool = [\n")
    elif kind == "deep":
        p.write_text("x = " + "[" * 5000 + "]" * 5000 + "\n")
    elif kind == "trace-folder":
        p.write_text('preset = "golden-idler"\n[demand]\nshape = "trace"\ntrace_csv = "."\n')
    elif kind == "trace-number":
        p.write_text('preset = "golden-idler"\n[demand]\nshape = "trace"\ntrace_csv = 5\n')
    elif kind == "trace-empty":
        (tmp_path / "t.csv").write_text("")
        p.write_text('preset = "golden-idler"\n[demand]\nshape = "trace"\ntrace_csv = "t.csv"\n')
    elif kind == "trace-binary":
        (tmp_path / "t.csv").write_bytes(b"\xff\xfe\x00\x01" * 50)
        p.write_text('preset = "golden-idler"\n[demand]\nshape = "trace"\ntrace_csv = "t.csv"\n')
    return str(p)


INPUTS = ["folder", "empty-name", "binary", "latin-1", "not-toml", "deep", "trace-folder", "trace-number",
          "trace-empty", "trace-binary"]


@pytest.mark.parametrize("kind", INPUTS)
@pytest.mark.parametrize("command", ["run", "buy", "sweep", "calibrate"])
def test_bad_input_file_is_one_line(tmp_path, capsys, command, kind):
    if command == "buy" and kind.startswith("trace"):
        pytest.skip("procurements read no trace file")
    code, out, err = run(capsys, [command, bad_input(tmp_path, kind), "--n", "10"])
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err and err.startswith(f"mc {command}: error:"), err


def bad_out(tmp_path: Path, kind: str) -> str:
    if kind == "empty":
        return ""
    if kind == "unknown-extension":
        return str(tmp_path / "months.txt")
    if kind == "folder":
        (tmp_path / "d.parquet").mkdir()
        return str(tmp_path / "d.parquet")
    if kind == "through-a-file":
        (tmp_path / "f").write_text("x")
        return str(tmp_path / "f" / "m.parquet")
    if kind == "special-file":
        return "/dev/null.parquet" if not Path("/dev/null.parquet").exists() else "/dev/null"
    raise ValueError(kind)


@pytest.mark.parametrize("kind", ["empty", "unknown-extension", "folder", "through-a-file"])
def test_bad_out_is_refused_before_the_run(tmp_path, capsys, kind):
    code, out, err = run(capsys, ["run", "golden-idler", "--n", "10", "--out", bad_out(tmp_path, kind)])
    assert code == 2 and out == "", (out, err)
    assert err.count("\n") == 1 and "out=" in err, err


def test_out_never_replaces_a_special_file(tmp_path, capsys):
    fifo = tmp_path / "pipe.parquet"
    os.mkfifo(fifo)
    code, out, err = run(capsys, ["run", "golden-idler", "--n", "10", "--out", str(fifo)])
    assert code == 2 and "not a regular file" in err
    assert fifo.is_fifo()


@pytest.mark.skipif(ROOT_USER, reason="root writes into read-only folders")
def test_out_in_a_read_only_folder(tmp_path, capsys):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    code, out, err = run(capsys, ["run", "golden-idler", "--n", "10", "--out", str(ro / "m.parquet")])
    assert code == 2 and "cannot be written" in err


@pytest.mark.slow
@pytest.mark.parametrize("ext", [".parquet", ".csv", ".json"])
def test_out_format_follows_the_extension(tmp_path, capsys, ext):
    path = tmp_path / f"months{ext}"
    code, out, err = run(capsys, ["run", "golden-idler", "--n", "20", "--out", str(path), "--quiet"])
    assert code == 0, err
    frame = {".parquet": pd.read_parquet, ".csv": pd.read_csv, ".json": pd.read_json}[ext](path)
    assert len(frame) == 20 and "bill" in frame.columns
    assert (path.stat().st_mode & 0o777) == 0o666 & ~_umask()


def _umask() -> int:
    m = os.umask(0)
    os.umask(m)
    return m


def test_sweep_out_onto_a_file(tmp_path, capsys):
    spec = tmp_path / "s.toml"
    spec.write_text('preset = "golden-idler"\nn = 10\n[grid]\n"window.hours" = [1, 24]\n')
    (tmp_path / "file").write_text("x")
    code, out, err = run(capsys, ["sweep", str(spec), "--out", str(tmp_path / "file")])
    assert code == 2 and "not a folder" in err
