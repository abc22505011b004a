"""What SPEC §6's month carries and hands between its steps: the slots and totals
of the rounds' scan (``Slots``, ``Tally``), one round's inputs (``Round``), what no
round changes (``Fixed``), a round's scores and run set (``Scored``, ``Chosen``) and
what it leaves for the month's capacity (``Trace``). The steps themselves are
``mc.fleet.autoscaler``'s."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax

from . import checkpoints, month


class Slots(NamedTuple):
    """What the pool's slots hold between rounds (the scan's carry)."""

    rate: jax.Array  # (pool,) float32 tok/s true rate of each slot's card (0 when empty)
    quality: jax.Array  # (pool,) float32 its q, lemon factor included
    lemon: jax.Array  # (pool,) bool
    present: jax.Array  # (pool,) bool: the slot holds a card
    start: jax.Array  # (pool,) float32 h the card serves from (-W for an original)
    marks: jax.Array  # (pool,) int32 consecutive rounds marked
    lo: jax.Array  # (pool, dips) float32 h each dip's begin, cut to its owner's start
    hi: jax.Array  # (pool, dips) float32 h each dip's end, cut where its owner left
    weight: jax.Array  # (pool, dips) float32 tok/s its loss: owner's rate × depth (0: no owner)
    # SPEC §1.4.1 with replacements (None otherwise): the round whose start began the
    # slot's card's own wander path (-1: the original's) and its correction
    # ``Δ = sd·ζ − u(t_k)`` (``checkpoints.restart``).
    tau: jax.Array | None = None  # (pool,) int32
    corr: jax.Array | None = None  # (pool,) float32
    ext: Any = None  # SPEC §10's slot state (``outages.timeline.Hold``; None: terms off)


class Tally(NamedTuple):
    """The month's running totals (the rest of the carry)."""

    warm: jax.Array  # () int32 cents
    churn: jax.Array  # () int32 cents
    n_evicted: jax.Array  # () int32
    n_wrong: jax.Array  # () int32
    lemons_evicted: jax.Array  # () int32
    first: jax.Array  # () int32 h of the first round with an eviction (730: none yet)
    run_hours: jax.Array  # () float32 card-hours in run sets


class Round(NamedTuple):
    """One round's inputs (the scan's xs)."""

    t: jax.Array  # () float32 h, t_k
    hour: jax.Array  # () int32 h, t_k
    length: jax.Array  # () float32 h in the round
    eps: jax.Array  # (pool,) float32 window errors
    ticket_quality: jax.Array  # (pool,) float32 q of the replacement tickets
    ticket_lemon: jax.Array  # (pool,) bool
    target: jax.Array  # () float32 tok/s the run set's target
    rent: jax.Array  # (pool,) int32 cents a run card bills this round
    index: jax.Array | None = None  # () int32 k (with restarts)
    corr: jax.Array | None = None  # (pool,) float32 a card placed at t_k: its Δ (``checkpoints.restart``)
    ext: Any = None  # SPEC §10: (k, t_{k+1}), () int32 and () float32


class Fixed(NamedTuple):
    """What every round reads and none changes."""

    rated: jax.Array  # (pool,) float32 tok/s each slot's class rated rate r
    price: jax.Array  # (pool,) float32 cents a month, each slot's class price p
    begin: jax.Array  # (pool, dips) float32 h each slot dip's begin
    depth: jax.Array  # (pool, dips) float32 its depth δ
    # SPEC §1.4.1 (None when its terms are zero): the fleet's factor and the slots'
    # wander chains, the window's shared error, and with restarts the rounds' unit
    # chains (``checkpoints.unit``).
    sf: month.Structured | None = None
    common: jax.Array | None = None  # () float32
    unit: checkpoints.Unit | None = None
    ext: Any = None  # SPEC §10: what every round's timelines read (``outages.timeline.Env``)


class Scored(NamedTuple):
    """A round's scores (SPEC §6 "Scoring at t_k")."""

    score: jax.Array  # (pool,) float32 tok/s: s, or r × typical for an unscored card
    scored: jax.Array  # (pool,) bool: a card in the slot with a window (w > 0)
    typical: jax.Array  # () float32 median relative score s / r of the scored cards (1 when none)


class Chosen(NamedTuple):
    """A round's run set (SPEC §6 "Run set at t_k")."""

    run: jax.Array  # (pool,) bool cards in the run set
    score: jax.Array  # (pool,) float32 tok/s the score it ranks (a fresh card's: r × typical)
    boot: jax.Array  # () float32 tok/s rate of its booting replacements (lost while they boot)


class Trace(NamedTuple):
    """What a round leaves for the month's capacity and the per-card outputs (the scan's ys)."""

    rate: jax.Array  # (pool,) float32 tok/s true rate of each slot's card after the round's evictions
    run: jax.Array  # (pool,) bool
    evicted: jax.Array  # (pool,) bool
    score: jax.Array  # (pool,) float32 tok/s, ``Chosen.score``
    n_run: jax.Array  # () int32
    boot: jax.Array  # () float32 tok/s
    start: jax.Array  # (pool,) float32 h each slot's card serves from
    tau: jax.Array | None = None  # (pool,) int32 ``Slots.tau`` after the round
    corr: jax.Array | None = None  # (pool,) float32
    ext: Any = None  # SPEC §10: the round's ``outages.ledger.Pieces``
