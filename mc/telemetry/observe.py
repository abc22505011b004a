"""The observation model (SPEC §8): one card's true rate, its dips, and what a
monitor sampling it every ``Δ`` records.

A card of rated rate ``r`` draws its quality exactly as the fleet month does
(``mc.fleet.lottery``: ``t = r·q``, lemons included) and its dips month by month
exactly as a month with no window draws them (``mc.fleet.dips``, ``W = 0``: month
``m`` holds ``Poisson(rate)`` dips, cut at ``max_count``, over ``[730m, 730(m+1))``).
Sample ``j`` (time ``τ = (j+1)·Δ``) is the card's mean rate over ``[τ − Δ, τ)``,
with §1.4's noise law at that length:

    m_j = t · max(0, 1 − Σ_dips δ·overlap(dip, [τ − Δ, τ)) / Δ)
    y_j = max(0, m_j · (1 + σ(Δ)·ε_j)),   σ(Δ) = sigma_hour · sqrt(1 h / Δ)

Each card is one example of the engine: card ``i`` draws everything from
``fold_in(key(seed), i)`` (its lottery ticket, its months' dips and its samples'
errors from three keys split from it), so its rows depend on neither the chunk
nor the device count.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .. import _validate as v
from .._pytree import pytree_dataclass
from ..fleet import dips, lottery, window
from ..fleet.dips import Dips
from ..fleet.lottery import Lottery
from ..kernels import per_hour, uniforms
from ..units import HOURS
from .sampling import Sampling


@pytree_dataclass(static=("every", "hours"))
class Params:
    """One card class's telemetry: the sampling (static: it fixes the shapes), the
    class's rated rate (tok/s), the scenario's lottery and dips, and the hour
    window's relative error ``sigma_hour`` (SPEC §1.4)."""

    every: float = 5.0  # minutes between samples
    hours: float = float(HOURS)  # span T
    rated: float = 7000.0  # tok/s
    sigma_hour: float = 0.25
    lottery: Lottery = dataclasses.field(default_factory=Lottery)
    dips: Dips = dataclasses.field(default_factory=Dips)

    def __post_init__(self):
        s = Sampling(self.every, self.hours)
        object.__setattr__(self, "every", s.every)
        object.__setattr__(self, "hours", s.hours)
        object.__setattr__(self, "rated", v.positive("rated", self.rated))
        object.__setattr__(self, "sigma_hour", v.nonneg("window.sigma_hour", self.sigma_hour))
        v.instance("lottery", self.lottery, Lottery, "a Lottery")
        v.instance("dips", self.dips, Dips, "a Dips")

    @property
    def sampling(self) -> Sampling:
        return Sampling(self.every, self.hours)


class CardDraws(NamedTuple):
    """Every random number of one card's telemetry."""

    lottery: lottery.LotteryDraws  # (1,) each
    dips: dips.DipDraws  # one row per month: (months,) and (months, max_count)
    noise: jax.Array  # (samples,) float32 standard normal sample errors ε


class Truth(NamedTuple):
    """What no monitor sees: the card's quality and its dips."""

    q: jax.Array  # () float32, lemon factor included
    lemon: jax.Array  # () bool
    true_rate: jax.Array  # () float32 tok/s, rated · q
    begin: jax.Array  # (months·max_count,) float32 h from t = 0
    end: jax.Array  # (months·max_count,) float32 h
    depth: jax.Array  # (months·max_count,) float32 share of t; 0 where no dip


def draw(key: jax.Array, p: Params) -> CardDraws:
    """One card's draws from its key: a lottery ticket (``mc.fleet.lottery``), one
    row of dip draws per month (``mc.fleet.dips``), one error per sample."""
    s = p.sampling
    k_lottery, k_dips, k_noise = jax.random.split(key, 3)
    return CardDraws(lottery.draw(uniforms(k_lottery, (1, lottery.UNIFORMS))),
                     dips.draw(uniforms(k_dips, (s.months, dips.uniforms_needed(p.dips))), p.dips),
                     window.draw(uniforms(k_noise, (s.samples,))))


def truth(d: CardDraws, p: Params) -> Truth:
    """The card's quality and dips: month ``m``'s dips are SPEC §1.3's for a month
    with no window (``dips.place`` with ``W = 0``), moved to ``[730m, 730(m+1))``."""
    q = lottery.quality(d.lottery, p.lottery)[0]
    placed = dips.place(d.dips, jnp.float32(0.0), p.dips)  # (months, max_count), month-local hours
    start = jnp.asarray(np.arange(p.sampling.months, dtype=np.float32) * np.float32(HOURS))[:, None]
    return Truth(q, lottery.lemon(d.lottery, p.lottery)[0], p.rated * q,
                 (placed.begin + start).reshape(-1), (placed.end + start).reshape(-1), placed.depth.reshape(-1))


def lost(t: Truth, p: Params) -> jax.Array:
    """(samples,) float32: each sample's lost share ``Σ δ·overlap(dip, [τ − Δ, τ)) / Δ``,
    summed over the sample grid in O(dips + samples) (``kernels.per_hour`` on the
    grid of samples: dip times in units of ``Δ``)."""
    s = p.sampling
    scale = jnp.float32(1.0 / s.delta)
    return per_hour(t.begin * scale, t.end * scale, t.depth, s.samples)


def mean_rates(t: Truth, p: Params) -> jax.Array:
    """(samples,) float32 tok/s: the card's mean rate ``m_j`` over each sample's ``Δ``."""
    return t.true_rate * jnp.maximum(0.0, 1.0 - lost(t, p))


def observe(d: CardDraws, p: Params) -> dict[str, jax.Array]:
    """One card's telemetry and its truth.

    Returns:
        ``rate``: (samples,) float32 tok/s, ``y_j = max(0, m_j·(1 + σ(Δ)·ε_j))``;
        ``q``, ``lemon``, ``true_rate``: () each; ``begin``, ``end`` (h) and
        ``depth``: (months·max_count,) the card's dips (depth 0: no dip).
    """
    t = truth(d, p)
    sig = window.sigma_of(p.sigma_hour, jnp.float32(p.sampling.delta))
    rate = window.noisy(mean_rates(t, p), d.noise, sig)
    return {"rate": rate, "q": t.q, "lemon": t.lemon, "true_rate": t.true_rate,
            "begin": t.begin, "end": t.end, "depth": t.depth}


def card(key: jax.Array, p: Params) -> dict[str, jax.Array]:
    """One card's telemetry from its key (the engine's per-example function):
    ``observe(draw(key, p), p)``."""
    return observe(draw(key, p), p)
