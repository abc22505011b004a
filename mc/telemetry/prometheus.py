"""A Prometheus ``query_range`` export read as telemetry rows (card, time, rate).

The export is what ``/api/v1/query_range`` answers::

    {"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": {"instance": "gpu-07:9400", ...}, "values": [[1717200000, "6843.2"], ...]}, ...]}}

Each series is a card, its id the value of a label (``instance`` unless ``columns``
names another as ``{"card": LABEL}``), its class another label's where
``{"class": LABEL}`` is given. A value is a rate in tok/s, or with ``counter`` a
cumulative count of tokens, differenced into tok/s over each step: after a drop
(a restart) the count starts again from 0, so the step's increase is the new value
itself, as Prometheus's ``rate()`` takes it; a difference across a missing step is
left out. "NaN" is a missing sample; unix-second times become hours since the
earliest. One-line errors name the series and the value.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from .. import _validate as v

CARD_LABEL = "instance"
KEYS = ("card", "class")  # what --columns may name in an export: labels
SHAPE = ('a Prometheus query_range export: {"status": "success", "data": {"resultType": "matrix", '
         '"result": [{"metric": {labels}, "values": [[unix_time, "value"], ...]}, ...]}}')


def _name(labels: dict) -> str:
    """A series as Prometheus writes one: ``{instance="a:9400",job="dcgm"}`` (at most 120 characters)."""
    text = "{" + ",".join(f'{k}="{x}"' for k, x in labels.items()) + "}"
    return text if len(text) <= 120 else text[:117] + "..."


def load(path: Path) -> Any:
    """The parsed JSON of a file, or a one-line error."""
    try:
        with open(path, "rb") as fh:
            return json.load(fh)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
        v.fail("file", str(path), f"is not JSON ({v.exception_line(err, 120)}): it must be {SHAPE}")


def frame(path: Path, *, columns: dict | None = None, counter: bool = False):
    """The rows of a ``query_range`` export file as a table (card, time, rate, and
    class where ``columns`` names its label)."""
    return rows(load(path), columns=columns, counter=counter)


def rows(doc: Any, *, columns: dict | None = None, counter: bool = False, what: str = "file"):
    """The rows of a parsed ``query_range`` export as a table: card, time (h since
    the earliest sample), rate (tok/s), and class where ``columns`` names its label."""
    import pandas as pd

    labels = dict(columns or {})
    for key, name in labels.items():
        if key not in KEYS:
            v.fail(f"columns.{key}", name, "a Prometheus export has labels, not columns: name the labels of the "
                   "card and the class (card=LABEL, class=LABEL)")
    card, cls = str(labels.get("card", CARD_LABEL)), labels.get("class")
    result = _result(doc, what)
    ids: dict[str, int] = {}
    times, values, cards, classes = [], [], [], []
    for i, s in enumerate(result):
        at = f"{what}.data.result[{i}]"
        if not (isinstance(s, dict) and isinstance(s.get("metric"), dict) and isinstance(s.get("values"), list)):
            v.fail(at, _short(s), 'must be a series: {"metric": {labels}, "values": [[unix_time, "value"], ...]}')
        metric = s["metric"]
        if card not in metric:
            v.fail(f"{at}.metric", _name(metric), f"has no label {card}, the card's id (--columns card=LABEL names "
                   "another)")
        if cls is not None and cls not in metric:
            v.fail(f"{at}.metric", _name(metric), f"has no label {cls}, the class's (--columns class={cls})")
        cid = str(metric[card])
        if cid in ids:
            v.fail(f"{at}.metric", _name(metric), f"has {card}=\"{cid}\" as series {ids[cid]} does: each card must be "
                   "one series (sum the others away in the query, or --columns card=LABEL names a label that tells "
                   "them apart)")
        ids[cid] = i
        t, x = _values(s["values"], metric, at, counter)
        times.append(t)
        values.append(x)
        cards.append(cid)
        classes.append(str(metric[cls]) if cls is not None else "")
    t_min = min((float(t.min()) for t in times if t.size), default=0.0)  # a counter's first reading: time 0
    if counter:
        times, values = _differenced(times, values)
    n = [len(t) for t in times]
    out = {"card": np.repeat(np.asarray(cards, dtype=object), n),
           "time": (np.concatenate(times) - t_min) / 3600.0, "rate": np.concatenate(values)}
    if cls is not None:
        out["class"] = np.repeat(np.asarray(classes, dtype=object), n)
    frame = pd.DataFrame(out)
    frame.attrs["unix_start"] = t_min  # time 0 in unix seconds: its hour of day is the clock's (SPEC 8.3)
    return frame


def _short(x: Any) -> str:
    text = v.one_line(x)
    return text if len(text) <= 120 else text[:117] + "..."


def _result(doc: Any, what: str) -> list:
    if not isinstance(doc, dict):
        v.fail(what, _short(doc), f"must be {SHAPE}")
    if doc.get("status") != "success":
        why = f" (the query failed: {_short(doc['error'])})" if "error" in doc else ""
        v.fail(f"{what}.status", doc.get("status"), f"must be 'success'{why}")
    data = doc.get("data")
    if not isinstance(data, dict):
        v.fail(f"{what}.data", _short(data), f"must be {SHAPE}")
    if data.get("resultType") != "matrix":
        v.fail(f"{what}.data.resultType", data.get("resultType"), "must be 'matrix', a range query's "
               "(/api/v1/query_range; 'vector' is an instant query's)")
    result = data.get("result")
    if not isinstance(result, list):
        v.fail(f"{what}.data.result", _short(result), "must be a list of series")
    if not result:
        v.fail(f"{what}.data.result", [], "holds no series: the query matched nothing")
    return result


def _values(pairs: list, metric: dict, at: str, counter: bool) -> tuple[np.ndarray, np.ndarray]:
    """A series' (unix seconds, values), its "NaN" samples left out; one-line errors
    name the series and the value."""
    name = _name(metric)
    if not pairs:
        v.fail(f"{at}.values", [], f"series {name} holds no samples")
    if not all(isinstance(p, list) and len(p) == 2 for p in pairs):
        bad = next(p for p in pairs if not (isinstance(p, list) and len(p) == 2))
        v.fail(f"{at}.values", _short(bad), f"series {name}: each sample must be [unix_time, \"value\"]")
    try:
        t = np.array([p[0] for p in pairs], dtype=np.float64)
    except (TypeError, ValueError):
        t = None
    if t is None or not np.isfinite(t).all():
        j = next(j for j, p in enumerate(pairs) if not _is_number(p[0]) or not np.isfinite(float(p[0])))
        v.fail(f"{at}.values[{j}]", pairs[j][0], f"series {name}: a time must be a number (unix seconds)")
    raw = [p[1] for p in pairs]
    try:
        x = np.array(raw, dtype=np.float64) if all(isinstance(r, (str, int, float)) and not isinstance(r, bool)
                                                   for r in raw) else None
    except ValueError:
        x = None
    if x is None:
        j = next(j for j, r in enumerate(raw) if not _is_number(r))
        v.fail(f"{at}.values[{j}]", raw[j], f"series {name} at {t[j]:.17g}: a value must be a number "
               "(Prometheus writes one as a string, e.g. \"6843.2\")")
    back = np.diff(t) <= 0
    if back.any():
        j = int(back.argmax()) + 1
        v.fail(f"{at}.values[{j}]", pairs[j][0], f"series {name}: times must go forward (the one before is "
               f"{pairs[j - 1][0]})")
    bad = np.isinf(x) | (x < 0)
    if bad.any():
        j = int(bad.argmax())
        v.fail(f"{at}.values[{j}]", raw[j], f"series {name} at {t[j]:.17g}: a {'count' if counter else 'rate'} must "
               "be a finite number >= 0 (\"NaN\" is a missing sample)")
    keep = np.isfinite(x)
    if not keep.any():
        v.fail(f"{at}.values", f"{len(x)} x NaN", f"series {name} holds no number, only missing samples (\"NaN\"): "
               "leave the card out of the query, or widen its range to where it served")
    return t[keep], x[keep]


def _is_number(x: Any) -> bool:
    if isinstance(x, bool) or not isinstance(x, (str, int, float)):
        return False
    try:
        float(x)
    except ValueError:
        return False
    return True


def _differenced(times: list[np.ndarray], counts: list[np.ndarray]) -> tuple[list, list]:
    """Each counter's tok/s over each step, at the step's end: the increase over the
    seconds between two readings one step apart (a drop is a restart from 0, so the
    increase is the new count); a difference across a missing reading is left out."""
    gaps = np.concatenate([np.diff(t) for t in times])
    if gaps.size == 0:
        return [t[1:] for t in times], [c[1:] for c in counts]
    vals, n = np.unique(np.round(gaps, 6), return_counts=True)
    step = float(vals[n.argmax()])
    out_t, out_r = [], []
    for t, c in zip(times, counts):
        dt, dc = np.diff(t), np.diff(c)
        rate = np.where(dc >= 0, dc, c[1:]) / dt
        one = dt <= step * 1.01
        out_t.append(t[1:][one])
        out_r.append(rate[one])
    return out_t, out_r
