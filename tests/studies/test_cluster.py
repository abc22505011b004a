"""Studies on a Ray cluster (``--cluster``): the same bits as here, faults, bad input.

A local cluster is started by the tests (a head that offers no CPU, then a second
node on this machine with two worker processes) and stopped after, even when a
test fails. Sweeps, the README planner's calibration and a sensitivity study
must give the same bits with ``--cluster ray`` as without; a worker killed
mid-unit (from inside: the unit's own process signals itself once) must not
change them; a study interrupted on the head resumes; a worker that runs
another mc or jax is refused before any unit runs; and every bad ``--cluster``
is one line and exit 2.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import mc
from mc.cli import main
from mc.studies import dispatch
from mc.studies import sweep as sweeps

ROOT = Path(__file__).resolve().parents[2]
SWEEP = """preset = "golden-idler"
n = 300
[grid]
"window.hours" = [1, 24, 168]
"eviction.share" = [0.0, 0.2]
"""
RANGES = """[ranges]
"window.hours" = [1, 168]
"eviction.share" = [0.0, 0.3]
"""



def same_table(a, b) -> bool:
    """Two Parquet tables hold the same columns and the same bits (their schema metadata
    aside: each run stamps its own identity there)."""
    import pyarrow.parquet as pq
    x, y = (pq.read_table(f).replace_schema_metadata(None) for f in (a, b))
    return x.equals(y)

def _one_line_exit_2(capsys, argv, *words):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err, err
    for word in words:
        assert word in err, err
    return err


@pytest.fixture
def files(tmp_path):
    (tmp_path / "sweep.toml").write_text(SWEEP)
    (tmp_path / "ranges.toml").write_text(RANGES)
    return tmp_path


# -- bad input: one line, exit 2 (no cluster needed) -----------------------------------------

@pytest.mark.parametrize("value", ["spark", "ray:/x", "ray://", "ray://host", "ray://host:port", "ray://host:0",
                                   "http://host:10001", "ray://ho st:1", "rayx"])
def test_a_value_that_is_not_a_ray_address_is_one_line(files, capsys, value):
    _one_line_exit_2(capsys, ["sweep", str(files / "sweep.toml"), "--out", str(files / "o"), "--cluster", value],
                     "--cluster", "ray://HOST:PORT")


def test_mc_cluster_is_checked_and_named(files, capsys, monkeypatch):
    monkeypatch.setenv("MC_CLUSTER", "yarn")
    _one_line_exit_2(capsys, ["sweep", str(files / "sweep.toml"), "--out", str(files / "o")], "MC_CLUSTER", "yarn")


def test_ray_not_installed_is_one_line(files, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # ``import ray`` fails as it does without Ray
    _one_line_exit_2(capsys, ["sweep", str(files / "sweep.toml"), "--out", str(files / "o"), "--cluster", "ray"],
                     "--cluster", "pip install 'mc[cluster]'")


@pytest.mark.slow
def test_without_cluster_ray_is_never_imported(files):
    code = ("import sys; from mc.cli import main; "
            f"rc = main(['sweep', {str(files / 'sweep.toml')!r}, '--n', '16', '--quiet', '--out', "
            f"{str(files / 'o')!r}]); assert rc == 0, rc; assert 'ray' not in sys.modules, 'ray imported'")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "MC_CLUSTER": ""})
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.slow
def test_an_unreachable_address_is_one_line(files, capsys):
    pytest.importorskip("ray")
    _one_line_exit_2(capsys, ["sweep", str(files / "sweep.toml"), "--out", str(files / "o"), "--cluster",
                              "ray://127.0.0.1:1"], "--cluster", "cannot be reached")
    assert not (files / "o" / "points").exists() or not list((files / "o" / "points").iterdir())


# -- a local cluster -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def head():
    """A head node that offers no CPU (no workers yet), this process its driver;
    stopped after the module, whatever happens."""
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    saved = {k: os.environ.get(k) for k in ("JAX_PLATFORMS", "RAY_ADDRESS")}
    os.environ["JAX_PLATFORMS"] = "cpu"  # the workers' JAX: CPU, as this process's
    os.environ.pop("RAY_ADDRESS", None)
    address_file = Path("/tmp/ray/ray_current_cluster")  # Cluster records its head there; put back after
    before = address_file.read_text() if address_file.exists() else None
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False})
    try:
        ray.init(address=cluster.address, include_dashboard=False, log_to_driver=False)
        yield cluster
    finally:
        ray.shutdown()
        cluster.shutdown()
        if before is not None:
            address_file.parent.mkdir(parents=True, exist_ok=True)
            address_file.write_text(before)
        for k, x in saved.items():
            if x is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = x


@pytest.fixture(scope="module")
def cluster(head, tmp_path_factory):
    """The head and a second node with two CPUs: two worker processes, whose
    environment arms ``MC_FAULT_KILL_UNIT`` on unit 2 behind a marker file that
    exists (disarmed) until a test removes it."""
    from mc.studies.cluster import FAULT

    head.fault = tmp_path_factory.mktemp("fault") / "killed"
    head.fault.touch()
    saved = os.environ.get(FAULT)
    os.environ[FAULT] = f"2:{head.fault}"  # the node's processes inherit it
    try:
        head.add_node(num_cpus=2, include_dashboard=False)
        head.wait_for_nodes()
    finally:
        if saved is None:
            os.environ.pop(FAULT)
        else:
            os.environ[FAULT] = saved
    return head


@pytest.mark.slow
def test_a_cluster_with_no_workers_is_one_line(head, files, capsys):
    if len(head.worker_nodes):
        pytest.skip("the module's cluster already has its worker node")
    _one_line_exit_2(capsys, ["sweep", str(files / "sweep.toml"), "--out", str(files / "o"), "--cluster", "ray"],
                     "--cluster", "no workers")


@pytest.fixture(scope="module")
def here(tmp_path_factory):
    """The sweep run here, without --cluster: its folder."""
    folder = tmp_path_factory.mktemp("here")
    (folder / "sweep.toml").write_text(SWEEP)
    assert main(["sweep", str(folder / "sweep.toml"), "--out", str(folder / "out"), "--quiet"]) == 0
    assert "cluster" not in sweeps.read(folder / "out")[1]
    return folder / "out"


@pytest.mark.slow
def test_sweep_on_the_cluster_is_the_same_bits(cluster, here, files, capsys):
    assert main(["sweep", str(files / "sweep.toml"), "--out", str(files / "there"), "--cluster", "ray",
                 "--progress"]) == 0
    err = capsys.readouterr().err
    assert "6/6 units, 2 workers" in err, err[-500:]
    assert same_table(here / "sweep.parquet", files / "there" / "sweep.parquet")
    made = sweeps.read(files / "there")[1]
    assert made["cluster"]["engine"] == "ray" and made["cluster"]["slots"] == 2
    assert [n["cpus"] for n in made["cluster"]["nodes"]] == [2.0]
    assert made["cluster"]["nodes"][0]["devices"]


@pytest.mark.slow
def test_planner_calibration_on_the_cluster_is_the_same_bits(cluster, capsys, monkeypatch):
    # The README's planner, with a smaller race (the same code at any size); its
    # card is rated once for both runs.
    loaded = {}
    rate = mc.files.scenario
    monkeypatch.setattr(mc.files, "scenario", lambda path: loaded.setdefault(path, rate(path)))
    argv = ["calibrate", str(ROOT / "examples" / "planner.toml"), "--json", "--quiet", "--n", "64", "--first",
            "32", "--window", "4,168", "--share", "0,0.2", "--policy", "share", "--runset", "peak,all"]
    reports = []
    for extra in ([], ["--cluster", "ray"]):
        assert main(argv + extra) in (0, 1)
        reports.append(json.loads(capsys.readouterr().out))
    here, there = reports
    assert there["provenance"]["cluster"]["slots"] == 2
    for rep in reports:
        rep.pop("provenance")
        rep.pop("wall_s")
    assert json.dumps(here, sort_keys=True) == json.dumps(there, sort_keys=True)
    assert here["recommendation"] == there["recommendation"]


@pytest.mark.slow
def test_sensitivity_on_the_cluster_is_the_same_bits(cluster, files):
    argv = ["sensitivity", "golden-idler", "--ranges", str(files / "ranges.toml"), "--samples", "64", "--months",
            "48", "--quiet", "--json"]
    assert main(argv + ["--out", str(files / "here")]) == 0
    assert main(argv + ["--out", str(files / "there"), "--cluster", "ray"]) == 0
    assert same_table(files / "here" / "sensitivity.parquet", files / "there" / "sensitivity.parquet")
    made = json.loads((files / "there" / "manifest.json").read_text())
    # noise shares are the points' Monte Carlo variances: the figures of every point agree too
    assert made["cluster"]["slots"] == 2 and made["noise_share"] == json.loads(
        (files / "here" / "manifest.json").read_text())["noise_share"]


@pytest.mark.slow
def test_a_sweep_interrupted_on_the_head_resumes_to_the_same_bits(cluster, here, files, capsys):
    out, argv = files / "there", ["sweep", str(files / "sweep.toml"), "--quiet"]

    def stop(handed):
        if handed == 2:
            raise KeyboardInterrupt

    dispatch.UNIT_HOOKS.append(stop)
    try:
        assert main(argv + ["--out", str(out), "--cluster", "ray"]) == 130
    finally:
        dispatch.UNIT_HOOKS.remove(stop)
    err = capsys.readouterr().err
    assert "2 of 6 grid points are saved" in err, err
    assert not (out / "manifest.json").exists()
    assert main(argv + ["--out", str(out), "--cluster", "ray", "--json"]) == 0
    prov = json.loads(capsys.readouterr().out)["provenance"]
    assert (prov["computed"], prov["reused"]) == (4, 2) and prov["cluster"]["slots"] == 2
    assert same_table(out / "sweep.parquet", here / "sweep.parquet")


@pytest.mark.slow
def test_a_worker_with_another_jax_is_refused_before_any_unit(cluster, files, capsys, monkeypatch):
    from mc.studies import cluster as clusters

    # What this process says it runs is what the workers' probe is compared with:
    # here it claims another jax, so every worker differs from it.
    real = clusters.local_versions()
    monkeypatch.setattr(clusters.Ray, "expected", lambda self: {**real, "jax": "0.0.1"})
    ran = []
    dispatch.UNIT_HOOKS.append(ran.append)
    try:
        _one_line_exit_2(capsys, ["sweep", str(files / "sweep.toml"), "--out", str(files / "o"), "--cluster",
                                  "ray"], "--cluster", "jax 0.0.1", f"jax {real['jax']}", "install the same")
    finally:
        dispatch.UNIT_HOOKS.remove(ran.append)
    assert not ran and not list((files / "o" / "points").glob("*.parquet"))


@pytest.mark.slow
def test_a_worker_killed_mid_unit_is_retried_to_the_same_bits(cluster, here, files):
    from mc.studies.cluster import Ray

    # The workers were started with MC_FAULT_KILL_UNIT=2:<marker>, the marker there
    # (disarmed); without it, the worker that finishes unit 2 kills itself
    # (SIGKILL) with its result in hand and puts the marker back. Ray runs the unit again.
    cluster.fault.unlink()
    done = sweeps.run(sweeps.load(files / "sweep.toml"), files / "there", progress=False, executor=Ray())
    assert cluster.fault.exists() and done.computed == 6
    killed = Path("/proc") / cluster.fault.read_text().strip() / "stat"
    assert not killed.exists() or killed.read_text().split(") ")[1].startswith("Z"), "the worker is still alive"
    assert same_table(here / "sweep.parquet", files / "there" / "sweep.parquet")
