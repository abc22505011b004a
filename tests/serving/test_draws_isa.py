"""The serving model's draws have the same bits on every CPU (``mc.kernels.exact``).

A recorded fingerprint of a fixed sample of draws (gamma at shapes 1/16, 1/4 and 1,
exponentials, normals, and the gaps, lengths and arrival times of Poisson, gamma CV 4
and the log's bootstrap; ``draws_bits.sample``) fails on any machine, jaxlib or XLA
option that computes them differently. The slow tier runs the real-traffic study's
draws and queues under every ``--xla_cpu_max_isa`` cap this CPU allows (SSE4.2 and
AVX have no fused multiply-add), and they must agree bit for bit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import draws_bits

ROOT = Path(__file__).resolve().parents[2]
FINGERPRINT = "d2abe9488861e1dd578853e359688250d8ef720ddbc82cb0e647ec9e3079fdae"
# XLA's ISA caps and the /proc/cpuinfo flags a CPU needs for each
CAPS = {"SSE4_2": ("sse4_2",), "AVX": ("avx",), "AVX2": ("avx2", "fma"), "AVX512": ("avx512f",)}
NO_FMA = ("SSE4_2", "AVX")


def test_the_draws_match_their_recorded_fingerprint():
    got = draws_bits.sample()
    assert draws_bits.fingerprint(got) == FINGERPRINT, (
        "the serving draws' bits differ from the recorded ones: a change to the samplers (record the new "
        "fingerprint only if the draws were meant to change), or a machine that computes them differently "
        f"(a bug): {json.dumps(got, indent=1)}")


def caps() -> list[str]:
    """The ISA caps this CPU can run (x86 Linux; none elsewhere)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return []
    flags = next((line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")), [])
    return [cap for cap, need in CAPS.items() if all(f in flags for f in need)]


def bits_under(cap: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    env["PYTHONPATH"] = str(ROOT)
    if cap:
        env["XLA_FLAGS"] = f"--xla_cpu_max_isa={cap}"
    run = subprocess.run([sys.executable, str(Path(__file__).with_name("draws_bits.py")), "--study"], cwd=ROOT,
                         env=env, capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_the_study_draws_and_queues_are_the_same_bits_under_every_isa_cap():
    available = caps()
    if not available:
        pytest.skip("no /proc/cpuinfo x86 flags: no ISA caps to compare")
    native = bits_under(None)
    assert native["fingerprint"] == FINGERPRINT
    for cap in available:
        got = bits_under(cap)
        if cap in NO_FMA and "fma" in Path("/proc/cpuinfo").read_text():
            # the cap took effect: the fleet's float32 normals round differently without FMA
            assert got["control"] != native["control"], cap
        differ = sorted(k for k in native if k != "control" and got.get(k) != native[k])
        assert not differ, f"XLA capped at {cap}: {differ} differ from the native ISA's"
