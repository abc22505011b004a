"""Arrivals from real traffic (SPEC §7.1): gamma renewals, a log's moving-block
bootstrap and its replay, lengths from a log. The core's draws against the
reference's own construction, its queue against the reference request by request,
gamma with cv = 1 against Poisson in law, and the refusals."""

from __future__ import annotations

import math
from functools import partial
from pathlib import Path

import jax
import numpy as np
import pytest

from mc import engine
from mc._validate import ParamError
from mc.serving import RequestLog
from mc.serving import arrivals as A
from mc.serving import latency as L
from mc.serving import slo as S

import ref_latency
from conftest import one_fast
from test_latency import _requests as _draws  # draws, requests and figures of replications 0..k-1

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "traces" / "azure-conv-2023.csv"


def burst_log(seed: int = 0, span: float = 1200.0) -> RequestLog:
    """A synthetic log with known bursts: a sparse Poisson background (0.5/s) plus,
    every 60 s, 25 requests within 50 ms (one on the very same instant as another)."""
    rng = np.random.default_rng(seed)
    background = np.cumsum(rng.exponential(2.0, size=int(span / 2)))
    background = background[background < span]
    bursts = np.concatenate([t + np.sort(rng.uniform(0, 0.05, 25)) for t in np.arange(30.0, span, 60.0)])
    time = np.concatenate([background, bursts, bursts[:1]])  # a duplicate timestamp
    k = time.size
    return RequestLog.of(time, rng.integers(20, 900, k), rng.integers(0, 200, k), source="bursts")


@partial(jax.jit, static_argnums=(1, 2))
def _offsets(seed, k, blocks, p):
    keys = engine.month_keys(seed, np.uint32(0), k)
    ks = np.arange(blocks, dtype=np.int32)
    return jax.vmap(lambda key: jax.vmap(lambda b: A.block_offset(key, b, p))(ks))(keys)


def agree(r, f, i, ref, fig_rtol=2e-5):
    """The core's replication ``i`` against the reference, request by request."""
    a = r["arrival"][0][i].astype(np.float64) + r["arrival"][1][i].astype(np.float64)
    np.testing.assert_allclose(a, ref["arrival"], rtol=1e-9, atol=2e-6)
    for col, want in (("wait", ref["start"] - ref["arrival"]), ("ttft", ref["first"] - ref["arrival"]),
                      ("e2e", ref["finish"] - ref["arrival"])):
        np.testing.assert_allclose(a + r[col][i], ref["arrival"] + want, rtol=3e-7, atol=3e-6, err_msg=col)
    for col, want in ref["figures"].items():
        np.testing.assert_allclose(f[col][i], want, rtol=fig_rtol, atol=1e-5, err_msg=col)


# -- the bootstrap ------------------------------------------------------------------------

@pytest.mark.parametrize("batcher", one_fast(L.BATCHERS, keep="continuous"))
@pytest.mark.parametrize("block", [600.0, 45.0])
def test_bootstrap_agrees_with_the_reference(batcher, block):
    log = burst_log()
    s = L.Serving("8b", "h100", batcher=batcher, max_batch=16, arrivals="log", log=log, block=block, n=300,
                  warmup=40)
    rate = 2.0 * log.rate  # compressed twice
    p = s.params(rate)
    k = 3
    d, r, f = jax.tree_util.tree_map(np.asarray, _draws(7, k, p))
    offsets = np.asarray(_offsets(7, k, 64, p))
    c = ref_latency.constants(p)
    for i in range(k):
        assert (offsets[i] >= 0).all() and (offsets[i] <= log.span - block).all()
        gap, rows = ref_latency.bootstrap(log.time, offsets[i], block, s.n + s.warmup)
        np.testing.assert_array_equal(d.row[i], rows)
        np.testing.assert_array_equal(d.prompt[i], log.prompt[rows])
        np.testing.assert_array_equal(d.answer[i], log.answer[rows])
        np.testing.assert_allclose(d.gap[i], gap, rtol=2e-7, atol=1e-9)
        agree(r, f, i, ref_latency.simulate(gap, d.prompt[i], d.answer[i], c))


