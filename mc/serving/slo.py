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
from .latency import LatencyResult, check_replications, simulate
from .queue import Serving
from .search import search


@dataclass
class SLORating:
    """The highest rate meeting an SLO and what the card does there.

    ``rate``: requests/s; ``tok_s``: the median throughput at that rate (the card's
    SLO-rated tok/s); ``result``: the run at ``rate``; ``tried``: every rate tried,
    ascending, with the smoothed share of replications meeting the SLO and the
    median percentile (``mc.serving.search.Crossing``); ``rate_lo``, ``rate_hi``:
    the rate's 95% interval over replications; ``crossings``: (K,) each
    replication's own crossing rate, requests/s.
    """

    rate: float
    tok_s: float
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


def check_slo(slo_ttft: float, percentile: float = 95.0, share: float = 0.9,
              rel_tol: float = 0.05) -> tuple[float, float, float, float]:
    """The SLO search's fields, validated (one-line ``ParamError``s): ``slo_ttft``
    s in (0, 1e6], ``percentile`` in (0, 100), ``share`` in (0, 1], ``rel_tol``
    (the rate grid's step) in [0.001, 1]."""
    return (v.number("slo_ttft", slo_ttft, lo=0.0, lo_open=True, hi=1e6),
            v.number("percentile", percentile, lo=0.0, hi=100.0, lo_open=True, hi_open=True),
            v.number("share", share, lo=0.0, hi=1.0, lo_open=True),
            v.number("rel_tol", rel_tol, lo=1e-3, hi=1.0))


def slo_rate(s: Serving, slo_ttft: float, *, percentile: float = 95.0, share: float = 0.9,
             replications: int | None = None, seed: int = 0, rel_tol: float = 0.05, chunk: int | None = None,
             progress: bool | None = False, log=None) -> SLORating:
    """The highest arrival rate at which percentile ``percentile`` of TTFT is at most
    ``slo_ttft`` with probability ``share`` over replications (SPEC §7), by
    ``mc.serving.search.search`` on the grid ``capacity_rate · 2^(k/G)`` (steps of at
    most ``1 + rel_tol``): each replication's own crossing rate, their ``1 − share``
    quantile (Harrell–Davis) with its 95% interval. Every rate uses the same draws
    (the same seed), so only the gaps' scale changes: for a log, the compression
    factor ``rate / log_rate``. ``replications``: 100 (a replay: one). The
    figures (``tok_s``, ``result``) are a run at the rate found.

    Raises:
        ParamError: bad SLO fields, or an SLO no rate tried meets (the message gives
        the percentile at the lowest rate tried).
        KeyboardInterrupt: a run was stopped by Ctrl-C (the search does not go on
        with a partial run).
    """
    v.instance("s", s, Serving, "a Serving")
    slo_ttft, percentile, share, rel_tol = check_slo(slo_ttft, percentile, share, rel_tol)
    replications = check_replications(s, replications, default=100)
    progress = v.progress("progress", progress)
    if log is not None and not callable(log):
        raise TypeError(f"log must be a function of one str (e.g. print) or None, not {type(log).__name__}")

    def run(rate: float) -> LatencyResult:
        r = simulate(s, rate, replications, seed=seed, percentile=percentile, slo_ttft=slo_ttft,
                     chunk=chunk, progress=progress)
        if r.summary.get("partial") or r.summary.get("interrupted"):  # Ctrl-C: stop the search, not just the run
            raise KeyboardInterrupt
        return r

    def quantiles(rate: float) -> np.ndarray:
        return run(rate).samples["ttft_q"].to_numpy(np.float64)

    got = search(quantiles, slo_ttft, start=s.capacity_rate(), share=share, rel_tol=rel_tol,
                 what=f"p{percentile:g} TTFT", of="s", unit="req/s", field="slo_ttft", log=log)
    best = run(got.rate)
    return SLORating(rate=best.rate, tok_s=best.median("throughput"), slo_ttft=slo_ttft, percentile=percentile,
                     share=share, result=best, tried=got.tried, rate_lo=got.lo, rate_hi=got.hi,
                     crossings=got.crossings)


__all__ = ["SLORating", "check_slo", "slo_rate"]
