"""What the device can represent, derived for each scenario (SPEC §1.8 on a device).

Money is int32 cents: a month's bill is at most every card's rent or churn fee,
whichever is larger, summed over the pool, and must stay below ``2**31`` cents;
a price or a churn fee below one cent would bill $0 and is refused.

Rates, scores and tokens are float32. The largest value a month forms is a
token total, ``3,600 s · Σ_h max(D_h, C_h)`` over 730 hours, or a sum of scores
(the run set's greedy); each must stay below ``FLOAT_LIMIT``, float32's largest
finite value over 16, so the reducer's differences from its histogram range
(up to 1.5 × twice a value) and Chan merges stay finite. Peak demand may be at
most ``RESOLVED`` times the pool's typical rate, so the token pass's fixed
point still resolves the pool's capacity.
"""

from __future__ import annotations

import numpy as np

from .. import _validate as v
from ..kernels import TOKEN_BITS
from ..units import HOURS, SECONDS
from .demand import Demand
from .lottery import Lottery, max_quality
from .pool import Pool
from .rounds import Autoscaler
from .window import Window, max_gain

FLOAT_LIMIT = v.FLOAT32_MAX / 16
# The token pass (``mc.kernels.month_sums``) holds every hour as an integer of
# TOKEN_BITS bits at the scale of the larger of demand and the run set's rate,
# so demand far above the pool's rate would round the pool's capacity away;
# demand up to RESOLVED times the pool's typical rate keeps it to 10 bits or more.
RESOLVED = 2**11


def check_money(pool: Pool, churn: float) -> None:
    """Refuse churn fees below a cent and months whose bill could pass int32 cents
    (in float64, before any fee is rounded to int32)."""
    if churn > 0:
        for card in pool.classes:
            if card.price_cents * churn < 1.0:
                v.fail("eviction.churn", churn, f"must be 0 or at least {1.0 / card.price_cents:.4g}: a churn fee "
                       f"below a cent on {card.name} (${card.price:,.2f} a month) would bill $0")
    cents = pool.price_cents().astype(np.float64)
    worst = float(np.sum(np.maximum(cents, np.round(cents * churn))))
    if worst > v.INT32_MAX:
        v.fail("eviction.churn" if churn > 1 else "pool", churn if churn > 1 else pool.describe(),
               f"a month could bill ${worst / 100:,.2f} (every card's rent or churn fee), above the "
               f"${v.INT32_MAX / 100:,.2f} that int32 cents hold")


def check_rounds_money(pool: Pool, autoscaler: Autoscaler, evict_limit: int, churn_cents: np.ndarray) -> None:
    """A §6 month's bill (every round's prorated rent, and the policy's most
    evictions in every round at the dearest fee) must fit int32 cents, and no
    round's prorated rent may round to nothing."""
    a = autoscaler
    shortest = int(a.lengths().min())
    for card in pool.classes:
        if card.price_cents * shortest / HOURS < 0.5:
            v.fail("autoscaler.period", a.period, f"prorates {card.name}'s ${card.price:,.2f} a month to under "
                   f"half a cent for a round of {shortest} h, which would bill $0")
    rent = int(a.rent(pool.price_cents()).astype(np.int64).sum())
    worst = rent + a.rounds * evict_limit * int(churn_cents.max())
    if worst > v.INT32_MAX:
        v.fail("autoscaler.period", a.period, f"gives {a.rounds} rounds whose worst bill, "
               f"${worst / 100:,.0f}, is past ${v.INT32_MAX / 100:,.2f} (bills are exact int32 cents); "
               "use fewer rounds, a smaller pool or a lower eviction share")


def check_floats(pool: Pool, lottery: Lottery, window: Window, demand: Demand) -> None:
    """Refuse scenarios whose rates, scores or token totals could pass ``FLOAT_LIMIT``."""
    rate = float(np.sum(pool.rated().astype(np.float64))) * max_quality(lottery)
    if rate * SECONDS > FLOAT_LIMIT:
        v.fail("pool", pool.describe(), f"with lottery quality up to {max_quality(lottery):.4g} rates "
               f"{rate:.4g} tok/s, which makes {rate * SECONDS:.4g} tokens a month, above float32's limit of "
               f"{FLOAT_LIMIT:.4g}; the pool's rate must be at most {FLOAT_LIMIT / SECONDS:.4g} tok/s")
    score = rate * max_gain(window)
    if score > FLOAT_LIMIT:
        v.fail("window.sigma_hour", window.sigma_hour, f"with window.hours={window.hours:g} lets scores sum to "
               f"{score:.4g} tok/s, above float32's limit of {FLOAT_LIMIT:.4g}")
    peak, fields = demand.peak()
    typical = float(np.sum(pool.rated().astype(np.float64))) * min(lottery.hi, max(lottery.lo, lottery.mean))
    if peak > RESOLVED * typical:
        v.fail("demand", f"peak {peak:.4g} tok/s", f"({fields}) is over {RESOLVED:,} times the pool's typical rate "
               f"of {typical:.4g} tok/s: the token pass holds each hour to {TOKEN_BITS} bits of the larger, which "
               f"would resolve the pool's capacity to under {TOKEN_BITS - RESOLVED.bit_length() + 1} bits; "
               f"the peak must be at most {RESOLVED * typical:.4g} tok/s")
    if peak * SECONDS > FLOAT_LIMIT:
        v.fail("demand", f"peak {peak:.4g} tok/s", f"({fields}) makes up to {peak * SECONDS:.4g} tokens a month, "
               f"above float32's limit of {FLOAT_LIMIT:.4g}; the peak must be at most "
               f"{FLOAT_LIMIT / SECONDS:.4g} tok/s")
