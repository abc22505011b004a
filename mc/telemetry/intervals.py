"""One card observed over intervals of its own (SPEC §8.3), with wander and swing
(SPEC §1.4.1).

Sample ``j`` averages ``[a_j, a_j + Δ_j)`` (an interval series' step, or a probe's few
seconds). The card's true rate is ``t·(1 + c(h))·(1 + u(h) − Σ δ·overlap)`` hour by hour
(a dip's loss taken on the wander-free rate, SPEC §1.4.1 as amended): ``u`` its own
wander, an hourly AR(1) path (``mc.kernels.ar1``, started in its stationary law at hour
0), ``c`` the fleet's swing, one hourly path shared by every card (``shared``, made once
per fleet by ``swing_path``). A sample reports its mean over the interval

    y_j = max(0, t · max(0, 1 + w_j − Σ_dips δ·∫_{dip ∩ [a_j, a_j + Δ_j)} (1 + c) / Δ_j)
                   · (1 + σ(Δ_j)·ε_j)),   σ(Δ) = sigma_hour·sqrt(1 h/Δ)

with ``w_j`` the mean over the interval of ``(1 + u)(1 + c) − 1`` (hours overlap-weighted):
exactly the mean of the hourly rate. All zero, ``w_j = 0`` and the loss is the dips'
overlap. Times are hours from the series' origin (at least 0) in float32; the
structure's means are taken from cumulative sums of its small deviations, so a probe of
seconds keeps its precision late in a month.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from ..fleet import dips, lottery, window
from ..fleet.swing import Swing
from ..fleet.wander import Wander
from ..kernels import ar1, normal, uniforms
from .observe import CardDraws, Params, truth

SHARED_INDEX = 0x7FFFFFFF  # fold_in index of the fleet's own key (no card has it: cards < INT32_MAX)


def path_hours(hours: float) -> int:
    """Hours of a path covering ``[0, hours)`` and a probe's tail past it."""
    return int(math.ceil(hours)) + 2


def rho_of(hours) -> jax.Array:
    """``ρ = exp(−1 h / hours)``."""
    return jnp.exp(-1.0 / jnp.asarray(hours, jnp.float32))


def swing_path(seed: int, swing: Swing, hours: float) -> np.ndarray:
    """(H,) float32 the fleet's ``c(h) = −diurnal·cos(2π(clock(h) − hot_hour)/24) + v(h)``
    for hours ``0..H−1`` from ``fold_in(key(seed), SHARED_INDEX)`` (``clock(h) =
    (start_hour + h) mod 24``)."""
    n = path_hours(hours)
    key = jax.random.fold_in(jax.random.key(seed), SHARED_INDEX)
    z = normal(uniforms(key, (n,)))
    v = ar1(z, rho_of(swing.hours), jnp.float32(swing.sd))
    clock = (np.float32(swing.start_hour) + np.arange(n, dtype=np.float32)) % np.float32(24.0)
    day = -np.float32(swing.diurnal) * np.cos(np.float32(2 * np.pi) * (clock - np.float32(swing.hot_hour)) / 24)
    return np.asarray(day.astype(np.float32) + np.asarray(v), np.float32)


def _integral(dev: jax.Array):
    """``t ↦ ∫_0^t dev`` of an hourly step function ``dev`` (H,), from its cumulative sum
    (past hour H − 1 the last hour's value carries on)."""
    top = dev.shape[0] - 1
    cum = jnp.concatenate([jnp.zeros(1, dev.dtype), jnp.cumsum(dev)])

    def at(t):
        h = jnp.clip(jnp.floor(t), 0, top)
        i = h.astype(jnp.int32)
        return cum[i] + (t - h) * dev[i]

    return at


def _mean_over(dev: jax.Array, a: jax.Array, b: jax.Array) -> jax.Array:
    """(n,) the mean of an hourly step function ``dev`` (H,) over each ``[a, b)``."""
    at = _integral(dev)
    return (at(b) - at(a)) / (b - a)


def lost(t, a: jax.Array, width: jax.Array, shared: jax.Array | None = None) -> jax.Array:
    """(n,) each sample's lost share ``Σ δ·∫_{dip ∩ [a, a + Δ)} (1 + c)/Δ`` (``shared``:
    the swing ``c`` (H,), None: 0): a scan over the dips (dips × samples work, memory of
    one card's samples)."""
    b = a + width
    at = None if shared is None else _integral(shared)

    def add(acc, dip):
        begin, end, depth = dip
        lo = jnp.maximum(a, begin)
        hi = jnp.maximum(lo, jnp.minimum(b, end))
        part = hi - lo if at is None else (hi - lo) + (at(hi) - at(lo))
        return acc + depth * part, None

    total, _ = jax.lax.scan(add, jnp.zeros_like(a), (t.begin, t.end, t.depth))
    return total / width


def card(key: jax.Array, p: Params, wander: Wander, shared: jax.Array, a: jax.Array, width: jax.Array) -> dict:
    """One card's samples over ``[a_j, a_j + Δ_j)`` and its truth.

    Args:
        p: the class's rated rate, ``sigma_hour``, lottery and dips; ``p.hours`` the span
            whose months of dips are drawn (``p.every`` is not used).
        wander: the card's wander (``sd = 0``: none).
        shared: (H,) float32 the fleet's swing, hour by hour (``swing_path``; zeros: none).
        a, width: (n,) float32 hours, each sample's interval (width > 0).
    Returns:
        ``rate`` (n,) float32 tok/s; ``q``, ``lemon``, ``true_rate``; the dips' ``begin``,
        ``end``, ``depth``; ``wander`` (H,) the card's ``u``.
    """
    k_lottery, k_dips, k_noise, k_wander = jax.random.split(key, 4)
    d = CardDraws(lottery.draw(uniforms(k_lottery, (1, lottery.UNIFORMS))),
                  dips.draw(uniforms(k_dips, (p.sampling.months, dips.uniforms_needed(p.dips))), p.dips),
                  window.draw(uniforms(k_noise, a.shape)))
    t = truth(d, p)
    u = ar1(normal(uniforms(k_wander, shared.shape)), rho_of(wander.hours), jnp.asarray(wander.sd, jnp.float32))
    dev = (1.0 + u) * (1.0 + shared) - 1.0
    m = t.true_rate * jnp.maximum(0.0, 1.0 + _mean_over(dev, a, a + width) - lost(t, a, width, shared))
    rate = window.noisy(m, d.noise, window.sigma_of(p.sigma_hour, width))
    return {"rate": rate, "q": t.q, "lemon": t.lemon, "true_rate": t.true_rate, "begin": t.begin, "end": t.end,
            "depth": t.depth, "wander": u}
