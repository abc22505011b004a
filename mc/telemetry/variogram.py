"""Wander and noise fitted together from every lag a card's samples span, gaps included
(SPEC §8.3: a gap splits nothing that the wander's AR(1) does not; a level step across
one is wander).

Each clean sample's residual ``r = y/(t̂·g) − 1`` is averaged per card and clock hour,
``x_{i,h}`` (``n`` samples; in units of a typical sample's noise variance ``σ²``, the
mean's noise variance is ``e = Σ v_j / n²``, ``v_j = ref/width_j``). At lag ``L`` hours
(any two hours of a card both observed, however long the outage between them) the
within-card semivariogram is

    ½·E[(x_{i,h} − x_{i,h+L})²] = σ²·½(e_{i,h} + e_{i,h+L}) + sd²·(1 − ρ^L) + γ_c(L)

with ``ρ = exp(−1/hours)`` the wander's and ``γ_c`` the fleet's swing (diurnal and AR(1):
the same path for every card). No card's mean enters (differences cancel it, and with
it the baseline), so nothing depends on where a card's outages fall. ``γ_c`` is
measured across cards: ``E[D_i·D_j] = 2·γ_c(L)`` for two cards' differences over the
same two hours, the noise and wander being independent between cards. Two samples in
one hour differ by noise alone, ``½·E[(r_j − r_k)²] = σ²·½(v_j + v_k)``: the nugget's
own row (lag 0). For each ``ρ`` on a grid, ``(σ², sd²)`` (and, given the dips' mean
hours, a nuisance ``b·(1 − exp(−L/dip_hours))``, ``b ≥ 0``, for the dips too small to
see) solve a weighted least-squares fit (pairs over the fitted semivariogram squared);
the ``ρ`` of least misfit wins.
``sd²`` is signed (with no wander about half the fits read below 0, so an interval can
hold 0).

A correlation time past the longest lag the data span is not resolved (the variogram
is then a straight line, and only ``sd²/hours`` is told): the grid stops at
``TOP_SPANS`` times that lag, and a fit or a bootstrap end there is a bound, ``≥``. With
no two samples in one hour, a wander faster than the shortest lag looks like noise: the
grid starts at that lag, and such a wander is read as noise.
"""

from __future__ import annotations

import math

import numpy as np

HOURS_GRID = np.exp(np.linspace(math.log(0.5), math.log(1e5), 200))
TOP_SPANS = 1.0  # the grid's top, in longest lags spanned


def lags_for(H: int) -> np.ndarray:
    """Lags (h) at which the variogram is measured: every hour to 2 days, then about 24
    a decade to the longest the hours span."""
    if H <= 1:
        return np.zeros(0, np.int64)
    dense = np.arange(1, min(48, H - 1) + 1)
    far = np.unique(np.rint(np.geomspace(48, max(H - 1, 48), 40)).astype(np.int64))
    return np.unique(np.concatenate([dense, far[(far > 48) & (far <= H - 1)]])).astype(np.int64)


def hour_sums(t: np.ndarray, r: np.ndarray, var: np.ndarray, ok: np.ndarray, n_cards: int) -> dict:
    """Per card and clock hour: ``x`` (mean residual, NaN: none), ``e`` (its noise
    variance in units of ``σ²``), and the within-hour (lag-0) sums per card: ``q0``
    ``Σ_{j<k}(r_j − r_k)²``, ``a0`` its expectation over ``σ²``, ``w0`` the pairs'
    degrees of freedom ``Σ(n − 1)``. ``t``: (cards, n) hours of the clock (bins are
    whole hours); ``var``: (cards, n) each sample's noise variance over a typical one's."""
    origin = math.floor(float(t[ok].min())) if ok.any() else 0
    h = np.floor(np.where(ok, t, origin) - origin).astype(np.int64)
    H = int(h[ok].max()) + 1 if ok.any() else 1
    cards = np.broadcast_to(np.arange(n_cards)[:, None], r.shape)
    flat = (cards * H + h)[ok]

    def add(w):
        return np.bincount(flat, weights=w, minlength=n_cards * H).reshape(n_cards, H)

    n = add(np.ones(flat.size))
    s1, s2, sv = add(r[ok]), add(r[ok] ** 2), add(var[ok])
    with np.errstate(invalid="ignore", divide="ignore"):
        x = np.where(n > 0, s1 / n, np.nan)
        e = np.where(n > 0, sv / np.maximum(n, 1) ** 2, np.nan)
    q = np.maximum(n * s2 - s1 * s1, 0.0)  # Σ_{j<k} (r_j − r_k)² within each hour
    return {"x": x, "e": e, "n": n, "origin": origin, "q0": q.sum(axis=1), "a0": ((n - 1).clip(0) * sv).sum(axis=1),
            "w0": (n - 1).clip(0).sum(axis=1), "p0": (n * (n - 1) / 2).sum(axis=1)}


