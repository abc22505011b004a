"""When a real monitor samples (SPEC §8.3): a jittered cadence with a per-card splay,
missed scrapes, outages, and probe or interval series; and one card's telemetry so
sampled, with wander and swing (SPEC §1.4.1).

Card ``i``'s nominal sample ``j`` (``j = 0..n−1``, ``n = floor(T/Δ)``) is at
``τ_j = (j + 1 + splay·s_i + jitter·(u_j − ½))·Δ`` with ``s_i, u_j`` uniform: the card's
probes start at a random offset within ``splay·Δ`` and each wanders within ``jitter·Δ``
of its slot (``jitter < 1`` keeps them in order). Each is missed with chance ``missed``;
the card goes dark ``Poisson(outage_rate)`` times a 730 h month (at most
``MAX_OUTAGES``), each outage beginning uniformly in its month and lasting an
exponential time of mean ``outage_hours``; a sample inside an outage, or at or past
``T``, is not recorded. A recorded sample of an interval series (``probe = 0``) averages
the time since the card's previous recorded one, or the nominal ``Δ`` for its first and
the first after an outage (what ``slots.intervals`` reads back); of a probe series,
``[τ_j, τ_j + probe)``. All zero: every sample on the grid ``(j + 1)·Δ``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .._fields import check_fields, declare
from .._pytree import pytree_dataclass
from ..fleet.wander import Wander
from ..kernels import exponential, poisson_capped, uniforms
from ..units import HOURS
from . import intervals
from .observe import Params

MAX_OUTAGES = 8  # outages of one card a month, at most


@pytree_dataclass
class Cadence:
    """How irregular a monitor's samples are; all zero: a regular grid."""

    jitter: float = declare(0.0, lo=0.0, hi=0.99, unit="share of Δ",
                            doc="each sample's time varies uniformly within this share of the interval")
    splay: float = declare(0.0, lo=0.0, hi=1.0, unit="share of Δ",
                           doc="each card's samples start at a random offset within this share of the interval")
    missed: float = declare(0.0, lo=0.0, hi=0.9, unit="share",
                            doc="chance a scrape is missed (not recorded)")
    outage_rate: float = declare(0.0, lo=0.0, hi=100.0, unit="per 730 h",
                                 doc="outages a card goes dark, per month (at most 8 a month)")
    outage_hours: float = declare(48.0, lo=0.0, lo_open=True, hi=1e5, unit="h",
                                  doc="mean length of an outage (exponential)")
    probe: float = declare(0.0, lo=0.0, hi=86400.0, unit="s",
                           doc="a probe series' run length in seconds (0: an interval series)")

    def __post_init__(self):
        check_fields(self, "cadence")

    @property
    def regular(self) -> bool:
        return not any((self.jitter, self.splay, self.missed, self.outage_rate, self.probe))


@pytree_dataclass
class Monitor:
    """One class's telemetry under a cadence: ``params`` (its ``every`` and ``hours`` fix
    the nominal grid), the cadence, the wander, and the fleet's swing path (H,)."""

    params: Params
    cadence: Cadence
    wander: Wander
    shared: jax.Array  # (H,) float32 c(h), intervals.swing_path


def times(key: jax.Array, m: Monitor) -> tuple[jax.Array, ...]:
    """One card's ``(τ, a, width, kept)``, each (n,): times, intervals and which are recorded."""
    p, c = m.params, m.cadence
    s = p.sampling
    n, delta = s.samples, jnp.float32(s.delta)
    k_jit, k_splay, k_miss, k_out = jax.random.split(key, 4)
    j = jnp.arange(n, dtype=jnp.float32)
    tau = (j + 1.0 + c.splay * uniforms(k_splay, (1,)) + c.jitter * (uniforms(k_jit, (n,)) - 0.5)) * delta
    u = uniforms(k_out, (s.months, 2 * MAX_OUTAGES + 1))
    count = poisson_capped(u[:, 0], jnp.asarray(c.outage_rate, jnp.float32), MAX_OUTAGES)
    month = jnp.arange(s.months, dtype=jnp.float32)[:, None] * HOURS
    begin = month + u[:, 1:MAX_OUTAGES + 1] * HOURS
    end = begin + c.outage_hours * exponential(u[:, MAX_OUTAGES + 1:])
    on = jnp.arange(MAX_OUTAGES)[None, :] < count[:, None]
    inside = (tau[:, None] >= begin.reshape(-1)[None]) & (tau[:, None] < end.reshape(-1)[None])
    dark = (inside & on.reshape(-1)[None]).any(axis=1)
    kept = ~dark & (uniforms(k_miss, (n,)) >= c.missed) & (tau < s.hours)
    idx = jnp.arange(n)
    last = jax.lax.cummax(jnp.where(kept, idx, -1))
    prev = jnp.concatenate([jnp.full(1, -1, last.dtype), last[:-1]])
    dark_before = jnp.concatenate([jnp.zeros(1, jnp.int32), jnp.cumsum(dark.astype(jnp.int32))])  # darks before j
    quiet = (prev >= 0) & (dark_before[idx] - dark_before[jnp.maximum(prev, 0) + 1] == 0)
    gap = jnp.where(quiet, tau - tau[jnp.maximum(prev, 0)], delta)
    probe = c.probe / 3600.0
    width = jnp.where(c.probe > 0, jnp.maximum(probe, 1e-6), gap)
    a = jnp.where(c.probe > 0, tau, tau - width)
    return tau, a, width, kept


def card(key: jax.Array, m: Monitor) -> dict:
    """One card's telemetry (the engine's per-example function): ``intervals.card`` over
    its cadence's intervals; ``time`` (n,) and ``rate`` (n,) NaN where not recorded."""
    k_card, k_times = jax.random.split(key)
    tau, a, width, kept = times(k_times, m)
    out = intervals.card(k_card, m.params, m.wander, m.shared, a, width)
    return {**out, "time": tau, "rate": jnp.where(kept, out["rate"], jnp.nan)}