@pytest.mark.slow
def test_bootstrap_keeps_bursts_whole_and_offsets_uniform():
    log = burst_log(span=3000.0)
    s = L.Serving("8b", "h100", arrivals="log", log=log, block=300.0, n=400, warmup=0)
    p = s.params(log.rate)
    offsets = np.asarray(_offsets(1, 64, 8, p)).ravel()
    # open uniforms scaled to [0, span - block]: the mean within its 95% interval
    top = log.span - 300.0
    assert abs(offsets.mean() - top / 2) < engine.Z95 * top / math.sqrt(12 * offsets.size)
    d, r, _ = jax.tree_util.tree_map(np.asarray, _draws(1, 4, p))
    # inside a block consecutive rows keep their log gaps (a burst of 25 in 50 ms stays one)
    for i in range(4):
        same = np.diff(d.row[i]) == 1
        np.testing.assert_allclose(d.gap[i][1:][same], np.diff(log.time)[d.row[i][:-1][same]], rtol=1e-6,
                                   atol=1e-6)


@pytest.mark.slow
def test_bootstrap_does_not_depend_on_the_chunk_or_the_rate_draws():
    log = burst_log()
    s = L.Serving("8b", "h100", batcher="continuous", arrivals="log", log=log, block=120.0, n=200, warmup=20)
    a = L.simulate(s, 3.0, 10, seed=4, chunk=10).samples
    b = L.simulate(s, 3.0, 10, seed=4, chunk=3).samples
    np.testing.assert_array_equal(a.to_numpy(), b.to_numpy())
    # the blocks are drawn in log time: another rate only rescales the arrivals
    p1, p2 = s.params(2.0), s.params(5.0)
    d1, r1, _ = _draws(4, 2, p1)
    d2, r2, _ = _draws(4, 2, p2)
    np.testing.assert_array_equal(np.asarray(d1.row), np.asarray(d2.row))
    np.testing.assert_array_equal(np.asarray(d1.gap), np.asarray(d2.gap))


# -- the replay ---------------------------------------------------------------------------

@pytest.mark.parametrize("batcher", one_fast(L.BATCHERS, keep="static"))
def test_replay_agrees_with_the_reference_on_known_bursts(batcher):
    log = burst_log()
    s = L.Serving("8b", "h100", batcher=batcher, max_batch=8, arrivals="log", log=log, replay=True)
    assert (s.n, s.warmup) == (log.rows, 0)
    for factor in (1.0, 3.0):
        p = s.params(factor * log.rate)
        d, r, f = jax.tree_util.tree_map(np.asarray, _draws(0, 1, p))
        gap = ref_latency.replay(log.time)
        np.testing.assert_allclose(d.gap[0], gap, rtol=2e-7, atol=1e-9)
        ref = ref_latency.simulate(gap, log.prompt, log.answer, ref_latency.constants(p))
        agree(r, f, 0, ref)
        # each burst's 25 requests arrive within 50 ms / factor: the last of them waits for the others
        ttft = r["ttft"][0]
        assert ttft.max() > 5 * np.median(ttft), (ttft.max(), np.median(ttft))


@pytest.mark.slow
@pytest.mark.parametrize("batcher", L.BATCHERS)
def test_replay_of_the_example_log_agrees_with_the_reference(batcher):
    from mc.files import read_request_log

    log = read_request_log(EXAMPLE)
    s = L.Serving("8b", "h100", batcher=batcher, max_batch=64, arrivals="log", log=log, replay=True)
    p = s.params(log.rate)
    d, r, f = jax.tree_util.tree_map(np.asarray, _draws(0, 1, p))
    ref = ref_latency.simulate(ref_latency.replay(log.time), log.prompt, log.answer, ref_latency.constants(p))
    agree(r, f, 0, ref, fig_rtol=1e-4)


