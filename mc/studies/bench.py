"""Throughput of the standard fleet month: the JAX engine against vectorized NumPy.

The standard month is ``golden-idler-steady`` (32 flagship cards, a week's
window, share eviction, steady run set, flat demand) with dips on and hourly
capacity. The engine is timed as ``simulate`` streams: sharded chunks reduced to
summaries on the devices, after one untimed chunk that compiles. NumPy runs
``mc.studies.numpy_month`` on batches of months in the same process, so the ratio
compares the two under the same load.

``autoscaler`` times SPEC §6's month (``lemon-hunter``: daily rounds with
replacement, lemons in the pool) against the same scenario as one §1 decision,
both streamed by the engine in one run, and optionally a per-month reference
(the plain NumPy one the tests hold it to) on the same months' draws.

``latency`` times one card's queue (SPEC §7.1) under each arrival process at one
size, in one run: Poisson, gamma, a log's moving-block bootstrap and the replay
of the whole log, all with the log's lengths, so only the arrivals differ.
"""

from __future__ import annotations

import dataclasses
import time

import jax
import numpy as np

from .. import _validate as v
from .. import engine
from ..fleet import autoscaler as autoscaler_month
from ..fleet import Pool, model, presets
from ..serving import RequestLog
from ..serving import latency as serving_latency
from . import numpy_month

STANDARD = "golden-idler-steady"
AUTOSCALER = "lemon-hunter"


def time_engine(sc, chunk: int, seconds: float, devices=None) -> dict:
    """Fleet-months per second of the streaming engine at one chunk size (the
    scenario's own month: §1's, or §6's when it has an autoscaler)."""
    fleet_month, cols = model(sc)
    red, aux = engine.plan(cols)
    kw = dict(reducer=red, seed=1, chunk=chunk, devices=devices)
    aux = engine.ranges_from(engine.first_chunk(fleet_month, sc, chunk, aux=aux, **kw), aux)
    acc = engine.Accumulator(red, aux, cols)
    # Short streams (warm, same compiled step) size the timed one to ``seconds``:
    # a lone chunk's call, or a stream of a few, runs slower than a long stream.
    k = 4
    while True:
        t0 = time.perf_counter()
        engine.stream(fleet_month, sc, k * chunk, merge=acc.merge, aux=aux, progress=False, **kw)
        dt = time.perf_counter() - t0
        if dt >= 0.25 * seconds or k >= 4096:
            break
        k *= 2
    one = dt / k
    reps = max(2, int(seconds / max(one, 1e-6)))
    acc = engine.Accumulator(red, aux, cols)
    t0, c0 = time.perf_counter(), time.process_time()
    run = engine.stream(fleet_month, sc, reps * chunk, merge=acc.merge, aux=aux, progress=False, **kw)
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    # CPU seconds (every thread of this process): on a shared machine they move far less
    # with the load than the wall clock does.
    return {"chunk": chunk, "n": run.done, "seconds": dt, "months_per_s": run.done / dt, "cpu_seconds": cpu,
            "months_per_cpu_s": run.done / max(cpu, 1e-9)}


def _fits(timer, sc, chunk: int, *args) -> dict:
    """``timer``'s row, or ``{"chunk", "error"}`` when the chunk does not fit in
    device memory (a GPU sweep's largest chunks may not), so the rest still run."""
    try:
        return timer(sc, chunk, *args)
    except Exception as e:  # XLA raises its runtime error type, which differs by version
        if "RESOURCE_EXHAUSTED" not in str(e) and "out of memory" not in str(e).lower():
            raise
        return {"chunk": chunk, "error": "out of memory"}


def time_numpy(sc, batch: int, seconds: float) -> dict:
    numpy_month.months(sc, min(batch, 256), batch=batch)  # warm caches
    t0 = time.perf_counter()
    numpy_month.months(sc, batch, batch=batch)
    one = time.perf_counter() - t0
    n = batch * max(2, int(seconds / max(one, 1e-6)))
    t0 = time.perf_counter()
    numpy_month.months(sc, n, batch=batch)
    dt = time.perf_counter() - t0
    return {"batch": batch, "n": n, "seconds": dt, "months_per_s": n / dt}


