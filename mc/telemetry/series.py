"""Telemetry rows read back onto one row of samples per card.

A fit reads rows (card, time, rate), with optional class and rated columns, from a
table or a Parquet or CSV file, or a Prometheus ``query_range`` export
(``prometheus``). A time is hours, or a datetime (read as hours since the earliest
sample). Where every time lies on a grid ``t0 + k·Δ`` (``Δ`` the most common gap,
within 1% of it) the samples sit on that grid, a missing sample a gap (NaN). Times
off any grid, or a probe series, are read as SPEC §8.3 says (``slots``): each sample
keeps its own interval (``start``, ``width``), outages split a card's series, and the
samples sit in slots about the median gap apart. The hour of day of each time
(``clock``) is the data's: numeric hours are hours since a midnight; datetimes are
read in UTC or a given time zone. What no fit can use is refused in one line: one
card, a card with one sample, samples that never vary, a cadence coarser than the
month, and (in a file) a card whose rows go back in time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import _validate as v
from ..files import input_file
from ..units import HOURS
from . import slots
from .columns import READ, REQUIRED

MAX_CELLS = 1 << 31  # cards × grid samples held in memory (float64)
MAX_ROWS_BYTES = 16 << 30
COLUMNS = tuple(READ)  # the columns a fit reads (``columns.READ``); the first three are needed


@dataclass(frozen=True)
class Series:
    """Samples of each card in time order. ``y``: (cards, n) float64 tok/s, NaN where a
    card has no sample. On a grid (``start`` None) sample ``j`` is at ``t0 + j·Δ`` and
    averages the ``Δ`` before it; read from irregular times, slot ``j`` of a card holds a
    sample averaging ``[t0 + start, t0 + start + width)`` and slots are about ``Δ`` (the
    median gap) apart."""

    cards: np.ndarray  # (cards,) card ids as read
    classes: np.ndarray  # (cards,) str class names ("" when the rows hold none)
    y: np.ndarray  # (cards, n) float64 tok/s
    delta: float  # hours between samples (slots)
    t0: float  # time of the first grid sample, h
    rated: dict = field(default_factory=dict)  # {class: tok/s} from the rows' rated column (empty without one)
    start: np.ndarray | None = None  # (cards, n) float64 h after t0 each sample's interval starts (NaN: none)
    width: np.ndarray | None = None  # (cards, n) float64 h each sample averages (NaN: none)
    kind: str = "grid"  # grid, interval or probe
    clock0: float = 0.0  # hour of day at t0
    outages: int = 0  # gaps longer than max_gap
    replaced: int = 0  # cards split at an outage where their level stepped (the part after: a replacement)

    @property
    def n_cards(self) -> int:
        return int(self.y.shape[0])

    @property
    def regular(self) -> bool:
        return self.start is None

    @property
    def span(self) -> float:
        """Hours the samples cover: ``n·Δ`` on a grid; from the earliest interval's start
        to the latest's end otherwise."""
        if self.regular:
            return float(self.y.shape[1] * self.delta)
        return float(np.nanmax(self.start + self.width) - min(np.nanmin(self.start), 0.0))

    @property
    def ref(self) -> float:
        """Hours a typical sample averages: ``Δ`` on a grid, the median width otherwise
        (``σ`` is fitted at it, ``sigma_hour = σ·sqrt(ref)``)."""
        if self.regular:
            return float(self.delta)
        return float(np.nanmedian(self.width))

    def scale(self) -> np.ndarray | None:
        """(cards, n) ``sqrt(width/ref)``: a sample's error over a typical one's is
        ``1/scale`` (None on a grid, where every sample is alike)."""
        if self.regular:
            return None
        return np.sqrt(self.width / self.ref)

    def times(self) -> np.ndarray:
        """(cards, n) float64 h after t0: the middle of each sample's interval."""
        if self.regular:
            mid = (np.arange(self.y.shape[1]) - 0.5) * self.delta
            return np.broadcast_to(mid, self.y.shape)
        return self.start + 0.5 * self.width

    def take(self, idx: np.ndarray) -> "Series":
        """The cards at ``idx`` (with repeats: a bootstrap's resample)."""
        return self.with_y(self.y[idx], self.cards[idx], idx)

    def with_y(self, y: np.ndarray, cards: np.ndarray, idx: np.ndarray | None = None) -> "Series":
        """The same sampling (of the cards at ``idx``, default all) with samples ``y``."""
        pick = (lambda a: a) if idx is None else (lambda a: a[idx])
        return Series(cards, pick(self.classes), y, self.delta, self.t0, self.rated,
                      None if self.regular else pick(self.start), None if self.regular else pick(self.width),
                      self.kind, self.clock0, self.outages, self.replaced)


