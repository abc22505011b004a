"""A replica of several cards as one queue (SPEC §11, §7, §9): its step and prefill
times against the arithmetic, the JAX loop against the step-by-step references with
the all-reduce terms, and a pool of replicas paced by each replica's slowest card."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mc import engine, serving
from mc.serving import catalogue
from mc.serving import latency as L
from mc.serving import routed as P

import ref_latency
import ref_pool
from conftest import one_fast

# Llama-3-70B in 16-bit: two H100s at the least
KW = dict(model="llama-3-70b", gpu="h100", tp=2, prompt_mean=1024, prompt_max=4000, answer_mean=48,
          answer_max=400, max_batch=8)


@pytest.mark.parametrize("tp", [2, 4, 8, 16])
def test_queue_constants_are_the_replicas_arithmetic(tp):
    s = L.Serving("llama-3-70b", "h100", tp=tp)
    k = s.constants()
    m, g = catalogue.model("llama-3-70b"), catalogue.gpu("h100")
    ring = 2 * m.layers * 2 * (tp - 1) / tp * m.hidden * 2 / g.link_bandwidth
    assert k["step_req"] == pytest.approx(ring, rel=1e-14)
    assert k["prefill_base"] == pytest.approx(2 * m.layers * g.link_latency, rel=1e-14)
    # one request, no context: the card's step; one prompt token: its prefill
    c = serving.card("llama-3-70b", "h100", tp=tp, batch=1, context=0, prompt=1)
    assert k["step_base"] + k["step_req"] == pytest.approx(c.step_s, rel=1e-13)
    assert k["prefill_base"] + k["prefill_token"] == pytest.approx(c.ttft_s, rel=1e-13)
    # B requests of X tokens of context each: the card's step at that batch and context
    c = serving.card("llama-3-70b", "h100", tp=tp, batch=5, context=3000, prompt=700)
    assert k["step_base"] + 5 * (k["step_req"] + 3000 * k["step_kv"]) == pytest.approx(c.step_s, rel=1e-13)
    assert k["prefill_base"] + 700 * k["prefill_token"] == pytest.approx(c.ttft_s, rel=1e-13)
    assert s.kv_tokens == int((c.usable_bytes - c.weight_bytes_per_card) // c.kv_bytes_per_token)


def test_replica_capacity_counts_its_all_reduces():
    one, two = L.Serving("70b", "h200", weight_bytes=1.0), L.Serving("70b", "h200", weight_bytes=1.0, tp=2)
    c = two.constants()
    lin, lout, b = two.mean_length("prompt"), two.mean_length("answer"), two.slots
    step = c["step_base"] + c["step_kv"] * b * (lin + 0.5 * lout) + c["step_req"] * b
    want = 1.0 / (c["prefill_token"] * lin + c["prefill_base"] / b + (lout - 1.0) * step / b)
    assert two.capacity_rate() == pytest.approx(want, rel=1e-14)
    assert one.capacity_rate() < two.capacity_rate() < 2 * one.capacity_rate()


@partial(jax.jit, static_argnums=(1,))
def _requests(seed, k, p):
    keys = engine.month_keys(seed, np.uint32(0), k)
    return jax.vmap(L.draw, in_axes=(0, None))(keys, p), jax.vmap(L.requests, in_axes=(0, None))(keys, p)


@pytest.mark.parametrize("batcher", one_fast(L.BATCHERS, keep="continuous"))
def test_replica_queue_agrees_with_the_reference(batcher):
    s = L.Serving(batcher=batcher, n=120, warmup=20, **KW)
    p = s.params(3.0)
    assert p.step_req > 0 and p.prefill_base > 0 and p.tp == 2
    d, r = jax.tree_util.tree_map(np.asarray, _requests(0, 2, p))
    c = ref_latency.constants(p)
    for i in range(2):
        ref = ref_latency.simulate(d.gap[i], d.prompt[i], d.answer[i], c)
        a = r["arrival"][0][i].astype(np.float64) + r["arrival"][1][i].astype(np.float64)
        for got, want in ((a + r["wait"][i], ref["start"]), (a + r["ttft"][i], ref["first"]),
                          (a + r["e2e"][i], ref["finish"])):
            np.testing.assert_allclose(got, want, rtol=3e-7, atol=1e-6)
    # the reference without the all-reduce terms is another queue: the terms are felt
    c0 = {**c, "step_req": 0.0, "prefill_base": 0.0}
    ref0 = ref_latency.simulate(d.gap[0], d.prompt[0], d.answer[0], c0)
    assert np.nanmean(ref0["finish"] - ref0["arrival"]) < np.nanmean(r["e2e"][0]) - 1e-3


@dataclass(frozen=True)
class Fixed:
    """A lottery drawing the same factors every replication: card i gets ``f[i]``."""

    f: tuple

    def __call__(self, key, cards):
        return jnp.asarray(self.f[:cards], jnp.float32)


def test_a_replica_runs_at_its_slowest_cards_factor():
    s = L.Serving(n=40, warmup=10, **KW)
    members = (1.0, 0.9, 0.6, 1.2, 1.1, 1.05)  # three replicas of two cards
    pool = P.RoutedPool(s, cards=3, lottery=Fixed(members))
    pp = pool.params(2.0)
    got = np.asarray(P.speeds_of(jax.random.key(0), pp))
    np.testing.assert_array_equal(got, np.float32([0.9, 0.6, 1.05]))
    one = P.RoutedPool(L.Serving(n=40, warmup=10, **{**KW, "tp": 4}), cards=1, lottery=Fixed(members))
    assert np.asarray(P.speeds_of(jax.random.key(0), one.params(2.0))).tolist() == [np.float32(0.6)]


@pytest.mark.slow
@pytest.mark.parametrize("batcher", L.BATCHERS)
def test_pool_of_replicas_agrees_with_the_event_simulator(batcher):
    s = L.Serving(batcher=batcher, n=150, warmup=0, **KW)
    speeds = (1.0, 0.7)  # each replica's slowest card's factor
    pool = P.RoutedPool(s, cards=2, router="least_requests", speeds=speeds)
    pp = pool.params(4.0)
    key = engine.month_keys(0, np.uint32(0), 1)[0]
    r = jax.tree_util.tree_map(np.asarray, jax.jit(P.requests)(key, pp))
    p = pp.queue
    from mc.kernels.random import uniforms
    u = np.asarray(uniforms(jax.random.fold_in(key, P.ROUTE_STREAM), (p.n + p.warmup,)))
    consts = [dict({k: float(np.float32(getattr(p, k)) / np.float32(f)) for k in P.TIMES},
                   max_batch=int(p.max_batch), max_wait=float(np.float32(p.max_wait)), kv_tokens=int(p.kv_tokens))
              for f in speeds]
    a = r["arrival"][0].astype(np.float64) + r["arrival"][1].astype(np.float64)
    ref = ref_pool.simulate(a, r["prompt"], r["answer"], u, consts, "least_requests", batcher)
    np.testing.assert_array_equal(r["card"], ref["card"])
    for got, want in ((a + r["wait"], ref["start"]), (a + r["ttft"], ref["first"]), (a + r["e2e"], ref["finish"])):
        np.testing.assert_allclose(got, want, rtol=3e-7, atol=2e-6)
