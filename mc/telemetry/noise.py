"""The samples' noise (SPEC §8): a card's baseline and ``σ(Δ)`` under the clip at zero.

Outside dips a sample is ``y = max(0, t·(1 + σ·ε))``. The clip is scale-free, so
``y / t`` is ``max(0, 1 + σ·ε)`` whatever the card: its mean is
``g(σ) = Φ(1/σ) + σ·φ(1/σ)`` (above 1 once the clip bites) and a card's baseline is
its mean sample over ``g(σ)``. ``σ`` is the censored-normal maximum-likelihood
estimate from the residuals ``y/t − 1`` (a sample that reads 0 says only that
``1 + σ·ε ≤ 0``), from three sums per card, so a bootstrap over cards re-solves it
from resampled sums. ``law_warnings`` says in words where the spread of
``k``-sample means departs from the ``1/sqrt(k)`` law.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

_N = NormalDist()
SIGMA_RANGE = (1e-4, 100.0)
# The k-sample law is flagged when a spread departs from it by more than this share
# and by more than Z_LAW standard errors of the spread (``law_warnings``).
LAW_TOLERANCE = 0.10
Z_LAW = 4.0


def clipped_mean(sigma: float) -> float:
    """``E[max(0, 1 + σ·ε)] = Φ(1/σ) + σ·φ(1/σ)``."""
    if sigma <= 0:
        return 1.0
    a = 1.0 / sigma
    return _N.cdf(a) + sigma * _N.pdf(a)


def clipped_sd(sigma: float) -> float:
    """The standard deviation of ``max(0, 1 + σ·ε)``."""
    if sigma <= 0:
        return 0.0
    a = 1.0 / sigma
    second = (1.0 + sigma**2) * _N.cdf(a) + sigma * _N.pdf(a)
    return math.sqrt(max(0.0, second - clipped_mean(sigma) ** 2))


def sums(y: np.ndarray, base: np.ndarray, clean: np.ndarray, scale: np.ndarray | None = None) -> np.ndarray:
    """(cards, 3) per-card sums for the likelihood of ``σ``: samples above zero, their
    ``Σ (y/t − 1)²``, and samples at zero, over the ``clean`` samples (outside seen
    dips, not missing). ``y``: (cards, n); ``base``: (cards,) baselines ``t``.
    ``scale``: (cards, n) ``sqrt(Δ_j/Δ)`` of samples averaging their own ``Δ_j``
    (SPEC §8.3): each residual is put at the typical ``Δ``'s error by it (a sample at
    zero is taken as at the typical ``Δ``'s threshold, which the clip rarely makes
    matter)."""
    ok = clean & np.isfinite(y)
    r = np.where(ok, y / base[:, None] - 1.0, 0.0)
    if scale is not None:
        r = np.where(ok, r * scale, 0.0)
    pos = ok & (y > 0)
    return np.stack([pos.sum(axis=1), np.where(pos, r * r, 0.0).sum(axis=1), (ok & (y <= 0)).sum(axis=1)], axis=1)


def sigma_mle(total: np.ndarray) -> float:
    """``σ`` maximising ``−n·log σ − S/(2σ²) + n₀·log Φ(−1/σ)`` from summed ``(n, S, n₀)``
    (golden-section search on ``log σ``; the likelihood has one peak)."""
    n, ss, n0 = (float(x) for x in total)
    if n <= 0:
        return math.nan
    if ss <= 0:
        return 0.0

    def loglik(ls: float) -> float:
        s = math.exp(ls)
        tail = _N.cdf(-1.0 / s) if n0 else 1.0
        return -n * ls - ss / (2 * s * s) + (n0 * math.log(tail) if n0 and tail > 0 else (-math.inf if n0 else 0.0))

    lo, hi = math.log(SIGMA_RANGE[0]), math.log(SIGMA_RANGE[1])
    phi = (math.sqrt(5) - 1) / 2
    a, b = lo, hi
    c, d = b - phi * (b - a), a + phi * (b - a)
    fc, fd = loglik(c), loglik(d)
    for _ in range(80):
        if fc > fd:
            b, d, fd = d, c, fc
            c = b - phi * (b - a)
            fc = loglik(c)
        else:
            a, c, fc = c, d, fd
            d = a + phi * (b - a)
            fd = loglik(d)
    return math.exp((a + b) / 2)


def baselines(y: np.ndarray, clean: np.ndarray, sigma: float) -> np.ndarray:
    """(cards,) each card's true rate: its mean clean sample over ``g(σ)`` (a card with
    no clean sample: its median sample)."""
    ok = clean & np.isfinite(y)
    count = ok.sum(axis=1)
    mean = np.where(ok, y, 0.0).sum(axis=1) / np.maximum(count, 1)
    return np.where(count > 0, mean / clipped_mean(sigma), np.nanmedian(y, axis=1))


def k_spread(z: np.ndarray, clean: np.ndarray, ks: tuple[int, ...]) -> list[dict]:
    """The spread of means of ``k`` consecutive clean samples of ``z`` (a relative
    series with mean 1 outside dips), for each ``k``: ``{"k", "spread", "law",
    "ratio", "means"}`` with the law ``spread(1)/sqrt(k)``. Independent noise gives
    ratios near 1; ratios above 1 say the noise is correlated in time, and a longer
    window then buys less than the law says."""
    out = []
    base = None
    for k in ks:
        m = (z.shape[1] // k) * k
        if m == 0:
            break
        zz = z[:, :m].reshape(z.shape[0], -1, k)
        ok = (clean[:, :m] & np.isfinite(z[:, :m])).reshape(z.shape[0], -1, k).all(axis=2)
        means = zz.mean(axis=2)[ok]
        if means.size < 2:
            break
        spread = float(means.std(ddof=1))
        base = spread if base is None else base
        law = base / math.sqrt(k)
        out.append({"k": int(k), "spread": spread, "law": law, "ratio": spread / law if law > 0 else math.nan,
                    "means": int(means.size)})
    return out


def law_warnings(k_means: list[dict]) -> list[str]:
    """A line for each ``k`` whose spread of ``k``-sample means departs from the
    ``1/sqrt(k)`` law by more than ``LAW_TOLERANCE`` and ``Z_LAW`` standard errors
    (a spread from ``m`` means errs by about ``1/sqrt(2m)`` of itself)."""
    out = []
    for x in k_means:
        ratio, m = x["ratio"], x["means"]
        if not math.isfinite(ratio) or m < 2:
            continue
        se = 1.0 / math.sqrt(2 * (m - 1))
        if abs(ratio - 1) > LAW_TOLERANCE and abs(ratio - 1) > Z_LAW * se:
            what = ("the noise is correlated in time (or dips too small to see are common): a window of "
                    f"{x['k']} samples errs {ratio:.2f}x what the law says, and window.sigma_hour overstates "
                    "what a longer window buys") if ratio > 1 else (
                    f"a window of {x['k']} samples errs {ratio:.2f}x what the law says (the noise alternates): "
                    "the law understates what a longer window buys")
            out.append(f"k={x['k']}: {what}")
    return out
