"""A scenario's lottery, dips and window noise fitted to telemetry (SPEC §8), with
95% intervals by bootstrap over cards.

1. **Noise and baselines.** Each card's baseline ``t̂`` is its mean sample outside
   seen dips over the clip's mean ``g(σ)``; ``σ(Δ)`` is the censored-normal fit of
   the residuals (``noise``), and ``window.sigma_hour = σ(Δ)·sqrt(Δ / 1 h)``. Dips
   are found (``detect``) and masked, and both are fitted again, three times.
2. **Lottery.** ``q̂ = t̂ / r`` per card, fitted as a normal with a lemon mixture
   (``mixture``). Without a rated rate for a class, ``r`` is its healthy cards'
   mean baseline, so the fitted ``lottery.mean`` is 1 (the result says so).
3. **Dips.** The seen dips give naive figures (dips per card per 730 h, their
   mean hours, the depths' range ``mean ± sqrt(3)·sd``), which dips too short or
   too shallow to see bias. The dips are fitted by simulation (``dipfit``):
   telemetry of the data's size and sampling, from the fitted lottery and noise
   and dips drawn over a box, is detected and summarised as the data is, and a
   regression adjustment of the draws to the data's summaries gives the value and
   the 95% interval.
4. **Intervals.** The lottery's and ``σ``'s by resampling the cards with
   replacement and refitting (the lottery's model the data chose: one normal, or
   the mixture); the dips' from the simulation (3).
5. **The noise's bias.** The samples' spread about their card's mean holds the
   wander's and the swing's share of it too: ``structure`` fits the noise and the wander
   together from every lag a card spans (across gaps), and ``σ`` is divided by the
   spread's ratio to the noise alone (its interval widened by that ratio's uncertainty);
   where that share passes half the spread, ``σ`` is the nugget fitted beside the
   wander instead (``structure.MAX_SHARE``), and the dips' correction below, measured
   on the spread, does not apply to it.
   The dips too small to see stay among the clean samples and widen their spread; telemetry simulated at dips drawn from the fitted ones (3)
   measures by how much (``dipfit``), ``σ`` is divided by that factor, and its
   interval widened by the factor's uncertainty.
   Without a dips' fit ``σ`` is left as fitted, and a note says so.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _validate as v
from ..fleet.lottery import Lottery
from ..fleet.scenario import Scenario
from ..units import HOURS
from . import detect, dipfit, mixture, noise, structure
from .sampling import MINUTES
from .series import Series

ROUNDS = 3  # detect, mask, refit
KS = (1, 2, 4, 8, 16, 32, 64, 128)
DIP_FIELDS = ("dips.rate", "dips.mean_hours", "dips.depth_lo", "dips.depth_hi")
SIMS = 128  # simulated data sets per round of the dips' fit
MIN_SIMS, MAX_SIMS = 32, 100_000
MIN_SEEN = 5  # dips seen below which the dips are not fitted
# The fitted scenario's clip [lottery.lo, lottery.hi] holds the fitted lottery to this
# many sd each side of its mean (all but 6 cards in 100,000): a base's narrower clip is
# widened, so that no card is cut to a bound the data never showed.
CLIP_SDS = 4.0


def _seen_mask(seen: dict, shape: tuple[int, int]) -> np.ndarray:
    mask = np.zeros(shape, bool)
    for c, a, n in zip(seen["card"], seen["start"], seen["length"]):
        mask[c, a:a + n] = True
    return mask


def observe(s: Series, k: float = detect.K) -> dict:
    """Baselines, ``σ(Δ)``, the seen dips and the clean-sample mask of a series."""
    y = s.y
    present = np.isfinite(y)
    base = np.nanmedian(y, axis=1)
    scale = s.scale()
    sigma = noise.sigma_mle(noise.sums(y, base, present, scale).sum(axis=0))
    clean = present
    for _ in range(ROUNDS):
        g = noise.clipped_mean(sigma)
        sd = noise.clipped_sd(sigma) / g
        z = y / (np.maximum(base, 1e-30) * g)[:, None]
        hidden = detect.flagged(z, sd, s.delta, k)
        clean = present & ~hidden
        base = noise.baselines(y, clean, sigma)
        sigma = noise.sigma_mle(noise.sums(y, base, clean, scale).sum(axis=0))
    g = noise.clipped_mean(sigma)
    sd = noise.clipped_sd(sigma) / g
    z = y / (np.maximum(base, 1e-30) * g)[:, None]
    seen = detect.seen(z, sd, s.delta, k)
    return {"base": base, "sigma": sigma, "sd": sd, "z": z, "clean": clean, "seen": seen,
            "sums": noise.sums(y, base, clean, scale), "count": clean.sum(axis=1)}


def naive(seen: dict, idx: np.ndarray, span: float, delta: float) -> np.ndarray:
    """(4,) naive dip figures of the cards ``idx`` (repeats allowed): seen dips per
    card per 730 h, their mean hours, and ``mean ∓ sqrt(3)·sd`` of their depths."""
    top = max(int(idx.max()) if len(idx) else -1, int(seen["card"].max()) if len(seen["card"]) else -1) + 1
    mult = np.bincount(idx, minlength=top)
    w = mult[seen["card"]] if len(seen["card"]) else np.zeros(0)
    total = w.sum()
    rate = total / len(idx) / (span / HOURS)
    if total < 2:
        return np.array([rate, math.nan, math.nan, math.nan])
    hours = float((w * seen["length"]).sum() / total) * delta
    m = float((w * seen["depth"]).sum() / total)
    sd = math.sqrt(max(float((w * (seen["depth"] - m) ** 2).sum() / total), 0.0))
    return np.array([rate, hours, m - math.sqrt(3) * sd, m + math.sqrt(3) * sd])


def _interval(x: np.ndarray) -> tuple[float, float]:
    x = x[np.isfinite(x)]
    if x.size < 10:
        return math.nan, math.nan
    return float(np.percentile(x, 2.5)), float(np.percentile(x, 97.5))


def _corrected(lo: float, hi: float, value: float, ratio: dict) -> tuple[float, float]:
    """``σ``'s bootstrap interval (already divided by the bias factor) widened by the
    factor's own uncertainty: each side's log half-width and the factor's, in quadrature."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return lo, hi
    down = math.hypot(math.log(value / lo), math.log(ratio["hi"] / ratio["value"]))
    up = math.hypot(math.log(hi / value), math.log(ratio["value"] / ratio["lo"]))
    return value * math.exp(-down), value * math.exp(up)


