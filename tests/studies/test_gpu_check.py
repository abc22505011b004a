"""The GPU check script in its dry mode (any backend, tiny sizes), so it cannot rot."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_gpu_check_dry_run_writes_every_figure(tmp_path):
    env = dict(os.environ, PYTHON=sys.executable, JAX_PLATFORMS="cpu")
    out = tmp_path / "figures"
    r = subprocess.run(["bash", str(ROOT / "scripts" / "gpu_check.sh"), "--dry", str(out)], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    for name in ("machine.json", "agreement.json", "throughput.json", "profile.json", "big_run.json", "done.json"):
        assert (out / name).is_file(), name
    agree = json.loads((out / "agreement.json").read_text())
    assert agree["ok"] and len(agree["presets"]) == 2
    speed = json.loads((out / "throughput.json").read_text())
    assert {"full", "no_token_pass", "no_reducer", "one_scatter_reducer"} <= set(speed)
    assert json.loads((out / "big_run.json").read_text())["n"] == 256
    assert any((out / "trace").rglob("*.xplane.pb"))


@pytest.mark.slow
def test_bench_pool_curve_prints_every_pool():
    from mc.studies import bench

    r = bench.pool_curve((8, 40), seconds=0.05, chunk=64)
    assert [row["cards"] for row in r["pools"]] == [8, 40]
    assert all(row["card_months_per_s"] > 0 for row in r["pools"])
    assert bench.pool_scenario(64).demand.level == pytest.approx(120_000)