def columns_of(frame: Any, columns: dict | None, what: str) -> dict[str, str]:
    """``{key: the frame's column}`` for each of ``COLUMNS`` the frame holds, with
    ``columns`` naming the frame's own column for a key (the rest are named as the key)."""
    given = dict(columns or {})
    for key, name in given.items():
        if key not in COLUMNS:
            v.fail(f"columns.{key}", name, f"names no column a fit reads: {', '.join(COLUMNS)}")
    have = list(map(str, frame.columns))
    names = {key: str(given.get(key, key)) for key in COLUMNS}
    missing = [key if key not in given else f"{key} (named {given[key]})" for key in REQUIRED
               if names[key] not in have]
    if missing:
        needs = f"{', '.join(REQUIRED[:-1])} and {REQUIRED[-1]}"
        v.fail(what, have[:8], f"needs columns {needs} (missing {', '.join(missing)})")
    for key in (k for k in COLUMNS if k not in REQUIRED):
        if key in given and names[key] not in have:
            v.fail(f"columns.{key}", given[key], f"names no column of the {what}; its columns: {', '.join(have[:8])}")
    return {key: name for key, name in names.items() if name in have}


def hours(col: Any) -> np.ndarray:
    """A time column as float hours: numbers as they are; datetimes (datetime64,
    tz-aware or not, or ISO 8601 strings) as hours since the earliest. NaN where a
    value is neither."""
    import pandas as pd
    from pandas.api import types

    if types.is_datetime64_any_dtype(col):
        stamps = col
    elif types.is_numeric_dtype(col) and not types.is_bool_dtype(col):
        return col.to_numpy(np.float64, na_value=np.nan)
    else:
        num = pd.to_numeric(col, errors="coerce")
        if num.notna().all():
            return num.to_numpy(np.float64)
        stamps = pd.to_datetime(col, utc=True, errors="coerce", format="ISO8601")
        if stamps.isna().all() and num.notna().any():
            return num.to_numpy(np.float64, na_value=np.nan)  # numbers with a stray word: the word is the error
    return ((stamps - stamps.min()) / pd.Timedelta(hours=1)).to_numpy(np.float64, na_value=np.nan)


def check_tz(tz: Any) -> str | None:
    """A time zone's name (``UTC``, ``Europe/Paris``), or None (UTC)."""
    if tz is None:
        return None
    from zoneinfo import ZoneInfo

    try:
        ZoneInfo(str(tz))
    except (ValueError, KeyError, OSError):
        v.fail("tz", tz, "must be a time zone's name, such as UTC or Europe/Paris (IANA)")
    return str(tz)


