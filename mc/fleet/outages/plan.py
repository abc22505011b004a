"""What fixes a §10 month's shapes (static): which terms run, each spot slot's zone,
and how many candidate events each slot and zone holds.

Every event stream is a fixed-length array of exponential gaps; its length is the
smallest count whose Poisson tail is below ``TAIL`` (``cap``), so a month that
would need more is rarer than once in 10^12 slot-months. At the cap the stream
simply ends: later events of that kind do not happen in that month.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ...units import HOURS

TAIL = 1e-12  # the chance, per slot or zone and month, that a stream is cut short


def _log_pmf(k: int, mean: float) -> float:
    return k * math.log(mean) - mean - math.lgamma(k + 1)


def tail(n: int, mean: float) -> float:
    """``P(Poisson(mean) > n)``, summed term by term (exact to float64 in the tail)."""
    if mean <= 0:
        return 0.0
    total, k = 0.0, max(n + 1, 0)
    while True:
        term = math.exp(_log_pmf(k, mean))
        total += term
        if k > mean and term < total * 1e-17:
            return total
        k += 1


def cap(mean: float, eps: float = TAIL) -> int:
    """The smallest ``n`` with ``P(Poisson(mean) > n) < eps`` (0 for a zero mean)."""
    if mean <= 0:
        return 0
    n = int(math.floor(mean))
    while tail(n, mean) >= eps:
        n += max(1, int(math.sqrt(mean) / 8))
    while n > 0 and tail(n - 1, mean) < eps:
        n -= 1
    return n


class Static(NamedTuple):
    """A §10 month's static shape."""

    failures: bool  # failures.rate > 0
    spot: tuple[bool, ...]  # (pool,) a slot of a spot class
    zone_of: tuple[int, ...]  # (pool,) its zone (spot slots round-robin in pool order; 0 for on-demand)
    zones: int
    n_fail: int  # failure candidates per slot
    n_lone: int  # lone preemption candidates per slot (0 without spot)
    n_cycles: int  # up/down cycles per zone (0 without spot): 2·n_cycles spells
    failover: bool

    @property
    def any_spot(self) -> bool:
        return any(self.spot)


def spot_caps(spot) -> tuple[int, int]:
    """``(n_lone, n_cycles)``: lone preemption candidates per spot card and up/down
    cycles per zone, from concrete ``[spot]`` fields (§4's spot cards use them too)."""
    # Up spells end as a Poisson process in the zone's time up (at most 730 h), and
    # down spells likewise in its time down; spells alternate, so the spells of
    # either state begun in the month number at most 2 + the fewer completed.
    return cap(float(spot.rate)), 2 + min(cap(HOURS / float(spot.up_hours)), cap(HOURS / float(spot.down_hours)))


def static(pool, failures, spot, failover: bool) -> Static | None:
    """The month's static shape from concrete fields; None when every term is off
    (no failure rate, no spot card): the month is then §6's."""
    mask = pool.spot()
    rate = 0.0 if failures is None else float(failures.rate)
    if rate <= 0 and not mask.any():
        return None
    zones, n_lone, n_cycles = 1, 0, 0
    zone_of = np.zeros(pool.size, np.int64)
    if mask.any():
        zones = int(spot.zones)
        zone_of[mask] = np.arange(int(mask.sum())) % zones
        n_lone, n_cycles = spot_caps(spot)
    return Static(failures=rate > 0, spot=tuple(bool(x) for x in mask), zone_of=tuple(int(z) for z in zone_of),
                  zones=zones, n_fail=cap(rate), n_lone=n_lone, n_cycles=n_cycles, failover=bool(failover))


def widen(statics: list[Static]) -> Static:
    """One shape for months that differ only in their rates and spells: each event
    list as long as the longest of ``statics`` needs (a longer list only ever cuts
    a stream more rarely), failures drawn where any has them (at rate 0 a candidate
    never falls in the month). Their zones, spot slots and failover must agree."""
    first = statics[0]
    return first._replace(failures=any(s.failures for s in statics), n_fail=max(s.n_fail for s in statics),
                          n_lone=max(s.n_lone for s in statics), n_cycles=max(s.n_cycles for s in statics))


def bare(st: Static) -> Static:
    """``st`` without what ``widen`` merges: months of one ``bare`` shape can share one."""
    return st._replace(failures=False, n_fail=0, n_lone=0, n_cycles=0)


__all__ = ["Static", "TAIL", "bare", "cap", "spot_caps", "static", "tail", "widen"]
