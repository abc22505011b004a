"""Hostile input, by class: every number ``mc latency`` and ``mc card`` take, JSON that
must stay strict (no NaN) wherever mc writes it, output paths that are not UTF-8,
demand traces of the wrong kind, and environment variables naming a backend that
cannot start. A refusal is exit 2 with one line on stderr, never a traceback (the
slow tier: several cases run whole commands or start processes)."""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import jax
import numpy as np
import pandas as pd
import pytest

import mc
from mc import _json, files
from mc import cli
from mc.cli import build_parser, main
from mc.engine import run as engine_run
from test_fuzz import one_line_exit_2

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]




def strict(text: str):
    """JSON as a strict parser reads it: NaN, Infinity and -Infinity are failures."""
    return json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in JSON output"))


def one_line_error(err: BaseException) -> str:
    msg = str(err)
    assert "\n" not in msg and msg, msg
    return msg


# -- every number of mc latency and mc card -------------------------------------------------

def numeric_flags(command: str) -> dict[str, type]:
    """The command's options of type float or int, read from its parser (so a flag
    added later is fuzzed too)."""
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return {max(a.option_strings, key=len): a.type for a in sub.choices[command]._actions
            if a.type in (float, int) and a.option_strings}


BAD = {float: ["0", "-1", "nan", "inf", "-inf", "1e39", "-1e39", "1e-39", "x", "", "1,5"],
       int: ["0", "-1", "x", "", "1.5", "nan", "inf", "1e39", "4294967296", "-2147483649"]}
# Values a flag accepts (0 for a count that may be zero or a coefficient of variation).
VALID = {("latency", "--max-wait", "0"), ("latency", "--prompt-cv", "0"), ("latency", "--answer-cv", "0"),
         ("latency", "--warmup", "0"), ("latency", "--seed", "0"), ("card", "--context", "0"),
         ("card", "--prompt", "0")}
# Small, so that a value let through by mistake fails the test fast rather than runs long.
LATENCY = ["latency", "--model", "8b", "--gpu", "h100", "--replications", "2", "--requests", "10", "--warmup", "0",
           "--quiet"]
MODES = {"rate": ["--rate", "5"], "slo": ["--slo-ttft", "0.5"]}
CARD = ["card", "--model", "8b", "--gpu", "h100"]

CASES = []
for _flag, _type in numeric_flags("latency").items():
    for _mode, _extra in MODES.items():
        if (_flag, _mode) in (("--rate", "slo"), ("--load", "slo"), ("--slo-ttft", "rate")):
            continue  # a rate (or load) or an SLO search
        base = LATENCY + ([] if _flag in ("--rate", "--load", "--slo-ttft") else _extra)
        CASES += [(base, _flag, val, "latency") for val in BAD[_type] if ("latency", _flag, val) not in VALID]
for _flag, _type in numeric_flags("card").items():
    for _json_flag in ([], ["--json"]):
        CASES += [(CARD + _json_flag, _flag, val, "card") for val in BAD[_type] if ("card", _flag, val) not in VALID]


def test_the_flags_are_found():
    lat, card = numeric_flags("latency"), numeric_flags("card")
    assert {"--price-hour", "--rate", "--slo-ttft", "--share", "--rel-tol", "--percentile", "--max-wait",
            "--requests", "--seed", "--chunk", "--replications", "--cv", "--block", "--load"} <= set(lat)
    assert {"--price-hour", "--batch", "--mem-util", "--weight-bytes"} <= set(card)
    assert len(CASES) >= 300, len(CASES)


@pytest.mark.parametrize("base,flag,value,command", CASES,
                         ids=[f"{c[3]} {c[1]} {c[2]!r}" + (" json" if "--json" in c[0] else "")
                              + (" slo" if "--slo-ttft" in c[0] else "") for c in CASES])
