"""Wander and swing in the month (SPEC §1.4.1): their draws, the fleet's factor and
the windows' deterministic part.

The fleet's factor ``1 + c(h)`` lives on a grid of whole clock hours ``h = −G .. 729``
(``G`` window hours before the month, ``Scenario.structure``'s first entry; static):
the diurnal cosine at the hour's clock hour plus one shared AR(1) path. A card runs at
``r·q·(1 + u_i(h) − Σ δ·overlap)·(1 + c(h))`` (the dips' loss on the wander-free rate,
SPEC §1.4.1 as amended). A window's mean is therefore ``∫(1 + c) − Σ δ∫_dip (1 + c)``
(``window_sum``, the same for every card but for its dips) plus the wander's share
``∫(1 + c)·u_i``, which ``mc.fleet.checkpoints`` samples exactly in law with no hourly
path per card, and bridges into the month's hourly capacity.

Every draw comes from ``fold_in(month key, STREAM)``, so the month's other draws
are today's; with every term zero ``Scenario.structure`` is None and the month
never calls this module (SPEC: all zero is §1.4 bit for bit).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .. import _validate as v
from ..kernels import NORMAL_MAX, normal, running_sum, tree_sum, uniforms
from ..units import HOURS
from .swing import Swing
from .wander import Wander
from .window import Window

# The key of a month's structure draws: fold_in(month key, STREAM) (§6's rounds use 6).
STREAM = 7
# The longest window whose hours are simulated one by one (about 12 weeks).
MAX_WINDOW = 2048.0


class Static(NamedTuple):
    """What fixes the structure's shapes and which terms run (static)."""

    grid: int  # G: window hours on the grid, at least ceil(W) (``grid``)
    wander: bool  # wander.sd > 0
    diurnal: bool  # swing.diurnal > 0
    swing: bool  # swing.sd > 0
    common: bool  # window.common_hour > 0


def static(window: Window, wander: Wander, swing: Swing) -> Static | None:
    """The structure's static switches, or None when every term is zero (then the
    month is §1.4's exactly). Refuses a window too long to simulate hour by hour
    and terms large enough to drive a rate negative."""
    on = (wander.sd > 0, swing.diurnal > 0, swing.sd > 0, window.common_hour > 0)
    if not any(on):
        return None
    if window.hours > MAX_WINDOW:
        v.fail("window.hours", window.hours, f"must be at most {MAX_WINDOW:g} h while wander, swing or "
               "window.common_hour is on (their hours are simulated one by one)")
    reach = swing.diurnal + NORMAL_MAX * (swing.sd + wander.sd)
    if reach >= 1.0:
        v.fail("swing.diurnal", swing.diurnal, f"with swing.sd={swing.sd:g} and wander.sd={wander.sd:g} must keep "
               f"diurnal + {NORMAL_MAX:.2f}·(swing.sd + wander.sd) below 1 (a rate could go negative; it is "
               f"{reach:.4g})")
    return Static(grid(window.hours), *on)


def grid(hours: float) -> int:
    """The window's hours on the grid: the least of 1, 2, 3, 4, 6, 8, 12, 16, 24, ...
    (powers of two and one and a half times them) that holds ``ceil(W)``, so a sweep
    over windows compiles a few grids, each at most half again the window. The
    paths start in their stationary law, so where the grid starts changes no law."""
    n = max(1, math.ceil(hours))
    two = 1 << (n - 1).bit_length()  # the least power of two ≥ n
    return 3 * two // 4 if two >= 4 and 3 * two // 4 >= n else two


class Draws(NamedTuple):
    """The structure's standard normals (None for a term that is off)."""

    wander: jax.Array | None  # (pool, 2·marks − 1) float32 each card's chain (``mc.fleet.checkpoints``)
    swing: jax.Array | None  # (G + 730,) float32 the shared path
    common: jax.Array | None  # () float32 the window's shared error g
    bridge: jax.Array | None  # (731,) float32 the month's fresh path (wander's hourly capacity)
    restart: jax.Array | None = None  # (rounds, pool) float32 a replacement's first wander (SPEC §6)


def draw(key: jax.Array, st: Static, pool: int, marks: int, restarts: int = 0) -> Draws:
    """From ``fold_in(key, STREAM)``: one block of uniforms per term. ``marks``: the
    month's wander checkpoints (static); ``restarts``: rounds whose replacements start
    a wander path of their own (0: none)."""
    k = jax.random.fold_in(key, STREAM)
    n = st.grid + HOURS
    wander = normal(uniforms(jax.random.fold_in(k, 0), (pool, 2 * marks - 1))) if st.wander else None
    swing = normal(uniforms(jax.random.fold_in(k, 1), (n,))) if st.swing else None
    common = normal(uniforms(jax.random.fold_in(k, 2), (1,)))[0] if st.common else None
    bridge = normal(uniforms(jax.random.fold_in(k, 3), (HOURS + 1,))) if st.wander else None
    restart = normal(uniforms(jax.random.fold_in(k, 4), (restarts, pool))) if st.wander and restarts else None
    return Draws(wander, swing, common, bridge, restart)


