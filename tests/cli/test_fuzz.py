"""Hostile input over the command line and TOML files: every case exits 2 with one
line on stderr, never a traceback (every case in the slow tier, every 20th in the
fast tier too; the count is in ``test_case_count``)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from mc.cli import main
from mc.fleet.scenario import field_names


def sample(cases: list, every: int = 20) -> list:
    """The cases for parametrize: all run in the slow tier, every ``every``-th in the fast tier too."""
    return [pytest.param(c, marks=() if i % every == 0 else pytest.mark.slow) for i, c in enumerate(cases)]

# -- the command line --------------------------------------------------------------------

RUN_FLAGS = {
    "--n": ["0", "-1", "abc", "1.5", "nan", "inf", "1e99", "", "4294967296"],
    "--seed": ["-1", "2147483648", "x", "nan", "1.5"],
    "--chunk": ["0", "-3", "x", "16777217", "nan"],
}
CLI: list[list[str]] = []
for cmd in (["run", "golden-idler"], ["presets"], ["calibrate", "golden-idler"], ["buy", "mixed-steady"],
            ["sweep", "{sweep}"]):
    for flag, values in RUN_FLAGS.items():
        CLI += [cmd + [flag, val] for val in values]
CLI += [["run", "golden-idler", "--devices", d] for d in ("0", "99", "x", "-1")]
CLI += [["run", "golden-idler", "--coordinator", c] for c in ("not a host", ":", "host:", "host:99999", "host:x",
                                                              "h:1:2")]
CLI += [["run", "golden-idler", "--coordinator", "localhost:1", "--num-processes", k] for k in ("0", "-1", "x")]
CLI += [["run", "golden-idler", "--coordinator", "localhost:1", "--num-processes", "2", "--process-id", k]
        for k in ("-1", "2", "x")]
CLI += [["run", "golden-idler", "--out", o] for o in ("", "{tmp}", "{tmp}/x.txt",
                                                      "{tmp}/x", "{file}/x.parquet", "{tmp}/x.PARQUET.gz")]
CLI += [[cmd, name] for cmd in ("run", "buy", "sweep", "calibrate")
        for name in ("no-such-preset", "", "{tmp}", "{tmp}/missing.toml", "{binary}", "{latin1}")]
CARD = {"--model": ["gpt-9", ""], "--gpu": ["tpu", ""], "--batch": ["0", "-1", "x", "nan"],
        "--context": ["-1", "x", "1e12"], "--prompt": ["-1", "x"], "--mem-util": ["0", "1.5", "nan", "inf", "-0.1"],
        "--prefill-util": ["0", "2", "nan"], "--price-hour": ["-1", "nan", "inf"],
        "--weight-bytes": ["0", "-1", "nan"], "--kv-bytes": ["0", "nan", "-2"]}
CLI += [["card", "--model", "llama-3-8b", "--gpu", "h100", flag, val] for flag, vals in CARD.items() for val in vals]
BENCH = {"--chunks": ["0", "-1", "x"], "--numpy-batches": ["0", "x"], "--seconds": ["0", "-1", "nan", "inf"],
         "--devices": ["0", "99"]}
CLI += [["bench", flag, val] for flag, vals in BENCH.items() for val in vals]
CLI += [["calibrate", "golden-idler", flag, val] for flag in ("--max-wrong", "--max-capacity-risk")
        for val in ("-0.1", "1.5", "nan", "x", "inf")]
GRID = {"--window": ["x", "-1", "", "1,,2", "0", "nan", "24,24"], "--policy": ["lottery", "share,"],
        "--share": ["-0.1", "1", "nan", "x"], "--theta": ["0", "-1", "inf"], "--runset": ["fast", ""],
        "--period": ["0", "731", "1.5", "x"], "--replace": ["maybe", "2"], "--boot-hours": ["-1", "730", "nan"],
        "--strikes": ["0", "1.5", "-2", "x"], "--min-age": ["-1", "nan", "inf"], "--first": ["8", "x", "0"],
        "--max-wrong-mean": ["-1", "nan", "x"], "--objective": ["cheapest"],
        "--grid": ["{tmp}/missing.toml", "{binary}", "{sweep_grid}", "{tmp}"]}
CLI += [["calibrate", "golden-idler", flag, val] for flag, vals in GRID.items() for val in vals]
CLI += [["calibrate", "golden-idler", "--window", ",".join(str(h) for h in range(1, 300)),
         "--share", ",".join(f"{s / 100:g}" for s in range(0, 30))]]  # too many settings
CLI += [["sweep", "{sweep_str}"], ["sweep", "{sweep_grid}"], ["sweep", "{sweep_n}"]]
CLI += [["calibrate", "golden-idler", "--judge", "lower"], ["nosuchcommand"], [], ["run"], ["run", "a", "b"]]


@pytest.fixture
def places(tmp_path: Path) -> dict:
    (tmp_path / "sweep.toml").write_text('preset = "golden-idler"\nn = 64\n[grid]\n"window.hours" = [1, 24]\n')
    (tmp_path / "sweep_str.toml").write_text('scenario = "golden-idler"\n[grid]\n"window.hours" = [1, 24]\n')
    (tmp_path / "sweep_grid.toml").write_text('preset = "golden-idler"\n[grid]\n"window.colour" = [1, 24]\n')
    (tmp_path / "sweep_n.toml").write_text('preset = "golden-idler"\nn = nan\n[grid]\n"window.hours" = [1]\n')
    (tmp_path / "file").write_text("x")
    (tmp_path / "bin.toml").write_bytes(b"\x00\xff\xfe\x89PNG\r\n")
    (tmp_path / "latin1.toml").write_bytes('pool = "32 x flagship"\n# caf\xe9\n'.encode("latin-1"))
    return {"tmp": str(tmp_path), "sweep": str(tmp_path / "sweep.toml"),
            **{k: str(tmp_path / f"{k}.toml") for k in ("sweep_str", "sweep_grid", "sweep_n")}, "file": str(tmp_path / "file"),
            "binary": str(tmp_path / "bin.toml"), "latin1": str(tmp_path / "latin1.toml")}


def one_line_exit_2(argv: list[str], capsys) -> str:
    try:
        code = main(argv)
    except SystemExit as stop:  # argparse's own usage errors
        code = stop.code
    err = capsys.readouterr().err
    assert code == 2, (argv, code, err)
    assert err.count("\n") == 1 and "Traceback" not in err, (argv, err)
    return err


@pytest.mark.parametrize("argv", sample(CLI), ids=[" ".join(a) or "<none>" for a in CLI])
def test_bad_command_lines(argv, places, capsys):
    one_line_exit_2([a.format(**places) for a in argv], capsys)


# -- TOML scenario files ------------------------------------------------------------------

# TOML literals no scenario field accepts: not numbers, not finite, out of every
# range, or outside what float32 holds.
BAD_VALUES = ["nan", "inf", "-inf", '"text"', "[1, 2]", "{ a = 1 }", "true", "1e39", "-1", "-1e39", "1e-300"]
FIELDS = [f for f in field_names() if f not in ("pool", "runset")]
TOML: list[str] = [f'preset = "noise-evictor"\n[{f.split(".")[0]}]\n{f.split(".")[1]} = {val}\n'
                   for f, val in itertools.product(FIELDS, BAD_VALUES)
                   if (f, val) != ("autoscaler.replace", "true")]  # the one flag: true is its value
TOML += [
    "",  # no pool
    'pool = "32 x unobtainium"\n', 'pool = "0 x flagship"\n', 'pool = "x flagship"\n', "pool = 5\n", "pool = []\n",
    'pool = [{card = "flagship", count = 0}]\n', 'pool = [{card = "flagship", count = 32, colour = "red"}]\n',
    'pool = [{name = "x", rated = 7000, count = 32}]\n', 'pool = [{name = "x", rated = 7000, price_month = 1, count = 1.5}]\n',
    'pool = "32 x flagship"\nrunset = "most"\n', 'pool = "32 x flagship"\nrunset = 3\n',
    'preset = "noise-evictor"\n[nonsense]\nx = 1\n', 'preset = "noise-evictor"\nwindow = 5\n',
    'preset = "no-such"\n', "preset = 5\n", 'preset = "noise-evictor"\npreset = "golden-idler"\n',
    'preset = "noise-evictor"\n[demand]\nshape = "trace"\n',
    'preset = "noise-evictor"\n[demand]\nshape = "trace"\ntrace_csv = "missing.csv"\n',
    'preset = "noise-evictor"\n[demand]\ntrace_csv = "t.csv"\n',
    'preset = "noise-evictor"\n[demand]\nshape = "trace"\ntrace = [1, 2, 3]\n',
    "x = " + "[" * 5000 + "]" * 5000 + "\n", "pool = [\n", "\x00\x01",
]


@pytest.mark.parametrize("text", sample(TOML), ids=[t.replace("\n", " ")[:60] for t in TOML])
def test_bad_scenario_files(text, tmp_path, capsys):
    (tmp_path / "t.csv").write_text("\n".join(["100"] * 730))
    path = tmp_path / "s.toml"
    path.write_text(text)
    one_line_exit_2(["run", str(path), "--n", "16", "--quiet"], capsys)


def test_case_count():
    assert len(CLI) + len(TOML) >= 300, len(CLI) + len(TOML)
