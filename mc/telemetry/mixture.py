"""The lottery fitted to each card's quality (SPEC §1.2, §8): a normal with a lemon
mixture, from per-card qualities ``q̂ = t̂ / r`` measured with error.

Healthy cards' ``q̂`` are ``Normal(mean, sd² + e²)`` (``e`` the baseline's own
standard error, known from the noise); lemons' are ``Normal(f·mean, f²·sd² + e²)``
with share ``lemon_rate``. Two components are fitted by expectation-maximisation
and kept when they beat one normal by a clear margin of the Bayesian information
criterion (10); otherwise the pool shows no lemons (``lemon_rate`` 0 and
``lemon_factor`` not identified). The clip to ``[lo, hi]`` is not modelled (at
the defaults it lies 9 standard deviations out).
"""

from __future__ import annotations

import math

import numpy as np

BIC_MARGIN = 10.0
ITERATIONS = 300


def _normal_logpdf(x: np.ndarray, m: float, var: float) -> np.ndarray:
    return -0.5 * (np.log(2 * np.pi * var) + (x - m) ** 2 / var)


def _two(q: np.ndarray, init_low: np.ndarray, floor: float) -> tuple[float, dict]:
    """EM of two normals from an initial lemon set; returns (log-likelihood, params)."""
    hi = ~init_low
    m1, m2 = float(q[hi].mean()), float(q[init_low].mean())
    v1 = max(float(q[hi].var()), floor)
    v2 = max(float(q[init_low].var()), floor)
    w = float(init_low.mean())
    ll = -math.inf
    for _ in range(ITERATIONS):
        la = np.log1p(-w) + _normal_logpdf(q, m1, v1)
        lb = math.log(w) + _normal_logpdf(q, m2, v2)
        top = np.maximum(la, lb)
        tot = top + np.log(np.exp(la - top) + np.exp(lb - top))
        new = float(tot.sum())
        r = np.exp(lb - tot)  # lemon responsibility
        nb = float(r.sum())
        na = len(q) - nb
        if nb < 1e-9 or na < 1e-9:
            return -math.inf, {}
        w = nb / len(q)
        m1 = float(((1 - r) * q).sum() / na)
        m2 = float((r * q).sum() / nb)
        v1 = max(float(((1 - r) * (q - m1) ** 2).sum() / na), floor)
        v2 = max(float((r * (q - m2) ** 2).sum() / nb), floor)
        if abs(new - ll) < 1e-7 * len(q):  # converged to well below one unit of BIC
            ll = new
            break
        ll = new
    if m2 >= m1:
        return -math.inf, {}
    return ll, {"m1": m1, "v1": v1, "m2": m2, "v2": v2, "w": w}


def precise(x: np.ndarray, err_var: np.ndarray) -> np.ndarray:
    """(cards,) bool: the cards whose measured quality's own error variance ``err_var``
    is at most the spread between the cards' ``x`` (the squared scaled median absolute
    deviation, robust to lemons). A card with a handful of samples says little of the
    lottery and much of its own noise. Every card where that would leave fewer than two."""
    x = np.asarray(x, np.float64)
    spread = (1.4826 * float(np.median(np.abs(x - np.median(x))))) ** 2
    keep = np.asarray(err_var) <= spread
    return keep if keep.sum() >= 2 else np.ones(len(x), bool)


def fit(q: np.ndarray, err_var: float = 0.0, lemons: bool | None = None) -> dict:
    """``{"mean", "sd", "lemon_rate", "lemon_factor", "lemons": bool}`` from (cards,)
    qualities whose measurement variance is ``err_var`` (``lemon_factor`` NaN when no
    lemon component is kept). ``lemons``: None chooses between one normal and the
    mixture by the criterion; False fits one normal; True the mixture where its fit
    converges (a bootstrap resample refits the model the data chose, so that its
    spread is the estimate's, not that of the choice)."""
    q = np.asarray(q, np.float64)
    q = q[np.isfinite(q)]
    n = len(q)
    if n < 2:
        return {"mean": float(q.mean()) if n else math.nan, "sd": math.nan, "lemon_rate": math.nan,
                "lemon_factor": math.nan, "lemons": False}
    floor = max(err_var, 1e-12)
    m, var = float(q.mean()), max(float(q.var(ddof=1)), floor)  # the unbiased variance
    one = {"mean": m, "sd": math.sqrt(max(var - err_var, 0.0)), "lemon_rate": 0.0, "lemon_factor": math.nan,
           "lemons": False}
    if n < 8 or lemons is False:
        return one
    ll1 = float(_normal_logpdf(q, m, max(float(q.var()), floor)).sum())  # at the maximum-likelihood variance
    best = (-math.inf, {})
    order = np.sort(q)
    for share in (0.02, 0.05, 0.1, 0.2, 0.35):
        cut = order[max(1, int(share * n)) - 1]
        low = q <= cut
        if low.all() or not low.any():
            continue
        got = _two(q, low, floor)
        if got[0] > best[0]:
            best = got
    ll2, p = best
    # BIC = k·log n − 2·ll: one normal has 2 parameters, two have 5.
    if not p or (lemons is None and (2 * math.log(n) - 2 * ll1) - (5 * math.log(n) - 2 * ll2) < BIC_MARGIN):
        return one
    return {"mean": p["m1"], "sd": math.sqrt(max(p["v1"] - err_var, 0.0)), "lemon_rate": p["w"],
            "lemon_factor": p["m2"] / p["m1"], "lemons": True}
