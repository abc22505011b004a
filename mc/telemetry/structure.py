"""Wander and swing fitted to telemetry (SPEC §8.3), and what they do to a window.

Each clean sample's residual ``r = y/(t̂·g) − 1`` (outside seen dips) is averaged per
card and hour of the series' clock, ``x_{i,h}``: the model's wander and swing are
constant within an hour, and samples' noise is independent, so at lags of an hour or
more only the structure is correlated.

- **Swing** (fleet-wide): ``m_h``, the cross-card median of ``x_{i,h}``, is regressed
  on ``[1, cos, sin](2π·clock_h/24)``: ``swing.diurnal`` the harmonic's amplitude,
  ``swing.hot_hour`` its trough (``c = −diurnal·cos(2π(clock − hot)/24)``). What is left,
  ``e_h``, holds the shared AR(1) ``v`` (and the cards' mean wander, ``1/N`` of theirs):
  ``swing.sd`` and ``swing.hours`` from its autocovariance at lags of 1 h to 4 days.
  A shared measurement error and a shared true swing look alike here: the fit gives the
  shared part to ``swing``.
- **Wander** (per card) and the samples' noise, together (``variogram``): the
  semivariogram of each card's hourly residuals at every lag its hours span, across
  gaps and outages (a gap splits nothing that the AR(1) does not), less the swing's
  (measured across cards), is the noise's nugget plus the AR(1)'s ``sd²·(1 − ρ^L)``;
  no card's mean enters. The noise a fit reads from samples' spread about their card's
  mean holds the structure's share of that spread too; ``noise_ratio`` says by how much
  (the fitted scenario's ``window.sigma_hour`` is divided by it).

Intervals: the wander's by resampling cards (their sums at each lag); the swing's by a
moving-block bootstrap over days of ``m_h`` (blocks of ``BLOCK_DAYS``), the fleet
having one swing. A correlation time whose fit, or interval's upper end, reaches the
longest the data resolve is reported as a bound (``bound``: at least that many hours). Fewer than ``MIN_CLOCK_HOURS`` hours of the day observed leaves
``diurnal`` and ``hot_hour`` unidentified, and an hourly series too short for its lags
leaves an AR(1) unidentified; the result says so instead of inventing them.
"""

from __future__ import annotations

import math

import numpy as np

from . import variogram

SWING_LAGS = np.array([1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96])
HOURS_GRID = np.exp(np.linspace(math.log(0.5), math.log(1e4), 160))
BLOCK_DAYS = 3
CHI2_2_95 = math.sqrt(5.991)  # sqrt of the 95th percentile of chi-square, 2 degrees of freedom
MIN_CLOCK_HOURS = 3  # distinct hours of day a harmonic needs (three coefficients)
# The dips' nuisance term in the wander's fit is for dips too small to see: short ones. A
# card's level low for longer than this is what the wander describes (a dip that long and
# deep enough to matter is seen), so longer "dips" get no term that would take the wander,
# and the samples of a seen dip longer than this stay in the wander's fit.
DIP_NUISANCE_HOURS = 24.0
# Where the wander's and swing's share of the samples' spread passes this share of it, the
# spread less that share is ill-conditioned (a small difference of large figures, and the
# dips' mask has cut the wander's lows from the spread): the noise is read from the
# semivariogram's nugget instead, fitted beside the wander.
MAX_SHARE = 0.5
WINDOWS = (("1 h", 1.0), ("4 h", 4.0), ("a day", 24.0), ("a week", 168.0))
FIELDS = ("wander.sd", "wander.hours", "swing.diurnal", "swing.hot_hour", "swing.sd", "swing.hours")


def kappa(rho: np.ndarray, T: float) -> np.ndarray:
    """Variance of a ``T``-hour mean of a unit AR(1) (``ρ``): ``(1/T²)ΣΣρ^|i−j|``."""
    rho = np.minimum(np.asarray(rho, np.float64), 1 - 1e-12)
    T = max(float(T), 1.0)
    return ((1 + rho) / (1 - rho) - 2 * rho * (1 - rho**T) / (T * (1 - rho) ** 2)) / T


