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
                   if (f, val) not in (("autoscaler.replace", "true"), ("autoscaler.failover", "true"))]  # flags
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


# -- refusals name the field as the user wrote it -----------------------------------------

POOL_SLO = ('preset = "golden-idler"\n[[pool]]\nrated_from = "{kind}"\nmodel = "llama-3-8b"\ngpu = "h100"\n'
            'slo_ttft = 0.5\nprice_hour = 2.0\ncount = {count}\n{more}')
LAT = ["latency", "--model", "llama-3-8b", "--gpu", "h100", "--rate", "4", "--quiet"]
TELE = ["telemetry", "golden-idler", "--hours", "1", "--quiet", "--out", "{tmp}/t.parquet"]
# (command line, or a scenario file's text run by mc show; what the one line must start with after "error: ")
NAMED = [
    (["bench", "--pool", ""], "--pool=''"), (["bench", "--pool", " "], "--pool=' '"),
    (["bench", "--pool", "abc"], "--pool='abc'"), (["bench", "--pool", "8,,16"], "--pool='8,,16'"),
    (["bench", "--pool", "8,"], "--pool='8,'"), (["bench", "--pool", ",8"], "--pool=',8'"),
    (["bench", "--pool", "0"], "--pool=0"), (["bench", "--pool", "8,1.5"], "--pool='8,1.5'"),
    (LAT + ["--requests", "-5"], "--requests=-5"), (LAT + ["--requests", "0", "--cards", "4"], "--requests=0"),
    (LAT + ["--warmup", "-1", "--cards", "4"], "--warmup=-1"), (LAT + ["--price-hour", "-1"], "--price-hour=-1"),
    (LAT + ["--cards", "4", "--speeds", "1,,1,1"], "--speeds='1,,1,1'"),
    (LAT + ["--cards", "4", "--speeds", ""], "--speeds=''"),
    (["run", "golden-idler", "--n", "0"], "--n=0"), (["run", "golden-idler", "--seed=-1"], "--seed=-1"),
    (TELE + ["--structure", "wander.sd=0.02,wander.sd=0.03"], "--structure='wander.sd=0.02,wander.sd=0.03'"),
    (TELE + ["--structure", ""], "--structure=''"), (TELE + ["--structure", "wander.sd=0.02,"], "--structure="),
    (TELE + ["--structure", "wander.sd"], "--structure='wander.sd'"),
    (TELE + ["--structure", "wander.sd=x"], "--structure wander.sd='x'"),
    (TELE + ["--structure", "wander.colour=1"], "--structure='wander.colour=1'"),
    (TELE + ["--structure", "wander.sd=-1"], "--structure wander.sd=-1"),
    (["calibrate", "golden-idler", "--window", "1,,24"], "--window='1,,24'"),
    (["calibrate", "golden-idler", "--window", ""], "--window=''"),
    (["calibrate", "golden-idler", "--vary", "eviction.share=0,0.1", "--vary", "eviction.share=0.2"], "--vary="),
    (["fit", "{tmp}/none.csv", "--columns", "card=a,card=b"], "--columns='card=a,card=b'"),
    (["fit", "{tmp}/none.csv", "--columns", ""], "--columns=''"),
    (["fit", "{tmp}/none.csv", "--columns", "card=a,,rate=b"], "--columns="),
    (POOL_SLO.format(kind="pool-slo", count=0, more=""), "pool.llama-3-8b@h100.count=0"),
    (POOL_SLO.format(kind="pool-slo", count=5000, more=""), "pool.llama-3-8b@h100.count=5000"),
    (POOL_SLO.format(kind="slo", count=0, more=""), "pool.llama-3-8b@h100.count=0"),
    (POOL_SLO.format(kind="pool-slo", count=4, more="n = -3\n"), "pool.llama-3-8b@h100.n=-3"),
    (POOL_SLO.format(kind="pool-slo", count=4, more='router = "random-ish"\n'), "pool.llama-3-8b@h100.router="),
    (POOL_SLO.format(kind="pool-slo", count=4, more="speeds = [1.0, 1.0]\n"), "pool.llama-3-8b@h100.speeds="),
    (POOL_SLO.format(kind="slo", count=4, more="replications = 0\n"), "pool.llama-3-8b@h100.replications=0"),
]


@pytest.mark.parametrize("case", sample(NAMED, every=4), ids=[
    (" ".join(c[0]) if isinstance(c[0], list) else c[0].replace("\n", " ")[-40:]) for c in NAMED])
def test_a_refusal_names_the_field_as_the_user_wrote_it(case, tmp_path, capsys):
    argv, start = case
    if isinstance(argv, str):
        (tmp_path / "s.toml").write_text(argv)
        argv = ["show", str(tmp_path / "s.toml")]
    argv = [a.format(tmp=tmp_path) for a in argv]
    err = one_line_exit_2(argv, capsys)
    head = f"mc {argv[0]}: error: "
    assert err.startswith(head + start.format(tmp=tmp_path)), err
    assert "_sizes" not in err and "cards=" not in err, err
