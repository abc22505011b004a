"""Where §10 meets §6's rounds (``mc.fleet.autoscaler.round_step`` calls these when
the scenario's §10 terms are on; with them off it never does).

- ``start``: the month's §10 state and what every round reads (``timeline.Env``);
- ``arrive``: at a round's start, a slot holds a card once it has been placed;
- ``place``: §6's eviction with a replacement in a spot slot whose zone is down
  waits for the zone (or falls back); an evicted card's ledger; the run set ranks
  a spot card at its own price;
- ``between``: the slots' timelines to the next round, the failover, and the
  round's pieces for ``ledger.settle``;
- ``outcome``: the month's outputs from the pieces.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ...kernels import tree_sum
from ...units import HOURS
from .. import accounting
from .events import Events, Raw, events, zones
from .failover import membership
from .ledger import Pieces, ends, settle
from .timeline import Env, Hold, leave_at, refill, run


def start(raw: Raw, sc, rated: jax.Array, slot_dips, size: int) -> tuple[Env, Hold]:
    """The month's ``Env`` and its slots' first ``Hold`` (every original card placed
    before the window, on its class's market)."""
    st = sc.outages
    z = zones(raw, st, sc.spot) if st.n_cycles else None
    ev: Events = events(raw, st, z, sc.failures if sc.failures is not None else _NoFailures, sc.spot,
                        slot_dips.begin)
    n = ev.time.shape[1]
    spot = jnp.asarray(np.asarray(st.spot))
    inf = jnp.full((size, n), jnp.inf, jnp.float32)
    hold = Hold(placed=jnp.full(size, -sc.window.hours, jnp.float32), spot=spot, fallback=jnp.zeros(size, bool),
                ptr=jnp.zeros(size, jnp.int32), cur=jnp.full(size, -1, jnp.int32),
                served=jnp.zeros(size, jnp.float32), held_fb=jnp.zeros(size, jnp.float32),
                dip_spot=jnp.broadcast_to(spot[:, None], slot_dips.begin.shape),
                rec_placed=inf, rec_start=inf, rec_leave=inf, rec_rate=jnp.zeros((size, n), jnp.float32),
                rec_spot=jnp.zeros((size, n), bool), rec_round=jnp.full((size, n), -1, jnp.int32),
                n_failed=jnp.zeros((), jnp.int32), n_preempted=jnp.zeros((), jnp.int32))
    env = Env(ev=ev, zones=z, rated=rated, dip_begin=slot_dips.begin, dip_end=slot_dips.end, depth=slot_dips.depth)
    return env, hold


class _NoFailures:
    rate = 0.0
    replace_hours = 0.0


def arrive(s, t0: jax.Array):
    """At ``t0`` a slot holds its card once the card has been placed."""
    return s._replace(present=s.ext.placed <= t0)


def price_now(h: Hold, price: jax.Array, sc) -> jax.Array:
    """(pool,) float32 cents a month each slot's card bills (a spot card at its factor)."""
    return price if sc.spot is None else jnp.where(h.spot, price * sc.spot.price_factor, price)


def place(old, new, evicted: jax.Array, t0: jax.Array, env: Env, sc):
    """After §6's evictions at ``t0``: each evicted card's ledger closes; with
    ``replace`` its successor (of its market) is placed at ``t0``, or for a spot card
    whose zone is down, when the zone comes up (or as a fallback); without, the slot
    stays empty for good."""
    h = leave_at(old, old.ext, evicted, t0)
    h = h._replace(cur=jnp.where(evicted, -1, h.cur))
    if not sc.autoscaler.replace:
        return new._replace(ext=h._replace(placed=jnp.where(evicted, jnp.inf, h.placed)))
    placed, spot, fb = refill(h, env.zones, jnp.full(evicted.shape, t0, jnp.float32), sc.spot)
    placed = jnp.where(evicted, placed, h.placed)
    start = jnp.where(evicted, placed + sc.autoscaler.boot_hours, new.start)
    h = h._replace(placed=placed, spot=jnp.where(evicted, spot, h.spot), fallback=jnp.where(evicted, fb, h.fallback))
    return new._replace(start=start, present=new.present & (placed <= t0), ext=h)


def between(new, chosen_run: jax.Array, scored, evicted: jax.Array, key: jax.Array, t0, t1, k, env: Env, sc):
    """The slots from the round's decisions to ``t1``: their timelines, the run set's
    failover, and the round's ``Pieces``."""
    h0 = new.ext
    present = new.present
    spare = ~chosen_run & scored.scored & present & ~evicted
    s, h, first = run(new, h0, env, t0, t1, k, sc)
    m = membership(chosen_run, spare, first, key, t0, t1, sc.outages.failover)
    pieces = Pieces(join=m.join, exit=m.exit, present=present, rate=new.rate, start=new.start, spot=h0.spot,
                    first=first, lo=s.lo, hi=s.hi, weight=s.weight, dip_spot=h.dip_spot)
    return s._replace(ext=h), pieces


def outcome(xs, fixed, end, tally, trace, hourly_demand: jax.Array, ideal: jax.Array, report, sc) -> dict:
    """§6's outputs with §10's terms on, and §10's own: capacity and the warm bill
    from the rounds' pieces (``ledger.settle``), hour-weighted; ``report`` is §1's
    (``mc.fleet.month.report``: bills, tokens and checks into outputs)."""
    a, pool = sc.autoscaler, sc.pool
    factor = 1.0 if sc.spot is None else sc.spot.price_factor
    led = settle(trace.ext, end.ext, xs.t, xs.t + xs.length, xs.rent, fixed.price, factor, hourly_demand, a.period,
                 sc.outages.any_spot)
    out = report(led["warm"], tally.churn, ideal, trace.n_run[0], tally.n_evicted, tally.n_wrong, led["tok"], sc)
    held = end.ext.placed < HOURS
    n_present = jnp.sum(held, dtype=jnp.int32)
    empty_hours, fallback_hours = ends(end, end.ext, pool.size)
    out.update(
        n_replaced=tally.n_evicted if a.replace else jnp.zeros((), jnp.int32),
        mean_run=led["run_hours"] / jnp.float32(HOURS),
        quality_end=accounting.ratio(tree_sum(jnp.where(held, end.quality, 0.0)), n_present.astype(jnp.float32)),
        lemons_end=jnp.sum(held & end.lemon, dtype=jnp.int32),
        lemons_evicted=tally.lemons_evicted,
        first_eviction_hour=tally.first,
        n_failed=end.ext.n_failed, n_preempted=end.ext.n_preempted, empty_slot_hours=empty_hours,
        fallback_hours=fallback_hours, spot_share=led["spot_share"], spot_bill=led["spot_bill"],
    )
    return out


__all__ = ["arrive", "between", "outcome", "place", "price_now", "start"]