def run(chunks=(512, 1024, 4096, 16384), numpy_batches=(1024, 4096), seconds: float = 3.0,
        scenario: str = STANDARD, devices=None) -> dict:
    """Engine months/s per chunk size and NumPy months/s per batch, with the ratio
    of the best of each, all measured in this one run."""
    sc = presets.get(scenario)
    devs = engine.device_list(devices)
    out = {"scenario": scenario, "backend": jax.default_backend(), "device": devs[0].device_kind,
           "devices": len(devs), "jax": jax.__version__, "numpy": np.__version__}
    out["engine"] = [_fits(time_engine, sc, c * len(devs) if c % len(devs) else c, seconds, devices)
                     for c in chunks]
    out["numpy_month"] = [time_numpy(sc, b, seconds) for b in numpy_batches]
    timed = [r["months_per_s"] for r in out["engine"] if "error" not in r]
    if not timed:
        v.fail("chunks", list(chunks), "none fits in device memory; try smaller chunks")
    best_jax = max(timed)
    best_np = max(r["months_per_s"] for r in out["numpy_month"])
    out["ratio"] = best_jax / best_np
    return out


def pool_scenario(cards: int, scenario: str = STANDARD):
    """The standard month on ``cards`` flagship cards, demand scaled with the pool
    (``level × cards / 32``), so the run set keeps the same share of the pool."""
    cards = v.count("pool", cards, lo=1, hi=1 << 16)
    sc = presets.get(scenario)
    base = sc.pool.size
    return sc.replace({"pool": f"{cards} x flagship", "demand.level": sc.demand.level * cards / base})


def pool_curve(pools=(8, 32, 128, 512, 4096), seconds: float = 3.0, scenario: str = STANDARD,
               devices=None, chunk: int | None = None) -> dict:
    """Months/s and card-months/s of the standard month against pool size, in one
    run. The chunk is the engine's automatic one (memory-aware) unless given."""
    devs = engine.device_list(devices)
    out = {"scenario": scenario, "backend": jax.default_backend(), "device": devs[0].device_kind,
           "devices": len(devs), "jax": jax.__version__, "pools": []}
    for cards in pools:
        sc = pool_scenario(cards, scenario)
        size = chunk or _auto_chunk(sc, devices)
        row = _fits(time_engine, sc, size, seconds, devices)
        row["cards"] = cards
        if "error" not in row:
            row["card_months_per_s"] = row["months_per_s"] * cards
        out["pools"].append(row)
    best = [r for r in out["pools"] if "error" not in r]
    if best:
        small = max(r["card_months_per_s"] for r in best)
        for r in best:
            r["vs_best"] = r["card_months_per_s"] / small
    return out


def _auto_chunk(sc, devices) -> int:
    """The chunk the engine picks for this scenario's long runs (its per-backend
    default, halved until a step fits the memory budget, as ``mc run`` does)."""
    from ..engine import compile as compiler
    from ..engine import run as runner

    fleet_month, cols = model(sc)
    red, aux = engine.plan(cols)
    devs = engine.device_list(devices)
    _, _, chunk = runner.check_run_args(runner.MAX_N - 1, 0, None, len(devs), devs[0].platform)
    return compiler.fitted_step(fleet_month, red, tuple(devs), chunk, sc, aux, shrink=True)[1]


