"""A pool behind a router (SPEC §9): one card is §7 exactly, an independent event
simulator agrees request by request, round robin is §7 on every N-th arrival,
random routing of Poisson arrivals is §7 at rate/N in law, least-requests is no
worse than random; and the refusals."""

from __future__ import annotations

import math
from functools import partial

import jax
import numpy as np
import pandas as pd
import pytest

from mc import engine
from mc._validate import ParamError
from mc.serving import latency as L
from mc.serving import loop, routed as P
from mc.serving.routers import ROUTERS
from mc.serving.traffic import RequestLog

import ref_pool
from conftest import one_fast

KW = dict(model="8b", gpu="h100", prompt_mean=512, answer_mean=48, answer_max=512)


def _core(pool: P.RoutedPool, rate: float, k: int, seed: int = 0):
    pp = pool.params(rate)
    keys = engine.month_keys(seed, np.uint32(0), k)
    r = jax.jit(jax.vmap(P.requests, in_axes=(0, None)))(keys, pp)
    return pp, jax.tree_util.tree_map(np.asarray, r)


# One batcher each in the fast tier (the other in the full): the continuous one here,
# the static one in round robin's, both bit for bit.
@pytest.mark.parametrize("batcher", one_fast(L.BATCHERS, keep="continuous"))
def test_one_card_is_section_7_exactly(batcher):
    s = L.Serving(batcher=batcher, n=150, warmup=30, **KW)
    keys = engine.month_keys(0, np.uint32(0), 3)
    r7 = jax.tree_util.tree_map(np.asarray, jax.jit(jax.vmap(L.requests, in_axes=(0, None)))(keys, s.params(20.0)))
    _, r9 = _core(P.RoutedPool(s, cards=1, router="least_tokens"), 20.0, 3)
    for col in ("wait", "ttft", "e2e"):
        np.testing.assert_array_equal(r9[col], r7[col], err_msg=col)
    for col in ("busy", "steps", "active", "end"):
        np.testing.assert_array_equal(r9[col][:, 0], r7[col], err_msg=col)


def _log(n=160, seed=3):
    rng = np.random.default_rng(seed)
    gaps = rng.gamma(0.3, 1 / 0.3, n) * 0.05  # bursty, mean 50 ms
    t = np.cumsum(gaps)
    t[40:44] = t[40]  # simultaneous arrivals
    return RequestLog.of(t, rng.integers(50, 900, n), rng.integers(1, 120, n), source="synthetic")


@pytest.mark.parametrize("batcher", one_fast(L.BATCHERS, keep="continuous"))
@pytest.mark.parametrize("router", one_fast(ROUTERS, keep="least_tokens"))
def test_every_request_agrees_with_the_event_simulator(router, batcher):
    log = _log()
    s = L.Serving(batcher=batcher, log=log, replay=True, max_batch=6, **{k: KW[k] for k in ("model", "gpu")})
    speeds = (1.0, 0.65, 1.4)
    pool = P.RoutedPool(s, cards=3, router=router, speeds=speeds)
    pp, r = _core(pool, log.rate * 2.5, 1)
    p = pp.queue
    a = r["arrival"][0][0].astype(np.float64) + r["arrival"][1][0].astype(np.float64)
    u = np.asarray(jax.random.uniform(jax.random.PRNGKey(0), (1,)))  # unused: the core's own below
    from mc.kernels.random import uniforms
    key = engine.month_keys(0, np.uint32(0), 1)[0]
    u = np.asarray(uniforms(jax.random.fold_in(key, P.ROUTE_STREAM), (p.n + p.warmup,)))
    consts = [dict(step_base=float(np.float32(p.step_base) / np.float32(f)),
                   step_kv=float(np.float32(p.step_kv) / np.float32(f)),
                   prefill_token=float(np.float32(p.prefill_token) / np.float32(f)),
                   max_batch=int(p.max_batch), max_wait=float(np.float32(p.max_wait)), kv_tokens=int(p.kv_tokens))
              for f in speeds]
    ref = ref_pool.simulate(a, r["prompt"][0], r["answer"][0], u, consts, router, batcher)
    np.testing.assert_array_equal(r["card"][0], ref["card"])
    assert len(set(ref["card"])) == 3
    for got, want in ((a + r["wait"][0], ref["start"]), (a + r["ttft"][0], ref["first"]),
                      (a + r["e2e"][0], ref["finish"])):
        np.testing.assert_allclose(got, want, rtol=3e-7, atol=2e-6)


@pytest.mark.parametrize("batcher", one_fast(L.BATCHERS, keep="static"))
def test_round_robin_gives_card_k_every_nth_arrival(batcher):
    C = 3
    s = L.Serving(batcher=batcher, n=150, warmup=0, **KW)
    pp, r = _core(P.RoutedPool(s, cards=C, router="round_robin"), 45.0, 2)
    N = s.n
    p = pp.queue
    # card c's requests, for every replication: one §7 queue each, batched like the pool's cards
    sub = np.stack([np.arange(c, N, C) for c in range(C)])  # (C, N/C)
    rows = lambda x: np.concatenate([x[i][sub] for i in range(2)])  # noqa: E731
    consts = {k: np.full(2 * C, getattr(p, k)) for k in loop.CONSTS}
    out = jax.jit(partial(loop._serve_batch, batcher=batcher, S=p.slots, warmup=0))(
        rows(r["arrival"][0]), rows(r["arrival"][1]), rows(r["prompt"]), rows(r["answer"]), consts)
    for i in range(2):
        np.testing.assert_array_equal(r["card"][i], np.arange(N) % C)
    for col in ("wait", "ttft", "e2e"):
        # the static batcher's runs are §7's; a continuous card's runs also end at other
        # cards' arrivals, so its clock is a float32 rounding or two apart
        tol = dict(rtol=0, atol=0) if batcher == "static" else dict(rtol=1e-5, atol=2e-6)
        np.testing.assert_allclose(rows(r[col]), np.asarray(out[col]), err_msg=col, **tol)