def clock0_of(col: Any, tz: str | None, unix_start: float | None = None) -> float:
    """The hour of day at time 0 of ``hours(col)``: 0 for numeric hours (hours since a
    midnight) unless ``unix_start`` gives time 0 in unix seconds (a Prometheus export);
    for datetimes, the earliest one's hour of day in ``tz`` (default UTC; naive
    datetimes are UTC)."""
    import pandas as pd
    from pandas.api import types

    if unix_start is not None:
        col = pd.Series([pd.Timestamp(float(unix_start), unit="s", tz="UTC")])
    elif types.is_numeric_dtype(col) and not types.is_bool_dtype(col):
        return 0.0
    if not types.is_datetime64_any_dtype(col):
        if pd.to_numeric(col, errors="coerce").notna().all():
            return 0.0
        col = pd.to_datetime(col, utc=True, errors="coerce", format="ISO8601")
    stamps = col if getattr(col.dt, "tz", None) is not None else col.dt.tz_localize("UTC")
    first = stamps.min()
    if tz is not None:
        first = first.tz_convert(tz)
    return float(first.hour + first.minute / 60.0 + first.second / 3600.0 + first.microsecond / 3.6e9)


def from_frame(frame: Any, *, what: str = "rows", columns: dict | None = None, ordered: bool = False,
               probe: float | None = None, max_gap: float | None = None, tz: str | None = None,
               step: float | None = None) -> Series:
    """A ``Series`` from a table with columns ``card``, ``time`` (h, or datetimes)
    and ``rate`` (tok/s), and optionally ``class`` and ``rated`` (tok/s, one value
    per class; blank where not given). ``columns`` maps a key to the table's own
    name (``{"rate": "tok_s"}``). ``ordered``: each card's rows must go forward in
    time in the table's order (a file's rows must; a table built in memory may be in
    any order). ``probe``: seconds each sample's benchmark runs from its time (a probe
    series; None: each sample averages the interval since the card's previous one);
    ``max_gap``: hours past which a gap is an outage (default 3× the card's median gap);
    ``tz``: the time zone whose hour of day datetimes are read in (default UTC);
    ``step``: a card whose level steps across an outage by more than this share is
    split there, the part after a replacement (default: a step is wander).
    One-line errors name what is wrong."""
    import pandas as pd

    probe = slots.check_probe(probe)
    max_gap = slots.check_max_gap(max_gap)
    tz = check_tz(tz)
    step = slots.check_step(step)

    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"{what} must be a pandas DataFrame with columns card, time, rate, not {type(frame).__name__}")
    names = columns_of(frame, columns, what)
    if len(frame) == 0:
        v.fail(what, 0, "holds no rows")
    if len(frame) < 2:
        v.fail(what, len(frame), "must hold at least 2 rows")
    col = {key: frame[name] for key, name in names.items()}
    time = hours(col["time"])
    rate = pd.to_numeric(col["rate"], errors="coerce").to_numpy(np.float64, na_value=np.nan)
    for key, x in (("time", time), ("rate", rate)):
        with np.errstate(invalid="ignore"):
            bad = ~np.isfinite(x) | (((x < 0) | (x > v.FLOAT32_MAX)) if key == "rate" else np.zeros(len(x), bool))
        if bad.any():
            i = int(bad.argmax())
            v.fail(f"{what}.{names[key]}", _py(col[key].iloc[i]), f"row {i}: must be " + (
                f"a finite number >= 0 that float32 holds (at most {v.FLOAT32_MAX:.4g} tok/s)" if key == "rate"
                else "hours (a finite number) or a datetime (ISO 8601)"))
    blank = (col["card"].isna() | (col["card"].astype(str).str.strip() == "")).to_numpy()
    if blank.any():
        i = int(blank.argmax())
        v.fail(f"{what}.{names['card']}", "", f"row {i}: a card's id must not be empty")
    card_ids, card = np.unique(col["card"].astype(str).to_numpy(), return_inverse=True)
    if ordered:
        _forward(card, time, card_ids, col["time"], f"{what}.{names['time']}")
    order = np.lexsort((time, card))
    card, time, rate = card[order], time[order], rate[order]
    same = card[1:] == card[:-1]
    gaps = np.diff(time)[same]
    if (gaps == 0).any():
        i = int(np.flatnonzero(same & (np.diff(time) == 0))[0])
        v.fail(f"{what}.{names['time']}", float(time[i]), f"card {card_ids[card[i]]} has two samples at this time")
    if gaps.size == 0:
        v.fail(what, len(frame), "must hold at least two samples of one card (the sampling interval is their gap)")
    delta = float(_common_gap(gaps))
    t0 = float(time.min())
    pos = (time - t0) / delta
    k = np.rint(pos).astype(np.int64)
    start = width = None
    kind, outages = "grid", 0
    replaced = 0
    if probe is not None or step is not None or (np.abs(pos - k) > 0.01).any():  # irregular: SPEC §8.3
        kind = "interval" if probe is None else "probe"
        delta = float(np.median(gaps))
        a, w, out = slots.intervals(card, time, len(card_ids), probe=probe, max_gap=max_gap)
        if step is not None:
            card, card_ids, replaced = slots.split_steps(card, time, rate, out, card_ids, step)
            if replaced:
                a, w, out = slots.intervals(card, time, len(card_ids), probe=probe, max_gap=max_gap)
        outages = int(out.sum())
        k = slots.slots(card, time, delta, t0)
    if delta > HOURS:
        v.fail(f"{what}.{names['time']}", delta, f"is the hours between samples, coarser than the month ({HOURS} h): "
               "a fit needs samples at most a month apart")
    n = int(k.max()) + 1
    if n * len(card_ids) > MAX_CELLS:
        v.fail(what, len(frame), f"spans {n:,} samples for {len(card_ids):,} cards, above the {MAX_CELLS:,} a fit holds")
    if kind != "grid":
        start = np.full((len(card_ids), n), np.nan)
        width = np.full((len(card_ids), n), np.nan)
        start[card, k] = a - t0
        width[card, k] = w
    y = np.full((len(card_ids), n), np.nan)
    y[card, k] = rate
    ids = _ids(card_ids)
    _usable(y, ids, what, names["rate"], delta)
    first = np.zeros(len(card_ids), np.int64)
    first[card[::-1]] = np.arange(len(card))[::-1]
    if "class" in names:
        cls = col["class"].astype(str).to_numpy()[order]
        classes = cls[first]
        mixed = cls != classes[card]
        if mixed.any():
            i = int(mixed.argmax())
            v.fail(f"{what}.{names['class']}", cls[i], f"card {card_ids[card[i]]} is of two classes")
    else:
        cls, classes = np.full(len(card), ""), np.full(len(card_ids), "", dtype=object)
    rated = _rated(col["rated"], order, cls, f"{what}.{names['rated']}") if "rated" in names else {}
    clock0 = (clock0_of(col["time"], tz, frame.attrs.get("unix_start")) + t0) % 24.0
    return Series(ids, np.asarray(classes, dtype=object), y, delta, t0, rated, start, width, kind, clock0, outages,
                  replaced)


