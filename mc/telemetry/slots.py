"""Irregular times (SPEC §8.3): each sample's own interval, and slots that keep a card's
samples in time order on one array.

A sample of an **interval** series (a rate over a scrape step, a counter's difference)
at ``τ_j`` reports the card's mean over ``[τ_{j−1}, τ_j)``, its own ``Δ_j``; a gap
longer than ``max_gap`` (default 3× the card's median gap) is an outage, and the first
sample after it (and a card's first sample) reports the card's median gap. A **probe**
series (each sample a benchmark run of ``probe`` seconds starting at ``τ_j``) reports the
mean over ``[τ_j, τ_j + probe)``, whatever the gap.

The fit's parts (detection, noise, the spread of ``k``-sample means) work on an array of
samples per card. Sample ``j`` of a card goes to slot
``k_j = max(round((τ_j − t0)/Δ), k_{j−1} + 1)`` with ``Δ`` the median gap of the fleet:
slots follow time, within a slot or so of ``τ/Δ``, never collide, and an outage leaves
its slots empty (NaN), as a missed sample on a grid does; so consecutive slots are
about ``Δ`` apart whatever the jitter, and a window of ``w`` slots about ``w·Δ`` hours.
"""

from __future__ import annotations

import numpy as np

from .. import _validate as v

KINDS = ("interval", "probe")
MAX_GAP_MEDIANS = 3.0  # default max_gap: this many times the card's median gap
SECONDS = 3600.0  # per hour


def medians(card: np.ndarray, gaps: np.ndarray, same: np.ndarray, n_cards: int) -> np.ndarray:
    """(cards,) each card's median gap between consecutive samples (h); ``gaps``
    (rows − 1,) with ``same`` marking the pairs of one card (rows sorted by card, time)."""
    g, c = gaps[same], card[1:][same]
    order = np.lexsort((g, c))
    g, c = g[order], c[order]
    count = np.bincount(c, minlength=n_cards)
    first = np.concatenate([[0], np.cumsum(count)[:-1]])
    lo = first + (count - 1) // 2
    hi = first + count // 2
    out = np.full(n_cards, np.nan)
    has = count > 0
    out[has] = 0.5 * (g[lo[has]] + g[hi[has]])
    return out


def intervals(card: np.ndarray, time: np.ndarray, n_cards: int, *, probe: float | None = None,
              max_gap: float | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each sample's averaging interval, rows sorted by (card, time).

    Args:
        probe: seconds of a probe series (None: an interval series).
        max_gap: hours past which a gap is an outage (None: 3× the card's median gap).
    Returns:
        ``(start, width, outage)``: (rows,) float64 hours each; ``outage`` (rows,) bool
        marks the first sample after an outage.
    """
    same = card[1:] == card[:-1]
    gaps = np.diff(time)
    med = medians(card, gaps, same, n_cards)
    med = np.where(np.isfinite(med), med, 1.0)
    gap = np.concatenate([[np.inf], np.where(same, gaps, np.inf)])
    limit = MAX_GAP_MEDIANS * med[card] if max_gap is None else np.full(len(card), float(max_gap))
    first = ~np.concatenate([[False], same])
    outage = ~first & (gap > limit)
    if probe is not None:
        width = np.full(len(card), float(probe) / SECONDS)
        return time.copy(), width, outage
    width = np.where(first | outage, med[card], gap)
    return time - width, width, outage


def slots(card: np.ndarray, time: np.ndarray, delta: float, t0: float) -> np.ndarray:
    """(rows,) int64 slot of each sample (rows sorted by (card, time)):
    ``k_j = max(round((τ_j − t0)/Δ), k_{j−1} + 1)`` within each card."""
    want = np.rint((time - t0) / delta).astype(np.int64)
    starts = np.concatenate([[True], card[1:] != card[:-1]])
    run_start = np.maximum.accumulate(np.where(starts, np.arange(len(card)), 0))
    rank = np.arange(len(card)) - run_start
    # k_j = rank_j + max_{i ≤ j, same card} (want_i − rank_i): a cumulative maximum per card,
    # made one by lifting each card above the ones before it
    x = want - rank
    span = int(x.max() - x.min()) + 1
    lifted = x + card.astype(np.int64) * span
    return rank + np.maximum.accumulate(lifted) - card.astype(np.int64) * span


def split_steps(card: np.ndarray, time: np.ndarray, rate: np.ndarray, outage: np.ndarray, card_ids: np.ndarray,
                step: float) -> tuple[np.ndarray, np.ndarray, int]:
    """Cards whose level steps across an outage by more than ``step`` (a share: the
    segment's median rate over the one before's, less 1) split there, the part after
    taken as a replacement card (id ``ID~k``); rows sorted by (card, time).

    Returns ``(card, card_ids, splits)``: each row's new card index, the new ids, and
    how many replacements were made. A smaller step across a gap stays one card (wander).
    """
    first = np.concatenate([[True], card[1:] != card[:-1]])
    seg = np.cumsum(first | outage) - 1
    order = np.lexsort((rate, seg))
    count = np.bincount(seg)
    lo = np.concatenate([[0], np.cumsum(count)[:-1]])
    med = 0.5 * (rate[order][lo + (count - 1) // 2] + rate[order][lo + count // 2])
    starts = np.flatnonzero(first | outage)
    stepped = np.zeros(len(card), bool)
    for i in starts[outage[starts]]:
        before, after = med[seg[i] - 1], med[seg[i]]
        if before > 0 and abs(after / before - 1.0) > step:
            stepped[i] = True
    if not stepped.any():
        return card, card_ids, 0
    new = np.cumsum(first | stepped) - 1
    part = np.cumsum(stepped) - np.maximum.accumulate(np.where(first, np.cumsum(stepped), 0))
    head = np.flatnonzero(first | stepped)
    ids = np.asarray([str(card_ids[card[i]]) if part[i] == 0 else f"{card_ids[card[i]]}~{part[i] + 1}" for i in head],
                     dtype=object)
    return new, ids, int(stepped.sum())


def check_step(step) -> float | None:
    """``step``: None (a level step across a gap is wander), or a share > 0."""
    if step is None:
        return None
    return float(v.number("step", step, lo=0.0, lo_open=True, hi=1e6))


def check_probe(probe) -> float | None:
    """``probe`` seconds: None, or a number > 0 and at most a day."""
    if probe is None:
        return None
    return float(v.number("probe", probe, lo=0.0, lo_open=True, hi=86400.0))


def check_max_gap(max_gap) -> float | None:
    """``max_gap`` hours: None (3× each card's median gap), or a number > 0."""
    if max_gap is None:
        return None
    return float(v.number("max_gap", max_gap, lo=0.0, lo_open=True, hi=1e6))