def _p95(res, col="ttft_p95"):
    return res.mean_interval(col)


@pytest.mark.slow  # statistical: the full tier's
def test_random_routing_of_poisson_is_section_7_at_rate_over_n():
    C, rate, K = 4, 24.0, 60
    s = L.Serving(batcher="continuous", n=400, warmup=100, **KW)
    pool = P.simulate(P.RoutedPool(s, cards=C, router="random"), rate, K)
    one = L.simulate(L.Serving(batcher="continuous", n=100, warmup=25, **KW), rate / C, 4 * K, seed=1)
    # Each card sees a Poisson stream at rate/C: its mean wait and utilisation are §7's.
    # The pool's mean wait averages C cards' requests; intervals from the replications.
    for col in ("wait_mean", "ttft_p50", "utilisation"):
        m9, lo9, hi9 = _p95(pool, col)
        m7, lo7, hi7 = _p95(one, col)
        h = math.hypot(hi9 - m9, hi7 - m7)
        assert abs(m9 - m7) <= 1.5 * h + 0.02 * m7, (col, m9, m7, h)


@pytest.mark.slow  # statistical: the full tier's
def test_least_requests_is_no_worse_than_random():
    C, rate, K = 4, 80.0, 40
    s = L.Serving(batcher="continuous", n=400, warmup=100, **KW)
    got = {r: P.simulate(P.RoutedPool(s, cards=C, router=r), rate, K) for r in ("random", "least_requests")}
    lr, rnd = _p95(got["least_requests"]), _p95(got["random"])
    assert lr[0] <= rnd[2], (lr, rnd)


@pytest.mark.parametrize("kw, match", [
    (dict(cards=0), "cards"), (dict(cards=3, speeds=(1, 1)), "speeds"), (dict(cards=2, speeds=(1, 0)), "speeds"),
    (dict(cards=2, speeds=(1, -1)), "speeds"), (dict(cards=2, router="fastest"), "router"),
    (dict(cards=2, speeds=5), "speeds=5"), (dict(cards=1, speeds="x"), r"speeds\[0\]='x'")])
def test_bad_pools_are_refused(kw, match):
    with pytest.raises(ParamError, match=match):
        P.RoutedPool(L.Serving(**KW), **kw)


@pytest.mark.slow
def test_results_do_not_depend_on_the_chunk():
    s = L.Serving(batcher="continuous", n=150, warmup=30, **KW)
    pool = P.RoutedPool(s, cards=3, router="least_tokens", speeds=(1, 0.7, 1.2))
    a = P.simulate(pool, 30.0, 6, chunk=1).samples
    b = P.simulate(pool, 30.0, 6, chunk=3).samples
    np.testing.assert_array_equal(a.to_numpy(), b.to_numpy())


def test_a_pool_too_large_for_its_routing_lists_is_refused():
    with pytest.raises(ParamError, match="cards=4096"):
        P.RoutedPool(L.Serving(n=2**17, **KW), cards=4096)


def test_a_replication_short_for_the_pools_seats_is_named():
    def short(n, warmup, cards=4):  # 16 slots a card: 64 seats
        return P.RoutedPool(L.Serving(n=n, warmup=warmup, max_batch=16, **KW), cards=cards).short_of_seats()

    S = 4 * 16
    assert short(P.TURNOVERS * S, S) is None
    field, value, allowed = short(P.TURNOVERS * S - 1, S)
    assert (field, value) == ("n", P.TURNOVERS * S - 1) and f"at least {P.TURNOVERS * S}" in allowed
    n = 1000  # the fill may take at most 5% of the measured requests: warmup >= 64 - 50
    assert short(n, S - 50) is None and short(n, S - 51)[:2] == ("warmup", S - 51)
    assert short(P.TURNOVERS * 16, 0, cards=1)[0] == "warmup"  # one card too: it is §7's queue
    with pytest.raises(ParamError, match=r"^x\.n=10: must be at least 256 "):
        P.RoutedPool(L.Serving(n=10, warmup=0, max_batch=16, **KW), cards=4).check_seats("x.")


def test_a_pools_load_is_over_the_pools_capacity():  # an SLO rating's load reads it
    pool = P.RoutedPool(L.Serving(**KW), cards=4, speeds=(1, 1, 1, 0.5))
    res = P.PoolResult(pool.serving, 30.0, 1, 0, 95.0, None, {}, pd.DataFrame(), pool=pool)
    assert res.load == pytest.approx(30.0 / (3.5 * pool.serving.capacity_rate()))
