"""The dips fitted by simulation (SPEC §8): what the detector sees of a fleet's
dips depends on their rate, length and depth together, and the dips too short or
too shallow to see leave no direct trace, so the dips are fitted by simulating
telemetry with mc's own observation model and comparing what is seen.

**Summaries.** Of a series after ``fitting.observe`` (baselines and ``σ`` fitted,
dips detected): the seen dips per card per 730 h (log), their mean hours (log),
the mean and standard deviation of their depths, and, from every sample whether
or not a dip was seen, the spread of means of 1, 4 and 16 hours of the relative
series over what independent noise gives (``spread²·k/s² − 1``). The last three
need no detector: dips of any size add to them.

**Simulation with regression adjustment.** Parameters ``φ = (log rate, log
mean_hours, c, w)`` (depths ``c ∓ w``) are drawn uniformly over a box; for each,
telemetry of as many cards as the data, sampled as the data, is simulated with
the fitted lottery and noise (``observe.card``, every card from its own key),
and summarised as the data is. The draws nearest the data's summaries are kept
with Epanechnikov weights, ``φ`` is regressed on the summaries by weighted least
squares, and each kept draw is moved to the data's summaries along the
regression, ``φ* = φ − B·(S − S_obs)`` (Beaumont, Zhang and Balding 2002). The
moved draws are the dips' distribution given the data under a flat prior over
the box: the value is their weighted median, the 95% interval their weighted
2.5th and 97.5th percentiles. A first round over a wide box, set from the naive
figures, finds where the answer lies; a second round over a box around the first
round's draws gives the result.

**Large fleets.** A simulated data set holds at most ``SIM_SAMPLES`` samples. Where
the data hold more, the dips are fitted to ``m`` of its cards, evenly spread, as a
data set of their own (simulated at ``m`` cards too, since the summaries' small-count
biases depend on the cards): the intervals are those ``m`` cards give, wider than the
whole fleet's would be, and still hold the truth as often. The lottery and the noise
use every card.

**The noise's bias.** Dips too small to see stay among a series' clean samples and
widen their spread, so ``σ`` fitted from them reads high. After the last round, data
sets are simulated at dips drawn from the moved draws (by their weights), each fitted
as the data is; each knows its true ``σ``. The log of the ratio ``r`` of the ``σ``
fitted from it to the truth is regressed on ``φ`` over those draws (a plane, robustly),
which takes out each simulation's own sampling noise (the bootstrap over cards counts
the data's): the fitted values' median is the factor the data's ``σ`` is divided by,
their 2.5th and 97.5th percentiles its interval over the dips' uncertainty. (A plane
over the whole last box, evaluated at the moved draws, overstated the bias: 0.68% at
golden-idler's true dips, where telemetry simulated at them reads 0.32% high.)
"""

from __future__ import annotations

import math
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from ..fleet.dips import Dips
from ..fleet.lottery import Lottery
from ..fleet.wander import Wander
from . import intervals
from .observe import Params, card
from .series import Series

SUMMARY_HOURS = (1.0, 4.0, 16.0)  # window hours of the detector-free spreads
KEEP = 0.75  # share of the draws nearest the data kept by the kernel
ROUNDS = 2
BIWEIGHT_ROUNDS = 5  # reweightings of the noise's bias regression
CHUNK_SAMPLES = 1 << 24  # samples one simulation call holds (draws × cards × samples)
SIM_SAMPLES = 1 << 18  # samples of one simulated data set, at most (cards are dropped past it)
MIN_PREDICT = 32  # data sets simulated for the noise's bias, at least
MIN_SIM_CARDS = 16  # cards of one simulated data set, at least (or the data's, when fewer)
NAMES = ("dips.rate", "dips.mean_hours", "dips.depth_lo", "dips.depth_hi")


