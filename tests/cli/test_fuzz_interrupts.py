"""The interrupt class over every command that runs months: a Ctrl-C at a chosen
chunk (the first, from a hook inside the engine; the first Ctrl-C or a second one)
exits 130 without a traceback, says so, prints strict JSON when asked for JSON,
and leaves no result file that claims more than it holds. A new command must be
listed here (``test_every_command_is_covered``), so it inherits these checks.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _interrupts import at_chunk
from mc.cli import COMMANDS, main
from mc.studies import manifest

pytestmark = pytest.mark.slow

SWEEP = ('preset = "golden-idler-steady"\n[grid]\n"eviction.share" = [0.0, 0.2]\n')
RANGES = '[ranges]\n"window.hours" = [1, 168]\n"lottery.sd" = [0.01, 0.1]\n'

# command -> (arguments, result files it writes under {tmp}: each either absent or sealed
# by the manifest named beside it), at sizes of four chunks or more.
RUNS = {
    "presets": (["--n", "1024", "--chunk", "256"], {}),
    "run": (["golden-idler", "--n", "1024", "--chunk", "256", "--out", "{tmp}/m.parquet"],
            {"m.parquet": "m.parquet.manifest.json"}),
    "sweep": (["{tmp}/s.toml", "--n", "1024", "--chunk", "256", "--out", "{tmp}/sw"],
              {"sw/sweep.parquet": "sw/manifest.json"}),
    "calibrate": (["golden-idler-steady", "--window", "day,week", "--share", "0,0.2", "--runset", "steady",
                   "--n", "512", "--first", "256", "--chunk", "128", "--out", "{tmp}/cal"],
                  {"cal/candidates.parquet": "cal/calibration.json"}),
    "sensitivity": (["noise-evictor", "--ranges", "{tmp}/r.toml", "--samples", "64", "--months", "32",
                     "--out", "{tmp}/sens"], {"sens/sensitivity.parquet": "sens/manifest.json"}),
    "buy": (["api-tax", "--n", "1024", "--chunk", "256"], {}),
    "latency": (["--model", "llama-3-8b", "--gpu", "h100", "--rate", "4", "--replications", "64",
                 "--requests", "100", "--warmup", "10", "--chunk", "16"], {}),
    "telemetry": (["golden-idler", "--cards", "64", "--chunk", "16", "--every", "30", "--hours", "48",
                   "--out", "{tmp}/t.parquet"], {name: "t.parquet.manifest.json"
                                                 for name in ("t.parquet", "t.truth.parquet", "t.dips.parquet")}),
}
SLO = ["latency", "--model", "llama-3-8b", "--gpu", "h100", "--slo-ttft", "0.5", "--replications", "64",
       "--requests", "100", "--warmup", "10", "--chunk", "16"]
# Commands that run no months (nothing to interrupt) or write no result (timings).
NO_MONTHS = {"show": "prints a scenario", "card": "arithmetic, no months",
             "bench": "timings only: nothing is written and nothing resumes",
             "fit": "prints a fit and writes nothing (a Ctrl-C in its simulations exits 130)"}


def test_every_command_is_covered():
    assert set(COMMANDS) == set(RUNS) | set(NO_MONTHS), "list a new command in RUNS or NO_MONTHS"


def _args(cmd, tmp: Path, extra=()) -> list[str]:
    (tmp / "s.toml").write_text(SWEEP)
    (tmp / "r.toml").write_text(RANGES)
    args = RUNS[cmd][0] if cmd in RUNS else cmd
    head = [cmd] if cmd in RUNS else []
    return head + [a.replace("{tmp}", str(tmp)) for a in args] + list(extra)


def _strict(text: str):
    def bad(c):
        raise AssertionError(f"JSON holds {c}")

    return json.loads(text, parse_constant=bad)


def _no_false_claims(cmd: str, tmp: Path) -> None:
    for out, seal in RUNS.get(cmd, ([], {}))[1].items():
        out, seal = tmp / out, tmp / seal
        if seal.exists():
            made = manifest.verify(seal)
            assert out.name in made["outputs"]
        else:
            assert not out.exists(), f"{out} is there with no manifest sealing it"


CASES = [(cmd, how, js) for cmd in RUNS for how in ("SIGINT", "raise") for js in (False, True)]


@pytest.mark.parametrize("cmd, how, js", CASES + [("slo", "SIGINT", False), ("slo", "raise", True)])
def test_a_ctrl_c_exits_130_and_claims_nothing_it_lacks(cmd, how, js, tmp_path, capsys):
    args = SLO if cmd == "slo" else _args(cmd, tmp_path)
    if js:
        args = args + ["--json"]
    with at_chunk(1, how):
        code = main(args + ["--quiet"])
    out, err = capsys.readouterr()
    assert code == 130, (code, err)
    assert "Traceback" not in err
    said = (err + out).lower()
    assert "interrupted" in said or "partial" in said, said
    if js and out.strip():
        got = _strict(out)
        if isinstance(got, dict) and "n" in got and "partial" in got:
            assert got["partial"] is True
    _no_false_claims("run" if cmd == "slo" else cmd, tmp_path)
