"""Ctrl-C at random moments of real ``mc`` processes: while Python imports the
package, while the parser and backend start, while a step compiles or loads, in
the first chunk, mid-run, and while results are written; sometimes twice or three
times in a row, as an impatient user does. Every process interrupted before its
work is done exits 130 with one line on stderr and no traceback (never a crash:
a negative exit code), and its output claims nothing it does not hold: a manifest
there verifies against the files it lists, and a process that says "nothing was
written" wrote no file. A signal that lands after the work is done (the process
was already ending) may leave exit 0 with the whole result and nothing on stderr.

Unlike ``test_interrupts`` (exact chunks, from inside), these signals race real
time, on a machine that may be loaded: the moments differ run to run, the
assertions do not. The random moments are drawn from a fixed seed.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mc.studies import manifest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SIGNALS = 200  # at least, over the whole test
SWEEP = 'preset = "golden-idler-steady"\n[grid]\n"eviction.share" = [0.0, 0.2]\n'
RANGES = '[ranges]\n"window.hours" = [1, 168]\n"lottery.sd" = [0.01, 0.1]\n'

# command -> (arguments, output folder or file under {tmp}, {sealed file: its manifest})
COMMANDS = {
    "run": (["run", "golden-idler-steady", "--n", "60000", "--chunk", "2048", "--out", "{tmp}/m.parquet"],
            {"m.parquet": "m.parquet.manifest.json"}),
    "calibrate": (["calibrate", "golden-idler-steady", "--window", "day,week", "--share", "0,0.2", "--runset",
                   "steady", "--n", "512", "--first", "128", "--chunk", "128", "--out", "{tmp}/cal"],
                  {"cal/candidates.parquet": "cal/calibration.json"}),
    "sweep": (["sweep", "{tmp}/s.toml", "--n", "4096", "--chunk", "512", "--out", "{tmp}/sw"],
              {"sw/sweep.parquet": "sw/manifest.json"}),
    "sensitivity": (["sensitivity", "noise-evictor", "--ranges", "{tmp}/r.toml", "--samples", "64", "--months", "32",
                     "--out", "{tmp}/sens"], {"sens/sensitivity.parquet": "sens/manifest.json"}),
    "telemetry": (["telemetry", "golden-idler", "--cards", "64", "--chunk", "16", "--every", "30", "--hours", "48",
                   "--out", "{tmp}/t.parquet"], {name: "t.parquet.manifest.json"
                                                  for name in ("t.parquet", "t.truth.parquet", "t.dips.parquet")}),
}


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
            "PYTHONUNBUFFERED": "1"}


def _start(cmd: str, tmp: Path) -> subprocess.Popen:
    args = [a.replace("{tmp}", str(tmp)) for a in COMMANDS[cmd][0]]
    return subprocess.Popen([sys.executable, "-m", "mc.cli", *args, "--quiet"], cwd=tmp, env=_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)


def _files(tmp: Path) -> list[Path]:
    """The files the command wrote (the inputs and the folder lock aside)."""
    return [p for p in tmp.rglob("*") if p.is_file() and p.name not in ("s.toml", "r.toml", ".lock")]


def _claims_nothing_it_lacks(cmd: str, tmp: Path) -> None:
    for out, seal in COMMANDS[cmd][1].items():
        if (tmp / seal).exists():
            assert out.rpartition("/")[2] in manifest.verify(tmp / seal)["outputs"]


def _timed(cmd: str, tmp: Path) -> float:
    """Seconds one whole run takes here, now (its steps compiled and cached first)."""
    t0 = time.perf_counter()
    proc = _start(cmd, tmp)
    _, err = proc.communicate(timeout=600)
    assert proc.returncode in (0, 1), err  # calibrate: 1 = no setting meets the limits
    return time.perf_counter() - t0


def test_ctrl_c_at_random_moments_is_130_one_line_and_claims_nothing(tmp_path):
    rng = random.Random(130)
    sent, late, seen = 0, 0, {}
    runs = {cmd: 0 for cmd in COMMANDS}
    for cmd in COMMANDS:
        warm = tmp_path / f"warm-{cmd}"
        warm.mkdir()
        (warm / "s.toml").write_text(SWEEP)
        (warm / "r.toml").write_text(RANGES)
        _timed(cmd, warm)  # compiles what the runs load from the cache
        seen[cmd] = _timed(cmd, warm)
    i = 0
    while sent < SIGNALS:
        cmd = list(COMMANDS)[i % len(COMMANDS)]
        i += 1
        tmp = tmp_path / f"{i}"
        tmp.mkdir()
        (tmp / "s.toml").write_text(SWEEP)
        (tmp / "r.toml").write_text(RANGES)
        proc = _start(cmd, tmp)
        time.sleep(rng.uniform(0.0, seen[cmd] * 1.05))
        hits = 0
        for k in range(rng.choice([1, 1, 1, 2, 3])):  # sometimes again, at once or a moment later
            if k:
                time.sleep(rng.choice([0.0, rng.uniform(0.0, 0.3)]))
            if proc.poll() is not None:
                break
            proc.send_signal(signal.SIGINT)
            hits += 1
        _, err = proc.communicate(timeout=600)
        code = proc.returncode
        if not hits:
            continue  # it finished before the first signal: not a case
        sent += hits
        runs[cmd] += 1
        where = f"{cmd} run {i}, {hits} SIGINT(s): exit {code}, stderr {err!r}"
        assert code >= 0, where  # never a crash (a signal: -11, -6)
        assert "Traceback" not in err and "Exception ignored" not in err, where
        _claims_nothing_it_lacks(cmd, tmp)
        if code in (0, 1) and not err.strip():
            late += 1  # the work was done as the signal came: the whole result is there
            for out, seal in COMMANDS[cmd][1].items():
                assert (tmp / out).is_file() and (tmp / seal).is_file(), where
            continue
        assert code == 130, where
        lines = err.strip().splitlines()
        assert len(lines) == 1 and "interrupted" in lines[0], where
        if "nothing was written" in lines[0]:
            assert not _files(tmp), (where, _files(tmp))
    assert sent >= SIGNALS and late < sent / 4, (sent, late, runs)
