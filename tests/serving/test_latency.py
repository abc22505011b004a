"""Serving latency (SPEC §7): the JAX event loop against a step-by-step Python
reference on the same draws, against queueing theory, and its refusals."""

from __future__ import annotations

import math
from functools import partial

import jax
import numpy as np
import pytest

from mc import engine
from mc._validate import ParamError
from mc.serving import latency as L
from mc.serving import slo as S

import ref_latency
from conftest import one_fast


@partial(jax.jit, static_argnums=(1,))
def _requests(seed, k, p):
    keys = engine.month_keys(seed, np.uint32(0), k)
    d = jax.vmap(L.draw, in_axes=(0, None))(keys, p)
    r = jax.vmap(L.requests, in_axes=(0, None))(keys, p)
    f = jax.vmap(L.replication, in_axes=(0, None))(keys, p)
    return d, r, f


def run_both(s: L.Serving, rate: float, k: int, seed: int = 0):
    """The core's requests and figures and the reference's, for replications 0..k-1."""
    p = s.params(rate)
    d, r, f = jax.tree_util.tree_map(np.asarray, _requests(seed, k, p))
    c = ref_latency.constants(p)
    refs = [ref_latency.simulate(d.gap[i], d.prompt[i], d.answer[i], c) for i in range(k)]
    return r, f, refs


def event_times(r, i):
    a = r["arrival"][0][i].astype(np.float64) + r["arrival"][1][i].astype(np.float64)
    return a, a + r["wait"][i], a + r["ttft"][i], a + r["e2e"][i]


CASES = {
    # name: (Serving kwargs, rate req/s)
    "8b-light": (dict(model="8b", gpu="h100", prompt_mean=512, answer_mean=48, answer_max=512), 2.0),
    "8b-busy": (dict(model="8b", gpu="h100", prompt_mean=512, answer_mean=48, answer_max=512), 40.0),
    # 70B in 8-bit on one H100: 7.3 GB beside the weights, so seats bind at long contexts
    "70b-seats": (dict(model="70b", gpu="h100", weight_bytes=1.0, prompt_mean=2048, prompt_max=6000,
                       answer_mean=64, answer_max=2000, max_batch=8), 2.0),
    "one-token-answers": (dict(model="8b", gpu="h200", prompt_mean=700, answer_mean=1, answer_cv=0.0), 20.0),
    # some one-token answers among longer ones, seats binding: a one-token answer leaves at its prefill
    "some-one-token-answers": (dict(model="70b", gpu="h100", weight_bytes=1.0, prompt_mean=2048, prompt_max=6000,
                                    answer_mean=2, answer_cv=1.5, answer_max=50, max_batch=8), 4.0),
    "fixed": (dict(model="llama-3-8b", gpu="b200", prompt_mean=300, prompt_cv=0.0, answer_mean=20,
                   answer_cv=0.0, max_batch=4, max_wait=0.02), 30.0),
}


# The fast tier checks one case with either batcher; make test-all checks every one.
@pytest.mark.parametrize("batcher", one_fast(L.BATCHERS, keep="static"))
@pytest.mark.parametrize("case", one_fast(CASES, keep="70b-seats"))
def test_every_request_agrees_with_the_reference(case, batcher):
    kw, rate = CASES[case]
    s = L.Serving(batcher=batcher, n=150, warmup=30, **kw)
    r, f, refs = run_both(s, rate, 3)
    for i, ref in enumerate(refs):
        a, start, first, finish = event_times(r, i)
        np.testing.assert_allclose(a, ref["arrival"], rtol=1e-11, atol=0)
        # Durations are float32 (relative error ~6e-8 each) on a double-float clock:
        # event times agree to a few float32 ulps of the time itself.
        for got, want in ((start, ref["start"]), (first, ref["first"]), (finish, ref["finish"])):
            np.testing.assert_allclose(got, want, rtol=3e-7, atol=1e-6)
        for col, want in ref["figures"].items():
            np.testing.assert_allclose(f[col][i], want, rtol=2e-5, atol=1e-6, err_msg=col)


