"""The month's accounting (SPEC §1.8): capacity, tokens, bills, the ideal bill.

Money is int32 cents on the device so that bills add up exactly; ``Pool``
bounds a month's rent to fit.
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..kernels import best_first, cover_count, flat_month_sums, month_sums, round_sums, tree_sum
from ..units import HOURS, SECONDS
from .dips import CardDips
from .pool import Pool


class Tokens(NamedTuple):
    demand: jax.Array  # () float32 tokens in the month
    delivered: jax.Array  # () float32 tokens served
    capacity: jax.Array  # () float32 tokens the run set could serve
    unmet: jax.Array  # () float32 tokens demanded and not served


def month_tokens(true_rate: jax.Array, run: jax.Array, dips: CardDips, demand: jax.Array,
                 flat: bool = False) -> Tokens:
    """The month's token totals from hourly demand (730,) tok/s and the run set's
    hourly capacity ``C_h``: the run cards' true rates less their dips' losses.

    Overlapping losses add and the sum is clamped at zero for the fleet
    (SPEC §1.3), which keeps the pass O(dips + hours) (``mc.kernels.month_sums``).
    ``flat`` (static): every hour's demand is ``demand[0]``, which allows the
    event-hour pass (``mc.kernels.flat_month_sums``, the same bits).
    """
    rate = jnp.where(run, true_rate, 0.0)
    slots = dips.begin.shape[-1]
    count = jnp.full(rate.shape, slots, jnp.int32) if dips.count is None else dips.count
    sums = flat_month_sums if flat else month_sums
    t = sums(dips.begin, dips.end, dips.depth * rate[:, None], jnp.where(run, count, 0),
             tree_sum(rate), demand[0] if flat else demand) * (SECONDS / HOURS)
    return Tokens(t[0], t[1], t[2], t[3])


def round_tokens(true_rate: jax.Array, run: jax.Array, dips: CardDips, boot: jax.Array, boot_hours: jax.Array,
                 starts: jax.Array, demand: jax.Array, period: int) -> Tokens:
    """The month's token totals when the run set changes by round (SPEC §6).

    Hour ``h`` has the run set of its round: capacity is the run cards' true
    rates less their dips, and less each replacement's rate while it boots,
    ``[t_k, t_k + boot_hours)``. A slot's dips count only in the rounds its card
    runs (``mc.kernels.round_sums``).

    Arguments:
        true_rate: (rounds, slots) float32 tok/s of each slot's card in each round.
        run: (rounds, slots) bool. dips: (slots, dips) with weights in ``depth``
            (tok/s: each dip's owner's rate times its depth), cut to its owner's life.
        boot: (rounds,) float32 tok/s, the true rates of the run set's booting
            replacements. boot_hours: () h. starts: (rounds,) float32 h, ``t_k``.
        demand: (730,) float32 tok/s. period: hours per round (static).
    """
    rounds, slots = run.shape
    rate = jax.vmap(tree_sum)(jnp.where(run, true_rate, 0.0))
    live = jnp.concatenate([run, jnp.ones((rounds, 1), bool)], axis=1)  # the boots: one row, always live
    groups = ((dips.begin, dips.end, dips.depth, jnp.arange(slots, dtype=jnp.int32)[:, None]),
              (starts, starts + boot_hours, boot, jnp.int32(slots)))
    t = round_sums(groups, live, rate, demand, period) * (SECONDS / HOURS)
    return Tokens(t[0], t[1], t[2], t[3])


def bill_cents(chosen: jax.Array, cents: jax.Array) -> jax.Array:
    """() int32: what the chosen cards bill, in cents."""
    return jnp.sum(jnp.where(chosen, cents, 0))


def churn_cents(pool: Pool, churn: float) -> np.ndarray:
    """(pool,) int32 churn fee per card, rounded to the cent."""
    return np.round(pool.price_cents() * np.float64(churn)).astype(np.int32)


def ratio(num: jax.Array, den: jax.Array, empty: float = 0.0) -> jax.Array:
    """``num / den``, or ``empty`` where ``den`` is 0.

    ``den + 0·num`` keeps the divisor a run-time value: a divisor XLA can fold
    to a constant (a flat month's demand) is turned into a multiplication by
    its reciprocal in some compiled batch shapes and not others, which would
    make a month's last bit depend on its chunk size.
    """
    den = den + 0.0 * num
    return jnp.where(den > 0, num / jnp.where(den > 0, den, 1.0), empty)


def idle_burn(warm_dollars: jax.Array, t: Tokens) -> jax.Array:
    """() float32 $: warm rent that moved no tokens (all of it at zero capacity)."""
    return warm_dollars * (1.0 - ratio(t.delivered, t.capacity))


def ideal_plan(pool: Pool) -> tuple[int, np.ndarray, np.ndarray]:
    """Static enumeration plan for the ideal: every count vector over all classes
    but the largest, whose count is then found by search. Returns (searched
    class, (combos, classes) int32 counts with the searched column zero,
    (classes,) int32 cents)."""
    counts = pool.counts
    last = int(np.argmax(counts))
    ranges = [range(n + 1) if c != last else range(1) for c, n in enumerate(counts)]
    combos = np.array(list(itertools.product(*ranges)), dtype=np.int32).reshape(-1, len(counts))
    cents = np.array([c.price_cents for c in pool.classes], dtype=np.int32)
    return last, combos, cents


def ideal_cents(true_rate: jax.Array, peak: jax.Array, pool: Pool) -> jax.Array:
    """() int32 cents: the cheapest whole cards of the pool whose true rates sum
    to at least ``peak`` (the whole pool when none suffice).

    Within a class the best cards come first, so only the count per class
    matters: enumerate counts of the smaller classes and, for each, take the
    fewest cards of the largest class whose best-first cover reaches the peak.
    Covers are compensated ``(hi, lo)`` sums (``best_first``), so a cover within
    an ulp of the peak is decided as exact arithmetic decides it. A pool of one
    class needs only the count (``cover_count``, no sort of a large pool).
    """
    if len(pool.slices) == 1:
        each = int(pool.classes[0].price_cents)
        k = cover_count(true_rate, peak)
        return jnp.where(k <= pool.size, k * each, pool.size * each).astype(jnp.int32)
    return ideal_cost(ideal_covers(true_rate, pool), peak, pool)


def ideal_covers(true_rate: jax.Array, pool: Pool) -> list[tuple[jax.Array, jax.Array]]:
    """Per class, its best-first cover ``(hi, lo)`` ((n+1,) float32 each, tok/s)."""
    return [best_first(true_rate[s]) for s in pool.slices]


def ideal_cost(covers: list[tuple[jax.Array, jax.Array]], peak: jax.Array, pool: Pool,
               cents: jax.Array | None = None) -> jax.Array:
    """() int32 cents: ``ideal_cents`` from the classes' covers (``ideal_covers``),
    with each class's card at ``cents`` ((classes,) int32; default its monthly
    price: SPEC §6 prorates it by a round's hours)."""
    last, combos, price = ideal_plan(pool)
    dtype = covers[0][0].dtype
    others = [c for c in range(len(covers)) if c != last]
    if others:
        rest_hi = sum(covers[c][0][combos[:, c]] for c in others)
        rest_lo = sum(covers[c][1][combos[:, c]] for c in others)
    else:
        rest_hi = rest_lo = jnp.zeros(1, dtype)
    hi, lo = covers[last]
    short = ((hi[None, :] - peak) + rest_hi[:, None]) + (lo[None, :] + rest_lo[:, None]) < 0
    k_last = jnp.sum(short, axis=-1, dtype=jnp.int32)
    feasible = k_last <= pool.counts[last]
    if cents is None:  # host constants
        rest, each, whole = jnp.asarray(combos @ price), int(price[last]), int(np.dot(pool.counts, price))
    else:
        rest = jnp.sum(jnp.asarray(combos) * cents[None, :], axis=-1, dtype=jnp.int32)
        each = cents[last]
        whole = jnp.sum(jnp.asarray(pool.counts, jnp.int32) * cents, dtype=jnp.int32)
    cost = rest + k_last * each
    return jnp.min(jnp.where(feasible, cost, whole))


# -- the possible values of a month's money columns ---------------------------------

def _set_sums(options: list[list[int]], cap: int) -> np.ndarray | None:
    acc = np.zeros(1, np.int64)
    for opts in options:
        acc = np.unique((acc[:, None] + np.asarray(opts, np.int64)[None, :]).ravel())
        if acc.size > cap:
            return None
    return acc


def money_support(pool: Pool, churn: np.ndarray, col: str, cap: int = 1 << 16) -> np.ndarray | None:
    """Sorted int64 cents a money column (``bill``, ``warm_bill``, ``churn_bill``,
    ``ideal_bill``) can take (a superset: every bill is a sum of whole cards'
    prices and churn fees), or None if more than ``cap``. ``churn``: (pool,) cents."""
    fees = [int(churn[s.start]) for s in pool.slices]
    options = []
    for (card, count), fee in zip(pool.groups, fees):
        price = card.price_cents
        if col in ("warm_bill", "ideal_bill"):
            options.append([r * price for r in range(count + 1)])
        elif col == "churn_bill":
            options.append([e * fee for e in range(count + 1)])
        else:  # bill: r run and e evicted cards of the class, r + e <= count
            if (count + 1) * (count + 2) // 2 > cap:
                return None
            options.append([r * price + e * fee for r in range(count + 1) for e in range(count + 1 - r)])
    return _set_sums(options, cap)
