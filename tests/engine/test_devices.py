"""Device-count invariance (forced host devices) and a two-process run on localhost.

Each case runs in a subprocess: the device count and ``jax.distributed`` must be
set before jax starts.
"""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # several processes or device counts

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests'}", "JAX_PLATFORMS": "cpu"}

DEVICES = """
import json, numpy as np, mc
from mc import engine
from _synthetic import month, simulate_with
sc = mc.presets.get("golden-idler-steady")
out = {}
for d in (1, 2, 4, 8):
    s = engine.sample(month, sc, 203, seed=9, chunk=8 * 4, devices=d)
    out[d] = {"samples": {k: v.tolist() for k, v in s.items()},
              "summary": simulate_with(month, sc, 203, seed=9, chunk=8 * 4, devices=d)}
try:
    engine.sample(month, sc, 10, chunk=12, devices=8)
except mc.ParamError as e:
    out["error"] = str(e)
real = [engine.sample(mc.fleet_month, sc, 24, seed=4, chunk=8, devices=d) for d in (1, 8)]
out["real_equal"] = all(np.array_equal(real[0][k], real[1][k]) for k in real[0])
six = mc.presets.get("lemon-hunter")
rounds = [engine.sample(mc.fleet.autoscaler.autoscaler_month, six, 16, seed=4, chunk=8, devices=d) for d in (1, 8)]
out["autoscaler_equal"] = all(np.array_equal(rounds[0][k], rounds[1][k]) for k in rounds[0])
print(json.dumps(out))
"""


def run(code, env=ENV, timeout=300):
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def forced():
    return run(DEVICES, {**ENV, "XLA_FLAGS": "--xla_force_host_platform_device_count=8"})


@pytest.mark.parametrize("d", ["2", "4", "8"])
def test_outcomes_and_counts_do_not_depend_on_device_count(forced, d):
    one, many = forced["1"], forced[d]
    assert one["samples"] == many["samples"]
    a, b = one["summary"], many["summary"]
    assert a["pass"] == b["pass"] and a["modes"] == b["modes"] and a["n"] == b["n"] == 203
    for col, st in a["stats"].items():
        for k, x in st.items():
            assert b["stats"][col][k] == pytest.approx(x, rel=1e-6, abs=1e-9), (col, k)


def test_real_month_same_on_one_and_eight_devices(forced):
    assert forced["real_equal"]
    assert forced["autoscaler_equal"]  # SPEC §6 month too


def test_chunk_not_a_multiple_of_devices_is_an_error(forced):
    assert "multiple of the 8 devices" in forced["error"]


TWO = """
import json, sys, jax
jax.config.update("jax_cpu_collectives_implementation", "gloo")
jax.distributed.initialize(coordinator_address="127.0.0.1:%d", num_processes=2, process_id=int(sys.argv[1]))
import mc
from mc import engine
from _synthetic import month, simulate_with
sc = mc.presets.get("golden-idler-steady")
s = engine.sample(month, sc, 150, seed=3, chunk=32)
print(json.dumps({"samples": {k: v.tolist() for k, v in s.items()},
                  "summary": simulate_with(month, sc, 150, seed=3, chunk=32)}))
"""

ONE = """
import json, mc
from mc import engine
from _synthetic import month, simulate_with
sc = mc.presets.get("golden-idler-steady")
s = engine.sample(month, sc, 150, seed=3, chunk=32)
print(json.dumps({"samples": {k: v.tolist() for k, v in s.items()},
                  "summary": simulate_with(month, sc, 150, seed=3, chunk=32)}))
"""


def test_two_processes_match_one():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code = TWO % port
    procs = [subprocess.Popen([sys.executable, "-c", code, str(i)], env=ENV, cwd=ROOT, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for i in range(2)]
    outs = [p.communicate(timeout=180) for p in procs]
    for p, (o, e) in zip(procs, outs):
        assert p.returncode == 0, e[-3000:]
    two = [json.loads(o.strip().splitlines()[-1]) for o, _ in outs]
    one = run(ONE)
    for r in two:
        assert r["samples"] == one["samples"]
        assert r["summary"]["pass"] == one["summary"]["pass"]
        assert r["summary"]["modes"] == one["summary"]["modes"]
        for col, st in one["summary"]["stats"].items():
            for k, x in st.items():
                assert r["summary"]["stats"][col][k] == pytest.approx(x, rel=1e-6, abs=1e-9), (col, k)