def test_replay_is_one_path_and_the_same_for_every_seed():
    log = burst_log()
    s = L.Serving("8b", "h100", arrivals="log", log=log, replay=True, warmup=10)
    a, b = L.simulate(s), L.simulate(s, seed=9)
    assert a.replications == 1 and s.n == log.rows - 10
    np.testing.assert_array_equal(a.samples.to_numpy(np.float64), b.samples.to_numpy(np.float64))
    fig = a.figures()["ttft_p95"]
    assert set(fig) == {"value", "units"} and math.isfinite(fig["value"])


# -- gamma --------------------------------------------------------------------------------

@pytest.mark.slow
def test_gamma_gaps_have_mean_one_and_the_given_cv():
    for cv in (0.5, 3.0):
        s = L.Serving("8b", "h100", arrivals="gamma", cv=cv, n=5000, warmup=0)
        d, _, _ = _draws(0, 8, s.params(1.0))
        g = np.asarray(d.gap, np.float64).ravel()
        # the mean's standard error is cv/sqrt(n); the variance's is wide for cv 3: a loose check
        assert abs(g.mean() - 1.0) < engine.Z95 * cv / math.sqrt(g.size) * 1.5
        assert abs(g.std() / g.mean() - cv) < 0.1 * cv


def test_gamma_gaps_call_no_pow_and_no_reciprocal_square_root():
    """``pow`` goes to the C library and ``rsqrt`` to the CPU's approximation, whose
    last bits differ between machines; the compiled gamma gaps use neither (the
    sampler itself: ``tests/kernels/test_exact.py``)."""
    p = L.Serving("8b", "h100", arrivals="gamma", cv=4.0, n=20, warmup=0).params(1.0)
    text = jax.jit(A.draw).lower(jax.random.key(0), p).compile().as_text()
    assert "gamma" in str(p.arrivals) and "power(" not in text and "rsqrt" not in text


@pytest.mark.slow
def test_gamma_with_cv_one_is_poisson_in_law():
    """Two-sample Kolmogorov–Smirnov on gaps, and the queue's mean wait against the
    Poisson queue's within the two 95% intervals' joint width."""
    n = 4000
    g = L.Serving("8b", "h100", arrivals="gamma", cv=1.0, n=n, warmup=0)
    x = np.sort(np.asarray(_draws(0, 4, g.params(1.0))[0].gap, np.float64).ravel())
    # against the exponential CDF: D_n < 1.36/sqrt(n) at the 95% level
    cdf = 1.0 - np.exp(-x)
    k = np.arange(1, x.size + 1) / x.size
    assert np.max(np.maximum(k - cdf, cdf - (k - 1 / x.size))) < 1.36 / math.sqrt(x.size)
    kw = dict(max_batch=4, prompt_mean=512, answer_mean=64, n=1500, warmup=300)
    a = L.simulate(L.Serving("8b", "h100", arrivals="gamma", **kw), 20.0, 48, seed=1)
    b = L.simulate(L.Serving("8b", "h100", **kw), 20.0, 48, seed=2)
    ma, la, ha = a.mean_interval("wait_mean")
    mb, lb, hb = b.mean_interval("wait_mean")
    assert abs(ma - mb) < math.hypot(ha - la, hb - lb) / 2


@pytest.mark.slow
def test_burstier_gamma_waits_longer():
    kw = dict(batcher="continuous", max_batch=32, answer_mean=64, n=600, warmup=100)
    rate = 0.6 * L.Serving("8b", "h100", **kw).capacity_rate()
    calm = L.simulate(L.Serving("8b", "h100", **kw), rate, 16)
    bursty = L.simulate(L.Serving("8b", "h100", arrivals="gamma", cv=4.0, **kw), rate, 16)
    assert bursty.median("ttft_p95") > 2 * calm.median("ttft_p95")
    assert calm.load == pytest.approx(0.6) and bursty.load == pytest.approx(0.6)


# -- lengths from a log, load and the SLO search ------------------------------------------