def lag_sums(d: np.ndarray, lags: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rows, lags) each row's ``Σ d_h·d_{h+L}`` and pair count over present hours."""
    ok = np.isfinite(d)
    z = np.where(ok, d, 0.0)
    H = d.shape[1]
    prod = np.zeros((d.shape[0], len(lags)))
    count = np.zeros((d.shape[0], len(lags)))
    for k, L in enumerate(lags):
        if L >= H:
            continue
        prod[:, k] = (z[:, :-L] * z[:, L:]).sum(axis=1)
        count[:, k] = (ok[:, :-L] & ok[:, L:]).sum(axis=1)
    return prod, count


def ar1_fit(cov: np.ndarray, pairs: np.ndarray, lags: np.ndarray, T: float,
            dip_hours: float | None = None) -> tuple[float, float]:
    """``(sd² (signed), hours)`` of the AR(1) whose demeaned autocovariance best fits
    ``cov`` at ``lags`` (weights: pairs); NaN where fewer than 3 lags have pairs.
    ``dip_hours``: the dips' mean hours, whose unseen small dips add a covariance
    ``b·exp(−L/dip_hours)`` (the chance one dip covers both ends of a lag), fitted
    beside the AR(1) as a nuisance term with ``b ≥ 0``, at lags of at least
    ``dip_hours`` (shorter ones are the dips' own: a dip's edges and its unseen part)."""
    use = (pairs > 0) & ((lags >= dip_hours) if dip_hours is not None else True)  # shorter: the dips' own
    if use.sum() < 3 + (dip_hours is not None):
        return math.nan, math.nan
    c, w, L = cov[use], pairs[use], lags[use].astype(np.float64)
    # a correlation time past twice the series, or well below the shortest lag used, is not told apart
    grid = HOURS_GRID[(HOURS_GRID <= 2 * T) & (HOURS_GRID >= L.min() / 3)]
    rho = np.exp(-1.0 / grid)
    f = rho[:, None] ** L[None, :] - kappa(rho, T)[:, None]  # (grid, lags)
    if dip_hours is None:
        a = (w * f * c).sum(axis=1) / np.maximum((w * f * f).sum(axis=1), 1e-300)
        sse = (w * (c - a[:, None] * f) ** 2).sum(axis=1)
    else:
        g = np.exp(-L / dip_hours)
        sw = np.sqrt(w)
        a, sse = np.empty(len(rho)), np.empty(len(rho))
        for i in range(len(rho)):
            X = np.stack([f[i], g], axis=1) * sw[:, None]
            coef, *_ = np.linalg.lstsq(X, c * sw, rcond=None)
            if coef[1] < 0:  # dips only add covariance: b >= 0
                coef = np.array([(X[:, 0] @ (c * sw)) / max(X[:, 0] @ X[:, 0], 1e-300), 0.0])
            a[i] = coef[0]
            sse[i] = float(((c * sw - X @ coef) ** 2).sum())
    best = int(np.argmin(sse))
    return float(a[best]), float(grid[best])


def ar1_top(n_hours: float) -> float:
    """The longest correlation time ``ar1_fit`` searches for a series of ``n_hours``."""
    g = HOURS_GRID[HOURS_GRID <= 2 * n_hours]
    return float(g.max()) if g.size else math.nan