def lag_table(x: np.ndarray, e: np.ndarray, lags: np.ndarray) -> dict:
    """Per card and lag: ``g`` ``Σ ½D²`` (``D = x_h − x_{h+L}``), ``a`` ``Σ ½(e_h + e_{h+L})``,
    ``p`` pairs; and per lag across cards ``gamma_c`` (the swing's semivariogram from
    ``Σ_{i≠j} D_i·D_j``, NaN where no two cards pair) and ``pc`` its card pairs."""
    ok = np.isfinite(x)
    z, ez = np.where(ok, x, 0.0), np.where(ok, e, 0.0)
    C, K = x.shape[0], len(lags)
    g, a, p = np.zeros((C, K)), np.zeros((C, K)), np.zeros((C, K))
    gc, pc = np.zeros(K), np.zeros(K)
    for k, L in enumerate(lags):
        both = ok[:, :-L] & ok[:, L:]
        d = np.where(both, z[:, :-L] - z[:, L:], 0.0)
        g[:, k] = 0.5 * (d * d).sum(axis=1)
        a[:, k] = 0.5 * np.where(both, ez[:, :-L] + ez[:, L:], 0.0).sum(axis=1)
        p[:, k] = both.sum(axis=1)
        m = both.sum(axis=0)
        col = d.sum(axis=0)
        gc[k] = 0.5 * float((col * col - (d * d).sum(axis=0)).sum())
        pc[k] = float((m * (m - 1.0)).sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        gamma_c = np.where(pc > 0, gc / np.maximum(pc, 1.0), np.nan)
    return {"g": g, "a": a, "p": p, "gamma_c": gamma_c, "pc": pc}


def _search(L: np.ndarray, y: np.ndarray, A: np.ndarray, w: np.ndarray, grid: np.ndarray,
            dip_hours: float | None) -> tuple[float, float, float, np.ndarray]:
    """``(σ², sd², hours, fitted rows)`` of least weighted misfit over the grid of hours."""
    sw = np.sqrt(w)
    best = (math.inf, math.nan, math.nan, math.nan, y * 0.0)
    cols = [A] + ([1.0 - np.exp(-L / dip_hours)] if dip_hours is not None else [])
    for hours in grid:
        X = np.stack([*cols, 1.0 - np.exp(-L / hours)], axis=1)
        Xw = X * sw[:, None]
        keep = list(range(X.shape[1]))
        coef = np.linalg.lstsq(Xw, y * sw, rcond=None)[0]
        if dip_hours is not None and coef[1] < 0:  # dips only add: b >= 0
            keep.remove(1)
            coef = np.linalg.lstsq(Xw[:, keep], y * sw, rcond=None)[0]
        if coef[0] < 0:  # a noise variance is >= 0
            keep.remove(0)
            coef = np.linalg.lstsq(Xw[:, keep], y * sw, rcond=None)[0]
        full = np.zeros(X.shape[1])
        full[keep] = coef
        sse = float(((y * sw - Xw @ full) ** 2).sum())
        if sse < best[0]:
            best = (sse, float(full[0]), float(full[-1]), float(hours), X @ full)
    return best[1], best[2], best[3], best[4]


def fit(g: np.ndarray, a: np.ndarray, p: np.ndarray, gamma_c: np.ndarray, lags: np.ndarray, zero: tuple,
        dip_hours: float | None = None) -> dict:
    """``{"sigma2", "sd2" (signed), "hours", "top", "at_top"}`` from lag sums pooled over
    cards (``g``, ``a``, ``p``: (lags,)) and the lag-0 sums ``zero = (q0, a0, w0)``; NaN
    where fewer than 3 lags hold pairs. ``top``: the grid's longest correlation time;
    ``at_top``: the fit chose it (only a lower bound is told).

    Weights: a first pass by pairs, then by pairs over the square of each row's fitted
    semivariogram (a mean of ``½D²`` over ``m`` pairs varies as ``2γ²/m``), so the long
    lags, whose values are large and noisy, do not pull the nugget (Cressie's weights)."""
    use = (p > 0) & np.isfinite(gamma_c)
    nan = {"sigma2": math.nan, "sd2": math.nan, "hours": math.nan, "top": math.nan, "at_top": False}
    if use.sum() < 3:
        return nan
    L = lags[use].astype(np.float64)
    gc = gamma_c[use]
    y = g[use] / p[use] - gc
    A = a[use] / p[use]
    w = p[use].astype(np.float64)
    q0, a0, w0 = (float(v) for v in zero)
    if w0 > 0:  # the nugget's own row: two samples in one hour differ by noise alone
        L, y, A, w, gc = (np.append(L, 0.0), np.append(y, 0.5 * q0 / w0), np.append(A, 0.5 * a0 / w0),
                          np.append(w, w0), np.append(gc, 0.0))
    top = TOP_SPANS * float(lags[use].max())
    # with no two samples in one hour, a wander faster than the shortest lag is not told
    # from noise: it is read as noise
    lowest = 1.0 / 3.0 if w0 > 0 else max(1.0 / 3.0, float(lags[use].min()))
    grid = HOURS_GRID[(HOURS_GRID <= top) & (HOURS_GRID >= lowest)]
    if grid.size == 0:
        return nan
    sigma2, sd2, hours, fitted = _search(L, y, A, w, grid, dip_hours)
    total = np.maximum(fitted + np.maximum(gc, 0.0), 1e-6 * max(float(np.abs(y).max()), 1e-300))
    sigma2, sd2, hours, _ = _search(L, y, A, w / total**2, grid, dip_hours)
    return {"sigma2": sigma2, "sd2": sd2, "hours": hours, "top": float(grid.max()),
            "at_top": bool(hours >= grid.max())}


def lag_pairs(n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(pairs, N)``: (cards, H) ``Σ_h n_h·n_{h+L}``, the pairs of a card's samples ``L``
    hours apart (``n``: (cards, H) samples per hour), and (cards,) its samples."""
    C, H = n.shape
    size = 1 << int(math.ceil(math.log2(max(2 * H, 2))))
    f = np.fft.rfft(n, size, axis=1)
    pairs = np.fft.irfft(f * np.conj(f), size, axis=1)[:, :H]
    return np.maximum(np.rint(pairs), 0.0), n.sum(axis=1)


def semivariogram(H: int, sd2: float, hours: float, diurnal: float, swing_sd2: float,
                  swing_hours: float) -> np.ndarray:
    """(H,) the wander's and the swing's ``γ(L)`` at lags ``0..H−1`` (a term that is not
    finite adds nothing; the wander's ``sd2`` is taken signed, as fitted, so that with no
    wander its share is as often below 0 as above; the swing's below 0 adds nothing)."""
    L = np.arange(H, dtype=np.float64)
    gamma = np.zeros(H)
    for v, tau, signed in ((sd2, hours, True), (swing_sd2, swing_hours, False)):
        if math.isfinite(v) and (signed or v > 0) and math.isfinite(tau):
            gamma += v * (1.0 - np.exp(-L / tau))
    if math.isfinite(diurnal) and diurnal > 0:
        gamma += 0.5 * diurnal * diurnal * (1.0 - np.cos(2 * np.pi * L / 24.0))
    return gamma


def sample_share(pairs: np.ndarray, N: np.ndarray, gamma: np.ndarray) -> float:
    """The structure's variance about each card's own mean, per clean sample, pooled:
    ``Σ_i (1/N_i)·Σ_{j,k} γ(h_j − h_k) / Σ_i N_i`` (``E[(1/N)Σ_j (s_j − s̄)²] =
    (1/N²)Σ_{j,k} γ``): what a noise fitted from samples' spread about their card's
    mean reads beside the noise."""
    if N.sum() <= 0 or pairs.shape[1] < 2:
        return 0.0
    per_card = 2.0 * (pairs[:, 1:] @ gamma[1:]) / np.maximum(N, 1.0)  # Σ_{j,k}: both orders
    return float(per_card.sum() / N.sum())
