"""Telemetry rows read back onto a regular grid: one row of samples per card.

A fit reads rows (card, time, rate), with an optional class column, from a table
or a Parquet or CSV file. The sampling interval ``Δ`` is the most common gap
between a card's consecutive times; every time must lie on the grid
``t0 + k·Δ`` (within 1% of ``Δ``), and a missing sample is a gap (NaN), not an error.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .. import _validate as v
from ..files import input_file

MAX_CELLS = 1 << 31  # cards × grid samples held in memory (float64)
MAX_ROWS_BYTES = 16 << 30


@dataclass(frozen=True)
class Series:
    """Samples on a regular grid. ``y``: (cards, n) float64 tok/s, NaN where a card
    has no sample; sample ``j`` is at ``t0 + j·Δ`` and averages the ``Δ`` before it."""

    cards: np.ndarray  # (cards,) card ids as read
    classes: np.ndarray  # (cards,) str class names ("" when the rows hold none)
    y: np.ndarray  # (cards, n) float64 tok/s
    delta: float  # hours between samples
    t0: float  # time of the first grid sample, h

    @property
    def n_cards(self) -> int:
        return int(self.y.shape[0])

    @property
    def span(self) -> float:
        """Hours the grid covers: ``n·Δ``."""
        return float(self.y.shape[1] * self.delta)

    def take(self, idx: np.ndarray) -> "Series":
        """The cards at ``idx`` (with repeats: a bootstrap's resample)."""
        return Series(self.cards[idx], self.classes[idx], self.y[idx], self.delta, self.t0)


def from_frame(frame: Any, *, what: str = "rows") -> Series:
    """A ``Series`` from a table with columns ``card``, ``time`` (h) and ``rate``
    (tok/s), and optionally ``class``. One-line errors name what is wrong."""
    import pandas as pd

    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"{what} must be a pandas DataFrame with columns card, time, rate, not {type(frame).__name__}")
    missing = [c for c in ("card", "time", "rate") if c not in frame.columns]
    if missing:
        v.fail(what, list(map(str, frame.columns))[:8], f"needs columns card, time and rate (missing {', '.join(missing)})")
    if len(frame) < 2:
        v.fail(what, len(frame), "must hold at least 2 rows")
    time = pd.to_numeric(frame["time"], errors="coerce").to_numpy(np.float64)
    rate = pd.to_numeric(frame["rate"], errors="coerce").to_numpy(np.float64)
    for name, x in (("time", time), ("rate", rate)):
        bad = ~np.isfinite(x) | ((x < 0) if name == "rate" else np.zeros(len(x), bool))
        if bad.any():
            i = int(bad.argmax())
            v.fail(f"{what}.{name}", frame[name].iloc[i], f"row {i}: must be a finite number"
                   + (" >= 0" if name == "rate" else ""))
    card_ids, card = np.unique(frame["card"].astype(str).to_numpy(), return_inverse=True)
    order = np.lexsort((time, card))
    card, time, rate = card[order], time[order], rate[order]
    same = card[1:] == card[:-1]
    gaps = np.diff(time)[same]
    if (gaps == 0).any():
        i = int(np.flatnonzero(same & (np.diff(time) == 0))[0])
        v.fail(f"{what}.time", time[i], f"card {card_ids[card[i]]} has two samples at this time")
    if gaps.size == 0:
        v.fail(what, len(frame), "must hold at least two samples of one card (the sampling interval is their gap)")
    delta = float(_common_gap(gaps))
    t0 = float(time.min())
    pos = (time - t0) / delta
    k = np.rint(pos).astype(np.int64)
    off = np.abs(pos - k) > 0.01
    if off.any():
        i = int(off.argmax())
        v.fail(f"{what}.time", time[i], f"is off the grid of samples every {delta * 60:g} minutes from {t0:g} h "
               "(a fit needs regular samples; missing ones are fine)")
    n = int(k.max()) + 1
    if n * len(card_ids) > MAX_CELLS:
        v.fail(what, len(frame), f"spans {n:,} samples for {len(card_ids):,} cards, above the {MAX_CELLS:,} a fit holds")
    y = np.full((len(card_ids), n), np.nan)
    y[card, k] = rate
    if "class" in frame.columns:
        cls = frame["class"].astype(str).to_numpy()[order]
        first = np.zeros(len(card_ids), np.int64)
        first[card[::-1]] = np.arange(len(card))[::-1]
        classes = cls[first]
        mixed = cls != classes[card]
        if mixed.any():
            i = int(mixed.argmax())
            v.fail(f"{what}.class", cls[i], f"card {card_ids[card[i]]} is of two classes")
    else:
        classes = np.full(len(card_ids), "", dtype=object)
    ids = _ids(card_ids)
    return Series(ids, np.asarray(classes, dtype=object), y, delta, t0)


def _common_gap(gaps: np.ndarray) -> float:
    """The most common gap (to 1e-9 h): the sampling interval, whatever the missing samples."""
    vals, counts = np.unique(np.round(gaps, 9), return_counts=True)
    return float(vals[counts.argmax()])


def _ids(names: np.ndarray) -> np.ndarray:
    try:
        return np.asarray([int(x) for x in names])
    except ValueError:
        return names


def read(path: Any) -> Series:
    """A ``Series`` from a Parquet or CSV file of rows (``mc telemetry``'s, or any
    with columns card, time, rate and optionally class)."""
    import pandas as pd

    p = input_file(path, "file", limit=MAX_ROWS_BYTES)
    ext = Path(p).suffix.lower()
    if ext not in (".parquet", ".csv"):
        v.fail("file", str(p), "must be a .parquet or .csv file of rows (card, time, rate)")
    try:
        if ext == ".parquet":
            from ..files import read_parquet

            frame = read_parquet(p).to_pandas()
        else:
            frame = pd.read_csv(p)
    except (OSError, ValueError, UnicodeDecodeError) as err:
        if isinstance(err, v.ParamError):
            raise
        v.fail("file", str(p), f"cannot be read as {ext[1:]} ({type(err).__name__})")
    return from_frame(frame, what="file")