def fit(s: Series, rated: dict | None = None, *, bootstrap: int = 200, seed: int = 0, sims: int = SIMS,
        k: float = detect.K, progress: Any = None) -> dict:
    """Fit the lottery, dips and ``window.sigma_hour`` to a ``Series`` (SPEC §8).

    Args:
        rated: ``{class: tok/s}``, over the rows' own rated column (``s.rated``); a
            class rated by neither gets the rated rate that makes its healthy cards'
            fitted mean quality 1.
        bootstrap: resamples of the cards for the 95% intervals.
        sims: simulated data sets in each round of the dips' fit (``dipfit``; 0: the
            dips are not fitted).
        progress: called with a short text as each stage starts (or None).
    Returns:
        ``{"fields": {dotted field: {"value", "lo", "hi"}}, "noise": ..., "seen": ...,
        "rated": ..., "notes": [...]}``.
    """
    v.instance("series", s, Series, "a Series (mc.telemetry.series.read or from_frame)")
    bootstrap = v.count("bootstrap", bootstrap, lo=0, hi=100_000)
    seed = v.count("seed", seed, lo=0, hi=2**31 - 1)
    sims = v.count("sims", sims, lo=0, hi=MAX_SIMS)
    if 0 < sims < MIN_SIMS:
        v.fail("sims", sims, f"must be 0 (no dips fitted) or at least {MIN_SIMS} (a regression over the summaries)")
    say = progress or (lambda text: None)
    notes = []
    if s.replaced:
        notes.append(f"{s.replaced} series split at an outage where the card's level stepped more than the given "
                     "step: each part after a step is fitted as a replacement card")
    say("noise and baselines")
    o = observe(s, k)
    sigma = o["sigma"]
    base = o["base"]
    classes = s.classes
    given = {**s.rated, **dict(rated or {})}  # the rows' rated column, where ``rated`` does not name the class
    r = np.empty(s.n_cards)
    rated_out = {}
    err_rel = o["sd"] ** 2 / np.maximum(o["count"], 1)  # relative variance of each baseline
    for name in dict.fromkeys(classes):
        of = classes == name
        if name in given:
            r[of] = v.positive(f"rated.{name or 'cards'}", given[name])
        else:
            b, e = base[of], err_rel[of] * base[of] ** 2
            sel = mixture.precise(b, e)
            r[of] = mixture.fit(b[sel], float(np.mean(e[sel])))["mean"]
            notes.append(f"class {name or '(none)'}: no rated rate given; rated = {r[of][0]:,.6g} tok/s, its healthy "
                         "cards' mean baseline, so the fitted lottery mean is 1 by construction")
        rated_out[name] = float(r[of][0])
    q = base / r
    err_q = err_rel * q**2  # (cards,) each q̂'s own error variance
    keep = mixture.precise(q, err_q)
    if not keep.all():
        ids = ", ".join(map(str, s.cards[~keep][:5])) + (", ..." if (~keep).sum() > 5 else "")
        notes.append(f"{int((~keep).sum())} of {s.n_cards} cards left out of the lottery ({ids}): too few clean "
                     "samples, so their baselines err by more than the cards differ")
    lot = mixture.fit(q[keep], float(np.mean(err_q[keep])))
    fitted = {"lottery.mean": lot["mean"], "lottery.sd": lot["sd"], "lottery.lemon_rate": lot["lemon_rate"],
              "lottery.lemon_factor": lot["lemon_factor"], "window.sigma_hour": sigma * math.sqrt(s.ref)}
    if not lot["lemons"]:
        notes.append("no lemon component beats one normal (BIC margin 10): lemon_rate 0, lemon_factor not identified")

    every = np.arange(s.n_cards)
    n_obs = naive(o["seen"], every, s.span, s.delta)
    dips_ok = sims > 0 and len(o["seen"]["card"]) >= MIN_SEEN
    dip_fit = None
    if dips_ok:
        lot_sim = Lottery(mean=fitted["lottery.mean"], sd=fitted["lottery.sd"],
                          lemon_rate=fitted["lottery.lemon_rate"] if lot["lemons"] else 0.0,
                          lemon_factor=fitted["lottery.lemon_factor"] if lot["lemons"] else 0.67)
        dip_fit = dipfit.fit(s, o, n_obs, lot_sim, fitted["window.sigma_hour"], sims=sims, seed=seed,
                             observe=lambda x: observe(x, k), progress=say)
        fitted.update(dict(zip(DIP_FIELDS, (float(x) for x in dip_fit["value"]))))
        fitted["window.sigma_hour"] /= dip_fit["sigma_ratio"]["value"]
    else:
        fitted.update(dict.fromkeys(DIP_FIELDS, math.nan))
        notes.append(f"only {len(o['seen']['card'])} dips seen (a fit needs {MIN_SEEN}): the dips stay unidentified"
                     if sims > 0 else "sims 0: the dips are not fitted")
        notes.append("window.sigma_hour is not corrected for the dips too small to see (the dips were not fitted): "
                     "it may read a little high")

    say("bootstrap")
    rng = np.random.default_rng(seed)
    draws = {f: [] for f in fitted if f not in DIP_FIELDS}
    for _ in range(bootstrap):
        idx = rng.integers(0, s.n_cards, s.n_cards)
        sig_b = noise.sigma_mle(o["sums"][idx].sum(axis=0)) / (dip_fit["sigma_ratio"]["value"] if dip_fit else 1.0)
        lot_idx = idx[keep[idx]]
        lot_b = mixture.fit(q[lot_idx], float(np.mean(err_q[lot_idx])), lemons=lot["lemons"])
        row = {"lottery.mean": lot_b["mean"], "lottery.sd": lot_b["sd"], "lottery.lemon_rate": lot_b["lemon_rate"],
               "lottery.lemon_factor": lot_b["lemon_factor"], "window.sigma_hour": sig_b * math.sqrt(s.ref)}
        for f in row:
            draws[f].append(row[f])
    say("wander and swing")
    dip_hours = fitted["dips.mean_hours"] if math.isfinite(fitted["dips.mean_hours"]) else n_obs[1]
    st = structure.fit(s, o, fitted["window.sigma_hour"], bootstrap=bootstrap, seed=seed,
                       dip_hours=float(dip_hours) if math.isfinite(dip_hours) and len(o["seen"]["card"]) else None)
    out = {}
    for f, value in fitted.items():
        if f in DIP_FIELDS:
            j = DIP_FIELDS.index(f)
            lo, hi = (float(dip_fit["lo"][j]), float(dip_fit["hi"][j])) if dip_fit else (math.nan, math.nan)
        else:
            lo, hi = _interval(np.asarray(draws[f], np.float64)) if bootstrap else (math.nan, math.nan)
        if f == "window.sigma_hour" and dip_fit and bootstrap:
            lo, hi = _corrected(lo, hi, value, dip_fit["sigma_ratio"])
        if f == "window.sigma_hour" and st["noise"]["method"] == "nugget":  # the structure dominates the spread
            value, lo, hi = (st["noise"]["nugget"][x] for x in ("value", "lo", "hi"))
        elif f == "window.sigma_hour":  # the wander's and swing's share of the spread, taken off
            share = st["noise"]["ratio"]["value"]
            value, lo, hi = value / share, lo / share, hi / share
            if bootstrap:
                lo, hi = _corrected(lo, hi, value, st["noise"]["ratio"])
        out[f] = {"value": value, "lo": lo, "hi": hi}
    return {
        "cards": s.n_cards, "samples": int(np.isfinite(s.y).sum()), "every_minutes": s.delta * MINUTES,
        "hours": s.span, "sample_hours": s.ref, "rated": rated_out,
        "rated_given": {name: rated_out[name] for name in given if name in rated_out}, "fields": out,
        "bootstrap": bootstrap,
        "dips": {"method": (f"simulation with regression adjustment ({sims} simulated data sets of "
                            + ("the data's size" if dip_fit["sim_cards"] == s.n_cards else
                               f"{dip_fit['sim_cards']} cards, fitted to {dip_fit['sim_cards']} of the "
                               f"{s.n_cards} cards evenly spread")
                            + f" in each of {dipfit.ROUNDS} rounds)") if dip_fit else "not fitted",
                 "sims": sims if dip_fit else 0, "sim_cards": dip_fit["sim_cards"] if dip_fit else 0, "kept": dip_fit["kept"] if dip_fit else 0.0,
                 "summaries": dip_fit["summaries"] if dip_fit else None,
                 "boxes": dip_fit["boxes"] if dip_fit else None},
        "noise": {"sigma_sample": sigma, "bias": dip_fit["sigma_ratio"] if dip_fit else None,
                  "method": st["noise"]["method"], "structure_share": st["noise"]["ratio"],
                  "nugget": st["noise"]["nugget"],
                  "zero_share": float(((s.y <= 0) & o["clean"]).sum() / max(o["clean"].sum(), 1)),
                  "k_means": noise.k_spread(o["z"], o["clean"], KS)},
        "seen": {"dips": int(len(o["seen"]["card"])), "naive": dict(zip(DIP_FIELDS, map(float, n_obs))),
                 "threshold_se": k, "smallest": detect.smallest(o["sd"], s.delta, k)},
        "structure": {"fields": st["fields"], "spread": st["spread"], "hours": st["hours"],
                      "block_days": st["block_days"], "lags": st["lags"], "kind": s.kind, "outages": s.outages, "clock0": s.clock0},
        "notes": notes + st["notes"],
    }


