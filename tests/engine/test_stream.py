"""Streaming runs: memory bounded by the chunk, and Ctrl-C returning a partial summary."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # several processes

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests'}", "JAX_PLATFORMS": "cpu"}

MEMORY = """
import json, resource, mc
from _synthetic import month, simulate_with
sc = mc.presets.get("golden-idler-steady")
rss = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
simulate_with(month, sc, 1 << 17, chunk=1 << 15)
small = rss()
s = simulate_with(month, sc, 3 << 20, chunk=1 << 15)
print(json.dumps({"small": small, "big": rss(), "n": s["n"]}))
"""


def test_memory_is_bounded_by_the_chunk_not_n():
    p = subprocess.run([sys.executable, "-c", MEMORY], env=ENV, cwd=ROOT, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    r = json.loads(p.stdout.strip().splitlines()[-1])
    assert r["n"] == 3 << 20
    kept = 3 * 2**20 * 17 * 8  # what keeping every month's 17 outputs would take
    assert r["big"] - r["small"] < kept / 10, r


def test_ctrl_c_prints_the_partial_summary():
    cmd = [sys.executable, "-m", "mc.cli", "run", "golden-idler-steady", "--n", str(10**9), "--json",
           "--progress", "--chunk", "2048"]
    p = subprocess.Popen(cmd, env=ENV, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    err = b""
    deadline = time.monotonic() + 240
    # Wait until the bar counts merged months ("| 2.05k/1.00G"), not just its first frame.
    while not re.search(rb"\|\s*[1-9][\d.]*[kMG]?/", err) and time.monotonic() < deadline:
        chunk = os.read(p.stderr.fileno(), 4096)
        if not chunk:
            break
        err += chunk
    assert p.poll() is None, err.decode(errors="replace")[-2000:]
    p.send_signal(signal.SIGINT)
    out, rest = p.communicate(timeout=120)
    assert p.returncode == 130, (rest + err).decode(errors="replace")[-2000:]
    summary = json.loads(out)
    assert summary["partial"] is True
    assert 0 < summary["n"] < 10**9 and summary["n"] % 2048 == 0
    assert summary["pass"]["capacity"]["n"] == summary["n"]