@pytest.mark.slow
@pytest.mark.parametrize("batcher", L.BATCHERS)
@pytest.mark.parametrize("rate", [1.0, 6.0, 25.0])
def test_reference_agreement_default_lengths(batcher, rate):
    # the CLI's default lengths (lognormal 1,024 / 256, cv 1) and caps
    s = L.Serving("8b", "h100", batcher=batcher, max_batch=32, n=400, warmup=50)
    r, f, refs = run_both(s, rate, 4, seed=3)
    for i, ref in enumerate(refs):
        a, start, first, finish = event_times(r, i)
        for got, want in ((start, ref["start"]), (first, ref["first"]), (finish, ref["finish"])):
            np.testing.assert_allclose(got, want, rtol=3e-7, atol=1e-6)
        for col, want in ref["figures"].items():
            np.testing.assert_allclose(f[col][i], want, rtol=1e-4, atol=1e-6, err_msg=col)


@pytest.mark.slow
def test_max_batch_one_is_the_same_queue_for_both_batchers():
    kw = dict(model="8b", gpu="h100", prompt_mean=256, answer_mean=16, max_batch=1, n=200, warmup=10)
    rs = [run_both(L.Serving(batcher=b, **kw), 4.0, 2)[0] for b in L.BATCHERS]
    for col in ("wait", "ttft", "e2e"):
        np.testing.assert_array_equal(rs[0][col], rs[1][col])


@pytest.mark.slow
def test_results_do_not_depend_on_the_chunk():
    s = L.Serving("8b", "h100", batcher="continuous", n=200, warmup=20, answer_mean=32)
    a = L.simulate(s, 20.0, 12, seed=5, chunk=12).samples
    b = L.simulate(s, 20.0, 12, seed=5, chunk=5).samples
    np.testing.assert_array_equal(a.to_numpy(), b.to_numpy())


# -- lengths ------------------------------------------------------------------------------

def length_pmf(mu: float, sigma: float, cap: int) -> np.ndarray:
    """P(L = k), k = 1..cap, for L = min(max(ceil(X), 1), cap), X lognormal(mu, sigma)."""
    k = np.arange(1, cap + 1, dtype=np.float64)
    cdf = 0.5 * np.array([math.erfc(-(math.log(x) - mu) / (sigma * math.sqrt(2))) for x in k])
    pmf = np.diff(np.concatenate([[0.0], cdf]))
    pmf[-1] += 1.0 - cdf[-1]
    return pmf


@pytest.mark.slow
def test_lengths_follow_the_rounded_lognormal():
    s = L.Serving("8b", "h100", prompt_mean=300, prompt_cv=1.5, prompt_max=2000, n=4000, warmup=0)
    p = s.params(1.0)
    d, _, _ = jax.tree_util.tree_map(np.asarray, _requests(0, 16, p))
    x = d.prompt.ravel().astype(np.float64)
    pmf = length_pmf(float(p.prompt_mu), float(p.prompt_sigma), s.prompt_max)
    k = np.arange(1, s.prompt_max + 1)
    mean, var = float(pmf @ k), float(pmf @ k**2) - float(pmf @ k) ** 2
    assert abs(x.mean() - mean) < engine.Z95 * math.sqrt(var / x.size)
    assert x.min() >= 1 and x.max() <= s.prompt_max
    # the share at the cap matches P(X > cap - 1)
    share, want = float(np.mean(x == s.prompt_max)), pmf[-1]
    assert abs(share - want) < engine.Z95 * math.sqrt(want * (1 - want) / x.size) + 1e-12
    # gaps: unit exponentials
    g = d.gap.ravel().astype(np.float64)
    assert abs(g.mean() - 1.0) < engine.Z95 / math.sqrt(g.size)


@pytest.mark.slow
def test_fixed_lengths_are_ceil_of_the_mean():
    s = L.Serving("8b", "h100", prompt_mean=99.2, prompt_cv=0.0, answer_mean=7, answer_cv=0.0, n=50, warmup=0)
    d, _, _ = jax.tree_util.tree_map(np.asarray, _requests(0, 2, s.params(1.0)))
    assert (d.prompt == 100).all() and (d.answer == 7).all()


# -- queueing theory ----------------------------------------------------------------------