def time_reference(month, sc, n: int, seed: int = 1) -> dict:
    """Months per second of ``month(draws, sc)``, a per-month reference of SPEC
    §6 consuming one month's draws as NumPy (``autoscaler.Draws``), over the
    draws of months ``0..n-1`` (made before the clock starts)."""
    n = v.count("n", n, lo=1, hi=1 << 20)
    keys = engine.month_keys(seed, np.uint32(0), n)
    draws = jax.tree_util.tree_map(np.asarray, jax.jit(jax.vmap(autoscaler_month.draw, in_axes=(0, None)))(keys, sc))
    months = [jax.tree_util.tree_map(lambda x: x[i], draws) for i in range(n)]
    t0 = time.perf_counter()
    for d in months:
        month(d, sc)
    dt = time.perf_counter() - t0
    return {"n": n, "seconds": dt, "months_per_s": n / dt}


def autoscaler(chunk: int = 1024, seconds: float = 3.0, scenario: str = AUTOSCALER, devices=None,
               reference=None, reference_months: int = 20) -> dict:
    """SPEC §6's month against the same scenario as one §1 decision (no
    ``[autoscaler]``), both through the streaming engine at one chunk size, in
    this one run; with ``reference`` (``month(draws, sc)``) also that per-month
    reference on ``reference_months`` months."""
    sc = presets.get(scenario)
    if sc.autoscaler is None:
        v.fail("scenario", scenario, "must be a preset with an [autoscaler] section")
    devs = engine.device_list(devices)
    out = {"scenario": scenario, "rounds": sc.autoscaler.rounds, "backend": jax.default_backend(),
           "device": devs[0].device_kind, "devices": len(devs), "jax": jax.__version__}
    out["autoscaler"] = time_engine(sc, chunk, seconds, devices)
    out["one_round"] = time_engine(sc.replace(autoscaler=None), chunk, seconds, devices)
    out["one_round_over_autoscaler"] = out["one_round"]["months_per_s"] / out["autoscaler"]["months_per_s"]
    if reference is not None:
        out["reference"] = time_reference(reference, sc, reference_months)
        out["autoscaler_over_reference"] = out["autoscaler"]["months_per_s"] / out["reference"]["months_per_s"]
    return out


# SPEC §1.4.1's terms at field-like sizes: wander 2% over a week, a 1.5% diurnal swing
# and a 0.5% shared swing over a day (what ``mc bench --structure`` switches on).
STRUCTURE = {"wander.sd": 0.02, "wander.hours": 168.0, "swing.diurnal": 0.015, "swing.sd": 0.005,
             "swing.hours": 24.0}


def replicated(sc, tp: int):
    """``sc`` with every card class served by replicas of ``tp`` cards (SPEC §11)."""
    pool = Pool(tuple((dataclasses.replace(c, tp=tp), n) for c, n in sc.pool.groups))
    return dataclasses.replace(sc, pool=pool)


def replicas(chunk: int = 256, seconds: float = 3.0, sizes=(2, 4, 8), devices=None) -> dict:
    """The standard month and §6's (``lemon-hunter``) with their 32 cards as
    replicas of each size in ``sizes`` (SPEC §11) against the same cards one by
    one, through the streaming engine at one chunk size, all in this one run: the
    same cards, so months per second compare per card."""
    devs = engine.device_list(devices)
    out = {"backend": jax.default_backend(), "device": devs[0].device_kind, "devices": len(devs),
           "jax": jax.__version__, "rows": []}
    for name in (STANDARD, AUTOSCALER):
        sc = presets.get(name)
        cards = time_engine(sc, chunk, seconds, devices)
        row = {"scenario": name, "cards": sc.pool.size, "tp1": cards, "sizes": []}
        for tp in sizes:
            e = time_engine(replicated(sc, tp), chunk, seconds, devices)
            row["sizes"].append({"tp": tp, **e, "over_tp1": e["months_per_s"] / cards["months_per_s"],
                                 "cpu_over_tp1": e["months_per_cpu_s"] / cards["months_per_cpu_s"]})
        out["rows"].append(row)
    return out


