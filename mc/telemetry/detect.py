"""Dips seen in telemetry: runs of samples significantly below a card's baseline.

On a relative series ``z`` (samples over the card's clean mean: 1 outside dips,
``1 − δ`` inside a dip of depth ``δ``, with noise of standard deviation ``s``), a
window of ``L`` samples is flagged when its mean lies more than ``k`` standard
errors below 1, ``(1 − mean)·sqrt(L)/s > k``, for windows of 30 minutes to 64 hours.
The union of flagged windows is trimmed to its core: the stretch whose deficit
below ``1 − c`` sums highest (``c`` half the mean deficit: of the union, then of
its first core). A seen dip
is that core: its start, its hours and its depth, ``1 −`` its mean.

A dip of depth ``δ`` lasting ``d`` hours can be seen when ``δ·sqrt(d/Δ)/s`` clears
``k`` (``smallest``); shorter or shallower dips cannot, and the fit corrects for
them by running the same detector on synthetic telemetry.
"""

from __future__ import annotations

import math

import numpy as np

K = 5.0  # standard errors below the baseline a window must lie
SCALES = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)  # window hours


def windows(delta: float, n: int, scales: tuple[float, ...] = SCALES) -> list[int]:
    """Window lengths in samples, one per scale (at least 2 samples, at most ``n``)."""
    out = sorted({int(round(h / delta)) for h in scales})
    return [w for w in out if 2 <= w <= n]


def flagged(z: np.ndarray, sd: float, delta: float, k: float = K) -> np.ndarray:
    """(cards, n) bool: samples in a window whose mean lies ``k`` standard errors below 1
    (missing samples, NaN, count as absent from their windows)."""
    cards, n = z.shape
    ok = np.isfinite(z)
    whole = bool(ok.all())  # no sample missing: every window of w samples holds w
    s = np.concatenate([np.zeros((cards, 1)), np.cumsum(np.where(ok, 1.0 - z, 0.0), axis=1)], axis=1)
    c = None if whole else np.concatenate([np.zeros((cards, 1)), np.cumsum(ok, axis=1)], axis=1)
    mark = np.zeros((cards, n + 1), np.int32)
    for w in windows(delta, n):
        deficit = s[:, w:] - s[:, :-w]  # window [j, j + w), j = 0..n-w
        if whole:
            hit = deficit > k * sd * math.sqrt(w)
        else:
            count = c[:, w:] - c[:, :-w]
            hit = (count > 0) & (deficit > k * sd * np.sqrt(np.maximum(count, 1)))
        mark[:, :n - w + 1] += hit
        mark[:, w:] -= hit
    return np.cumsum(mark[:, :n], axis=1) > 0


def runs(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each run of True in each row: ``(row, start, stop)`` sample indices, stop exclusive."""
    cards, n = mask.shape
    edge = np.diff(np.concatenate([np.zeros((cards, 1), np.int8), mask.astype(np.int8),
                                   np.zeros((cards, 1), np.int8)], axis=1), axis=1)
    r0, start = np.nonzero(edge == 1)
    r1, stop = np.nonzero(edge == -1)
    return r0, start, stop  # both in row-major order, so runs pair up


def _kadane(x: np.ndarray, c: float) -> tuple[int, int]:
    """The stretch ``[a, b)`` of ``x`` whose sum of ``x − c`` is highest (prefix sums)."""
    p = np.concatenate([[0.0], np.cumsum(x - c)])
    low = np.minimum.accumulate(p)
    arg_low = np.maximum.accumulate(np.where(p == low, np.arange(len(p)), 0))
    b = int(np.argmax(p - low))
    return int(arg_low[b]), b


def _core(x: np.ndarray) -> tuple[int, int]:
    """A run's core: the stretch whose deficit ``x`` (``1 − z``) sums highest above
    ``c``, half the mean deficit; ``c`` is taken from the run, then from its core."""
    x = np.where(np.isfinite(x), x, 0.0)
    a, b = 0, len(x)
    for _ in range(2):
        c = 0.5 * max(float(x[a:b].mean()), 0.0)
        a2, b2 = _kadane(x, c)
        if b2 <= a2:
            break
        a, b = a2, b2
    return a, b


def seen(z: np.ndarray, sd: float, delta: float, k: float = K) -> dict[str, np.ndarray]:
    """The dips seen in each row of ``z``: ``card`` (row), ``start`` (sample index of
    the first sample inside), ``length`` (samples) and ``depth``, each (dips,)."""
    r, start, stop = runs(flagged(z, sd, delta, k))
    a_out, len_out, depth_out = [], [], []
    for row, a, b in zip(r, start, stop):
        x = 1.0 - z[row, a:b]
        i, j = _core(x)
        core = x[i:j]
        a_out.append(a + i)
        len_out.append(j - i)
        depth_out.append(float(np.nanmean(core)) if np.isfinite(core).any() else math.nan)
    return {"card": r.astype(np.int64), "start": np.asarray(a_out, np.int64), "length": np.asarray(len_out, np.int64),
            "depth": np.asarray(depth_out, np.float64)}


def smallest(sd: float, delta: float, k: float = K, hours: tuple[float, ...] = (0.5, 1, 2, 4, 8, 16, 32)) -> list[dict]:
    """The shallowest dip the detector can see at each duration: depth ``k·s/sqrt(d/Δ)``
    (a dip of that depth is seen about half the time; above 1: never)."""
    out = []
    for h in hours:
        n = h / delta
        if n < 1:
            continue
        out.append({"hours": h, "depth": k * sd / math.sqrt(n)})
    return out