def test_every_number_is_validated_first(base, flag, value, command, capsys):
    """Before anything runs or prints: exit 2, one line naming the flag."""
    err = one_line_exit_2(base + [f"{flag}={value}"], capsys)
    name = flag.lstrip("-")
    assert name in err or name.replace("-", "_") in err, err
    assert err.startswith(f"mc {command}: error:"), err


@pytest.mark.parametrize("price", ["0", "-1", "nan", "inf", "1e39", "-0"])
@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_price_hour_is_refused_in_both_modes(price, json_flag, capsys):
    for mode in MODES.values():
        err = one_line_exit_2(LATENCY + mode + json_flag + [f"--price-hour={price}"], capsys)
        assert "price-hour=" in err and "must be a number in (0, inf)" in err, err
    assert capsys.readouterr().out == ""  # nothing printed before the refusal


def test_a_good_price_gives_tokens_per_dollar(capsys):
    assert main(LATENCY + MODES["rate"] + ["--json", "--price-hour", "2"]) == 0
    out = strict(capsys.readouterr().out)
    assert out["tokens_per_dollar"]["value"] == pytest.approx(out["figures"]["throughput"]["value"] * 1800)
    assert main(CARD + ["--json", "--price-hour", "2"]) == 0
    card = strict(capsys.readouterr().out)
    assert card["tokens_per_dollar"] == pytest.approx(card["aggregate_tok_s"] * 1800)


# -- strict JSON everywhere --------------------------------------------------------------------

def test_latency_json_with_an_undefined_figure_is_null(capsys):
    """Every answer one token: no inter-token latency, which is null, not NaN."""
    argv = LATENCY + MODES["rate"] + ["--answer-mean", "1", "--answer-cv", "0", "--json", "--price-hour", "3"]
    assert main(argv) == 0
    out = strict(capsys.readouterr().out)
    assert out["figures"]["itl_mean"] == {"value": None, "units": "s"}
    assert out["bands"]["itl_mean"] == {"p5": None, "p95": None}
    assert out["figures"]["ttft_p95"]["value"] > 0 and out["tokens_per_dollar"]["value"] > 0


