"""The SLO rate (SPEC §7, §7.1): the highest arrival rate whose TTFT percentile meets
a service level with a target probability over replications.

The draws of a replication do not depend on the rate: Poisson and gamma gaps are
drawn at rate 1 and scaled by ``1/rate``; a log's blocks are drawn in log time
and compressed by ``rate / log_rate``. A replication's percentile is monotone in
the rate in law but not path by path, so the rate is found by
``mc.serving.search`` (a fixed grid of rates, each replication's own crossing,
a smooth quantile of the crossings), never by counting passing replications.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .. import _validate as v
from .._fields import Field
from ..engine import figure
from .arithmetic import Card
from .latency import (FILL_SHARE, REPLICATIONS, TURNOVERS, LatencyResult, check_replications, check_seats,
                      simulate)
from .queue import PERCENTILE, RATE, SLO_TTFT, Serving
from .routed import RoutedPool
from .routed import simulate as simulate_pool
from .search import search


@dataclass
class SLORating:
    """The highest rate meeting an SLO and what the card does there.

    ``rate``: requests/s; ``tok_s``: the SLO-rated tok/s, ``rated_tok_s(rate)``
    (the rate times the traffic's mean answer); ``throughput``: the run's median
    measured throughput at that rate (fill and drain counted: reported, never a
    rating); ``result``: the run at ``rate``; ``tried``: every rate tried,
    ascending, with the smoothed share of replications meeting the SLO and the
    median percentile (``mc.serving.search.Crossing``); ``rate_lo``, ``rate_hi``:
    the rate's 95% interval over replications; ``crossings``: (K,) each
    replication's own crossing rate, requests/s.
    """

    rate: float
    tok_s: float
    throughput: float
    slo_ttft: float
    percentile: float
    share: float
    result: LatencyResult
    tried: list[dict]
    rate_lo: float = math.nan
    rate_hi: float = math.nan
    crossings: np.ndarray = field(default=None, repr=False)

    @property
    def load(self) -> float:
        """The offered load at the SLO rate."""
        return self.result.load

    def tokens_per_dollar(self, hourly_price: float) -> float:
        return self.tok_s * 3600.0 / v.positive("price_per_hour", hourly_price)


# The SLO search's fields (a pool entry's ``rated_from = "slo"`` and ``mc latency --slo``
# name them so); ``replications``: ``latency.check_replications``, default 100 here.
SEARCH = {
    "slo_ttft": SLO_TTFT,
    "percentile": PERCENTILE,
    "share": Field(0.9, lo=0.0, hi=1.0, lo_open=True, unit="share of replications",
                   doc="the probability over replications with which the SLO must hold"),
    "replications": REPLICATIONS,
    "seed": Field(0, lo=0, kind="integer", doc="seed of the replications"),
    "rel_tol": Field(0.05, lo=1e-3, hi=1.0, unit="ratio", doc="the SLO search's rate grid: largest step ratio less one"),
}


def rated_tok_s(s: Serving | RoutedPool, rate: float) -> float:
    """The SLO-rated tok/s at the SLO rate ``rate`` requests/s (SPEC §7): ``rate``
    times the traffic's mean answer tokens (``Serving.drawn_mean``: the length law's
    mean as drawn, or a log's mean over its rows), what the card (or the pool, at
    the pool's rate) serves in steady state at that rate. The one place a rating is
    made: a replication's own throughput counts its fill and its drain after the
    last arrival, which a short replication overweights."""
    serving = s.serving if isinstance(s, RoutedPool) else v.instance("s", s, Serving, "a Serving or RoutedPool")
    return RATE.check("rate", rate) * serving.drawn_mean("answer")


def check_slo(slo_ttft: float, percentile: float = SEARCH["percentile"].default,
              share: float = SEARCH["share"].default,
              rel_tol: float = SEARCH["rel_tol"].default) -> tuple[float, float, float, float]:
    """The SLO search's fields, validated against ``SEARCH`` (one-line ``ParamError``s):
    ``slo_ttft`` s in (0, 1e6], ``percentile`` in (0, 100), ``share`` in (0, 1],
    ``rel_tol`` (the rate grid's step) in [0.001, 1]."""
    return tuple(SEARCH[f].check(f, x) for f, x in (("slo_ttft", slo_ttft), ("percentile", percentile),
                                                      ("share", share), ("rel_tol", rel_tol)))


def slo_rate(s: Serving | RoutedPool, slo_ttft: float, *, percentile: float = 95.0, share: float = 0.9,
             replications: int | None = None, seed: int = 0, rel_tol: float = 0.05, chunk: int | None = None,
             progress: bool | None = False, log=None) -> SLORating:
    """The highest arrival rate at which percentile ``percentile`` of TTFT is at most
    ``slo_ttft`` with probability ``share`` over replications (SPEC §7), by
    ``mc.serving.search.search`` on the grid ``capacity_rate · 2^(k/G)`` (steps of at
    most ``1 + rel_tol``): each replication's own crossing rate, their ``1 − share``
    quantile (Harrell–Davis) with its 95% interval. Every rate uses the same draws
    (the same seed), so only the gaps' scale changes: for a log, the compression
    factor ``rate / log_rate``. ``replications``: 100 (a replay: one). The
    rating ``tok_s`` is ``rated_tok_s`` at the rate found; the figures (``result``,
    ``throughput``) are a run there. A ``RoutedPool`` (SPEC §9) is searched the same
    way at the pool's rate; ``tok_s`` is then the pool's.

    Raises:
        ParamError: bad SLO fields, or an SLO no rate tried meets (the message gives
        the percentile at the lowest rate tried).
        KeyboardInterrupt: a run was stopped by Ctrl-C (the search does not go on
        with a partial run).
    """
    target, simulate_at = s, simulate
    if isinstance(s, RoutedPool):
        s, simulate_at = s.serving, (lambda _, *a, **k: simulate_pool(target, *a, **k))
    v.instance("s", s, Serving, "a Serving")
    slo_ttft, percentile, share, rel_tol = check_slo(slo_ttft, percentile, share, rel_tol)
    replications = check_replications(s, replications, default=100)
    progress = v.progress("progress", progress)
    if log is not None and not callable(log):
        raise TypeError(f"log must be a function of one str (e.g. print) or None, not {type(log).__name__}")

    def run(rate: float) -> LatencyResult:
        r = simulate_at(s, rate, replications, seed=seed, percentile=percentile, slo_ttft=slo_ttft,
                     chunk=chunk, progress=progress)
        if r.summary.get("partial") or r.summary.get("interrupted"):  # Ctrl-C: stop the search, not just the run
            raise KeyboardInterrupt
        return r

    def quantiles(rate: float) -> np.ndarray:
        return run(rate).samples["ttft_q"].to_numpy(np.float64)

    got = search(quantiles, slo_ttft, start=target.capacity_rate(), share=share, rel_tol=rel_tol,
                 what=f"p{percentile:g} TTFT", of="s", unit="req/s", field="slo_ttft", log=log)
    best = run(got.rate)
    return SLORating(rate=best.rate, tok_s=rated_tok_s(target, best.rate), throughput=best.median("throughput"),
                     slo_ttft=slo_ttft, percentile=percentile,
                     share=share, result=best, tried=got.tried, rate_lo=got.lo, rate_hi=got.hi,
                     crossings=got.crossings)


# The queue the SLO-rated figure assumes: the card's own requests (fixed prompt and
# answer = context - prompt), Poisson arrivals, a continuous batcher of the card's batch,
# at least ``n`` requests after ``warmup`` (more for a batch whose seats need more:
# ``latency.short_of_seats``).
CARD_QUEUE = dict(batcher="continuous", prompt_cv=0.0, answer_cv=0.0, n=300, warmup=50)
CARD_SEARCH = dict(percentile=95.0, share=0.9, replications=24, rel_tol=0.05)


def card_queue(c: Card) -> Serving:
    """The queue ``card_rating`` searches for card ``c``: ``CARD_QUEUE`` with the
    card's model, GPU, cards per replica, batch and lengths, its replication lengthened to the seats
    rule (``latency.short_of_seats``) where the batch needs it."""
    prompt, answer = max(c.prompt, 1), max(c.context - c.prompt, 1)
    kw = dict(max_batch=c.batch, prompt_mean=prompt, answer_mean=answer, prompt_max=prompt, answer_max=answer,
              weight_bytes=c.weight_bytes_per_param, kv_bytes=c.kv_bytes_per_element, mem_util=c.mem_util,
              prefill_util=c.prefill_util, tp=c.tp)
    s = Serving(c.model, c.gpu, **{**CARD_QUEUE, **kw})
    n = max(s.n, TURNOVERS * s.slots)
    warmup = max(s.warmup, s.slots - math.floor(FILL_SHARE * n))
    if (n, warmup) != (s.n, s.warmup):
        s = Serving(c.model, c.gpu, **{**CARD_QUEUE, **kw, "n": n, "warmup": warmup})
    check_seats(s)  # the rule's own check: what is searched meets it
    return s


def card_rating(c: Card, slo_ttft: float) -> dict:
    """``mc card``'s SLO-rated figure of card ``c``: the highest Poisson rate at which
    p95 TTFT is at most ``slo_ttft`` s with probability 90% over replications
    (``slo_rate``), under a continuous batcher of the card's batch serving its own
    requests (``card_queue``), times its answer tokens; ``{"met": False, "reason"}``
    when no rate meets it. For a replica (``c.tp > 1``) the rating is the replica's,
    with ``tok_s_per_card`` beside it."""
    s = card_queue(c)
    out = {"slo_ttft": slo_ttft, **{k: CARD_SEARCH[k] for k in ("percentile", "share", "replications")},
           "queue": {"arrivals": "poisson", "batcher": "continuous", "max_batch": c.batch,
                     "prompt": s.longest("prompt"), "answer": s.longest("answer"), "n": s.n, "warmup": s.warmup}}
    try:
        got = slo_rate(s, slo_ttft, **CARD_SEARCH)
    except v.ParamError as err:  # an SLO no rate meets is an answer here, not an input error
        return {**out, "met": False, "reason": str(err).split(": ", 1)[-1]}
    per_card = {} if c.tp == 1 else {"tok_s_per_card": figure(got.tok_s / c.tp, units="tok/s")}
    return {**out, "met": True, "rate": figure(got.rate, units="req/s"),
            "tok_s": figure(got.tok_s, units="tok/s"), **per_card, "throughput": figure(got.throughput, units="tok/s"),
            "load": figure(got.load, units="")}


def format_card_rating(r: dict) -> str:
    """``mc card``'s SLO line: a ``card_rating`` and what it assumes."""
    q = r["queue"]
    assumed = (f"p{r['percentile']:g} TTFT <= {r['slo_ttft']:g} s with probability {r['share']:.0%}; Poisson "
               f"arrivals, continuous batcher of {q['max_batch']}, {q['prompt']:,}-token prompts, {q['answer']:,}-token "
               "answers")
    if not r["met"]:
        return f"SLO-rated         none: {r['reason']} ({assumed})"
    card = f" ({r['tok_s_per_card']['value']:,.1f} per card)" if "tok_s_per_card" in r else ""
    return (f"SLO-rated        {r['tok_s']['value']:,.1f} tok/s{card} at {r['rate']['value']:.4g} req/s ({assumed}); "
            f"the aggregate above is every seat busy with no queue")


__all__ = ["CARD_QUEUE", "CARD_SEARCH", "SEARCH", "SLORating", "card_queue", "card_rating", "check_slo",
           "format_card_rating", "rated_tok_s", "slo_rate"]