def service_moments(s: L.Serving, p) -> tuple[float, float]:
    """E[S], E[S²] of one request served alone (max_batch = 1), exactly over the
    rounded lognormal lengths: S = prefill + its L_out − 1 decode steps."""
    c = ref_latency.constants(p)

    def pmf(what):
        if getattr(s, f"{what}_cv") == 0:
            k = np.array([s.longest(what)], np.float64)
            return k, np.ones(1)
        mu, sigma = float(getattr(p, f"{what}_mu")), float(getattr(p, f"{what}_sigma"))
        cap = getattr(s, f"{what}_max")
        return np.arange(1, cap + 1, dtype=np.float64), length_pmf(mu, sigma, cap)

    a, pa = pmf("prompt")
    b, pb = pmf("answer")
    A, Bv = np.meshgrid(a, b, indexing="ij")
    S = c["prefill_token"] * A + (Bv - 1) * (c["step_base"] + c["step_kv"] * A) + c["step_kv"] * (Bv - 1) * Bv / 2
    w = np.outer(pa, pb)
    return float(np.sum(w * S)), float(np.sum(w * S * S))


def pollaczek_khinchine(rate: float, m1: float, m2: float) -> float:
    rho = rate * m1
    return rate * m2 / (2 * (1 - rho))


QUEUES = {
    "M/G/1": dict(prompt_mean=256, prompt_cv=1.0, prompt_max=2048, answer_mean=32, answer_cv=1.0, answer_max=512),
    "M/D/1": dict(prompt_mean=256, prompt_cv=0.0, answer_mean=32, answer_cv=0.0),
}


# Every queue and load under the static batcher; the continuous batcher (the same
# M/G/1 queue at max_batch = 1, and about 4x dearer a replication) on M/G/1.
PK_CASES = [(q, rho, "static") for q in QUEUES for rho in (0.3, 0.6, 0.9)] + \
           [("M/G/1", rho, "continuous") for rho in (0.3, 0.6, 0.9)]


@pytest.mark.slow
@pytest.mark.parametrize("queue,rho,batcher", PK_CASES)
def test_mean_wait_matches_pollaczek_khinchine(queue, rho, batcher):
    s = L.Serving("8b", "h100", batcher=batcher, max_batch=1, max_wait=0.5, n=10_000, warmup=2_500,
                  **QUEUES[queue])
    m1, m2 = service_moments(s, s.params(1.0))
    rate = rho / m1
    want = pollaczek_khinchine(float(np.float32(rate)), m1, m2)
    res = L.simulate(s, rate, 200, seed=11)
    mean, lo, hi = res.mean_interval("wait_mean")
    assert lo <= want <= hi, (queue, rho, batcher, want, mean, lo, hi)
    # and the busy share is rho, within its own interval
    _, ulo, uhi = res.mean_interval("utilisation")
    assert ulo <= float(np.float32(rate)) * m1 <= uhi


@pytest.mark.slow
def test_mean_wait_pollaczek_khinchine_quick():
    # the fast tier's version: M/G/1 at rho = 0.6 with fewer requests
    s = L.Serving("8b", "h100", max_batch=1, n=4_000, warmup=1_000, **QUEUES["M/G/1"])
    m1, m2 = service_moments(s, s.params(1.0))
    rate = 0.6 / m1
    res = L.simulate(s, rate, 64, seed=2)
    _, lo, hi = res.mean_interval("wait_mean")
    assert lo <= pollaczek_khinchine(float(np.float32(rate)), m1, m2) <= hi


# -- SLO rate ----------------------------------------------------------------------------

@pytest.mark.slow
def test_slo_rate_is_the_crossings_quantile():
    s = L.Serving("8b", "h100", batcher="continuous", max_batch=32, answer_mean=64, n=300, warmup=50)
    got = S.slo_rate(s, 0.2, percentile=95, share=0.8, replications=24, rel_tol=0.05)
    from mc.serving import search

    c = np.log(got.crossings)
    assert got.rate == pytest.approx(math.exp(search.quantile(c, 0.2)[0]), rel=1e-6)
    assert got.rate_lo <= got.rate <= got.rate_hi
    # about 80% of replications cross above it (the Harrell-Davis weights span a few ranks)
    assert abs(np.mean(got.crossings > got.rate) - 0.8) <= 3 / 24
    # rates are tried on the grid capacity · 2^(k/15) only
    k = np.log([t["rate"] / s.capacity_rate() for t in got.tried]) / math.log(2) * 15
    np.testing.assert_allclose(k, np.round(k), atol=1e-6)
    assert got.tried[0]["share"] == 1.0 and got.tried[-1]["share"] == 0.0
    # the rating is the rate times the mean answer (SPEC §7); the run's throughput is reported beside it
    assert got.tok_s == pytest.approx(got.rate * s.drawn_mean("answer"), rel=1e-9)
    assert got.throughput == pytest.approx(got.result.median("throughput"))
    assert got.tokens_per_dollar(3.0) == pytest.approx(got.tok_s * 1200.0)