def test_latency_stopped_before_any_replication_is_one_line(monkeypatch, capsys):
    def merge(*args, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(engine_run, "_merge", merge)
    assert main(LATENCY + MODES["rate"] + ["--json"]) == 130
    got = capsys.readouterr()
    assert got.out == "" and got.err.count("\n") == 1 and "Traceback" not in got.err, got.err


def test_buy_json_stopped_before_its_first_months_is_strict(monkeypatch, capsys):
    """A Ctrl-C before any month: every figure undefined, each one null."""
    def merge(*args, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(engine_run, "_merge", merge)
    assert main(["buy", "api-tax", "--n", "64", "--json"]) == 130
    out = strict(capsys.readouterr().out)
    assert out["partial"] is True and out["n"] == 0
    assert out["bill_p50"] is None


PROBE = "nan_probe"


@pytest.fixture
def nan_in_every_json(monkeypatch):
    """Every document given to ``mc._json.dumps`` gets a NaN entry: a JSON output
    that does not go through the one writer lacks it (or holds a bare NaN)."""
    real = _json.dumps

    def dumps(obj, *args, **kw):
        if isinstance(obj, dict):
            obj = {**obj, PROBE: math.nan}
        elif isinstance(obj, list):
            obj = [*obj, {PROBE: np.float32("nan")}]
        return real(obj, *args, **kw)

    monkeypatch.setattr(_json, "dumps", dumps)


def probed(doc) -> bool:
    last = doc[-1] if isinstance(doc, list) else doc
    return PROBE in last and last[PROBE] is None


@pytest.fixture
def inputs(tmp_path: Path) -> dict:
    (tmp_path / "sweep.toml").write_text('preset = "golden-idler"\nn = 64\n[grid]\n"eviction.share" = [0.0, 0.2]\n')
    (tmp_path / "ranges.toml").write_text('[ranges]\n"eviction.share" = [0.0, 0.2]\n')
    noise = np.random.default_rng(0).standard_normal((12, 48))
    (tmp_path / "tel.csv").write_text("card,time,rate\n" + "".join(
        f"{c},{h + 1},{7000 * (1 + 0.1 * noise[c, h]):.1f}\n" for c in range(12) for h in range(48)))
    return {"tmp": str(tmp_path), "sweep": str(tmp_path / "sweep.toml"), "ranges": str(tmp_path / "ranges.toml"),
            "telemetry": str(tmp_path / "tel.csv")}


JSON_COMMANDS = {
    "run": ["run", "golden-idler", "--n", "64", "--json", "--out", "{tmp}/out/months.parquet"],
    "presets": ["presets", "--n", "16", "--json"],
    "buy": ["buy", "api-tax", "--n", "64", "--json"],
    "sweep": ["sweep", "{sweep}", "--out", "{tmp}/out", "--json"],
    "calibrate": ["calibrate", "golden-idler", "--window", "1,24", "--share", "0.1", "--runset", "steady",
                  "--n", "64", "--first", "64", "--json", "--out", "{tmp}/out"],
    "sensitivity": ["sensitivity", "golden-idler", "--ranges", "{ranges}", "--samples", "64", "--months", "16",
                    "--json", "--out", "{tmp}/out"],
    "bench": ["bench", "--json", "--seconds", "0.05", "--chunks", "16", "--numpy-batches", "16"],
    "card": CARD + ["--json", "--price-hour", "2"],
    "latency": LATENCY + MODES["rate"] + ["--json"],
    "telemetry": ["telemetry", "golden-idler", "--cards", "4", "--every", "60", "--hours", "24", "--json",
                  "--out", "{tmp}/out/t.parquet"],
    "fit": ["fit", "{telemetry}", "--bootstrap", "5", "--sims", "0", "--json"],
}


def test_every_json_command_is_listed():
    with_json = {name for name, p in next(a for a in build_parser()._actions
                                          if isinstance(a, argparse._SubParsersAction)).choices.items()
                 if any("--json" in a.option_strings for a in p._actions)}
    assert with_json == set(JSON_COMMANDS)


@pytest.mark.parametrize("command", list(JSON_COMMANDS))
def test_json_output_and_files_are_strict(command, inputs, nan_in_every_json, capsys):
    argv = [a.format(**inputs) for a in JSON_COMMANDS[command]]
    code = main(argv)
    got = capsys.readouterr()
    assert code in (0, 1), got.err  # calibrate exits 1 when no setting meets the limits
    assert probed(strict(got.out)), got.out[-500:]
    written = sorted(Path(inputs["tmp"], "out").rglob("*.json"))
    if command in ("run", "sweep", "calibrate", "sensitivity", "telemetry"):
        assert written, "no JSON file written"
    for path in written:
        assert probed(strict(path.read_text())), path
    if command == "run":  # the manifest in the parquet's metadata too
        import pyarrow.parquet as pq

        meta = pq.read_schema(Path(inputs["tmp"], "out", "months.parquet")).metadata[b"mc"]
        assert probed(strict(meta.decode()))


# -- output paths ------------------------------------------------------------------------------

def _mc(args: list[str], cwd: Path, **env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mc.cli", *args], cwd=cwd, capture_output=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **env})


@pytest.mark.parametrize("ext", files.OUTPUT_FORMATS)
def test_out_path_with_bytes_that_are_not_utf8(ext, tmp_path):
    """``--out $'x\\xff.parquet'``: written under exactly those bytes, as the OS allows,
    whatever stdout's error handler (PYTHONIOENCODING=utf-8 makes it strict)."""
    name = os.fsdecode(b"x\xff" + ext.encode())
    p = _mc(["run", "golden-idler", "--n", "16", "--quiet", "--out", name], tmp_path, PYTHONIOENCODING="utf-8")
    err = p.stderr.decode(errors="replace")
    assert p.returncode == 0 and "Traceback" not in err, err[-2000:]
    made = set(os.listdir(bytes(tmp_path)))
    assert {b"x\xff" + ext.encode(), b"x\xff" + ext.encode() + b".manifest.json"} <= made, made
    with open(tmp_path / name, "rb") as fh:
        frame = pd.read_parquet(fh) if ext == ".parquet" else pd.read_csv(fh) if ext == ".csv" else pd.read_json(fh)
    assert len(frame) == 16 and "month" in frame.columns
    with open(tmp_path / os.fsdecode(b"x\xff" + ext.encode() + b".manifest.json")) as fh:
        assert strict(fh.read())["outputs"]


FOLDER_COMMANDS = {  # every command that writes a result folder, and the manifest sealing it
    "sensitivity": (["golden-idler", "--ranges", "ranges.toml", "--samples", "64", "--months", "16"], "manifest.json"),
    "sweep": (["s.toml", "--n", "64"], "manifest.json"),
    "calibrate": (["golden-idler-steady", "--window", "day", "--share", "0,0.2", "--runset", "steady", "--n", "32",
                   "--first", "16"], "calibration.json"),
}


@pytest.mark.parametrize("command", FOLDER_COMMANDS)
def test_out_folder_with_bytes_that_are_not_utf8(command, tmp_path):
    from mc.studies import manifest

    (tmp_path / "ranges.toml").write_text('[ranges]\n"eviction.share" = [0.0, 0.2]\n')
    (tmp_path / "s.toml").write_text('preset = "golden-idler-steady"\n[grid]\n"eviction.share" = [0.0, 0.2]\n')
    out = os.fsdecode(b"se\xff")
    args, seal = FOLDER_COMMANDS[command]
    p = _mc([command, *args, "--quiet", "--out", out], tmp_path, PYTHONIOENCODING="utf-8")
    assert p.returncode in (0, 1), p.stderr.decode(errors="replace")[-2000:]
    assert "Traceback" not in p.stderr.decode(errors="replace")
    assert manifest.verify(tmp_path / out / seal)["outputs"]
    if command == "sweep":
        from mc.studies import sweep as sw

        assert len(sw.read(tmp_path / out)[0])


@pytest.mark.parametrize("name", ["x\ud800.parquet", "x\udfff.csv", "x\x00.json", "a\x00/b.parquet"])
def test_out_path_the_os_cannot_take_is_one_line(name, tmp_path):
    frame = pd.DataFrame({"a": [1.0, 2.0]})
    for bad in (str(tmp_path / name), tmp_path / name):
        with pytest.raises(mc.ParamError, match=r"^out=") as err:
            files.write_table(frame, bad)
        one_line_error(err.value)
        with pytest.raises(mc.ParamError, match=r"^out="):
            files.check_output(bad)
    assert os.listdir(tmp_path) == []


# -- demand traces -----------------------------------------------------------------------------

H = 730
BAD_TRACES = {
    "bool list": [True, False] * (H // 2),
    "bool array": np.ones(H, bool),
    "numpy bools in a list": [np.bool_(True)] * H,
    "complex list": [1 + 0j] * H,
    "complex array": np.ones(H, np.complex64),
    "numeric strings": ["100"] * H,
    "string array": np.array(["1.5"] * H),
    "bytes array": np.array([b"1"] * H),
    "object array": np.array([1.0] * H, dtype=object),
    "None inside": [1.0] * (H - 1) + [None],
    "2-D 2x365": np.ones((2, H // 2)),
    "2-D column": np.ones((H, 1)),
    "2-D row": np.ones((1, H)),
    "nested list": [[100.0] * H],
    "0-D": np.float64(5.0),
    "one string": "1" * H,
    "bytes": b"1" * H,
    "dict": {h: 1.0 for h in range(H)},
    "ragged": [[1.0], [1.0, 2.0]],
}


@pytest.mark.parametrize("trace", list(BAD_TRACES.values()), ids=list(BAD_TRACES))
def test_bad_trace_via_the_api(trace):
    with pytest.raises(mc.ParamError, match=r"^demand\.trace=") as err:
        mc.Demand(shape="trace", trace=trace)
    one_line_error(err.value)
    sc = mc.presets.get("golden-idler")
    with pytest.raises(mc.ParamError, match=r"^demand\.trace="):
        sc.replace({"demand.shape": "trace", "demand.trace": trace})
    with pytest.raises(mc.ParamError, match=r"^demand\.trace="):
        mc.Scenario.from_dict({"pool": "32 x flagship", "demand": {"shape": "trace", "trace": trace}})


@pytest.mark.parametrize("trace", [[100] * H, np.full(H, 100.0, np.float32), pd.Series([100.0] * H), range(H),
                                   tuple([1.5] * H), np.arange(H, dtype=np.uint16)],
                         ids=["ints", "float32", "series", "range", "tuple", "uint16"])
def test_good_traces_still_pass(trace):
    d = mc.Demand(shape="trace", trace=trace)
    assert d.trace.dtype == np.float32 and d.trace.shape == (H,)


BAD_CSV = {
    "True/False": "True\nFalse\n" * (H // 2),
    "true/false": "true\nfalse\n" * (H // 2),
    "TRUE": "TRUE\n" * H,
    "demand column of booleans": "demand\n" + "True\n" * H,
    "hour,demand of booleans": "hour,demand\n" + "".join(f"{h},False\n" for h in range(H)),
    "one boolean": "demand\n" + "100\n" * (H - 1) + "True\n",
    "complex": "1+2j\n" * H,
    "complex in brackets": "(1+0j)\n" * H,
    "words": "lots\n" * H,
    "two columns": "1,2\n" * H,
    "nan": "nan\n" * H,
    "inf": "100\n" * (H - 1) + "inf\n",
    "too few": "100\n" * (H - 1),
}


def _trace_toml(folder: Path, csv_text: str) -> str:
    (folder / "t.csv").write_text(csv_text)
    (folder / "s.toml").write_text('preset = "golden-idler"\n[demand]\nshape = "trace"\ntrace_csv = "t.csv"\n')
    return str(folder / "s.toml")


@pytest.mark.parametrize("text", list(BAD_CSV.values()), ids=list(BAD_CSV))
def test_bad_trace_csv_is_one_line(text, tmp_path, capsys):
    err = one_line_exit_2(["run", _trace_toml(tmp_path, text), "--n", "16", "--quiet"], capsys)
    assert "demand.trace" in err, err


@pytest.mark.parametrize("text", [t for k, t in BAD_CSV.items() if "rue" in k or "RUE" in k or "False" in k])
def test_booleans_in_a_trace_csv_name_the_row(text, tmp_path):
    (tmp_path / "t.csv").write_text(text)
    with pytest.raises(mc.ParamError, match=r"^demand\.trace_csv=.*row \d+: .*true/false") as err:
        files.read_trace_csv(tmp_path / "t.csv")
    one_line_error(err.value)


def test_the_boolean_row_is_the_first_one(tmp_path):
    (tmp_path / "t.csv").write_text("demand\n" + "100\n" * 5 + "True\n" + "100\n" * (H - 6))
    with pytest.raises(mc.ParamError, match=r"row 5:"):
        files.read_trace_csv(tmp_path / "t.csv")


@pytest.mark.parametrize("array", ["[" + ", ".join(["true"] * H) + "]", "[" + ", ".join(['"100"'] * H) + "]",
                                   "[[" + ", ".join(["100.0"] * H) + "]]",
                                   "[[" + ", ".join(["1.0"] * (H // 2)) + "], [" + ", ".join(["1.0"] * (H // 2)) + "]]"],
                         ids=["booleans", "strings", "nested", "2-D"])
def test_bad_trace_in_toml_is_one_line(array, tmp_path, capsys):
    (tmp_path / "s.toml").write_text(f'preset = "golden-idler"\n[demand]\nshape = "trace"\ntrace = {array}\n')
    err = one_line_exit_2(["run", str(tmp_path / "s.toml"), "--n", "16", "--quiet"], capsys)
    assert "demand.trace" in err, err


# -- the Python API: wrong types name the argument -------------------------------------------

SC = mc.presets.get("golden-idler")
KEY = jax.random.key(0)
API = {
    "replace int key": (lambda: SC.replace({1: 2}), "updates"),
    "replace None key": (lambda: SC.replace({None: 24}), "updates"),
    "replace tuple key": (lambda: SC.replace({("window", "hours"): 24}), "updates"),
    "replace list": (lambda: SC.replace(["window.hours"]), "updates"),
    "replace str": (lambda: SC.replace("window.hours"), "updates"),
    "from_dict list": (lambda: mc.Scenario.from_dict([("pool", "32 x flagship")]), "data"),
    "from_dict base": (lambda: mc.Scenario.from_dict({}, base={"pool": "32 x flagship"}), "base"),
    "draw dict": (lambda: mc.draw(KEY, {"pool": "32 x flagship"}), "sc"),
    "draw name": (lambda: mc.draw(KEY, "golden-idler"), "sc"),
    "draw keyword": (lambda: mc.draw(KEY, sc={}), "sc"),
    "fleet_month dict": (lambda: mc.fleet_month(KEY, {}), "sc"),
    "outcome draws dict": (lambda: mc.outcome({}, SC), "d"),
    "outcome sc dict": (lambda: mc.outcome(mc.draw(KEY, SC), {}), "sc"),
    "simulate dict": (lambda: mc.simulate({}, 10), "scenario"),
    "simulate_latency dict": (lambda: mc.simulate_latency({}, 1.0), "s"),
    "slo_rate dict": (lambda: mc.slo_rate({}, 0.5), "s"),
    "load_scenario int": (lambda: mc.load_scenario(5), "path"),
    "load_scenario list": (lambda: mc.load_scenario(["a.toml"]), "path"),
}


@pytest.mark.parametrize("case", list(API.values()), ids=list(API))
def test_wrong_types_raise_type_error_naming_the_argument(case):
    call, name = case
    with pytest.raises(TypeError) as err:
        call()
    msg = one_line_error(err.value)
    assert f"{name} must" in msg or f"{name}: " in msg, msg


def test_the_checked_functions_still_work():
    d = mc.draw(KEY, SC)
    assert set(mc.outcome(d, SC)) == set(mc.OUTPUTS)
    month = jax.jit(mc.fleet_month)(KEY, SC)  # under jit the checks see a Scenario, not a tracer
    assert set(month) == set(mc.OUTPUTS)
    assert mc.draw.__name__ == "draw" and "open uniforms" in mc.draw.__doc__
    assert SC.replace({"window.hours": 24.0}).window.hours == 24.0


# -- environment variables ----------------------------------------------------------------------

def _platform_starts(platforms: str) -> bool:
    p = subprocess.run([sys.executable, "-c", "import jax; jax.devices()"], capture_output=True, timeout=300,
                       env={**os.environ, "JAX_PLATFORMS": platforms})
    return p.returncode == 0


BAD_ENV = [{"JAX_PLATFORMS": p} for p in ("cuda", "rocm", "tpu", "nonsense", "CPU", "cpu,", ",")]
BAD_ENV += [{"XLA_FLAGS": f} for f in ("garbage", "--xla_nonsense=1", "--xla_force_host_platform_device_count=abc",
                                       "  ", "--xla_force_host_platform_device_count=2 --no_such_flag", "-xla_x=1")]
BAD_ENV += [{"JAX_PLATFORMS": "nonsense", "XLA_FLAGS": "garbage"}]


@pytest.mark.parametrize("env", BAD_ENV, ids=[" ".join(f"{k}={v!r}" for k, v in e.items()) for e in BAD_ENV])
def test_a_backend_that_cannot_start_is_one_line(env, tmp_path):
    platforms = env.get("JAX_PLATFORMS")
    if platforms in ("cuda", "rocm", "tpu") and _platform_starts(platforms):
        pytest.skip(f"{platforms} starts on this machine")
    p = _mc(["run", "golden-idler", "--n", "16", "--quiet"], tmp_path, XDG_CACHE_HOME=str(tmp_path), **env)
    err = p.stderr.decode(errors="replace")
    assert p.returncode == 2, err[-3000:]
    assert err.count("\n") == 1 and "Traceback" not in err, err
    name = "XLA_FLAGS" if "XLA_FLAGS" in env else "JAX_PLATFORMS"
    assert err.startswith(f"mc run: error: {name}="), err
    assert p.stdout == b""


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["show", "golden-idler"],
                                  ["card", "--model", "8b", "--gpu", "h100", "--json", "--no-slo"]])
def test_commands_that_need_no_backend_ignore_it(argv, tmp_path):
    p = _mc(argv, tmp_path, JAX_PLATFORMS="nonsense", XLA_FLAGS="garbage", XDG_CACHE_HOME=str(tmp_path))
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-2000:]
    assert not (tmp_path / "mc" / "xla-flags").exists()  # no probe ran


def test_the_card_s_slo_rating_needs_a_backend_and_says_so(tmp_path):
    p = _mc(["card", "--model", "8b", "--gpu", "h100"], tmp_path, JAX_PLATFORMS="nonsense",
            XDG_CACHE_HOME=str(tmp_path))
    err = p.stderr.decode(errors="replace")
    assert p.returncode == 2 and err.count("\n") == 1 and err.startswith("mc card: error: JAX_PLATFORMS="), err


def test_xla_flags_probe_is_remembered(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(cli, "_FLAGS_OK", set())
    monkeypatch.setenv("XLA_FLAGS", "--xla_nonsense_flag=1")
    with pytest.raises(mc.ParamError, match=r"^XLA_FLAGS='--xla_nonsense_flag=1': XLA refuses it: .*xla_nonsense"):
        cli.check_xla_flags()
    assert not (tmp_path / "mc" / "xla-flags").exists()  # a refusal is not remembered

    monkeypatch.setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=1")
    cli.check_xla_flags()
    assert len(os.listdir(tmp_path / "mc" / "xla-flags")) == 1

    def no_probe(*args, **kw):
        raise AssertionError("probed again")

    monkeypatch.setattr(cli.subprocess, "run", no_probe)
    cli.check_xla_flags()  # this process remembers it
    monkeypatch.setattr(cli, "_FLAGS_OK", set())
    cli.check_xla_flags()  # and so does the cache folder
    monkeypatch.setenv("XLA_FLAGS", "")
    cli.check_xla_flags()  # empty: nothing to check


# -- an empty --cluster, a derive expression, --quiet ---------------------------------------

SWEEP = 'preset = "golden-idler"\nn = 16\n[grid]\n"window.hours" = [24]\n'


@pytest.mark.parametrize("command", ["sweep", "calibrate", "sensitivity"])
def test_an_empty_cluster_is_refused_not_run_here(command, tmp_path, capsys):
    (tmp_path / "s.toml").write_text(SWEEP)
    spec = str(tmp_path / "s.toml") if command == "sweep" else "golden-idler"
    extra = ["--ranges", str(tmp_path / "r.toml")] if command == "sensitivity" else []
    err = one_line_exit_2([command, spec, *extra, "--cluster", "", "--out", str(tmp_path / "o")], capsys)
    assert err.startswith(f"mc {command}: error: --cluster='': is empty") and "ray://HOST:PORT" in err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("expr, says", [
    ("bill.__class__", "holds an attribute (bill.__class__)"),
    ("__import__('os').getcwd()", "calls __import__('os').getcwd; an expression may call only abs"),
    ("open('x')", "calls open"),
    ("bill[0]", "holds an index (bill[0])"),
    ("'text'", "holds 'text', which is not a number"),
    ("nothing / bill", "names nothing, which is no output's column"),
    ("bill +", "is not an expression"),
    ("x = bill", "is not an expression"),
    ("@bill", "is not an expression"),
    ("log(bill, base=2)", "with a keyword"),
    ("[bill][0]", "holds an index"),
])
def test_a_derive_expression_is_checked_before_it_runs(expr, says, tmp_path, capsys):
    (tmp_path / "s.toml").write_text(SWEEP + f"[derive]\nx = {json.dumps(expr)}\n")
    err = one_line_exit_2(["sweep", str(tmp_path / "s.toml"), "--out", str(tmp_path / "o")], capsys)
    assert err.startswith(f"mc sweep: error: derive.x={expr!r}: ") and says in err, err
    assert not (tmp_path / "o").exists()


def test_a_derive_column_the_point_s_month_lacks_names_the_point(tmp_path, capsys):
    (tmp_path / "s.toml").write_text(SWEEP + '[derive]\nx = "lemons_end / 2"\n')  # §6's column, a §1 month
    err = one_line_exit_2(["sweep", str(tmp_path / "s.toml"), "--out", str(tmp_path / "o")], capsys)
    assert err.startswith("mc sweep: error: grid point 0 {window.hours=24}: derive.x='lemons_end / 2': names "
                          "lemons_end, which is no output's column"), err


def test_a_derive_expression_of_columns_numbers_and_functions_runs():
    from mc.studies import derive

    frame = pd.DataFrame({"bill": [4.0, 9.0], "idle_burn": [1.0, 3.0], "n_run": [2, 5]})
    got = derive.evaluate("derive.x", "sqrt(bill) * 2 - abs(-idle_burn) / bill + (n_run >= 3)", frame)
    assert got.tolist() == [4.0 - 0.25, 6.0 - 1 / 3 + 1]
    with pytest.raises(mc.ParamError, match=r"^derive.x='bill.real': holds an attribute"):
        derive.evaluate("derive.x", "bill.real", frame)


def test_run_quiet_says_nothing_on_stderr_for_a_short_log(tmp_path, capsys):
    t = np.arange(0.0, 2 * 3600.0, 60.0)
    (tmp_path / "short.csv").write_text("ts,in,out\n" + "\n".join(f"{x},5,60" for x in t) + "\n")
    path = tmp_path / "s.toml"
    path.write_text('preset = "golden-idler"\n[demand]\nshape = "log"\nlog = "short.csv"\ncolumns = "ts,in,out"\n'
                    'level = 20000.0\n')
    assert main(["run", str(path), "--n", "64", "--quiet"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out


def test_quiet_silences_warnings_and_logs_of_every_command(capsys):
    """Every command with --quiet: a warning or a library's log line met while it runs
    is not printed; without --quiet a warning is one line naming the command."""
    import logging
    import warnings

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    quiet = [name for name, p in sub.choices.items() if any("--quiet" in a.option_strings for a in p._actions)]
    assert {"run", "sweep", "calibrate", "sensitivity", "telemetry", "fit", "latency"} <= set(quiet)
    for name in quiet:
        with cli._warnings_of(argparse.Namespace(command=name, quiet=True)):
            warnings.warn("a warning", UserWarning)
            logging.getLogger("jax").warning("a log line")
        assert capsys.readouterr().err == ""
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        with cli._warnings_of(argparse.Namespace(command="run", quiet=False)):
            warnings.warn("a warning", UserWarning)
    assert capsys.readouterr().err == "mc run: warning: a warning\n"