def structure(chunk: int = 256, seconds: float = 3.0, devices=None) -> dict:
    """The standard month and §6's (``lemon-hunter``) with SPEC §1.4.1's wander and
    swing (``STRUCTURE``) against each with every term zero, through the streaming
    engine at one chunk size, all in this one run."""
    devs = engine.device_list(devices)
    out = {"backend": jax.default_backend(), "device": devs[0].device_kind, "devices": len(devs),
           "jax": jax.__version__, "terms": dict(STRUCTURE), "rows": []}
    for name in (STANDARD, AUTOSCALER):
        sc = presets.get(name)
        off = time_engine(sc, chunk, seconds, devices)
        on = time_engine(sc.replace(STRUCTURE), chunk, seconds, devices)
        out["rows"].append({"scenario": name, "off": off, "on": on,
                            "on_over_off": on["months_per_s"] / off["months_per_s"],
                            "cpu_on_over_off": on["months_per_cpu_s"] / off["months_per_cpu_s"]})
    return out


def synthetic_log(rows: int = 20_000, rate: float = 5.0, seed: int = 0) -> RequestLog:
    """A bursty request log for timing: gamma gaps (cv 3) at ``rate`` requests/s,
    lognormal prompts (mean 1,000 tokens) and answers (mean 250), cv 1 each."""
    rng = np.random.default_rng(seed)
    shape = 1 / 9
    time = np.cumsum(rng.gamma(shape, 1 / (shape * rate), rows))
    s2 = np.log(2.0)
    prompt = np.ceil(rng.lognormal(np.log(1000) - s2 / 2, np.sqrt(s2), rows)).clip(1, 8000)
    answer = np.ceil(rng.lognormal(np.log(250) - s2 / 2, np.sqrt(s2), rows)).clip(1, 4000)
    return RequestLog.of(time, prompt, answer, source=f"synthetic ({rows:,} requests, gamma cv 3)")


def latency(log: RequestLog | None = None, replications: int = 100, requests: int = 1000, warmup: int = 200,
            batcher: str = "continuous", max_batch: int = 64, chunk: int | None = None) -> dict:
    """Seconds for ``replications`` of ``requests`` (after ``warmup``) under Poisson,
    gamma (cv 4) and the log's bootstrap, each at the log's own rate with its
    lengths, and for one replay of the whole log; each run twice in this one
    process (cold: with compilation; warm: the run alone)."""
    log = synthetic_log() if log is None else v.instance("log", log, RequestLog, "a RequestLog")
    kw = dict(batcher=batcher, max_batch=max_batch, log=log)
    size = dict(n=requests, warmup=warmup)
    runs = [("poisson", dict(arrivals="poisson", **size), replications),
            ("gamma cv 4", dict(arrivals="gamma", cv=4.0, **size), replications),
            ("bootstrap", dict(arrivals="log", block=min(600.0, log.span / 2), **size), replications),
            ("replay", dict(arrivals="log", replay=True), None)]
    devs = engine.device_list(None)
    out = {"log": log.describe(), "batcher": batcher, "max_batch": max_batch, "backend": jax.default_backend(),
           "device": devs[0].device_kind, "jax": jax.__version__, "runs": []}
    for label, fields, reps in runs:
        s = serving_latency.Serving("8b", "h100", **kw, **fields)
        row = {"arrivals": label, "requests": s.n + s.warmup}
        for phase in ("cold", "warm"):
            t0 = time.perf_counter()
            r = serving_latency.simulate(s, log.rate, reps, chunk=chunk)
            row[f"{phase}_s"] = time.perf_counter() - t0
        row["replications"] = r.replications
        row["requests_per_s"] = r.replications * row["requests"] / row["warm_s"]
        out["runs"].append(row)
    by = {r["arrivals"]: r for r in out["runs"]}
    out["bootstrap_over_poisson"] = by["bootstrap"]["warm_s"] / by["poisson"]["warm_s"]
    out["gamma_over_poisson"] = by["gamma cv 4"]["warm_s"] / by["poisson"]["warm_s"]
    return out