def summaries(o: dict, s: Series) -> np.ndarray:
    """(7,) summaries of an observed series (``fitting.observe``'s result)."""
    seen = o["seen"]
    months = s.span / 730.0
    n = len(seen["card"])
    rate = math.log((n + 0.5) / (s.n_cards * months))
    if n >= 2:
        hours = math.log(float(seen["length"].mean()) * s.delta)
        depth_m = float(np.nanmean(seen["depth"]))
        depth_s = float(np.nanstd(seen["depth"]))
    else:
        hours, depth_m, depth_s = math.log(s.delta), 0.0, 0.0
    out = [rate, hours, depth_m, depth_s]
    z, sd = o["z"], o["sd"]
    for h in SUMMARY_HOURS:
        k = max(1, int(round(h / s.delta)))
        m = (z.shape[1] // k) * k
        if m == 0:
            out.append(0.0)
            continue
        blocks = z[:, :m].reshape(z.shape[0], -1, k)
        ok = np.isfinite(blocks).all(axis=2)
        means = blocks.mean(axis=2)[ok]
        out.append(float(means.var()) * k / sd**2 - 1.0 if means.size > 1 else 0.0)
    return np.asarray(out, np.float64)


def theta_of(phi: np.ndarray) -> np.ndarray:
    """(…, 4) dips' ``(rate, mean_hours, depth_lo, depth_hi)`` from ``φ``."""
    phi = np.asarray(phi, np.float64)
    c, w = phi[..., 2], np.abs(phi[..., 3])
    return np.stack([np.exp(phi[..., 0]), np.exp(phi[..., 1]), c - w, c + w], axis=-1)


def _clamp_depths(phi: np.ndarray) -> np.ndarray:
    """Depths inside ``[0, 1]``: ``c`` in ``[0.01, 0.99]``, ``w`` at most ``min(c, 1 − c)``."""
    phi = phi.copy()
    phi[:, 2] = np.clip(phi[:, 2], 0.01, 0.99)
    phi[:, 3] = np.clip(phi[:, 3], 0.0, np.minimum(phi[:, 2], 1 - phi[:, 2]))
    return phi


def first_box(naive: np.ndarray, delta: float) -> np.ndarray:
    """(4, 2) the first round's box of ``φ`` from the naive figures: the rate from the
    seen rate to 10 times it, the hours from a sample to 3 times the seen hours,
    any depths."""
    rate = naive[0] if np.isfinite(naive[0]) and naive[0] > 0 else 0.1
    hours = naive[1] if np.isfinite(naive[1]) and naive[1] > 0 else 4 * delta
    return np.array([[math.log(0.7 * rate), math.log(10 * rate + 0.5)],
                     [math.log(max(delta, 0.05 * hours)), math.log(3 * hours + delta)],
                     [0.02, 0.98], [0.0, 0.49]])


def _box_around(phi: np.ndarray, w: np.ndarray, prev: np.ndarray, span: float) -> np.ndarray:
    """A box around weighted draws: their 0.5th to 99.5th percentiles, widened by half
    their range each side, within the previous box's depth limits, the hours at most
    the series' span."""
    lo = np.array([_wq(phi[:, j], w, 0.005) for j in range(4)])
    hi = np.array([_wq(phi[:, j], w, 0.995) for j in range(4)])
    pad = 0.5 * np.maximum(hi - lo, 1e-3)
    box = np.stack([lo - pad, hi + pad], axis=1)
    box[1] = np.minimum(box[1], math.log(span))  # a mean dip longer than the series is not told apart
    box[2] = np.clip(box[2], 0.01, 0.99)
    box[3] = np.clip(box[3], 0.0, 0.49)
    return box


def _cap(box: np.ndarray) -> int:
    """``dips.max_count`` the box's highest rate almost never reaches."""
    top = math.exp(box[0, 1])
    return int(min(64, max(8, math.ceil(top + 6 * math.sqrt(top) + 2))))


def _wq(x: np.ndarray, w: np.ndarray, q: float) -> float:
    """The weighted ``q`` quantile of ``x``."""
    ok = np.isfinite(x) & (w > 0)
    x, w = x[ok], w[ok]
    if x.size == 0:
        return math.nan
    order = np.argsort(x)
    x, w = x[order], w[order]
    c = (np.cumsum(w) - 0.5 * w) / w.sum()
    return float(np.interp(q, c, x))


def _batched(params: list[Params]) -> Params:
    """One ``Params`` whose leaves stack those of ``params`` (a leading draw axis)."""
    return jax.tree_util.tree_map(lambda *xs: jnp.stack([jnp.asarray(x, jnp.float32) for x in xs]), *params)


def simulate(phis: np.ndarray, lottery: Lottery, sigma_hour: float, s: Series, cap: int, seed: int,
             first: int = 0) -> np.ndarray:
    """(draws, cards, samples) float64 relative telemetry (rated 1) of ``s.n_cards``
    cards for each row of ``φ``, sampled as ``s``; draw ``first + d``, card ``i``
    uses ``fold_in(fold_in(key(seed), first + d), i)``."""
    if not s.regular:
        return _simulate_over(phis, lottery, sigma_hour, s, cap, seed, first)
    every = s.delta * 60.0
    hours = s.span
    base = Params(every=every, hours=hours, rated=1.0, sigma_hour=sigma_hour, lottery=lottery)
    th = theta_of(phis)
    params = [Params(every=base.every, hours=base.hours, rated=1.0, sigma_hour=sigma_hour, lottery=lottery,
                     dips=Dips(rate=float(t[0]), mean_hours=float(t[1]), depth_lo=float(t[2]),
                               depth_hi=float(max(t[3], t[2])), max_count=cap)) for t in th]
    ids = jnp.arange(first, first + len(th))
    return np.asarray(_run(ids, _batched(params), jax.random.key(seed), jnp.arange(s.n_cards)), np.float64)


def _simulate_over(phis: np.ndarray, lottery: Lottery, sigma_hour: float, s: Series, cap: int, seed: int,
                   first: int) -> np.ndarray:
    """``simulate`` for a series of irregular times (``simulate_over``)."""
    dips = [Dips(rate=float(t[0]), mean_hours=float(t[1]), depth_lo=float(t[2]), depth_hi=float(max(t[3], t[2])),
                 max_count=cap) for t in theta_of(phis)]
    return simulate_over(dips, lottery, sigma_hour, s, seed, first)


def simulate_over(dips: list[Dips], lottery: Lottery, sigma_hour: float, s: Series, seed: int,
                  first: int = 0) -> np.ndarray:
    """(draws, cards, slots) float64 relative telemetry (rated 1) of a series of irregular
    times, one draw per ``Dips``: each simulated card is sampled over the data's card's own
    intervals (``intervals.card``), NaN where the data has none; draw ``first + d``, card
    ``i`` uses ``fold_in(fold_in(key(seed), first + d), i)``."""
    origin = min(float(np.nanmin(s.start)), 0.0)
    has = np.isfinite(s.width)
    a = jnp.asarray(np.where(has, s.start - origin, 0.0), jnp.float32)
    w = jnp.asarray(np.where(has, s.width, 1.0), jnp.float32)
    hours = s.span + 1.0
    params = [Params(every=60.0, hours=hours, rated=1.0, sigma_hour=sigma_hour, lottery=lottery, dips=d)
              for d in dips]
    shared = jnp.zeros(intervals.path_hours(hours), jnp.float32)
    ids = jnp.arange(first, first + len(params))
    y = np.asarray(_run_over(ids, _batched(params), jax.random.key(seed), jnp.arange(s.n_cards), shared, a, w),
                   np.float64)
    return np.where(has[None], y, np.nan)


def _one_over(d, p, key, cards, shared, a, w):
    k = jax.random.fold_in(key, d)
    keys = jax.vmap(jax.random.fold_in, in_axes=(None, 0))(k, cards)
    return jax.vmap(lambda one, aa, ww: intervals.card(one, p, Wander(), shared, aa, ww)["rate"])(keys, a, w)


_run_over = jax.jit(jax.vmap(_one_over, in_axes=(0, 0, None, None, None, None, None)))


def sim_cards(s: Series) -> int:
    """Cards of one simulated data set: the data's, or as many as ``SIM_SAMPLES``
    holds at the data's samples a card (at least ``MIN_SIM_CARDS``)."""
    return min(s.n_cards, max(MIN_SIM_CARDS, SIM_SAMPLES // max(1, s.y.shape[1])))


def _one(d: jax.Array, p: Params, key: jax.Array, cards: jax.Array) -> jax.Array:
    """(cards, samples) one draw's telemetry: card ``i`` from ``fold_in(fold_in(key, d), i)``."""
    k = jax.random.fold_in(key, d)
    keys = jax.vmap(jax.random.fold_in, in_axes=(None, 0))(k, cards)
    return jax.vmap(lambda one: card(one, p)["rate"])(keys)


_run = jax.jit(jax.vmap(_one, in_axes=(0, 0, None, None)))


def _regress(phi: np.ndarray, S: np.ndarray, s_obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Kernel weights and regression-adjusted draws ``φ*`` (see the module's text)."""
    ok = np.isfinite(S).all(axis=1)  # a draw whose cards read 0 throughout has no summaries
    S = np.where(ok[:, None], S, s_obs)
    scale = np.std(S[ok], axis=0) if ok.sum() > 1 else np.ones(S.shape[1])
    scale = np.where(scale > 0, scale, 1.0)
    d = np.sqrt((((S - s_obs) / scale) ** 2).sum(axis=1))
    h = np.quantile(d[ok], KEEP) if ok.any() else 1.0
    w = np.where(ok & (d < h), 1.0 - (d / max(h, 1e-12)) ** 2, 0.0)
    x = np.concatenate([np.ones((len(S), 1)), (S - s_obs) / scale], axis=1)
    sw = np.sqrt(w)[:, None]
    coef, *_ = np.linalg.lstsq(x * sw, phi * sw, rcond=None)
    adjusted = phi - ((S - s_obs) / scale) @ coef[1:]
    return w, adjusted


def _noise_bias(phi: np.ndarray, log_r: np.ndarray) -> np.ndarray:
    """(draws,) ``E[log r | φ]`` at each draw: ``log r`` regressed on ``[1, φ]`` by least
    squares over draws from the fitted dips (a region small enough for a plane), made
    robust by Tukey's biweight (a draw whose dips cover most of its month fits no
    baseline, and its ``r`` says nothing of the small dips). The regression takes out
    each simulation's own sampling noise, which the bootstrap over cards counts."""
    ok = np.isfinite(log_r)
    x = np.concatenate([np.ones((len(phi), 1)), phi], axis=1)
    if ok.sum() <= 2 * x.shape[1]:
        return np.full(len(phi), float(np.median(log_r[ok])) if ok.any() else 0.0)
    xo, y = x[ok], log_r[ok]
    robust = np.ones_like(y)
    for _ in range(BIWEIGHT_ROUNDS):
        sw = np.sqrt(robust)[:, None]
        coef, *_ = np.linalg.lstsq(xo * sw, y[:, None] * sw, rcond=None)
        res = y - (xo @ coef)[:, 0]
        scale = 1.4826 * float(np.median(np.abs(res - np.median(res))))
        if scale <= 0:
            break
        u = res / (4.685 * scale)
        robust = np.where(np.abs(u) < 1, (1 - u**2) ** 2, 0.0)
    return (x @ coef)[:, 0]


def fit(s: Series, observed: dict, naive: np.ndarray, lottery: Lottery, sigma_hour: float, *, sims: int,
        seed: int, observe: Callable, progress: Any = None) -> dict:
    """The dips fitted by simulation with regression adjustment.

    Args:
        observed: ``fitting.observe(s)``.
        naive: (4,) the naive figures (``fitting.naive``), for the first box.
        lottery, sigma_hour: the fitted lottery and noise the simulations use.
        sims: simulated data sets per round.
        observe: ``fitting.observe`` (the same detection as the data's).
    Returns:
        ``{"value", "lo", "hi"}`` (each (4,): rate, mean_hours, depth_lo, depth_hi),
        ``"sigma_ratio"`` (``{"value", "lo", "hi"}``: how many times the truth the
        fitted ``σ`` reads, from the simulations),
        ``"summaries"`` (the data's), ``"boxes"`` and ``"kept"`` (effective draws).
    """
    say = progress or (lambda text: None)
    m = sim_cards(s)
    if m < s.n_cards:  # an evenly spread subset of the cards, fitted as a whole data set
        s = s.take(np.linspace(0, s.n_cards - 1, m).round().astype(np.int64))
        observed = observe(s)
    s_obs = summaries(observed, s)
    box = first_box(naive, s.delta)
    rng = np.random.default_rng(seed)
    per_call = max(1, CHUNK_SAMPLES // max(1, m * s.y.shape[1]))
    truth = sigma_hour / math.sqrt(s.ref)  # the simulations' σ at a typical sample
    boxes, drawn = [], 0

    def run(phi: np.ndarray, cap: int, stage: str) -> tuple[np.ndarray, np.ndarray]:
        """Summaries and ``log r`` of one simulated data set per row of ``φ``."""
        nonlocal drawn
        S = np.empty((len(phi), len(s_obs)))
        log_r = np.empty(len(phi))
        for a in range(0, len(phi), per_call):
            say(f"dips: {stage}, simulations {a + 1} to {min(len(phi), a + per_call)} of {len(phi)}")
            y = simulate(phi[a:a + per_call], lottery, sigma_hour, s, cap, seed, first=drawn + a)
            for j in range(y.shape[0]):
                sim = s.with_y(np.where(np.isfinite(s.y), y[j], np.nan), np.arange(m))
                with np.errstate(divide="ignore", invalid="ignore"):  # a card lost to its dips reads 0
                    o = observe(sim)
                    S[a + j] = summaries(o, sim)
                log_r[a + j] = math.log(max(o["sigma"], 1e-300) / truth)
        drawn += len(phi)
        return S, log_r

    for rnd in range(ROUNDS):
        boxes.append(box.copy())
        phi = _clamp_depths(box[:, 0] + (box[:, 1] - box[:, 0]) * rng.random((sims, 4)))
        S, _ = run(phi, _cap(box), f"round {rnd + 1} of {ROUNDS}")
        w, adjusted = _regress(phi, S, s_obs)
        adjusted = _clamp_depths(adjusted)
        if rnd + 1 < ROUNDS:
            box = _box_around(adjusted, w, box, s.span)
    th = theta_of(adjusted)
    value = np.array([_wq(th[:, j], w, 0.5) for j in range(4)])
    lo = np.array([_wq(th[:, j], w, 0.025) for j in range(4)])
    hi = np.array([_wq(th[:, j], w, 0.975) for j in range(4)])
    kept = float(w.sum() ** 2 / max((w**2).sum(), 1e-300))
    # the noise's bias: data sets simulated at dips drawn from the fitted ones
    pick = rng.choice(len(w), size=max(MIN_PREDICT, sims // 2), p=w / w.sum())
    at = _clamp_depths(np.clip(adjusted[pick], box[:, 0], box[:, 1]))
    _, log_r = run(at, _cap(box), "the noise's bias")
    bias = _noise_bias(at, log_r)
    ratio = {name: math.exp(float(np.quantile(bias, q))) for name, q in (("value", 0.5), ("lo", 0.025),
                                                                         ("hi", 0.975))}
    return {"value": value, "lo": lo, "hi": hi, "sigma_ratio": ratio, "sim_cards": m, "summaries": s_obs.tolist(),
            "boxes": [dict(zip(("log_rate", "log_hours", "depth_centre", "depth_half"), b.tolist())) for b in boxes],
            "kept": kept}