LOTTERY_FIELDS = ("lottery.mean", "lottery.sd", "lottery.lemon_rate", "lottery.lemon_factor")


def dip_cap(rate: float) -> int:
    """``dips.max_count`` that a Poisson count of mean ``rate`` a month almost never
    reaches (mean + 6 standard deviations + 2, within 8 to 64)."""
    return int(min(64, max(8, math.ceil(rate + 6 * math.sqrt(max(rate, 0.0)) + 2))))


def scenario_of(result: dict, base: Scenario) -> tuple[Scenario, list[str]]:
    """``base`` with a fit's lottery, dips and ``window.sigma_hour`` in place of its
    own, and what a reader must know of it (one line each).

    A field the fit could not identify (``lemon_factor`` with no lemons seen, the
    dips when too few were seen) keeps ``base``'s value. ``dips.max_count`` is raised
    where the fitted rate would often reach ``base``'s cap, and ``base``'s clip
    ``[lottery.lo, lottery.hi]`` widened where it would cut the fitted lottery within
    ``CLIP_SDS`` sd of its mean. The lottery's quality is
    relative to the rated rates the fit used: where those are not ``base``'s pool's
    rates for classes of the same name, or were not given, the notes say so.
    """
    v.instance("base", base, Scenario, "a Scenario")
    f = {name: x["value"] for name, x in result["fields"].items()}
    notes: list[str] = []
    updates: dict[str, Any] = {"window.sigma_hour": f["window.sigma_hour"]}
    for name in LOTTERY_FIELDS:
        if math.isfinite(f[name]):
            updates[name] = f[name]
        else:
            notes.append(f"{name} not identified by the fit: the base's {_field(base, name):g} kept")
    if all(math.isfinite(f[name]) for name in DIP_FIELDS):
        updates.update({name: f[name] for name in DIP_FIELDS})
        cap = max(base.dips.max_count, dip_cap(f["dips.rate"]))
        if cap != base.dips.max_count:
            updates["dips.max_count"] = cap
            notes.append(f"dips.max_count raised from {base.dips.max_count} to {cap} so that the fitted rate is "
                         "rarely cut")
    else:
        notes.append("the dips were not identified by the fit: the base's dips kept")
    notes += _clip(base, updates)
    rated = {c.name: c.rated for c in base.pool.classes}
    for name, r in result["rated"].items():
        if name in result.get("rated_given", {}):
            if name in rated and abs(rated[name] - r) > 1e-9 * r:
                notes.append(f"the fit's rated rate of class {name} ({r:,.6g} tok/s) is not the base's "
                             f"({rated[name]:,.6g}): the fitted qualities are relative to the fit's")
        else:
            notes.append(f"class {name or '(none)'} was fitted without a rated rate: lottery.mean 1 is relative to "
                         "its healthy cards' mean, not to the base's rated rate (give --rated CLASS=TOK_S)")
    return base.replace(updates), notes


def _clip(base: Scenario, updates: dict[str, Any]) -> list[str]:
    """Widen ``base``'s lottery clip in ``updates`` to hold the fitted lottery
    (``mean ± CLIP_SDS · sd``, ``lo`` at least 0); a note for each bound moved."""
    mean = updates.get("lottery.mean", base.lottery.mean)
    sd = updates.get("lottery.sd", base.lottery.sd)
    want = {"lottery.lo": max(0.0, min(base.lottery.lo, mean - CLIP_SDS * sd)),
            "lottery.hi": max(base.lottery.hi, mean + CLIP_SDS * sd)}
    notes = []
    for name, x in want.items():
        was = _field(base, name)
        if x != was:
            updates[name] = x
            notes.append(f"{name} moved from {was:g} to {x:.4g} so that the clip holds the fitted lottery (mean "
                         f"{mean:.4g}, sd {sd:.3g}, to {CLIP_SDS:g} sd): the base's would cut every card beyond it "
                         f"to {was:g}")
    return notes


def _field(sc: Scenario, dotted: str) -> float:
    head, _, tail = dotted.partition(".")
    return float(getattr(getattr(sc, head), tail))