def _forward(card: np.ndarray, time: np.ndarray, card_ids: np.ndarray, raw: Any, field: str) -> None:
    """Refuse a card whose rows, in the file's order, go back in time."""
    by = np.argsort(card, kind="stable")
    back = (card[by][1:] == card[by][:-1]) & (np.diff(time[by]) < 0)
    if back.any():
        i = int(back.argmax())
        was, row = int(by[i]), int(by[i + 1])
        v.fail(field, _py(raw.iloc[row]), f"row {row}: card {card_ids[card[row]]} goes back in time from "
               f"{raw.iloc[was]} at row {was} (a card's rows must go forward in time)")


def _usable(y: np.ndarray, ids: np.ndarray, what: str, rate: str, delta: float) -> None:
    """Refuse a grid no fit can use: one card, a card with one sample, no noise."""
    count = np.isfinite(y).sum(axis=1)
    if len(ids) < 2:
        v.fail(f"{what}.card", _py(ids[0]), "is the only card: a fit needs at least 2 (the lottery is the spread "
               "between cards)")
    if (count < 2).any():
        i = int((count < 2).argmax())
        v.fail(f"{what}.card", _py(ids[i]), f"has one sample: a card needs at least 2 (samples every {delta:g} h)")
    lo, hi = np.nanmin(y, axis=1), np.nanmax(y, axis=1)
    if (lo == hi).all():
        if (lo == lo[0]).all():
            v.fail(f"{what}.{rate}", float(lo[0]), "is every sample of every card: a fit needs samples that vary "
                   "(the noise)")
        v.fail(f"{what}.{rate}", float(lo[0]), f"is every sample of card {ids[0]}, and each other card's samples are "
               "one value too: a fit needs samples that vary (the noise)")