def harmonic(m: np.ndarray, clock: np.ndarray) -> tuple[float, float, np.ndarray, np.ndarray]:
    """``(diurnal, hot_hour, residual, (cos, sin) coefficients)`` of ``m_h`` regressed on
    the hour of day (NaN where fewer than ``MIN_CLOCK_HOURS`` hours of day hold a value)."""
    ok = np.isfinite(m)
    if len(np.unique(np.floor(clock[ok]))) < MIN_CLOCK_HOURS:
        return (math.nan, math.nan, np.where(ok, m - np.nanmean(m) if ok.any() else m, np.nan),
                np.full(2, np.nan))
    ang = 2 * np.pi * clock / 24.0
    X = np.stack([np.ones_like(ang), np.cos(ang), np.sin(ang)], axis=1)
    beta, *_ = np.linalg.lstsq(X[ok], m[ok], rcond=None)
    amp = math.hypot(beta[1], beta[2])
    hot = (math.atan2(-beta[2], -beta[1]) * 24 / (2 * np.pi)) % 24.0
    hot = 0.0 if hot >= 24.0 else hot  # a tiny negative angle wraps to 24.0 in floating point
    return amp, hot, np.where(ok, m - X @ beta, np.nan), beta[1:]


def swing_of(m: np.ndarray, clock: np.ndarray, wander: tuple[float, float], n_cards: float,
             dip_hours: float | None = None) -> dict:
    """The swing's four figures from the hourly medians ``m`` (H,). ``dip_hours``: the
    share of cards inside a dip moves the median from hour to hour, correlated over a
    dip's length: a nuisance term, as for the wander."""
    amp, hot, e, comp = harmonic(m, clock)
    prod, count = lag_sums(e[None, :], SWING_LAGS)
    with np.errstate(invalid="ignore", divide="ignore"):
        cov = np.where(count[0] > 0, prod[0] / count[0], 0.0)
    sd2_w, hours_w = wander
    if math.isfinite(sd2_w) and sd2_w > 0:  # the cards' mean wander, left in m
        cov = cov - sd2_w * np.exp(-SWING_LAGS / hours_w) / max(n_cards, 1.0)
    sd2, hours = ar1_fit(cov, count[0], SWING_LAGS, float(np.isfinite(m).sum()), dip_hours)
    return {"swing.diurnal": amp, "swing.hot_hour": hot, "swing.sd2": sd2, "swing.hours": hours, "components": comp}


def _sd(sd2: float) -> float:
    return math.sqrt(sd2) if math.isfinite(sd2) and sd2 > 0 else (0.0 if math.isfinite(sd2) else math.nan)


def _pct(x: list, circular_at: float | None = None) -> tuple[float, float]:
    a = np.asarray([v for v in x if math.isfinite(v)], np.float64)
    if a.size < 10:
        return math.nan, math.nan
    if circular_at is not None:  # an hour of day: percentiles of the wrapped distance from the value
        a = (a - circular_at + 12.0) % 24.0 - 12.0
        return float(circular_at + np.percentile(a, 2.5)) % 24.0, float(circular_at + np.percentile(a, 97.5)) % 24.0
    return float(np.percentile(a, 2.5)), float(np.percentile(a, 97.5))


def spread(sigma_hour: float, f: dict, windows: tuple[tuple[str, float], ...] = WINDOWS) -> list[dict]:
    """The relative spread of a window's mean at each of ``windows`` ((name, hours)
    pairs; default 1 h, 4 h, a day and a week): the law's ``sigma_hour/sqrt(W)``; with
    each card's wander (what ranks cards apart); and with the fleet's swing too (what an
    absolute floor sees, the diurnal at its mean over the window's start hours)."""
    out = []
    for name, W in windows:
        law = sigma_hour / math.sqrt(W)
        wander = f["wander.sd"] ** 2 * kappa(np.exp(-1 / f["wander.hours"]), W) if f["wander.sd"] > 0 else 0.0
        swing = f["swing.sd"] ** 2 * kappa(np.exp(-1 / f["swing.hours"]), W) if f["swing.sd"] > 0 else 0.0
        d = f["swing.diurnal"] if math.isfinite(f["swing.diurnal"]) else 0.0
        day = d**2 / 2 * (np.sinc(W / 24.0) ** 2)  # the diurnal cosine's mean over W, over start hours
        within = math.sqrt(law**2 + float(wander))
        out.append({"window": name, "hours": W, "law": law, "with_wander": within,
                    "with_swing": math.sqrt(within**2 + float(swing) + float(day)),
                    "ratio": within / law if law > 0 else math.nan})
    return out