def path(z: jax.Array, rho_: jax.Array, sd: jax.Array) -> jax.Array:
    """(..., n) stationary AR(1) from (..., n) standard normals, hour by hour as SPEC
    §1.4.1 writes it: ``x_0 = sd·z_0``, ``x_h = ρ·x_{h−1} + sqrt(1 − ρ²)·sd·z_h``.

    One ``lax.scan`` over the hours: each step is the same elementwise update of every
    path, so a path's bits do not depend on the batch."""
    step = jnp.sqrt(jnp.maximum(1.0 - rho_ * rho_, 0.0)) * sd
    zt = jnp.moveaxis(z, -1, 0)

    def advance(x, zh):
        x = rho_ * x + step * zh
        return x, x

    first = sd * zt[0]
    _, rest = jax.lax.scan(advance, first, zt[1:])
    return jnp.moveaxis(jnp.concatenate([first[None], rest]), 0, -1)


def rho(hours: jax.Array) -> jax.Array:
    """``exp(−1 h / hours)``: an AR(1)'s correlation from one hour to the next."""
    return jnp.exp(-1.0 / hours)


def grid_hours(st: Static) -> np.ndarray:
    """(G + 730,) float32: each grid hour's start ``h = −G .. 729``."""
    return np.arange(-st.grid, HOURS, dtype=np.float32)


def fleet_factor(d: Draws, st: Static, p: Swing) -> jax.Array:
    """(G + 730,) float32 ``1 + c(h)``: the diurnal cosine at ``clock(h) = (start_hour
    + h) mod 24`` plus the shared path ``v(h)``."""
    h = jnp.asarray(grid_hours(st))
    c = jnp.zeros_like(h)
    if st.diurnal:
        clock = jnp.mod(p.start_hour + h, 24.0)
        c = c - p.diurnal * jnp.cos((2.0 * np.pi / 24.0) * (clock - p.hot_hour))
    if st.swing:
        c = c + path(d.swing, rho(p.hours), p.sd)
    return 1.0 + c


def cumulative(f: jax.Array) -> jax.Array:
    """(..., G + 731) float32 ``∫_{−G}^{h} F``  at each grid hour's start and the
    month's end (a prefix sum whose bits do not depend on the batch)."""
    return jnp.concatenate([jnp.zeros(f.shape[:-1] + (1,), f.dtype), running_sum(f)], axis=-1)


def integral_to(f: jax.Array, cum: jax.Array, x: jax.Array, st: Static, rows: jax.Array | None = None) -> jax.Array:
    """``∫_{−G}^{x} F`` for hours ``x`` (pool, ...) of each card, ``F`` constant within
    each grid hour: the prefix at ``floor(x)`` and the part of its hour.

    Arguments:
        f, cum: (pool, G + 730) and (pool, G + 731), or unbatched (G + 730,) and
            (G + 731,) shared by every card; ``cum`` may stop earlier (its last entry
            the last hour ``x`` reaches). x: (pool,) or (pool, k) float32 h.
        rows: (pool,) int32, or None: card i reads row ``rows[i]`` of (rows, G + 730)
            ``f`` (instead of row i).
    """
    top = cum.shape[-1] - 1  # the last hour the prefix holds (G + 730, or less: see ``cumulative``)
    pos = jnp.clip(x + st.grid, 0.0, float(top))
    i = jnp.minimum(jnp.floor(pos), float(max(top - 1, 0))).astype(jnp.int32)
    frac = pos - i.astype(jnp.float32)
    if f.ndim == 1:
        return cum[i] + f[i] * frac
    if rows is not None:
        r = rows.reshape(rows.shape + (1,) * (i.ndim - 1))
        return cum[r, i] + f[r, i] * frac
    flat = i.reshape(i.shape[0], -1)
    take = (jnp.take_along_axis(cum, flat, axis=1).reshape(i.shape),
            jnp.take_along_axis(f, flat, axis=1).reshape(i.shape))
    return take[0] + take[1] * frac


def window_sum(f: jax.Array, cum: jax.Array, lo: jax.Array, hi: jax.Array, begin: jax.Array, end: jax.Array,
               depth: jax.Array, st: Static, rows: jax.Array | None = None) -> jax.Array:
    """(pool,) float32 hours: ``∫_lo^hi F_i − Σ_j δ_j ∫_{dip_j ∩ [lo, hi)} F_i``, the
    window's mean rate times its length over ``r·q`` (SPEC §1.4.1, dips overlap-weighted).

    Arguments:
        f, cum: the factor and its ``cumulative`` (see ``integral_to``).
        lo, hi: (pool,) float32 h the window. begin, end, depth: (pool, dips).
        rows: see ``integral_to``.
    """
    a = jnp.maximum(begin, lo[:, None])
    b = jnp.maximum(jnp.minimum(end, hi[:, None]), a)
    ends = integral_to(f, cum, jnp.concatenate([lo[:, None], hi[:, None], a, b], axis=1), st, rows)
    k = begin.shape[1]
    lost = tree_sum(depth * (ends[:, 2 + k:] - ends[:, 2:2 + k]))
    return (ends[:, 1] - ends[:, 0]) - lost


def score(m: jax.Array, eps: jax.Array, sig: jax.Array, common: jax.Array | None, st: Static, p: Window,
          length: jax.Array) -> jax.Array:
    """(pool,) float32 tok/s ``max(0, m·(1 + σ·ε)·(1 + common_hour·sqrt(1 h / w)·g))``,
    ``g`` = ``common`` (the window's shared standard normal)."""
    s = m * (1.0 + sig * eps)
    if st.common:
        s = s * (1.0 + p.common_hour * jnp.sqrt(1.0 / length) * common)
    return jnp.maximum(0.0, s)
