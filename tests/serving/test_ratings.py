"""SLO ratings (SPEC §7 as amended): the SLO-rated tok/s is the SLO rate times the
traffic's mean answer, what the card serves in steady state there; a replication's
own throughput (fill and drain counted) is reported beside it, never a rating. And
the seats rule one card meets as pools do."""

from __future__ import annotations

import math
from functools import partial

import jax
import numpy as np
import pytest

from mc import engine
from mc._validate import ParamError
from mc.serving import RequestLog
from mc.serving import card as card_of
from mc.serving import latency as L
from mc.serving import slo as S


def reference_mean(mean: float, cv: float, cap: int) -> float:
    """``E[clip(ceil X, 1, cap)]``, ``X`` lognormal of mean ``mean`` and coefficient of
    variation ``cv``, summed over its probability mass: ``Σ k·P(clip(ceil X, 1, cap) = k)``."""
    s2 = math.log1p(cv * cv)
    mu, sigma = math.log(mean) - 0.5 * s2, math.sqrt(s2)
    k = np.arange(1, cap + 1, dtype=np.float64)
    cdf = np.array([0.5 * (1 + math.erf((math.log(x) - mu) / (sigma * math.sqrt(2)))) for x in k])  # P(X <= k)
    pmf = np.diff(np.concatenate([[0.0], cdf[:-1], [1.0]]))  # P(ceil X = k), the cut's mass on cap
    return float(pmf @ k)


@partial(jax.jit, static_argnums=(1,))
def _answers(seed, k, p):
    keys = engine.month_keys(seed, np.uint32(0), k)
    return jax.vmap(L.draw, in_axes=(0, None))(keys, p).answer


@pytest.mark.parametrize("mean, cv, cap", [(64.0, 1.5, 512), (3.2, 0.8, 4096), (256.0, 1.0, 4096)])
def test_the_drawn_mean_is_the_length_laws_mean_as_requests_draw_it(mean, cv, cap):
    s = L.Serving("8b", "h100", answer_mean=mean, answer_cv=cv, answer_max=cap, n=4000, warmup=0)
    want = reference_mean(mean, cv, cap)
    assert s.drawn_mean("answer") == pytest.approx(want, rel=1e-9)
    # what the device draws: 32 replications of 4,000 requests, within 4 standard errors
    a = np.asarray(_answers(0, 32, s.params(1.0)), np.float64).ravel()
    assert abs(a.mean() - want) < 4 * a.std() / math.sqrt(a.size)


def test_fixed_and_logged_answers_have_their_own_means():
    assert L.Serving("8b", "h100", answer_mean=63.2, answer_cv=0.0).drawn_mean("answer") == 64.0
    assert L.Serving("8b", "h100", answer_mean=9000.0, answer_cv=0.0, answer_max=100).drawn_mean("answer") == 100.0
    log = RequestLog.of([0.0, 1.0, 2.5, 4.0], [10, 20, 30, 40], [0, 7, 8, 100])
    s = L.Serving("8b", "h100", log=log, n=20, warmup=16)
    assert s.drawn_mean("answer") == pytest.approx((1 + 7 + 8 + 100) / 4)  # an answer of 0 tokens counts as 1


def test_the_rating_is_the_rate_times_the_mean_answer_for_a_card_and_a_pool():
    from mc.serving.routed import RoutedPool

    s = L.Serving("8b", "h100", answer_mean=64.0, answer_cv=1.5, answer_max=512)
    assert S.rated_tok_s(s, 3.5) == pytest.approx(3.5 * reference_mean(64.0, 1.5, 512), rel=1e-9)
    pool = RoutedPool(s, cards=4)
    assert S.rated_tok_s(pool, 14.0) == pytest.approx(14.0 * reference_mean(64.0, 1.5, 512), rel=1e-9)


@pytest.mark.slow
def test_a_long_replication_serves_the_rating_within_its_interval():
    """At the SLO rate a replication long against its drain (40,000 requests, some
    250 s of arrivals against a drain of well under a second) measures the rating
    within the 95% interval of its mean throughput over replications (12 of them:
    1,212.4 tok/s against 1,207.9..1,216.8 when written)."""
    q = dict(batcher="continuous", max_batch=16, prompt_mean=256, prompt_cv=0.0, answer_mean=24, answer_cv=0.5,
             answer_max=96)
    short = L.Serving("8b", "h100", n=400, warmup=64, **q)
    got = S.slo_rate(short, 0.1, share=0.8, replications=16, rel_tol=0.05)
    assert got.tok_s == pytest.approx(got.rate * reference_mean(24, 0.5, 96), rel=1e-6)
    long = L.Serving("8b", "h100", n=40_000, warmup=64, **q)
    res = L.simulate(long, got.rate, 12, seed=3)
    m, lo, hi = res.mean_interval("throughput")
    assert lo <= got.tok_s <= hi, (got.tok_s, m, lo, hi)
    assert (hi - lo) / m < 0.02  # an interval that could miss: under 2% wide


# -- the seats rule, one card ------------------------------------------------------------

def test_one_card_meets_the_seats_rule_pools_do():
    def short(n, warmup):  # 16 slots
        return L.short_of_seats(L.Serving("8b", "h100", max_batch=16, n=n, warmup=warmup))

    assert short(64, 16) is None
    field, value, allowed = short(63, 16)
    assert (field, value) == ("n", 63) and allowed.startswith("must be at least 64 measured requests per "
                                                              "replication, 4 per seat of the card's 16:")
    assert short(100, 11) is None and short(100, 10)[:2] == ("warmup", 10)  # 16 - floor(100/20) = 11
    assert "must be at least 11 with n = 100: an empty card seats its first 16 arrivals at once" in short(100, 10)[2]
    with pytest.raises(ParamError, match=r"^q\.warmup=10: must be at least 11 with n = 100"):
        L.check_seats(L.Serving("8b", "h100", max_batch=16, n=100, warmup=10), "q.")


def test_mc_cards_queue_is_lengthened_to_the_seats_rule_for_a_large_batch():
    small = S.card_queue(card_of("llama-3-8b", "h100", batch=64, context=2048))
    assert (small.n, small.warmup) == (S.CARD_QUEUE["n"], S.CARD_QUEUE["warmup"])
    big = S.card_queue(card_of("llama-3-8b", "h100", batch=200, context=2048))
    assert (big.n, big.warmup) == (800, 160) and L.short_of_seats(big) is None
