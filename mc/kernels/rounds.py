"""A month's hourly capacity when the run set changes by round, and its token totals.

- ``round_sums``: the four token totals (demand, served, capacity, unmet) when the
  month's hours fall into rounds with a run set and a rate each.
- ``round_levels``: the same hourly capacity before its clamp, in the month's fixed
  point, for a model that scales it hour by hour (``fixed_totals`` then sums it).

Both are O(intervals + hours + rows·rounds) with no hour-by-row array, and exact in
their fixed point (int32 at the month's power-of-two scale), so a month's bits depend
on no batch shape. Batched with ``vmap`` they run as one chunk-level pass
(``custom_vmap``): each month owns a stretch of one flat difference array, filled by
one scatter for the whole chunk (a scatter batched by ``vmap`` costs several times
more on a CPU).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from .capacity import _LOSS, _RATE, _totals
from .hours import _exponent, _updates
from .sums import int_cumsum, tree_sum


def round_sums(groups, live: jax.Array, rate: jax.Array, demand: jax.Array, period: int) -> jax.Array:
    """A month's four totals as ``month_sums`` gives them, when the month's hours
    fall into rounds of ``period`` hours (the last may be shorter), the rate is
    constant within a round, and each row's losses count only in the rounds it
    is live.

    ``C_h = max(0, rate_k − Σ_rows live[k, row]·L_row,h)`` for hour ``h`` of round
    ``k``, with ``L_row,h = Σ weight·overlap([begin, end), [h, h+1))`` over the
    row's intervals. A row never live contributes nothing.

    Each interval's four difference-array updates (``hours._updates``) go to one
    hourly array when their row is live in the round of their hour, and each row's
    updates before a round's first hour are summed per round, so a row's level
    carried into a round enters as that round's offset. Everything is int32 at the
    month's power-of-two scale (the bound of ``month_sums``: the sum of the |weight|
    of rows ever live below 2**21, the largest rate or demand below 2**21), so the
    result is exact in its fixed point. With one round and the same intervals it is
    ``month_sums``'s result to the bit.

    Arguments:
        groups: a sequence of ``(begin, end, weight, row)``: intervals of any
            shape, float32 hours, hours and tok/s lost per hour of overlap, and
            the int32 row of each (broadcasting against ``weight``). |weight|
            is summed group by group, in the order given.
        live: (rounds, rows) bool. rate: (rounds,) float32 tok/s before losses.
        demand: (hours,) float32 tok/s. period: hours per round (static).
    Returns:
        (4,) float32 in tok/s·h: ``Σ_h D_h``, ``Σ_h min(D_h, C_h)``, ``Σ_h C_h``,
        ``Σ_h max(0, D_h − C_h)``.
    """
    level, d, k = round_levels(groups, live, rate, demand, period)
    return _totals(d, jnp.maximum(0.0, level), k)


def round_levels(groups, live: jax.Array, rate: jax.Array, demand: jax.Array, period: int,
                 spare: int = 0) -> tuple[jax.Array, jax.Array, jax.Array]:
    """``round_sums``'s hourly capacity before its clamp and its demand, integers at
    the month's scale ``2**k`` (see ``round_sums`` for the arguments): ``(level, d,
    k)``, (hours,) float32, (hours,) float32 and () int32, ``level_h = 2**k·(rate_k −
    Σ live·L_row,h)``. ``spare`` (static) bits are left above the largest rate and
    demand, so a model may scale the level by up to ``2**spare`` and still sum it
    exactly (``fixed_totals``)."""
    flat = jax.tree_util.tree_leaves(groups)
    return _batched(jax.tree_util.tree_structure(groups), int(period), int(spare))(flat, live, rate, demand)


def fixed_totals(demand: jax.Array, capacity: jax.Array, k: jax.Array) -> jax.Array:
    """(4,) float32 tok/s·h ``Σ D``, ``Σ min(D, C)``, ``Σ C``, ``Σ max(0, D − C)`` from
    (hours,) demand and capacity that are integers at scale ``2**k`` (each below
    ``2**21``): exact int32 sums, so no summation order changes them."""
    return _totals(demand, capacity, k)


@functools.lru_cache(maxsize=None)
def _batched(tree, period: int, spare: int):
    """``round_levels`` for one groups structure, period and spare, as a
    ``custom_vmap`` whose batched rule is the chunk-level pass."""

    @jax.custom_batching.custom_vmap
    def levels(flat, live, rate, demand):
        one = [x[None] for x in flat], live[None], rate[None], demand[None]
        level, d, k = _levels(tree, period, spare, 1, *one)
        return level[0], d[0], k[0]

    @levels.def_vmap
    def _rule(axis_size, in_batched, flat, live, rate, demand):
        # A shared rate or demand keeps a leading 1 (broadcast where used: a
        # broadcast demand would be folded as a constant, slowly, at compile time).
        flat_b, live_b, rate_b, demand_b = in_batched
        flat = [x if b else jnp.broadcast_to(x, (axis_size,) + x.shape) for x, b in zip(flat, flat_b)]
        live = live if live_b else jnp.broadcast_to(live, (axis_size,) + live.shape)
        rate, demand = (x if b else x[None] for x, b in ((rate, rate_b), (demand, demand_b)))
        return _levels(tree, period, spare, axis_size, flat, live, rate, demand), (True, True, True)

    return levels


def _levels(tree, period, spare, B, flat, live, rate, demand):
    """The chunk's ``round_levels``: (B, ...) inputs, a month a row (``rate`` and
    ``demand`` may have a leading 1: shared by every month)."""
    _, rounds, rows = live.shape
    hours = demand.shape[-1]
    groups = jax.tree_util.tree_unflatten(tree, flat)
    ever = jnp.any(live, axis=1)  # (B, rows)
    parts = []
    for group in groups:
        lead = np.broadcast_shapes(*(x.shape[1:] for x in group))

        def each(x):  # (B, ...) broadcast as its own shape against the group's, then flat
            x = x.reshape((B,) + (1,) * (len(lead) + 1 - x.ndim) + x.shape[1:])
            return jnp.broadcast_to(x, (B,) + lead).reshape(B, -1)

        begin, end, weight, row = (each(x) for x in group)
        # A row index is often a constant of the program (the same in every month);
        # the barrier keeps XLA from folding the gather's (B, n, 2) index array into
        # the program as a constant (seconds of compiling and its size in memory).
        row = jax.lax.optimization_barrier(row.astype(jnp.int32))
        w = jnp.where(jnp.take_along_axis(ever, row, axis=1), weight, 0.0)
        parts.append((begin, end, w, row))
    total = tree_sum(jnp.abs(parts[0][2]))
    for _, _, w, _ in parts[1:]:
        total = total + tree_sum(jnp.abs(w))
    _, top = jnp.frexp(jnp.maximum(jnp.max(rate, axis=1), jnp.max(demand, axis=1)))
    k = jnp.minimum(_exponent(total, _LOSS), _RATE - spare - top)  # (B,)

    idx, upd, row = [], [], []
    for begin, end, w, r in parts:
        i, u = _updates(begin, end, w, k[:, None], hours)
        idx.append(i)
        upd.append(u)
        row.append(jnp.tile(r, (1, 4)))
    idx, upd, row = (jnp.concatenate(x, axis=1) for x in (idx, upd, row))  # (B, n)
    of_idx = jnp.minimum(idx // period, rounds)  # rounds: past the month's hours
    month = jnp.arange(B, dtype=jnp.int32)[:, None]
    on = live.reshape(B, rounds * rows)
    on = jnp.take_along_axis(on, jnp.minimum(of_idx, rounds - 1) * rows + row, axis=1) & (idx < hours)
    # One flat scatter for the chunk: month b owns hours b·hours ...; int32, exact in any order.
    step = jnp.zeros(B * hours, jnp.int32).at[(month * hours + jnp.minimum(idx, hours - 1)).ravel()].add(
        jnp.where(on, upd, 0).ravel(), mode="promise_in_bounds").reshape(B, hours)
    # Each row's updates per round of their hour; a round's offset is what its
    # live rows carry in from the rounds before.
    slot = (month * rows + row) * (rounds + 1) + of_idx
    per_round = jnp.zeros(B * rows * (rounds + 1), jnp.int32).at[slot.ravel()].add(
        upd.ravel(), mode="promise_in_bounds").reshape(B, rows, rounds + 1)[:, :, :rounds]
    carried = int_cumsum(per_round) - per_round  # (B, rows, rounds)
    offset = jnp.sum(jnp.where(live, jnp.swapaxes(carried, 1, 2), 0), axis=2, dtype=jnp.int32)  # (B, rounds)

    of_hour = np.minimum(np.arange(hours) // period, rounds - 1)  # static
    first = np.arange(rounds) * period  # each round's first hour
    prefix = int_cumsum(step)
    before = jnp.concatenate([jnp.zeros((B, 1), jnp.int32), prefix], axis=1)[:, first]
    lost = (offset[:, of_hour] + prefix - before[:, of_hour]).astype(jnp.float32)
    one = jnp.ldexp(jnp.float32(1.0), k)[:, None]
    r = jnp.round(rate * one)[:, of_hour]
    d = jnp.round(demand * one)  # (B, hours): each month's own scale
    return r - lost, d, k
