"""A hysteresis band: an eviction rule of one's own, loaded by mc from a scenario file.

    [eviction]
    policy = "rules/band.py:Band"   # the file, relative to the scenario file, and the class
    low = 0.85
    high = 0.95

A card is marked when its relative score (score / rated) falls below ``low`` times the
median of the eligible cards. Once marked it stays marked, round after round, until it
scores above ``high`` times the median: a card that dips and only half recovers is
still suspect. With ``[autoscaler] strikes = 2`` a card is evicted on its second marked
round in a row, so a card must fall below the low line once and then stay below the
high line to go; a single noisy round spares it. In a single-decision month (no
autoscaler) no card has strikes and the rule is the low line alone.

The contract (see docs/model.md, "Your own eviction rule"): a class made with
``@rule("name")`` that subclasses ``Policy``; each field declared with ``declare`` (a
default, a range, a unit, a meaning, and the values ``mc calibrate`` tries when no grid
is given); ``mark`` takes the cards of one pool (``cards.rel``, ``score``, ``rated``,
``eligible``, ``served``, ``strikes``, each (pool,)) and returns a (pool,) bool array
built with array operations only — no Python ``if`` on a card's value, no side effects —
so that it compiles once and runs over millions of pools. Written with ``cards.xp`` (the
cards' array namespace: ``jax.numpy`` in a month, ``numpy`` in mc's references and NumPy
month) rather than ``jax.numpy``, the same ``mark`` runs in both, and mc checks that the
two agree; a rule that cannot be written so may define ``mark_numpy``, its NumPy twin.
The package keeps at most ``max_share`` of the pool of what ``mark`` marks (lowest
relative score first) and only marks on eligible cards.
"""

from mc.fleet.policies import Policy, cap_param, declare, rule


@rule("band")
class Band(Policy):
    """Evict below ``low`` × median; a marked card stays marked until above ``high`` × median."""

    low: float = declare(0.85, lo=0.0, hi=1.5, lo_open=True, unit="× median",
                         doc="mark a card below low × the median relative score", grid=(0.7, 0.8, 0.85, 0.9))
    high: float = declare(0.95, lo=0.0, hi=1.5, lo_open=True, unit="× median",
                          doc="a marked card stays marked until above high × the median", grid=(0.9, 0.95, 1.0))
    max_share: float = cap_param()

    def __post_init__(self):
        super().__post_init__()
        if self.high < self.low:
            self.refuse("high", f"must be at least low ({self.low:g})")

    def mark(self, cards):
        mid = cards.median(cards.rel)
        below = cards.rel < cards.const(self.low) * mid
        held = (cards.strikes > 0) & (cards.rel < cards.const(self.high) * mid)
        return below | held