@pytest.mark.slow
def test_log_lengths_are_joint_rows_of_the_log():
    log = burst_log()
    s = L.Serving("8b", "h100", lengths="log", log=log, n=3000, warmup=0)
    d, _, _ = jax.tree_util.tree_map(np.asarray, _draws(0, 4, s.params(2.0)))
    np.testing.assert_array_equal(d.prompt, log.prompt[d.row])
    np.testing.assert_array_equal(d.answer, log.answer[d.row])
    counts = np.bincount(d.row.ravel(), minlength=log.rows)
    share = 1.0 / log.rows
    assert abs(counts.mean() / d.row.size - share) < 1e-12
    assert s.capacity_rate() == pytest.approx(L.Serving("8b", "h100", prompt_mean=log.mean("prompt"),
                                                        answer_mean=log.mean("answer")).capacity_rate(), rel=0.3)


@pytest.mark.slow
def test_load_is_rate_over_capacity_and_may_be_given_instead():
    s = L.Serving("8b", "h100", n=100, warmup=10)
    r = L.simulate(s, load=0.5, replications=2)
    assert r.rate == pytest.approx(0.5 * s.capacity_rate(), rel=1e-6)
    assert r.figures()["load"]["value"] == pytest.approx(0.5, rel=1e-6)
    log = burst_log()
    own = L.simulate(L.Serving("8b", "h100", arrivals="log", log=log, block=60.0, n=100, warmup=10),
                     replications=2)
    assert own.rate == pytest.approx(log.rate, rel=1e-6)


@pytest.mark.slow
def test_slo_search_on_a_log_finds_the_crossing_of_the_compression():
    log = burst_log()
    s = L.Serving("8b", "h100", batcher="continuous", max_batch=32, arrivals="log", log=log, block=120.0,
                  n=300, warmup=30)
    got = S.slo_rate(s, 0.5, share=0.8, replications=8, rel_tol=0.1)
    tried = got.tried
    assert tried == sorted(tried, key=lambda t: t["rate"])
    assert tried[0]["share"] == 1.0 and tried[-1]["share"] == 0.0  # bracketed: all pass below, all fail above
    assert tried[0]["rate"] < got.rate < tried[-1]["rate"] and got.rate_lo <= got.rate <= got.rate_hi
    assert got.load == pytest.approx(got.rate / s.capacity_rate())


# -- refusals -----------------------------------------------------------------------------

BAD = {
    "cv zero": (dict(arrivals="gamma", cv=0.0), "cv=0.0"),
    "cv nan": (dict(arrivals="gamma", cv=float("nan")), "cv=nan"),
    "cv without gamma": (dict(cv=2.0), "cv=2.0"),
    "log arrivals without a log": (dict(arrivals="log"), "arrivals='log'"),
    "replay without log arrivals": (dict(replay=True, arrivals="poisson", lengths="log"), "replay=True"),
    "block longer than the log": (dict(arrivals="log", block=1e6), "block=1000000.0"),
    "replay with n": (dict(arrivals="log", replay=True, n=5), "n=5"),
    "lognormal lengths with log arrivals": (dict(arrivals="log", lengths="lognormal"), "lengths='lognormal'"),
    "unknown arrivals": (dict(arrivals="weibull"), "arrivals='weibull'"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_refusals_are_one_line(case):
    kw, head = BAD[case]
    if case != "log arrivals without a log" and (kw.get("arrivals") == "log" or kw.get("lengths") == "log"):
        kw = {"log": burst_log(), **kw}
    with pytest.raises(ParamError) as err:
        L.Serving("8b", "h100", **kw)
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith(head), msg


def test_a_logged_request_that_cannot_be_seated_is_refused():
    log = RequestLog.of([0.0, 1.0], [100, 200_000], [10, 10], source="huge")
    with pytest.raises(ParamError, match=r"^log='huge': a request of 200,010 tokens"):
        L.Serving("70b", "h100", weight_bytes=1.0, lengths="log", log=log)


def test_both_rate_and_load_and_neither_are_refused():
    s = L.Serving("8b", "h100", n=10, warmup=0)
    with pytest.raises(ParamError, match="^load=0.5: and rate were both given"):
        L.simulate(s, 1.0, load=0.5)
    with pytest.raises(ParamError, match="^rate=None"):
        L.simulate(s)
    with pytest.raises(ParamError, match="^replications=5"):
        L.simulate(L.Serving("8b", "h100", arrivals="log", log=burst_log(), replay=True), replications=5)
