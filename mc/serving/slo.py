"""The SLO rate (SPEC §7, §7.1): the highest arrival rate whose TTFT percentile meets
a service level, by bisection over the same draws at every rate.

The draws of a replication do not depend on the rate: Poisson and gamma gaps are
drawn at rate 1 and scaled by ``1/rate``; a log's blocks are drawn in log time
and compressed by ``rate / log_rate``. So the search is monotone in the rate (for
a log, in the compression factor).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .. import _validate as v
from .._fields import Field
from .latency import REPLICATIONS, LatencyResult, check_replications, simulate
from .queue import PERCENTILE, SLO_TTFT, Serving
from .routed import RoutedPool
from .routed import simulate as simulate_pool


@dataclass
class SLORating:
    """The highest rate meeting an SLO and what the card does there.

    ``rate``: requests/s; ``tok_s``: the median throughput at that rate (the card's
    SLO-rated tok/s); ``result``: the run at ``rate``; ``tried``: every rate tried
    with the share of replications meeting the SLO and the median percentile.
    """

    rate: float
    tok_s: float
    slo_ttft: float
    percentile: float
    share: float
    result: LatencyResult
    tried: list[dict]

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
    "share": Field(0.9, lo=0.0, hi=1.0, lo_open=True, unit="share of replications", doc="how often the SLO must hold"),
    "replications": REPLICATIONS,
    "seed": Field(0, lo=0, kind="integer", doc="seed of the replications"),
    "rel_tol": Field(0.01, lo=1e-6, hi=1.0, unit="ratio", doc="the rate search's relative tolerance"),
}


def check_slo(slo_ttft: float, percentile: float = SEARCH["percentile"].default,
              share: float = SEARCH["share"].default,
              rel_tol: float = SEARCH["rel_tol"].default) -> tuple[float, float, float, float]:
    """The SLO search's fields, validated against ``SEARCH`` (one-line ``ParamError``s):
    ``slo_ttft`` s in (0, 1e6], ``percentile`` in (0, 100), ``share`` in (0, 1],
    ``rel_tol`` in [1e-6, 1]."""
    return tuple(SEARCH[f].check(f, x) for f, x in (("slo_ttft", slo_ttft), ("percentile", percentile),
                                                      ("share", share), ("rel_tol", rel_tol)))


def slo_rate(s: Serving | RoutedPool, slo_ttft: float, *, percentile: float = 95.0, share: float = 0.9,
             replications: int | None = None, seed: int = 0, rel_tol: float = 0.01, chunk: int | None = None,
             progress: bool | None = False, log=None) -> SLORating:
    """The highest arrival rate at which percentile ``percentile`` of TTFT is at most
    ``slo_ttft`` in at least ``share`` of replications (SPEC §7), by bisection in
    log-rate to ``rel_tol``. Every rate uses the same draws (the same seed), so
    only the gaps' scale changes: for a log, the compression factor ``rate /
    log_rate``. ``replications``: 100 (a replay: one). A ``RoutedPool`` (SPEC §9)
    is searched the same way at the pool's rate; ``tok_s`` is then the pool's.

    The search starts at ``Serving.capacity_rate``, doubles while the SLO holds and
    halves (at most 16 times) until it does.

    Raises:
        ParamError: bad SLO fields, or an SLO no rate tried meets (the message gives
        the percentile at the lowest rate tried).
        KeyboardInterrupt: a run was stopped by Ctrl-C (the search does not go on
        with a partial run).
    """
    target = s
    if isinstance(s, RoutedPool):
        s, run = s.serving, (lambda _, *a, **k: simulate_pool(target, *a, **k))
    else:
        run = simulate
    v.instance("s", s, Serving, "a Serving")
    slo_ttft, percentile, share, rel_tol = check_slo(slo_ttft, percentile, share, rel_tol)
    replications = check_replications(s, replications, default=100)
    progress = v.progress("progress", progress)
    if log is not None and not callable(log):
        raise TypeError(f"log must be a function of one str (e.g. print) or None, not {type(log).__name__}")
    tried: list[dict] = []
    runs: dict[float, LatencyResult] = {}

    def meets(rate: float) -> bool:
        r = run(s, rate, replications, seed=seed, percentile=percentile, slo_ttft=slo_ttft,
                     chunk=chunk, progress=progress)
        if r.summary.get("partial") or r.summary.get("interrupted"):  # Ctrl-C: stop the search, not just the run
            raise KeyboardInterrupt
        runs[rate] = r
        got = r.summary["pass"]["slo"]["rate"]
        row = {"rate": r.rate, "share": got, "ttft_q": r.median("ttft_q"), "meets": got >= share}
        tried.append(row)
        if log is not None:
            log(f"rate {rate:.4g} req/s: p{percentile:g} TTFT <= {slo_ttft:g} s in {got:.0%} of replications "
                f"(median {row['ttft_q']:.4g} s)")
        return row["meets"]

    start = target.capacity_rate()
    lo = hi = None
    if meets(start):
        lo = start
        for _ in range(16):
            r = lo * 2
            if not meets(r):
                hi = r
                break
            lo = r
        else:
            v.fail("slo_ttft", slo_ttft, f"is met at every rate tried, up to {lo:.4g} req/s")
    else:
        hi = start
        for _ in range(16):
            r = hi / 2
            if meets(r):
                lo = r
                break
            hi = r
        else:
            low = tried[-1]
            v.fail("slo_ttft", slo_ttft, f"no rate meets it: p{percentile:g} TTFT is {low['ttft_q']:.4g} s "
                   f"(median) at the lowest rate tried, {low['rate']:.4g} req/s")
    while hi / lo > 1 + rel_tol:
        mid = math.sqrt(lo * hi)
        if meets(mid):
            lo = mid
        else:
            hi = mid
    best = runs[lo]
    return SLORating(rate=best.rate, tok_s=best.median("throughput"), slo_ttft=slo_ttft, percentile=percentile,
                     share=share, result=best, tried=tried)


__all__ = ["SLORating", "check_slo", "slo_rate"]
