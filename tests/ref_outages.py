"""A plain NumPy/Python reference of SPEC §10 in §6's month, one month at a time.

It consumes the very draws the JAX month consumes (``mc.fleet.autoscaler.Draws``,
§10's ``Raw`` included, as NumPy arrays) and replays the month event by event in
float64: rounds as ``ref_autoscaler`` plays them, and between rounds every slot's
failure and preemption candidates, zone spells and dip begins in one time-ordered
queue, the failover done as each run slot empties, each card kept with its own
placement, boot and leaving time. Capacity is then summed hour by hour from each
card's time in the run set, and each card bills its price per 730 h in its slot and
the run set. It never calls the package's code (an eviction rule's line is its
NumPy twin). §1.4.1's terms are not modelled here (the package refuses them with §10).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ref_autoscaler import _quality, card_scores, class_medians, evictions
from ref_fleet import HOURS, demand_profile, poisson_cdf

FAIL, LONE, WAVE, DIP = 0, 1, 2, 3


class Card:
    def __init__(self, t, q, lemon, placed, start, spot, fallback=False):
        self.t, self.q, self.lemon = t, q, lemon
        self.placed, self.start = placed, start
        self.spot, self.fallback = spot, fallback
        self.leave = math.inf
        self.marks = 0


def _zone_paths(raw, sc, st):
    """Per zone: (ends of its spells, down at 0)."""
    sp = sc.spot
    out = []
    for z in range(st.zones):
        down0 = float(raw.zone_u[z]) < sp.down_hours / (sp.up_hours + sp.down_hours)
        ends, t = [], 0.0
        for m in range(2 * st.n_cycles):
            down = (m % 2 == 0) == down0
            t += float(raw.spells[z, m]) * (sp.down_hours if down else sp.up_hours)
            ends.append(t)
        out.append((ends, down0))
    return out


def _up_after(path, r):
    ends, down0 = path
    m = sum(e <= r for e in ends)
    if m < len(ends) and ((m % 2 == 0) == down0):
        return ends[m]
    return r


def _candidates(raw, sc, st, i, dip_begins):
    """Slot i's candidates in [0, 730) as (time, kind, index), in the month's order."""
    out = []
    rate = sc.failures.rate if sc.failures is not None else 0.0
    t = 0.0
    for j in range(st.n_fail):
        t += float(raw.fail[i, j]) * HOURS / rate if rate > 0 else math.inf
        out.append((t if t < HOURS else math.inf, FAIL, j))
    if st.n_cycles:
        t = 0.0
        for j in range(st.n_lone):
            t += float(raw.lone[i, j]) * HOURS / sc.spot.rate if sc.spot.rate > 0 else math.inf
            out.append((t if st.spot[i] and t < HOURS else math.inf, LONE, j))
        ends, down0 = _zone_paths(raw, sc, st)[st.zone_of[i]]
        for j in range(st.n_cycles):
            m = 2 * j + (0 if down0 else 1)
            b = 0.0 if m == 0 else ends[m - 1]
            out.append((b if st.spot[i] and b < HOURS else math.inf, WAVE, j))
    for j, b in enumerate(dip_begins):
        out.append((b if b >= 0 else math.inf, DIP, j))
    order = sorted(range(len(out)), key=lambda n: (out[n][0], n))  # stable, as the month sorts
    return [out[n] + (pos,) for pos, n in enumerate(order)]


def month(d, sc) -> dict:
    """SPEC §6 + §10 outputs (money in integer cents)."""
    pool, a, st = sc.pool, sc.autoscaler, sc.outages
    raw = d.outages
    classes = [c for c, n in pool.groups for _ in range(n)]
    cls_of = [k for k, (c, n) in enumerate(pool.groups) for _ in range(n)]
    P = len(classes)
    rated = [c.rated for c in classes]
    cents = [int(round(c.price * 100)) for c in classes]
    fee = [int(round(c * sc.eviction.churn)) for c in cents]
    factor = sc.spot.price_factor if sc.spot is not None else 1.0
    fb_hours = math.inf if sc.spot is None or sc.spot.fallback_hours is None else sc.spot.fallback_hours
    replace_hours = sc.failures.replace_hours if sc.failures is not None else 0.0
    wave_share = sc.spot.wave_share if sc.spot is not None else 1.0
    W, L = sc.window.hours, sc.lottery
    zones = _zone_paths(raw, sc, st) if st.n_cycles else None

    lam = sc.dips.rate * (HOURS + W) / HOURS
    cdf = [poisson_cdf(k, lam) for k in range(sc.dips.max_count)]
    dips, begins = [], []
    for i in range(P):
        n = sum(float(d.month.dips.u_count[i]) >= c for c in cdf)
        slot, bs = [], []
        for j in range(sc.dips.max_count):
            b = -W + float(d.month.dips.u_begin[i, j]) * (HOURS + W)
            if j < n:
                e = b + sc.dips.mean_hours * float(d.month.dips.e_length[i, j])
                depth = sc.dips.depth_lo + float(d.month.dips.u_depth[i, j]) * (sc.dips.depth_hi - sc.dips.depth_lo)
                slot.append((b, e, depth))
            bs.append(b)
        dips.append(slot)
        begins.append(bs)
    queue = [_candidates(raw, sc, st, i, begins[i]) for i in range(P)]

    history = []
    for i in range(P):
        q, lemon = _quality(L, d.month.lottery.z[i], d.month.lottery.u_lemon[i])
        history.append([Card(rated[i] * q, q, lemon, -W, -W, st.spot[i])])
    originals = [h[0].t for h in history]

    def holder(i, t):
        for c in history[i]:
            if c.placed <= t < c.leave:
                return c
        return None

    def owned(i, card):
        out = []
        for b, e, depth in dips[i]:
            if card.placed <= b < card.leave:
                lo, hi = max(b, card.start), min(e, card.leave)
                if hi > lo:
                    out.append((lo, hi, depth))
        return out

    def successor(i, card, ready, k_ticket):
        """The card that follows ``card`` in slot i, ready at ``ready``."""
        z, u = k_ticket
        q, lemon = _quality(L, z, u)
        spot, fallback, placed = card.spot, card.fallback, ready
        if card.spot:
            up = _up_after(zones[st.zone_of[i]], ready)
            if up - ready > fb_hours:
                placed, spot, fallback = ready + fb_hours, False, True
            else:
                placed = up
        return Card(rated[i] * q, q, lemon, placed, placed + a.boot_hours, spot, fallback)

    def price(c):
        return cents_of[c] * (factor if c.spot else 1.0)

    cents_of = {}

    def add(i, c):
        cents_of[c] = cents[i]
        history[i].append(c)

    for i in range(P):
        cents_of[history[i][0]] = cents[i]

    D = demand_profile(d.month.demand, sc.demand)
    K = -(-HOURS // a.period)
    starts = [k * a.period for k in range(K)]
    ends = [min(t + a.period, HOURS) for t in starts]
    limit = math.floor(sc.eviction.rule.cap() * P + 1e-9)
    vacated = [False] * P
    ptr = [0] * P
    warm = churn = n_evicted = n_wrong = lemons_evicted = n_failed = n_preempted = 0
    spot_bill = 0
    first = HOURS
    run_hours = 0.0
    members = []  # per round: {slot: (join, exit)}
    n_run0 = 0
    for k, (t, end) in enumerate(zip(starts, ends)):
        eps = d.month.noise if k == 0 else d.noise[k]
        cur = [None if vacated[i] else holder(i, t) for i in range(P)]
        score, scored, typical = card_scores(cur, owned, rated, t, W, sc.window.sigma_hour, eps)
        rel = [score[i] / rated[i] for i in range(P)]
        evicted = evictions(sc, cur, rel, score, rated, scored, t, limit)
        med = class_medians(cur, cls_of, len(pool.groups))
        for i in evicted:
            c = cur[i]
            n_evicted += 1
            n_wrong += c.t >= med[cls_of[i]]
            lemons_evicted += c.lemon
            churn += fee[i]
            c.leave = t
            if a.replace:
                new = successor(i, c, t, (d.tickets.z[k, i], d.tickets.u_lemon[k, i]))
                add(i, new)
                score[i] = rated[i] * typical
                cur[i] = new if new.placed <= t else None
            else:
                vacated[i] = True
                cur[i] = None
        if evicted and first == HOURS:
            first = t

        # The run set, each card at its own price.
        here = [i for i in range(P) if cur[i] is not None]
        hours = D[t:end]
        if sc.runset == "all":
            run = set(here)
        else:
            target = hours.mean() if sc.runset == "steady" else hours.max()
            run, added = set(), 0.0
            for i in sorted(here, key=lambda i: (-score[i] / price(cur[i]), i)):
                if added >= target:
                    break
                run.add(i)
                added += score[i]
        if k == 0:
            n_run0 = len(run)
        spares = {i for i in here if i not in run and scored[i] and i not in evicted}
        join = {i: float(t) for i in run}
        exit_ = {}

        # Between rounds: every slot's candidates in time order.
        pending = []
        for i in range(P):
            while ptr[i] < len(queue[i]) and queue[i][ptr[i]][0] < end:
                pending.append((queue[i][ptr[i]][0], i, queue[i][ptr[i]]))
                ptr[i] += 1
        pending.sort(key=lambda x: (x[0], x[1]))
        for tau, i, (_, kind, idx, pos) in pending:
            c = None if vacated[i] else holder(i, tau)
            if kind == DIP or c is None:
                continue
            u_w = float(raw.wave[i, idx]) if kind == WAVE else 1.0
            if not (kind == FAIL or (c.spot and (kind == LONE or (kind == WAVE and u_w < wave_share)))):
                continue
            c.leave = tau
            if kind == FAIL:
                n_failed += 1
                ready = tau + float(raw.delay[i, pos]) * replace_hours
            else:
                n_preempted += 1
                ready = tau
            add(i, successor(i, c, ready, (raw.tickets.z[i, pos], raw.tickets.u_lemon[i, pos])))
            if a.failover and i in join and i not in exit_ and c.placed <= t:
                free = [j for j in spares if cur[j].leave > tau]
                if free:
                    j = min(free, key=lambda j: (-score[j] / price(cur[j]), j))
                    exit_[i] = tau
                    join[j] = tau
                    spares.discard(j)
        members.append({i: (join[i], exit_.get(i, float(end))) for i in join})
        run_hours += sum(max(0.0, e - b) for b, e in members[-1].values())

    # Capacity and bills, card by card.
    cap = np.zeros(HOURS)
    spot_cap = np.zeros(HOURS)
    h = np.arange(HOURS, dtype=np.float64)
    for k, (t, end) in enumerate(zip(starts, ends)):
        for i, (jb, je) in members[k].items():
            for c in history[i]:
                lo, hi = max(c.start, jb, t), min(c.leave, je, end)
                blo, bhi = max(c.placed, jb, t), min(c.leave, je, end)
                if bhi > blo:
                    whole = blo == t and bhi == end
                    bill = int(round(price(c) * (bhi - blo) / HOURS))
                    warm += bill
                    spot_bill += bill if c.spot else 0
                if hi <= lo:
                    continue
                served = c.t * np.clip(np.minimum(hi, h + 1) - np.maximum(lo, h), 0.0, None)
                for dlo, dhi, depth in owned(i, c):
                    a_, b_ = max(dlo, jb), min(dhi, je)
                    served = served - depth * c.t * np.clip(np.minimum(b_, h + 1) - np.maximum(a_, h), 0.0, None)
                cap += served
                if c.spot:
                    spot_cap += served
    cap_c = np.maximum(cap, 0.0)
    served_h = np.minimum(D, cap_c)
    demand_tok = D.sum() * 3600
    delivered = served_h.sum() * 3600
    capacity_tok = cap_c.sum() * 3600
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.where(cap_c > 0, np.clip(spot_cap, 0, cap_c) / np.where(cap_c > 0, cap_c, 1), 0.0)
    spot_share = float((served_h * frac).sum() / served_h.sum()) if served_h.sum() > 0 else 0.0

    # The ideal, at billed prices.
    best = [sorted((originals[i] for i in range(P) if cls_of[i] == g), reverse=True) for g in range(len(pool.groups))]
    ideal = 0
    for t, end in zip(starts, ends):
        peak = D[t:end].max()
        price_c = [int(round(c.price_cents * (end - t) / HOURS)) for c in pool.classes]
        price_c = [int(round(p * factor)) if c.spot else p for p, c in zip(price_c, pool.classes)]
        cost = sum(len(b) * p for b, p in zip(best, price_c))
        for counts in itertools.product(*[range(len(b) + 1) for b in best]):
            if sum(sum(b[:n]) for b, n in zip(best, counts)) >= peak:
                cost = min(cost, sum(n * p for n, p in zip(counts, price_c)))
        ideal += cost

    served_slot = fallback = 0.0
    for i in range(P):
        for c in history[i]:
            served_slot += max(0.0, min(c.leave, HOURS) - max(c.start, 0.0))
            if c.fallback:
                fallback += max(0.0, min(c.leave, HOURS) - max(c.placed, 0.0))
    end_cards = [c for i in range(P) if not vacated[i] for c in [holder(i, HOURS - 1e-9) or history[i][-1]]
                 if c.placed < HOURS]
    bill = warm + churn
    return {
        "bill": bill, "warm_bill": warm, "churn_bill": churn, "ideal_bill": ideal,
        "n_run": n_run0, "n_evicted": n_evicted, "n_wrong": n_wrong,
        "demand_tokens": demand_tok, "delivered_tokens": delivered, "capacity_tokens": capacity_tok,
        "shortfall": 1.0 - delivered / demand_tok, "mean_run": run_hours / HOURS,
        "lemons_evicted": lemons_evicted, "first_eviction_hour": first,
        "n_failed": n_failed, "n_preempted": n_preempted, "empty_slot_hours": P * HOURS - served_slot,
        "fallback_hours": fallback, "spot_share": spot_share, "spot_bill": spot_bill,
        "lemons_end": sum(c.lemon for c in end_cards),
    }
