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

from ._hours import HOURS, SECONDS, month_sums
from ._reduce import PAIRWISE_MAX, masked_sum, pairwise_rank, scan_sum, tree_sum
from .dips import CardDips
from .pool import Pool


class Tokens(NamedTuple):
    demand: jax.Array  # () float32 tokens in the month
    delivered: jax.Array  # () float32 tokens served
    capacity: jax.Array  # () float32 tokens the run set could serve
    unmet: jax.Array  # () float32 tokens demanded and not served


def month_tokens(true_rate: jax.Array, run: jax.Array, dips: CardDips, demand: jax.Array) -> Tokens:
    """The month's token totals from hourly demand (730,) tok/s and the run set's
    hourly capacity ``C_h``: the run cards' true rates less their dips' losses.

    Overlapping losses add and the sum is clamped at zero for the fleet
    (SPEC §1.3), which keeps the pass O(dips + hours) (``mc._hours.month_sums``).
    """
    rate = jnp.where(run, true_rate, 0.0)
    slots = dips.begin.shape[-1]
    count = jnp.full(rate.shape, slots, jnp.int32) if dips.count is None else dips.count
    t = month_sums(dips.begin, dips.end, dips.depth * rate[:, None], jnp.where(run, count, 0),
                   tree_sum(rate), demand) * (SECONDS / HOURS)
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


def _ideal_plan(pool: Pool) -> tuple[int, np.ndarray, np.ndarray]:
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
    matters: enumerate counts of the smaller classes and search the largest.
    """
    last, combos, cents = _ideal_plan(pool)
    if all(n <= PAIRWISE_MAX for n in pool.counts):
        # Best-first cumulative cover per class as compensated (hi, lo) pairs:
        # cover[k] = Σ_j [rank_j < k] t_j, ranks by pairwise comparison.
        hi, lo = [], []
        for s in pool.slices:
            t = true_rate[s]
            r = pairwise_rank(-t)
            k = jnp.arange(t.shape[0] + 1)
            h, l = masked_sum(r[None, :] < k[:, None], t)
            hi.append(h)
            lo.append(l)
        if len(hi) > 1:
            rest_hi = sum(hi[c][combos[:, c]] for c in range(len(hi)) if c != last)
            rest_lo = sum(lo[c][combos[:, c]] for c in range(len(hi)) if c != last)
        else:
            rest_hi = rest_lo = jnp.zeros(1, true_rate.dtype)
        short = ((hi[last][None, :] - peak) + rest_hi[:, None]) + (lo[last][None, :] + rest_lo[:, None]) < 0
        k_last = jnp.sum(short, axis=-1, dtype=jnp.int32)
    else:
        cover = []  # per class: (n+1,) best-first cumulative true rate
        for s in pool.slices:
            best = -jnp.sort(-true_rate[s])
            cover.append(jnp.concatenate([jnp.zeros(1, best.dtype), scan_sum(best)]))
        rest = sum(cover[c][combos[:, c]] for c in range(len(cover)) if c != last) \
            if len(cover) > 1 else jnp.zeros(1, true_rate.dtype)
        k_last = jnp.searchsorted(cover[last], peak - rest, side="left").astype(jnp.int32)
    feasible = k_last <= pool.counts[last]
    cost = jnp.asarray(combos @ cents) + k_last * cents[last]
    whole = int(np.dot(pool.counts, cents))
    return jnp.min(jnp.where(feasible, cost, whole))
