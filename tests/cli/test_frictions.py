"""Small user-facing frictions of the CLI, each pinned by a quick test."""

from __future__ import annotations

import numpy as np
import pytest

import mc
from mc import files, serving
from mc.cli import main
from mc.fleet import presets as fleet_presets
from mc.fleet.demand import check_trace


def _help(capsys, cmd: str) -> str:
    with pytest.raises(SystemExit) as exc:
        main([cmd, "--help"])
    assert exc.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("cmd", ["presets", "calibrate", "sensitivity", "run", "buy", "card", "latency",
                                 "show", "sweep", "bench"])
def test_help_has_no_doubled_percent(capsys, cmd):
    out = _help(capsys, cmd)
    assert "%%" not in out, out


def test_help_says_95_percent_once(capsys):
    for cmd in ("presets", "calibrate", "sensitivity"):
        assert "95% interval" in " ".join(_help(capsys, cmd).split())


def test_run_help_lists_presets(capsys):
    out = " ".join(_help(capsys, "run").split())
    for name in fleet_presets.names():
        # argparse may break a hyphenated name at its hyphen
        assert name in out or name.replace("-", "- ") in out, name


@pytest.mark.slow
def test_latency_progress_counts_replications(capsys):
    assert main(["latency", "--model", "llama-3-8b", "--gpu", "h100", "--rate", "2", "--replications", "4",
                 "--requests", "20", "--warmup", "2", "--progress"]) == 0
    err = capsys.readouterr().err
    assert "replications" in err and "months" not in err, err


CARD = ["card", "--model", "llama-3-8b", "--gpu", "h100", "--context", "100000"]


def test_card_cli_refuses_batch_beyond_seats(capsys):
    seats = serving.card("llama-3-8b", "h100", context=100_000).seats
    assert seats is not None and seats < 1000
    assert main(CARD + ["--batch", "1000"]) == 2
    cap = capsys.readouterr()
    assert cap.out == ""
    line = cap.err.strip()
    assert "\n" not in line and "batch=1000" in line and f"seats {seats} " in line
    assert f"batch <= {seats}" in line
    # the same words as a pool entry
    with pytest.raises(mc.ParamError, match=f"does not fit: .* seats {seats} "):
        mc.CardClass.from_serving("llama-3-8b", "h100", 2000.0, batch=1000, context=100_000)
    # at the seats it runs
    assert main(CARD + ["--batch", str(seats), "--json"]) == 0
    assert f'"batch": {seats}' in capsys.readouterr().out


def test_card_api_caps_batch_at_seats():
    c = serving.card("llama-3-8b", "h100", batch=1000, context=100_000)
    assert c.batch_requested == 1000 and c.batch == c.seats < 1000


@pytest.mark.parametrize("text, shown", [('trace = "abc"', "demand.trace='abc':"),
                                         ("trace = 7", "demand.trace=7:"),
                                         ("trace = true", "demand.trace=True:"),
                                         ("trace_csv = 5", "demand.trace_csv=5:")])
def test_trace_errors_name_the_value(tmp_path, capsys, text, shown):
    path = tmp_path / "s.toml"
    path.write_text(f'[demand]\nshape = "trace"\n{text}\n')
    assert main(["show", str(path)]) == 2
    err = capsys.readouterr().err
    assert shown in err and "'str'" not in err and "'int'" not in err, err


def test_check_trace_names_a_long_value_briefly():
    with pytest.raises(mc.ParamError) as exc:
        check_trace("x" * 500)
    msg = str(exc.value)
    assert msg.startswith("demand.trace='xxx") and "..." in msg and len(msg) < 200
    with pytest.raises(mc.ParamError, match=r"^demand\.trace=\{'a': 1\}:"):
        check_trace({"a": 1})


def test_show_prints_a_trace_as_float32_wrapped(tmp_path, capsys):
    trace = (1000 + np.arange(730) * 1.2345678).astype(np.float32)
    trace[3] = np.float32(3.3e8)
    trace[4] = np.float32(1e-30)
    np.savetxt(tmp_path / "t.csv", trace.astype(np.float64), fmt="%.17g")
    (tmp_path / "s.toml").write_text('preset = "golden-idler"\n[demand]\nshape = "trace"\ntrace_csv = "t.csv"\n')
    assert main(["show", str(tmp_path / "s.toml")]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 120
    assert "1001.23456," in out and "1001.2345581054688" not in out
    (tmp_path / "shown.toml").write_text(out)
    back = np.asarray(files.read_toml(tmp_path / "shown.toml")["demand"]["trace"], np.float32)
    assert np.array_equal(back, trace)
    assert np.array_equal(files.scenario(str(tmp_path / "shown.toml")).demand.trace, trace)


def test_to_toml_reads_back_long_float_lists(tmp_path):
    data = {"xs": list(np.linspace(0, 1, 50)), "ys": np.arange(40, dtype=np.float32) / 3,
            "t": {"zs": np.arange(60), "short": [1.5, 2.5]}}
    text = files.to_toml(data)
    assert max(len(line) for line in text.splitlines()) <= 120
    path = tmp_path / "d.toml"
    path.write_text(text)
    back = files.read_toml(path)
    assert back["xs"] == data["xs"] and back["t"]["zs"] == list(range(60)) and back["t"]["short"] == [1.5, 2.5]
    assert np.array_equal(np.asarray(back["ys"], np.float32), data["ys"])


@pytest.mark.parametrize("cmd, unit", [("run", "months"), ("latency", "replications"), ("telemetry", "cards")])
def test_progress_help_names_what_the_bar_counts(capsys, cmd, unit):
    assert f"a progress bar ({unit}/s, ETA)" in " ".join(_help(capsys, cmd).split())