def _rated(col: Any, order: np.ndarray, cls: np.ndarray, field: str) -> dict[str, float]:
    """``{class: tok/s}`` from a rated column: blank where not given, else > 0, one value a class."""
    import pandas as pd

    x = pd.to_numeric(col, errors="coerce").to_numpy(np.float64, na_value=np.nan)
    bad = (col.notna().to_numpy() & ~np.isfinite(x)) | (x <= 0) | (x > v.FLOAT32_MAX)
    if bad.any():
        i = int(bad.argmax())
        v.fail(field, _py(col.iloc[i]), f"row {i}: must be a rated rate in tok/s (a number > 0 that float32 holds, "
               f"at most {v.FLOAT32_MAX:.4g}), or blank")
    x = x[order]
    out: dict[str, float] = {}
    for name in dict.fromkeys(cls):
        vals = np.unique(x[(cls == name) & np.isfinite(x)])
        if len(vals) > 1:
            whose = f"class {name}'s rows" if name else "the rows"
            v.fail(field, float(vals[1]), f"{whose} give both {vals[0]:g} and {vals[1]:g}: a class has one rated rate")
        if len(vals):
            out[str(name)] = float(vals[0])
    return out


def _py(x: Any) -> Any:
    """A NumPy or pandas scalar as Python's own (so an error shows ``7.0``, not ``np.float64(7.0)``)."""
    return x.item() if isinstance(x, np.generic) else x


def _common_gap(gaps: np.ndarray) -> float:
    """The most common gap (to 1e-9 h): the sampling interval, whatever the missing samples."""
    vals, counts = np.unique(np.round(gaps, 9), return_counts=True)
    return float(vals[counts.argmax()])


def _ids(names: np.ndarray) -> np.ndarray:
    try:
        return np.asarray([int(x) for x in names])
    except ValueError:
        return names


def read(path: Any, *, columns: dict | None = None, counter: bool = False, probe: float | None = None,
         max_gap: float | None = None, tz: str | None = None, step: float | None = None) -> Series:
    """A ``Series`` from a Parquet or CSV file of rows (``mc telemetry``'s, or any
    with columns card, time, rate and optionally class and rated; ``columns`` maps
    a key to the file's own column name), or from a Prometheus ``query_range``
    export (``.json``; ``columns`` may name the labels of the card and the class;
    ``counter``: its values are a cumulative count of tokens, differenced into tok/s);
    ``probe``, ``max_gap``, ``tz``, ``step`` as ``from_frame``."""
    import pandas as pd

    how = {"probe": slots.check_probe(probe), "max_gap": slots.check_max_gap(max_gap), "tz": check_tz(tz),
           "step": slots.check_step(step)}

    ext = Path(str(path)).suffix.lower()
    p = input_file(path, "file", limit=MAX_ROWS_BYTES)
    if ext not in (".parquet", ".csv", ".json"):
        v.fail("file", str(p), "must be a .parquet or .csv file of rows (card, time, rate), or a Prometheus "
               "query_range export (.json)")
    if ext == ".json":
        from . import prometheus

        frame = prometheus.frame(p, columns=columns, counter=counter)
        return from_frame(frame, what="file", ordered=True, **how)
    if counter:
        v.fail("counter", True, "applies to a Prometheus export (.json) only: a table's rate column is tok/s")
    if p.stat().st_size == 0:
        v.fail("file", str(p), "is empty")
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
    if len(frame) == 0:
        v.fail("file", str(p), "holds no rows")
    return from_frame(frame, what="file", columns=columns, ordered=True, **how)
