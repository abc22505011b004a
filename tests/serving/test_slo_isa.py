"""The real-traffic study's SLO ratings reproduce across CPUs (SPEC §7 "SLO rate"):
the serving model's draws and queue have the same bits with XLA capped at SSE4.2 (no
fused multiply-add), at AVX2 and at the native ISA (``mc.kernels.exact``), so the
ratings, at a reduced size, must be equal; and a one-ulp change of the rate grid's
anchor must move them no more than the figure shows (0.5% of tok/s)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
RESOLUTION = 0.005  # the bar panel of fig_real_traffic: about a pixel and a half of tok/s

SCRIPT = r"""
import json, sys
sys.path.insert(0, "experiments")
import numpy as np
import real_traffic as RT
from mc.serving import slo as S
log = RT.read_log()
batcher = next(b for b in RT.BATCHERS if b[0] == RT.SLO_BATCHER)
out = {}
for traffic in RT.TRAFFICS:
    s = RT.serving(log, batcher, traffic, n=200, warmup=50)
    got = S.slo_rate(s, RT.SLO_TTFT, replications=32, seed=0, rel_tol=0.05, **RT.SLO)
    out[traffic[0]] = [got.rate, got.tok_s]
print(json.dumps(out))
"""


def ratings(isa: str | None) -> dict:
    """The four traffics' (rate, tok/s) at 200 requests and 32 replications a rate."""
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    env["PYTHONPATH"] = str(ROOT)
    if isa:
        env["XLA_FLAGS"] = f"--xla_cpu_max_isa={isa}"
    run = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=1800)
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_the_ratings_are_equal_under_sse42_avx2_and_native():
    native, avx2, sse = ratings(None), ratings("AVX2"), ratings("SSE4_2")
    assert avx2 == native and sse == native, (native, avx2, sse)


@pytest.mark.slow
def test_one_ulp_of_the_grid_anchor_does_not_move_a_rating(monkeypatch):
    sys.path.insert(0, str(ROOT / "experiments"))
    import real_traffic as RT

    from mc.serving import latency as L
    from mc.serving import slo as S

    log = RT.read_log()
    batcher = next(b for b in RT.BATCHERS if b[0] == RT.SLO_BATCHER)
    s = RT.serving(log, batcher, RT.TRAFFICS[1], n=300, warmup=50)  # gamma, cv 2
    cap = s.capacity_rate()
    got = []
    for anchor in (cap, float(np.nextafter(np.float32(cap), np.float32(2 * cap)))):
        monkeypatch.setattr(L.Serving, "capacity_rate", lambda self, a=anchor: a)
        got.append(S.slo_rate(s, RT.SLO_TTFT, replications=12, rel_tol=0.05, **RT.SLO))
    assert got[0].tried != got[1].tried or got[0].rate == got[1].rate
    assert abs(got[1].rate / got[0].rate - 1) < RESOLUTION
    assert abs(got[1].tok_s / got[0].tok_s - 1) < RESOLUTION