def _hours_field(value: float, lo: float, hi: float, top: float) -> dict:
    """A correlation time's field; where the fit, or its interval's upper end, reaches
    ``top`` (the longest the search resolves), ``bound`` is ``top``: the data set only a
    lower end (``hi`` NaN, and ``value`` is ``top`` when the fit itself stopped there)."""
    out = {"value": value, "lo": lo, "hi": hi}
    if math.isfinite(top) and math.isfinite(value) and (value >= top * (1 - 1e-9) or hi >= top * (1 - 1e-9)):
        out.update(hi=math.nan, bound=top)
    return out


def _long_seen(seen: dict, shape: tuple[int, int], delta: float) -> np.ndarray:
    """(cards, n) the samples of seen dips longer than ``DIP_NUISANCE_HOURS``: a card's
    level low for days is the wander's to fit, not a dip to mask."""
    mask = np.zeros(shape, bool)
    for c, a, n in zip(seen["card"], seen["start"], seen["length"]):
        if n * delta > DIP_NUISANCE_HOURS:
            mask[c, a:a + n] = True
    return mask


def fit(s, o: dict, sigma_hour: float, *, bootstrap: int, seed: int, dip_hours: float | None = None) -> dict:
    """Wander, swing and the noise's share of the samples' spread fitted to a series
    (``fitting.observe``'s ``o``; ``sigma_hour`` as read from that spread), with
    intervals; ``dip_hours``: the dips' fitted mean hours (a nuisance term).

    Returns ``{"fields": {name: {"value", "lo", "hi"[, "bound"]}}, "spread": [...],
    "notes": [...], "sigma_hour": ..., "noise": {"method", "ratio", "nugget"}}``:
    ``ratio`` the samples' spread over the noise's alone (``sigma_hour`` divided by it,
    method ``spread``), ``nugget`` the noise read from the semivariogram's nugget (the
    ``sigma_hour`` returned where the structure's share passes ``MAX_SHARE``, method
    ``nugget``), each ``{"value", "lo", "hi"}``.
    """
    t = np.asarray(s.times(), np.float64) + s.clock0  # hours since the midnight before t0: bins are clock hours
    r = o["z"] - 1.0
    ok = (o["clean"] | _long_seen(o["seen"], r.shape, s.delta)) & np.isfinite(r) & np.isfinite(t)
    scale = s.scale()
    var = np.ones_like(r) if scale is None else 1.0 / np.where(ok, scale, 1.0) ** 2
    hs = variogram.hour_sums(t, r, var, ok, s.n_cards)
    x = hs["x"]
    H = x.shape[1]
    clock = (hs["origin"] + np.arange(H)) % 24.0  # SPEC 1.4.1: an hour's swing is the cosine at its clock hour
    present = np.isfinite(x)
    per_hour = present.sum(axis=0)
    m = np.full(H, np.nan)
    busy = per_hour >= 2
    if busy.any():
        m[busy] = np.nanmedian(x[:, busy], axis=0)
    span_cards = float(np.mean(per_hour[per_hour > 0])) if (per_hour > 0).any() else 1.0
    lags = variogram.lags_for(H)
    lt = variogram.lag_table(x, hs["e"], lags)
    zero = np.stack([hs["q0"], hs["a0"], hs["w0"]], axis=1)  # (cards, 3)

    short = dip_hours if dip_hours is not None and dip_hours <= DIP_NUISANCE_HOURS else None

    def wander_on(idx):
        return variogram.fit(lt["g"][idx].sum(axis=0), lt["a"][idx].sum(axis=0), lt["p"][idx].sum(axis=0),
                             lt["gamma_c"], lags, zero[idx].sum(axis=0), short)

    every = np.arange(s.n_cards)
    w = wander_on(every)
    wander = (w["sd2"], w["hours"])
    sw = swing_of(m, clock, wander, span_cards, dip_hours)
    swing_top = ar1_top(float(np.isfinite(m).sum()))
    pairs, N = variogram.lag_pairs(hs["n"])
    mean_scale2 = float(np.mean(1.0 / var[ok])) if ok.any() else 1.0

    def share(sd2, hours, idx):
        gam = variogram.semivariogram(H, sd2, hours, sw["swing.diurnal"], sw["swing.sd2"], sw["swing.hours"])
        return mean_scale2 * variogram.sample_share(pairs[idx], N[idx], gam)

    sigma2 = (sigma_hour**2 / s.ref) if math.isfinite(sigma_hour) else math.nan  # one typical sample's σ²

    def ratio_of(part):
        if not (math.isfinite(sigma2) and math.isfinite(part)):
            return 1.0
        left = sigma2 - part
        return math.sqrt(sigma2 / left) if left > 0.01 * sigma2 else 1.0  # past the whole spread: not taken off

    value = {"wander.sd": _sd(w["sd2"]), "wander.hours": w["hours"], "swing.diurnal": sw["swing.diurnal"],
             "swing.hot_hour": sw["swing.hot_hour"], "swing.sd": _sd(sw["swing.sd2"]), "swing.hours": sw["swing.hours"]}
    part = share(w["sd2"], w["hours"], every)
    ratio_value = ratio_of(part)
    from_nugget = math.isfinite(sigma2) and math.isfinite(w["sigma2"]) and w["sigma2"] > 0 and part > MAX_SHARE * sigma2
    nuggets: list = []
    notes = []
    if math.isfinite(sigma2) and part >= 0.99 * sigma2 and not from_nugget:
        notes.append("the wander's and swing's share of the samples' spread reads as much as the whole spread, and "
                     "the noise's nugget is not told apart: window.sigma_hour is left as read from the spread")
    if dip_hours is not None and short is None:
        notes.append(f"the dips seen last {dip_hours:.3g} h on average, longer than {DIP_NUISANCE_HOURS:g} h: a card's "
                     "level low for that long is what the wander describes, so the wander's fit keeps the samples "
                     "of the dips seen longer than that and has no term for dips too small to see")
    rng = np.random.default_rng(seed + 1)
    draws = {k: [] for k in FIELDS}
    ratios: list = []
    comps: list = []
    days = max(1, H // 24)
    block = min(BLOCK_DAYS, days) * 24
    for _ in range(bootstrap):
        idx = rng.integers(0, s.n_cards, s.n_cards)
        w_b = wander_on(idx)
        draws["wander.sd"].append(w_b["sd2"])
        draws["wander.hours"].append(w_b["hours"])
        ratios.append(ratio_of(share(w_b["sd2"], w_b["hours"], every)))  # the structure's error (σ's: the caller's)
        nuggets.append(math.sqrt(max(w_b["sigma2"], 0.0) * s.ref) if math.isfinite(w_b["sigma2"]) else math.nan)
        starts = rng.integers(0, max(1, H - block + 1), max(1, -(-H // block)))
        m_b = np.concatenate([np.append(m[a:min(a + block, H)], np.nan) for a in starts])  # NaN: no lag across blocks
        c_b = np.concatenate([np.append(clock[a:min(a + block, H)], 0.0) for a in starts])
        sw_b = swing_of(m_b, c_b, wander, span_cards, dip_hours)
        comps.append(sw_b["components"])
        for k in ("swing.diurnal", "swing.hot_hour", "swing.hours"):
            draws[k].append(sw_b[k])
        draws["swing.sd"].append(sw_b["swing.sd2"])
    fields = {}
    for k in FIELDS:
        if k in ("wander.sd", "swing.sd"):
            lo2, hi2 = _pct(draws[k])
            lo, hi = _sd(lo2), _sd(hi2)
        elif k == "swing.hot_hour":
            lo, hi = _pct(draws[k], value[k]) if math.isfinite(value[k]) else (math.nan, math.nan)
        else:
            lo, hi = _pct(draws[k])
        fields[k] = {"value": value[k], "lo": lo, "hi": hi}
    for k, top in (("wander.hours", w["top"]), ("swing.hours", swing_top)):
        f = fields[k]
        fields[k] = _hours_field(f["value"], f["lo"], f["hi"], top)
        if "bound" in fields[k] and math.isfinite(value[k.replace("hours", "sd")]) and value[k.replace("hours", "sd")] > 0:
            name = k.split(".")[0]
            notes.append((f"{k} >= {top:,.0f} h is possible: longer than the data can resolve, so only its lower "
                          f"end is told" if fields[k]["value"] < top else
                          f"{k} >= {top:,.0f} h: longer than the data can resolve, and {name}.sd is fitted at that "
                          "bound") + f"; {name}.sd and {k} trade off there, and what they fix is the spread of "
                         "windows shorter than the series")
    c = np.asarray([x for x in comps if np.isfinite(x).all()])
    amp = value["swing.diurnal"]
    if len(c) >= 10 and math.isfinite(amp):  # the amplitude's lower end: 0 unless the harmonic is significant
        se = math.sqrt(0.5 * float(c.var(axis=0, ddof=1).sum()))
        if amp < CHI2_2_95 * se:
            fields["swing.diurnal"]["lo"] = 0.0
            fields["swing.hot_hour"].update(lo=0.0, hi=24.0)
    if not math.isfinite(value["swing.diurnal"]):
        notes.append(f"only {len(np.unique(np.floor(clock[np.isfinite(m)])))} hour(s) of the day observed: "
                     "swing.diurnal and swing.hot_hour are not identifiable")
    for name, sd in (("wander", value["wander.sd"]), ("swing", value["swing.sd"])):
        if not math.isfinite(sd):
            notes.append(f"{name}.sd and {name}.hours are not identifiable (too few hours observed at each lag)")
        elif sd == 0:
            fields[f"{name}.hours"] = {"value": math.nan, "lo": math.nan, "hi": math.nan}
            notes.append(f"no {name} seen ({name}.sd 0): {name}.hours is not identifiable")
    notes.append("a shared measurement error (window.common_hour) and a shared true swing look alike in telemetry: "
                 "the fit gives the shared part to swing")
    lo_r, hi_r = _pct(ratios)
    noise_ratio = {"value": ratio_value, "lo": lo_r if math.isfinite(lo_r) else ratio_value,
                   "hi": hi_r if math.isfinite(hi_r) else ratio_value}
    nugget_value = math.sqrt(max(w["sigma2"], 0.0) * s.ref) if math.isfinite(w["sigma2"]) else math.nan
    nugget = dict(zip(("value", "lo", "hi"), (nugget_value, *_pct(nuggets))))
    if from_nugget:
        notes.append(f"the wander's and swing's share of the samples' spread is {part / sigma2:.0%} of it: "
                     "window.sigma_hour is read from the noise's nugget (samples within an hour, and the "
                     "semivariogram's intercept), fitted beside the wander, not from the spread")
    corrected = nugget_value if from_nugget else sigma_hour / ratio_value
    ok_f = {k: (f["value"] if math.isfinite(f["value"]) else (0.0 if k.endswith("sd") or k.endswith("diurnal")
                                                              else 1.0)) for k, f in fields.items()}
    return {"fields": fields, "spread": spread(corrected, ok_f), "notes": notes, "hours": H,
            "block_days": block // 24, "lags": int(lags.max()) if lags.size else 0, "sigma_hour": corrected,
            "noise": {"method": "nugget" if from_nugget else "spread", "ratio": noise_ratio, "nugget": nugget}}