def test_an_slo_no_rate_meets_is_refused_with_the_lowest_rate_tried():
    # a 4,000-token prompt alone takes 2 · 70e9 · 4000 / (989e12 · 0.5) = 1.13 s to prefill
    s = L.Serving("70b", "h200", weight_bytes=1.0, prompt_mean=4000, prompt_cv=0.0, answer_mean=8, answer_cv=0.0, n=50, warmup=5)
    with pytest.raises(ParamError, match=r"slo_ttft=0.5: no rate meets it: p95 TTFT is 1.1\d* s .* lowest rate"):
        S.slo_rate(s, 0.5, replications=4)


# -- bad input ----------------------------------------------------------------------------

@pytest.mark.parametrize("kw, match", [
    (dict(max_batch=0), "max_batch=0"),
    (dict(max_batch=2.5), "max_batch=2.5"),
    (dict(max_wait=-1.0), "max_wait=-1.0"),
    (dict(max_wait=math.inf), "max_wait=inf"),
    (dict(prompt_mean=0.0), "prompt_mean=0.0"),
    (dict(prompt_mean=math.nan), "prompt_mean=nan"),
    (dict(answer_cv=-0.1), "answer_cv=-0.1"),
    (dict(answer_max=0), "answer_max=0"),
    (dict(batcher="greedy"), "batcher='greedy': must be one of static, continuous"),
    (dict(n=0), "n=0"),
    (dict(prefill_util=0.0), "prefill_util=0.0"),
    (dict(gpu="tpu"), "gpu='tpu'"),
    (dict(model="70b"), "weight_bytes=2.0: 70b weights take"),
])
def test_bad_fields_are_refused(kw, match):
    base = dict(model="8b", gpu="h100")
    with pytest.raises(ParamError, match=match):
        L.Serving(**{**base, **kw})


def test_a_request_that_cannot_be_seated_is_refused_with_the_numbers():
    # 70B in 8-bit on one H100: 0.9 · 80 GiB − 70e9 = 7,309,411,328 bytes free; 327,680 bytes
    # per token hold 22,306 tokens; 20,000 + 4,096 do not fit
    with pytest.raises(ParamError, match=r"prompt_max=20000: a request of 24,096 tokens .* leaves no seat"
                                         r".*22,306 tokens"):
        L.Serving("70b", "h100", weight_bytes=1.0, prompt_max=20_000)


@pytest.mark.parametrize("rate", [0.0, -1.0, math.inf, math.nan, 1e12])
def test_bad_rates_are_refused(rate):
    with pytest.raises(ParamError, match="rate="):
        L.Serving("8b", "h100").params(rate)


@pytest.mark.parametrize("kw", [dict(slo_ttft=0.0), dict(slo_ttft=math.inf), dict(percentile=100.0),
                                dict(percentile=0.0), dict(share=0.0), dict(share=1.5),
                                dict(rel_tol=1e-4), dict(rel_tol=2.0)])
def test_bad_slo_fields_are_refused(kw):
    args = {"slo_ttft": 0.5, **kw}
    with pytest.raises(ParamError):
        S.slo_rate(L.Serving("8b", "h100", n=10, warmup=0), args.pop("slo_ttft"), replications=2, **args)


def test_constants_are_section_5s():
    from mc import serving
    s = L.Serving("llama-3-70b", "b200", kv_bytes=1.0)
    c = serving.card("llama-3-70b", "b200", kv_bytes_per_element=1.0, batch=1, context=0, prompt=1)
    k = s.constants()
    assert k["step_base"] == pytest.approx(c.step_s, rel=1e-12)
    assert k["prefill_token"] == pytest.approx(c.ttft_s, rel=1e-12)
    assert k["step_kv"] * 1000 == pytest.approx(
        serving.step_seconds(c.weight_bytes, 1, 1000, c.kv_bytes_per_token, 8.0e12) - c.step_s, rel=1e-9)
    assert s.kv_tokens == math.floor((c.usable_bytes - c.weight_bytes) / c.kv_bytes_per_token)
