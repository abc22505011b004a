"""One writer per output folder, or nothing written: two ``mc calibrate``, ``mc
sweep`` or ``mc sensitivity`` started on one folder at random offsets, many times
over. Each pair ends with a folder whose files are one run's (its manifest and
tables carry that run's seed and identity, and verify together), written by a
writer that says it succeeded; the other writer either finished before (and was
replaced whole) or was refused in one line before it wrote anything.

The writers are two long-lived processes, each running ``mc.cli.main`` on
request at a given wall-clock moment, so each pair costs the runs, not two
imports (the runs are tiny: tens of months).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from mc.studies import manifest

pytestmark = pytest.mark.slow

PAIRS = 50  # per command
ROOT = Path(__file__).resolve().parents[2]

WORKER = r"""
import contextlib, io, json, sys, time
from mc.cli import main
for line in sys.stdin:
    job = json.loads(line)
    while time.time() < job["at"]:
        time.sleep(0.0005)
    err, t0 = io.StringIO(), time.time()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(job["argv"])
    print(json.dumps({"code": code, "err": err.getvalue(), "start": t0, "end": time.time()}), flush=True)
"""

SWEEP = 'preset = "golden-idler-steady"\n[grid]\n"eviction.share" = [0.0, 0.2]\n'
RANGES = '[ranges]\n"window.hours" = [1, 168]\n"lottery.sd" = [0.01, 0.1]\n'
# command -> (arguments before --seed and --out, the manifest, the tables it seals)
COMMANDS = {
    "calibrate": (["calibrate", "golden-idler-steady", "--window", "day,week", "--share", "0,0.2", "--runset",
                   "steady", "--n", "64", "--first", "32", "--chunk", "32", "--quiet"],
                  "calibration.json", ["candidates.parquet"]),
    "sweep": (["sweep", "{tmp}/s.toml", "--n", "64", "--chunk", "32", "--quiet"], "manifest.json", ["sweep.parquet"]),
    "sensitivity": (["sensitivity", "noise-evictor", "--ranges", "{tmp}/r.toml", "--samples", "64", "--months", "16",
                     "--quiet"], "manifest.json", ["sensitivity.parquet"]),
}


class Writer:
    def __init__(self):
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        self.proc = subprocess.Popen([sys.executable, "-c", WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, env=env, cwd=ROOT)

    def start(self, argv: list[str], at: float) -> None:
        self.proc.stdin.write(json.dumps({"argv": argv, "at": at}) + "\n")
        self.proc.stdin.flush()

    def result(self) -> dict:
        line = self.proc.stdout.readline()
        assert line, "the writer process died"
        return json.loads(line)

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


@pytest.fixture(scope="module")
def writers():
    pair = [Writer(), Writer()]
    yield pair
    for w in pair:
        w.close()


def _seed_of_table(path: Path):
    said = json.loads(pq.read_schema(path).metadata[b"mc"])
    return said["seed"], said["run"]


@pytest.mark.parametrize("command", list(COMMANDS))
def test_two_writers_of_one_folder_never_mix(command, writers, tmp_path):
    (tmp_path / "s.toml").write_text(SWEEP)
    (tmp_path / "r.toml").write_text(RANGES)
    head, sealed, tables = COMMANDS[command]
    head = [a.replace("{tmp}", str(tmp_path)) for a in head]
    # Warm both writers (their steps compiled or loaded), then learn how long one run takes.
    for k in range(2):
        for j, w in enumerate(writers):
            w.start(head + ["--seed", "9", "--out", str(tmp_path / f"warm{k}{j}")], time.time())
        took = max(r["end"] - r["start"] for r in [w.result() for w in writers])
    rng = random.Random(52)
    outcomes = {"both": 0, "refused": 0}
    for i in range(PAIRS):
        out = tmp_path / f"pair{i}"
        offset = rng.uniform(-1.2, 1.2) * took
        at = time.time() + 0.2
        seeds = (2 * i + 1, 2 * i + 2)
        for w, seed, t in zip(writers, seeds, (at + max(-offset, 0.0), at + max(offset, 0.0))):
            w.start(head + ["--seed", str(seed), "--out", str(out)], t)
        got = [w.result() for w in writers]
        done = []
        for seed, r in zip(seeds, got):
            if r["code"] == 2:
                lines = r["err"].strip().splitlines()
                assert len(lines) == 1 and "is writing to this folder" in lines[0], r["err"]
            else:
                assert r["code"] in (0, 1) and "Traceback" not in r["err"], r  # calibrate: 1 = no setting meets the limits
                done.append((r["end"], seed))
        assert done, got  # one writer at least finishes
        outcomes["both" if len(done) == 2 else "refused"] += 1
        made = manifest.verify(out / sealed)  # every table is the one the manifest sealed, of the same run
        last = max(done)[1]  # the writer that finished last owns the folder
        assert made["seed"] == last
        for name in tables:
            seed, run = _seed_of_table(out / name)
            assert seed == last and run == made["run"], (name, seed, last, run, made["run"])
        assert not list(out.glob(".*.tmp"))  # no half-written file left
    assert outcomes["refused"] >= 5, outcomes  # the offsets made the writers overlap
