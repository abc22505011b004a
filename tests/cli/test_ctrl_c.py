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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from mc.studies import manifest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SIGNALS = 200  # at least, over the whole test
PARALLEL = 3
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
            "PYTHONUNBUFFERED": "1", "MC_FAULT_SAY_STARTED": "1"}


# What the console script ``mc`` runs. ``MC_FAULT_SAY_STARTED`` makes mc say when it
# holds Ctrl-C (its package's first line): before that, while Python starts and opens
# mc's first file, a Ctrl-C is Python's own, and no package can handle it.
ENTRY = "import sys; sys.argv[0] = 'mc'; from mc.cli import main; sys.exit(main())"
FLOOR = 0.0


def _start(cmd: str, tmp: Path) -> subprocess.Popen:
    """The command started as the console script starts it; returns once mc holds
    Ctrl-C (its first line)."""
    args = [a.replace("{tmp}", str(tmp)) for a in COMMANDS[cmd][0]]
    proc = subprocess.Popen([sys.executable, "-c", ENTRY, *args, "--quiet"], cwd=tmp, env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    assert proc.stdout.readline() == "mc: started\n"
    return proc


def _files(tmp: Path) -> list[Path]:
    """The files the command wrote (the inputs and the folder lock aside)."""
    return [p for p in tmp.rglob("*") if p.is_file() and p.name not in ("s.toml", "r.toml", ".lock")]


def _claims_nothing_it_lacks(cmd: str, tmp: Path) -> None:
    for out, seal in COMMANDS[cmd][1].items():
        if (tmp / seal).exists():
            assert out.rpartition("/")[2] in manifest.verify(tmp / seal)["outputs"]


def _timed(cmd: str, tmp: Path) -> float:
    """Seconds one whole run takes here, now, from its entry point."""
    proc = _start(cmd, tmp)
    t0 = time.perf_counter()
    _, err = proc.communicate(timeout=600)
    assert proc.returncode in (0, 1), err  # calibrate: 1 = no setting meets the limits
    return time.perf_counter() - t0


def _case(cmd: str, tmp: Path, delay: float, gaps: list[float]) -> tuple[int, int, str]:
    """One process: started, signalled after ``delay`` s and again after each of
    ``gaps`` while it lives. Returns (SIGINTs it got, exit code, stderr)."""
    (tmp / "s.toml").write_text(SWEEP)
    (tmp / "r.toml").write_text(RANGES)
    proc = _start(cmd, tmp)
    hits = 0
    for k, wait in enumerate([delay, *gaps]):
        time.sleep(wait)
        if proc.poll() is not None:
            break
        proc.send_signal(signal.SIGINT)
        hits += 1
    _, err = proc.communicate(timeout=600)
    return hits, proc.returncode, err


def _check(cmd: str, tmp: Path, hits: int, code: int, err: str) -> bool:
    """The case's promises; True when the signal came after the work was done."""
    where = f"{cmd} in {tmp.name}, {hits} SIGINT(s): exit {code}, stderr {err!r}"
    assert code >= 0, where  # never a crash (killed by a signal: -11, -6)
    assert "Traceback" not in err and "Exception ignored" not in err, where
    _claims_nothing_it_lacks(cmd, tmp)
    if code in (0, 1) and not err.strip():  # the work was done as the signal came: the whole result is there
        for out, seal in COMMANDS[cmd][1].items():
            assert (tmp / out).is_file() and (tmp / seal).is_file(), where
        return True
    assert code == 130, where
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "interrupted" in lines[0], where
    if "nothing was written" in lines[0]:
        assert not _files(tmp), (where, _files(tmp))
    return False


def test_ctrl_c_at_random_moments_is_130_one_line_and_claims_nothing(tmp_path):
    rng = random.Random(130)
    seen = {}
    for cmd in COMMANDS:
        warm = tmp_path / f"warm-{cmd}"
        warm.mkdir()
        (warm / "s.toml").write_text(SWEEP)
        (warm / "r.toml").write_text(RANGES)
        _timed(cmd, warm)  # compiles what the runs load from the cache
        seen[cmd] = _timed(cmd, warm)
    sent, late, cases, i = 0, 0, 0, 0
    # PARALLEL processes at once: each is the others' background load.
    with ThreadPoolExecutor(PARALLEL) as pool:
        while sent < SIGNALS:
            plans = []
            for _ in range(2 * PARALLEL):
                cmd = list(COMMANDS)[i % len(COMMANDS)]
                i += 1
                tmp = tmp_path / f"{i}"
                tmp.mkdir()
                gaps = [rng.choice([0.0, rng.uniform(0.0, 0.3)]) for _ in range(rng.choice([0, 0, 1, 1, 2, 3]))]
                plans.append((cmd, tmp, rng.uniform(FLOOR, seen[cmd] * 1.2), gaps))
            for (cmd, tmp, _, _), (hits, code, err) in zip(plans, pool.map(lambda p: _case(*p), plans)):
                if not hits:
                    continue  # it finished before the first signal: not a case
                sent += hits
                cases += 1
                late += _check(cmd, tmp, hits, code, err)
    print(f"{sent} SIGINTs to {cases} processes; {late} came after the work was done")
    assert late <= cases / 2, (sent, late, cases)  # most signals came while the work ran
