"""A month's token totals from its capacity and demand, summed over its hours.

- ``month_sums``: a month's four token totals from its run set's rate, the
  loss intervals of its dips, and its demand, without materialising hourly
  capacity per month. Batched with ``vmap`` it runs as one chunk-level pass
  (``custom_vmap``) over the chunk's hourly losses (``hours._diff_rows``), and
  the hours are summed as integers.
- ``round_sums`` (``mc.kernels.rounds``): the same totals when the run set changes by round.
- ``flat_month_sums``: the same totals under flat demand, by an exact
  event-hour pass with no hourly array where a month has few live intervals.

All are exact in their fixed point (float32 integers below 2**24, then int32
sums), so a month's bits depend on neither the chunk it runs in nor which
static size or pass served it.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..units import HOURS
from .fusion import materialise
from .hours import _diff_rows, _exponent, _gather_live, _pieces, _prefix, _scale, _updates
from .sums import tree_sum


# Fixed-point bounds of the token pass: Σ|weight|·2**k < 2**_LOSS keeps every
# partial sum of a difference array (four updates of at most the weight each)
# below 2**24, exact in float32; hourly rates below 2**_RATE keep a month's sum
# of 730 hours below 2**31, exact in int32.
_LOSS = 21
_RATE = 21
TOKEN_BITS = _RATE  # bits an hour's rate or demand keeps at the month's scale


def _sums(begin, end, weight, count, rate, demand, hours):
    """(B, 4) float32 hour-sums of demand, served, capacity and unmet; see
    ``month_sums``. ``demand`` is (B, hours) or (1, hours) (the same for all)."""
    B, G, S = begin.shape
    _, top = jnp.frexp(jnp.maximum(rate, jnp.max(demand, axis=-1)))
    k = jnp.minimum(_scale(weight.reshape(B, G * S), _LOSS), _RATE - top)
    lost = _prefix(_diff_rows(begin, end, weight, count, k, hours)[:, :hours])
    one = jnp.ldexp(jnp.float32(1.0), k)[:, None]
    r = jnp.round(rate[:, None] * one)
    d = jnp.round(demand * one)
    cap = jnp.maximum(0.0, r - lost)
    return _totals(d, cap, k)  # d (B, hours) even for shared demand: each month's own scale


def _totals(d: jax.Array, cap: jax.Array, k: jax.Array) -> jax.Array:
    """(..., 4) float32: the hour-sums of demand, served, capacity and unmet, from
    (..., hours) demand and capacity that are integers at scale ``2**k`` (...,).

    Every hour is an integer at that scale, so the month's sums are exact in
    int32: no summation order can change them, and the identities hold exactly
    (served + unmet = demand, served ≤ capacity)."""
    def total(x):
        return jnp.sum(x.astype(jnp.int32), axis=-1)

    served, capacity, demanded = total(jnp.minimum(d, cap)), total(cap), total(d)
    sums = jnp.stack([demanded, served, capacity, demanded - served], axis=-1)
    return sums.astype(jnp.float32) * jnp.ldexp(jnp.float32(1.0), -k)[..., None]


def _spread(x: jax.Array, axis_size: int) -> jax.Array:
    """``x`` repeated along a new leading axis of ``axis_size``, in memory: a
    broadcast left to XLA is re-read through its index arithmetic in every
    consumer of the token pass (a shared demand level cost ~0.7 µs a month)."""
    return materialise(jnp.broadcast_to(x, (axis_size,) + x.shape))


@jax.custom_batching.custom_vmap
def month_sums(begin, end, weight, count, rate, demand):
    """A month's totals over its hours, in tok/s·h (× 3,600 for tokens).

    The hourly loss is ``L_h = Σ weight·overlap([begin, end), [h, h+1))`` over the
    live intervals; capacity ``C_h = max(0, rate − L_h)`` (overlapping losses add,
    clamped at zero for the fleet, SPEC §1.3).

    Arguments:
        begin, end: (groups, slots) float32 h (a card's dips; cut to the month).
        weight: (groups, slots) float32 tok/s lost per hour of overlap.
        count: (groups,) int32: only the leading ``count[g]`` slots of a group
            are live (the rest are ignored).
        rate: () float32 tok/s, the run set's total true rate.
        demand: (hours,) float32 tok/s.
    Returns:
        (4,) float32: ``Σ_h D_h``, ``Σ_h min(D_h, C_h)``, ``Σ_h C_h``,
        ``Σ_h max(0, D_h − C_h)``.
    """
    hours = demand.shape[-1]
    return _sums(begin[None], end[None], weight[None], count[None], rate[None], demand[None], hours)[0]


@month_sums.def_vmap
def _month_sums_vmap(axis_size, in_batched, begin, end, weight, count, rate, demand):
    *batched, demand_batched = in_batched
    args = [x if b else _spread(x, axis_size) for x, b in zip((begin, end, weight, count, rate), batched)]
    demand = demand if demand_batched else demand[None]
    return _sums(*args, demand, demand.shape[-1]), True


# -- a month's token totals under flat demand: the exact event-hour pass ------------

# Live intervals a month's event-hour pass may hold (the leading live slots of
# its groups, in group order): a chunk takes the smallest size that leaves at
# most one month in SPILL_SHARE (at least one) past it; those months take the
# hourly pass on their own, and when no size leaves so few, the whole chunk does.
EVENT_SIZES = (8, 16, 32)
SPILL_SHARE = 16


def _event_totals(b, e, w, k, rate, level, hours):
    """(B, 4) float32, as ``_totals`` gives for constant demand ``level``, from
    (B, n) intervals, with no hourly array.

    Within an interval's hours its fixed-point loss is ``whole`` except in its
    first and last hours, so the month's loss ``L_h`` changes only at the
    intervals' first and last hours ("event hours", and the month's end as one
    more). At an event hour ``p`` the loss is summed over the intervals
    directly; between two consecutive event hours ``a < c`` it is constant,
    ``S = Σ whole·[ib ≤ a < ie] = Σ whole·[ib < c ≤ ie]``: known from either
    end without finding the other. A function of the loss summed over the
    hours strictly between them, ``g(S)·(c − a − 1)``, is therefore
    ``g(before_c)·c − g(after_a)·(a + 1)`` summed over the event hours, with no
    sort and no search for the next event. Every hour's capacity
    ``max(0, R − L)`` and unmet demand ``clip(L − (R − d), 0, d)`` are summed so
    in int32: the same integers the hourly pass adds, so the same bits
    (partial sums may wrap; the total fits, and int32 addition is exact modulo
    2**32). O(n²) elementwise work in one chain over the intervals."""
    B, n = b.shape
    ib, ie, whole, head, tail = _pieces(b, e, w, k[:, None], hours)
    first = jnp.where(ie > ib, whole - head, tail - head)  # the loss in hour ib
    last = jnp.where(ie > ib, tail, 0)  # the loss in hour ie (when it is not ib)
    one = jnp.ldexp(jnp.float32(1.0), k)
    r = jnp.round(rate * one).astype(jnp.int32)[:, None]
    d = jnp.round(level * one).astype(jnp.int32)[:, None]

    q = jnp.concatenate([ib, ie, jnp.full_like(ib[:, :1], hours)], axis=1)  # (B, 2n + 1) event hours
    col = jnp.arange(2 * n + 1)[None, :]
    lost_at = jnp.zeros_like(q)  # the loss in hour q
    after = jnp.zeros_like(q)  # the loss in the hours after q, up to the next event hour
    before = jnp.zeros_like(q)  # the loss in the hours before q, from the previous one
    seen = jnp.zeros(q.shape, bool)  # an earlier column holds the same hour
    for i in range(n):  # (B, 2n + 1) elementwise steps, never a (B, 2n + 1, n) array
        lo, hi, whole_i = ib[:, i:i + 1], ie[:, i:i + 1], whole[:, i:i + 1]
        at_lo, at_hi, past_lo, until_hi = q == lo, q == hi, lo < q, q < hi
        lost_at = lost_at + jnp.where(at_lo, first[:, i:i + 1],
                                      jnp.where(at_hi, last[:, i:i + 1], jnp.where(past_lo & until_hi, whole_i, 0)))
        after = after + jnp.where((past_lo | at_lo) & until_hi, whole_i, 0)
        before = before + jnp.where(past_lo & (until_hi | at_hi), whole_i, 0)
        seen = seen | (at_lo & (col > i)) | (at_hi & (col > n + i))
    # Computed once for both totals below (XLA would repeat the chain in each);
    # a float leaf first, so the barrier's run-time trip count cannot be folded.
    one, lost_at, after, before, seen = materialise((one, lost_at, after, before, seen))
    fresh = ~seen
    counted = fresh & (q < hours)

    def cap(x):
        return jnp.maximum(0, r - x)

    def short(x):
        return jnp.clip(x - (r - d), 0, d)

    def total(f):
        zero = f(jnp.zeros_like(q[:, :1]))  # (B, 1): an hour without loss

        def g(x):
            return f(x) - zero

        ev = jnp.where(counted, g(lost_at) - g(after) * (q + 1), 0) + jnp.where(fresh, g(before) * q, 0)
        return hours * zero[:, 0] + jnp.sum(ev, axis=1, dtype=jnp.int32)

    demanded = hours * d[:, 0]
    unmet = total(short)
    sums = jnp.stack([demanded, demanded - unmet, total(cap), unmet], axis=-1)
    return sums.astype(jnp.float32) * jnp.ldexp(jnp.float32(1.0), -k)[:, None]


def _flat_sums(begin, end, weight, count, rate, level, hours):
    """(B, 4): ``_sums`` for constant demand ``level`` (B,), month by month:
    the event-hour pass, at the smallest of ``EVENT_SIZES`` past which at most
    ``B // SPILL_SHARE`` months spill, for every month that fits it; the hourly
    pass for the spilled months (gathered into a batch of that size), or for
    the whole chunk when no size leaves so few. Both passes give the same
    integers, so a month's bits depend on neither its chunk nor its route."""
    B, G, S = begin.shape
    args = (begin, end, weight, count, rate, level)

    def hourly(args):
        b, e, w, c, r, lv = args
        return _sums(b, e, w, c, r, jnp.broadcast_to(lv[:, None], (lv.shape[0], hours)), hours)

    if G * S == 0:  # no interval slots at all: the hourly pass has nothing to scatter
        return hourly(args)
    sizes = sorted({min(s, G * S) for s in EVENT_SIZES})
    live = jnp.sum(count, axis=1)  # (B,) live intervals of each month
    room = max(1, B // SPILL_SHARE)

    def event(args, size):
        b, e, w, c, r, lv = args
        _, top = jnp.frexp(jnp.maximum(r, lv))
        k = jnp.minimum(_scale(w.reshape(w.shape[0], G * S), _LOSS), _RATE - top)  # as ``_sums`` chooses it
        return _event_totals(*_gather_live(b, e, w, c, size), k, r, lv, hours)

    limits = list(sizes)
    branches = [lambda args, size=size: event(args, size) for size in sizes]
    fits = [jnp.sum(live > s, dtype=jnp.int32) <= room for s in sizes]
    if sizes[-1] == G * S:  # the largest size holds every month
        fits[-1] = jnp.bool_(True)
    else:  # no size leaves so few: the hourly pass for the whole chunk, nothing spills
        branches.append(hourly)
        fits.append(jnp.bool_(True))
        limits.append(G * S)
    pick = jnp.argmax(jnp.stack(fits)).astype(jnp.int32)  # the first that fits
    out = branches[0](args) if len(branches) == 1 else jax.lax.switch(pick, branches, args)
    if limits == [G * S]:  # every month fits the one size
        return out
    spill = live > jnp.asarray(limits, jnp.int32)[pick]
    spilled = jnp.sum(spill, dtype=jnp.int32)  # at most ``room``

    # The spilled months, gathered into a batch of ``room``, by the hourly pass: one
    # copy of it serves every size, and it is skipped when no month spilled.
    def redo(out):
        slot = jnp.where(spill, jnp.cumsum(spill, dtype=jnp.int32) - 1, room)
        which = jnp.zeros(room, jnp.int32).at[slot].set(jnp.arange(B, dtype=jnp.int32), mode="drop")
        fixed = hourly(tuple(x[which] for x in args))
        return out.at[jnp.where(jnp.arange(room) < spilled, which, B)].set(fixed, mode="drop")

    return jax.lax.cond(spilled > 0, redo, lambda out: out, out)


@jax.custom_batching.custom_vmap
def flat_month_sums(begin, end, weight, count, rate, level):
    """``month_sums`` for constant demand: ``D_h = level`` every hour (tok/s, ()).

    The same four totals to the bit as ``month_sums`` with ``demand`` 730
    copies of ``level``, from an event-hour pass that is O(intervals²) with no
    hourly array for a month with at most ``EVENT_SIZES[-1]`` live intervals,
    and the hourly pass otherwise."""
    return _flat_sums(begin[None], end[None], weight[None], count[None], rate[None], level[None], HOURS)[0]


@flat_month_sums.def_vmap
def _flat_month_sums_vmap(axis_size, in_batched, begin, end, weight, count, rate, level):
    args = [x if b else _spread(x, axis_size)
            for x, b in zip((begin, end, weight, count, rate, level), in_batched)]
    return _flat_sums(*args, HOURS), True
