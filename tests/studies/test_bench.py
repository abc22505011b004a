"""The NumPy month that ``mc bench`` measures computes the same month as the core."""

import jax
import numpy as np
import pytest

import mc
from mc import fleet
from mc.studies import numpy_month
from mc.studies.benchreport import format_bench

from conftest import assert_numpy_month_agrees, batch_draws, one_fast

SCENARIOS = ["golden-idler-steady", "noise-evictor", "bargain-shortfall"]


@pytest.mark.slow
@pytest.mark.parametrize("name", one_fast(SCENARIOS))
def test_numpy_month_matches_core_on_the_same_draws(name):
    sc = mc.presets.get(name)
    assert_numpy_month_agrees(sc, 200)


def test_numpy_months_are_plausible():
    out = numpy_month.months(mc.presets.get("golden-idler-steady"), 300, seed=1, batch=128)
    assert out["bill"].shape == (300,)
    assert np.bincount(out["n_evicted"]).argmax() == 6


def test_bench_report_names_backend_and_ratio():
    r = {"scenario": "golden-idler-steady", "backend": "cpu", "device": "cpu", "devices": 1, "jax": "x",
         "engine": [{"chunk": 1024, "months_per_s": 2e5, "n": 4096, "seconds": 0.02}],
         "numpy_month": [{"batch": 1024, "months_per_s": 1e4, "n": 4096, "seconds": 0.4}], "ratio": 20.0}
    text = format_bench(r)
    assert "cpu" in text and "20.0x" in text and "200,000 months/s" in text


def test_bench_skips_chunks_that_do_not_fit(monkeypatch):
    # A chunk size that runs out of device memory is reported, not fatal.
    from mc.studies import bench

    def fake_engine(sc, chunk, seconds, devices=None):
        if chunk > 1000:
            raise RuntimeError("RESOURCE_EXHAUSTED: Out of memory while trying to allocate")
        return {"chunk": chunk, "n": 10, "seconds": 1.0, "months_per_s": 10.0}

    monkeypatch.setattr(bench, "time_engine", fake_engine)
    monkeypatch.setattr(bench, "time_numpy", lambda sc, b, s: {"batch": b, "n": 5, "seconds": 1.0,
                                                                "months_per_s": 5.0})
    r = bench.run(chunks=(512, 4096), numpy_batches=(64,), seconds=0.1)
    assert r["engine"][1] == {"chunk": 4096, "error": "out of memory"} and r["ratio"] == 2.0
    assert "out of memory" in format_bench(r)
    monkeypatch.setattr(bench, "time_engine", lambda *a, **k: (_ for _ in ()).throw(ValueError("bug")))
    with pytest.raises(ValueError):  # other errors still surface
        bench.run(chunks=(512,), numpy_batches=(64,), seconds=0.1)


def test_autoscaler_bench_report_names_rounds_and_ratios():
    from mc.studies.benchreport import format_bench_autoscaler

    row = {"months_per_s": 2000.0, "n": 4096, "seconds": 2.0}
    r = {"scenario": "lemon-hunter", "rounds": 31, "backend": "cpu", "device": "cpu", "devices": 1, "jax": "x",
         "autoscaler": row, "one_round": {**row, "months_per_s": 30000.0}, "one_round_over_autoscaler": 15.0,
         "reference": {**row, "months_per_s": 20.0, "n": 10}, "autoscaler_over_reference": 100.0}
    text = format_bench_autoscaler(r)
    assert "lemon-hunter (31 rounds) on cpu" in text and "15.0x" in text and "100.0x" in text


def test_reference_timing_feeds_each_month_its_own_draws():
    from mc.fleet import autoscaler
    from mc.studies import bench

    sc = mc.presets.get("lemon-hunter")
    seen = []
    out = bench.time_reference(lambda d, s: seen.append(d), sc, 3)
    assert out["n"] == 3 and len(seen) == 3
    assert isinstance(seen[0], autoscaler.Draws) and seen[0].noise.shape == (sc.autoscaler.rounds, sc.pool.size)
    assert not np.array_equal(seen[0].noise, seen[1].noise)
    with pytest.raises(mc.ParamError, match="must be a preset with an \\[autoscaler\\] section"):
        bench.autoscaler(scenario="golden-idler")


@pytest.mark.slow
def test_latency_bench_times_every_arrival_process_in_one_run():
    from mc.studies import bench
    from mc.studies.benchreport import format_bench_latency

    log = bench.synthetic_log(rows=400, rate=5.0)
    r = bench.latency(log, replications=2, requests=40, warmup=0, max_batch=8)
    assert [e["arrivals"] for e in r["runs"]] == ["poisson", "gamma cv 4", "bootstrap", "replay"]
    assert r["runs"][-1]["requests"] == 400 and r["runs"][-1]["replications"] == 1
    assert all(e["warm_s"] > 0 and e["cold_s"] > 0 for e in r["runs"])
    assert r["bootstrap_over_poisson"] == pytest.approx(r["runs"][2]["warm_s"] / r["runs"][0]["warm_s"])
    text = format_bench_latency(r)
    assert "bootstrap / poisson" in text and r["backend"] in text and "400 requests" in text


@pytest.mark.slow
@pytest.mark.parametrize("policy", one_fast(mc.fleet.policies.names(), keep="zscore"))
def test_numpy_month_runs_every_policy_by_its_twin(policy):
    """The NumPy month asks the rule for its NumPy twin: no rule runs as another."""
    sc = mc.presets.get("noise-evictor").replace({"eviction.policy": policy})
    d = batch_draws(sc, 200, seed=7)
    core = {k: np.asarray(v) for k, v in jax.jit(jax.vmap(lambda x: fleet.outcome(x, sc)))(d).items()}
    ref = numpy_month.outcome(jax.tree_util.tree_map(np.asarray, d), sc)
    for k in ("bill", "churn_bill", "n_evicted", "n_wrong", "n_run"):
        assert np.array_equal(core[k], ref[k]), k
    assert core["n_evicted"].any()
