"""Spreading intervals over the month's hours in O(intervals + hours).

Every pass here shares the power-of-two scale (``_scale``) and the four
difference-array updates per interval (``_updates``):

- ``per_hour``: one month's (hours,) profile of interval weights (burst demand).
- ``_diff_rows``: a chunk's difference arrays, one row a month, from only its
  live intervals (gathered into a quarter of the slots when the chunk's busiest
  month fits there), and ``_prefix``, their exact prefix sums: the hourly loss
  that ``capacity`` sums into a month's token totals.

Both are exact in their fixed-point domain (int32 for ``per_hour``; float32
integers below 2**24 for the chunk's rows), so a month's bits depend on neither
the chunk it runs in nor which static size served the chunk.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ..units import HOURS
from .sums import int_cumsum, tree_sum

# Fixed-point headroom: contributions are scaled so that the sum of all
# |weights| is below 2**_HEADROOM; every partial sum of the difference array is
# then below 2**(_HEADROOM + 1) < 2**31.
_HEADROOM = 29


def overlap(begin: jax.Array, end: jax.Array, x: float, y: float) -> jax.Array:
    """Hours of ``[begin, end) ∩ [x, y)``, elementwise."""
    return jnp.maximum(0.0, jnp.minimum(end, y) - jnp.maximum(begin, x))


def _scale(weight: jax.Array, headroom: int = _HEADROOM) -> jax.Array:
    """int32 exponent ``k`` with ``Σ|weight|·2**k < 2**headroom``, summing over
    the last axis (a month's intervals)."""
    return _exponent(tree_sum(jnp.abs(weight)), headroom)


def _exponent(total: jax.Array, headroom: int) -> jax.Array:
    """int32 exponent ``k`` with ``total·2**k < 2**headroom`` (``total`` ≥ 0)."""
    _, ex = jnp.frexp(total)
    return jnp.clip(headroom - ex, -126, 126)


def _pieces(begin: jax.Array, end: jax.Array, weight: jax.Array, k: jax.Array, hours: int) -> tuple:
    """Each interval cut to ``[0, hours)`` in fixed point at scale ``2**k``: its first
    and last hours ``ib``, ``ie`` and int32 ``whole`` (a full hour's weight),
    ``head`` (the part of hour ``ib`` before ``begin``) and ``tail`` (the part of
    hour ``ie`` before ``end``)."""
    b = jnp.clip(begin, 0.0, hours)
    e = jnp.clip(end, b, hours)
    fb, fe = jnp.floor(b), jnp.floor(e)
    ib, ie = fb.astype(jnp.int32), fe.astype(jnp.int32)
    ws = weight * jnp.ldexp(jnp.float32(1.0), k)
    whole = jnp.round(ws).astype(jnp.int32)
    head = jnp.round(ws * (b - fb)).astype(jnp.int32)
    tail = jnp.round(ws * (e - fe)).astype(jnp.int32)
    return ib, ie, whole, head, tail


def _updates(begin: jax.Array, end: jax.Array, weight: jax.Array, k: jax.Array,
             hours: int) -> tuple[jax.Array, jax.Array]:
    """Difference-array updates of intervals over the last axis: hour indices and
    int32 values at scale ``2**k`` (k broadcasts against the leading axes).

    Hours ib..ie-1 get the whole weight; hour ib loses the part before ``begin``
    and hour ie gains the part before ``end``: four updates per interval.
    """
    ib, ie, whole, head, tail = _pieces(begin, end, weight, k, hours)
    idx = jnp.concatenate([ib, ib + 1, ie, ie + 1], axis=-1)
    upd = jnp.concatenate([whole - head, head, tail - whole, -tail], axis=-1)
    return idx, upd


def per_hour(begin: jax.Array, end: jax.Array, weight: jax.Array, hours: int = HOURS) -> jax.Array:
    """``Σ_j weight_j · overlap([begin_j, end_j), [h, h+1))`` for h = 0..hours-1.

    Each interval adds its whole hours as a step and its partial first and last
    hours as corrections, all four as updates of one difference array, so the
    cost is one scatter plus one cumulative sum, instead of intervals × hours.

    The difference array is int32 fixed point at a power-of-two scale chosen
    from the month's own ``Σ|weight|`` (largest with that sum below 2**29), so
    the scatter and the prefix sum are exact and their order cannot change a
    bit: a month's result is the same in any batch shape. Each hour is within
    (intervals touching it) × 2**-scale of the exact value, below a float32
    ulp of the total.

    Arguments:
        begin, end: (...,) float32 hours; intervals outside ``[0, hours)`` are cut.
        weight: (...,) float32, per hour of overlap (zero masks an interval).
    Returns:
        (hours,) float32.
    """
    w = jnp.broadcast_to(weight, begin.shape).ravel().astype(jnp.float32)
    k = _scale(w)
    idx, upd = _updates(begin.ravel(), end.ravel(), w, k, hours)
    diff = jnp.zeros(hours + 2, jnp.int32).at[idx].add(upd, mode="promise_in_bounds")
    fixed = int_cumsum(diff[:hours])
    return fixed.astype(jnp.float32) * jnp.ldexp(jnp.float32(1.0), -k)


# -- a chunk's hourly losses, from its live intervals ---------------------------------

def _sizes(n: int) -> list[int]:
    """Static interval counts a chunk may be gathered into: an eighth and a
    quarter of the slots (at least 16), or all ``n``. Each size is a branch XLA
    compiles, so there are few: live dips on run cards are a small, steady share
    of the slots (standard month: ~8%; the busiest of 1,024 months at 32 cards
    ~38 of 256, at 128 cards ~115 of 1,024, at 512 cards ~380 of 4,096), and
    the scatter's cost follows the size, not the live count."""
    return sorted({min(n, max(16, n // 8)), min(n, max(16, n // 4)), n})


# Groups up to which a gather finds each output's group by comparing it with
# every group's running count (size × groups work, fast for a small pool);
# more groups are counted: each group's running count drops a one into its bin
# and a prefix sum over the bins gives, at slot c, the groups ending at or
# before c (groups + size work), so a pool of thousands of cards neither
# compares every slot with every card nor searches.
COMPARE_GROUPS = 64


def _group_of(upto: jax.Array, size: int) -> jax.Array:
    """(B, size) int32: for output slot c, the number of groups whose inclusive
    running count ``upto`` ((B, G), non-decreasing) is at most c, capped at G − 1."""
    B, G = upto.shape
    if G <= COMPARE_GROUPS:
        c = jnp.arange(size, dtype=upto.dtype)
        found = jnp.sum(upto[:, None, :] <= c[None, :, None], axis=2, dtype=jnp.int32)
    else:
        # One flat scatter of integer ones (month b owns bins b·(size+1)...),
        # exact in any order; a count past the last slot lands in bin ``size``.
        bins = jnp.minimum(upto.astype(jnp.int32), size)
        bins = bins + (size + 1) * jnp.arange(B, dtype=jnp.int32)[:, None]
        hist = jnp.zeros(B * (size + 1), jnp.int32).at[bins.ravel()].add(1, mode="promise_in_bounds")
        found = jnp.cumsum(hist.reshape(B, size + 1)[:, :size], axis=1, dtype=jnp.int32)
    return jnp.minimum(found.astype(jnp.int32), G - 1)


def _gather_live(begin, end, weight, count, size):
    """(B, size) intervals: the leading ``count[b, g]`` slots of each group g, in
    group order, then zero-weight padding. Inputs (B, G, S) and (B, G)."""
    B, G, S = begin.shape
    flat = [x.reshape(B, G * S) for x in (begin, end, weight)]
    if size == G * S:
        live = jnp.arange(S)[None, None, :] < count[:, :, None]
        return flat[0], flat[1], jnp.where(live.reshape(B, G * S), flat[2], 0.0)
    upto = jnp.cumsum(count, axis=1)  # (B, G) inclusive
    c = jnp.arange(size, dtype=upto.dtype)
    group = _group_of(upto, size)
    first = jnp.take_along_axis(upto - count, group, axis=1)
    src = group * S + jnp.clip(c[None, :] - first, 0, S - 1)
    b, e, w = (jnp.take_along_axis(x, src, axis=1) for x in flat)
    return b, e, jnp.where(c[None, :] < upto[:, -1:], w, 0.0)


def _diff_rows(begin, end, weight, count, k, hours):
    """(B, hours + 2) float32 difference arrays at scale 2**k (integer values),
    from the live intervals, gathered into the smallest static size that holds
    every month of the chunk."""
    B, G, S = begin.shape
    sizes = _sizes(G * S)
    busiest = jnp.max(jnp.sum(count, axis=1))

    def branch(size):
        def run(args):
            b, e, w = _gather_live(*args, size)
            idx, upd = _updates(b, e, w, k[:, None], hours)
            # One flat scatter over the chunk (month b owns slots b·(hours+2)...);
            # integers with every partial sum below 2**24: exact in any order.
            idx = idx + (hours + 2) * jnp.arange(B, dtype=jnp.int32)[:, None]
            out = jnp.zeros(B * (hours + 2), jnp.float32).at[idx.ravel()].add(
                upd.ravel().astype(jnp.float32), mode="promise_in_bounds")
            return out.reshape(B, hours + 2)
        return run

    pick = jnp.sum(jnp.asarray(sizes[:-1], jnp.int32) < busiest, dtype=jnp.int32)
    return jax.lax.switch(pick, [branch(s) for s in sizes], (begin, end, weight, count))


def _prefix(x: jax.Array, block: int = 16) -> jax.Array:
    """Inclusive prefix sums over the last axis of (B, n) float32 integers whose
    every partial sum is below 2**24 (so exact in any order): within blocks by
    one matrix product with a triangular matrix, then across block totals."""
    B, n = x.shape
    nb = -(-n // block)
    x = jnp.pad(x, ((0, 0), (0, nb * block - n))).reshape(B * nb, block)
    hi = jax.lax.Precision.HIGHEST  # no reduced-precision products (TF32 on GPUs)
    within = jnp.dot(x, jnp.triu(jnp.ones((block, block), jnp.float32)), precision=hi).reshape(B, nb, block)
    offset = jnp.dot(within[:, :, -1], jnp.triu(jnp.ones((nb, nb), jnp.float32), 1), precision=hi)
    return (within + offset[:, :, None]).reshape(B, nb * block)[:, :n]

