"""A plain NumPy/Python reference of SPEC §6, for one month at a time.

It consumes the very draws the JAX month consumes (``mc.fleet.autoscaler.Draws``
as NumPy arrays) and recomputes everything in float64 with a loop over rounds
and slots, keeping each slot's history of cards and giving each dip to the card
that held its slot when it began. It never calls the package's code (an eviction
rule's line is its own NumPy twin, ``mark_numpy``; eligibility and the cap are the
reference's).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from mc.fleet.policies import NumpyCards
from ref_fleet import HOURS, demand_profile, median, overlap, poisson_cdf, run_set, structure_paths, structured_mean


class Card:
    def __init__(self, t, q, lemon, placed, start):
        self.t, self.q, self.lemon = t, q, lemon
        self.placed, self.start = placed, start  # hours: placed in its slot, serving from
        self.leave = math.inf
        self.marks = 0
        self.u = None  # SPEC §1.4.1: the card's wander u(h) over the grid's hours


def _quality(L, z, u):
    q = min(max(L.mean + L.sd * float(z), L.lo), L.hi)
    lemon = float(u) < L.lemon_rate
    return (q * L.lemon_factor if lemon else q), lemon


def evictions(sc, cur, rel, score, rated, scored, t, limit) -> list:
    """The slots whose card is evicted at ``t``: the rule's NumPy twin marks; marks on
    ineligible cards are dropped and at most ``limit`` kept, lowest relative score
    first, ties by index; a card's strikes (``marks``) are updated in place."""
    a, P = sc.autoscaler, len(cur)
    eligible = [i for i in range(P) if scored[i] and t - cur[i].start >= a.min_age]
    order = sorted(eligible, key=lambda i: (rel[i], i))
    below = sc.eviction.rule.mark_numpy(NumpyCards(
        rel=np.array(rel), score=np.array(score), rated=np.array(rated, np.float64),
        eligible=np.isin(np.arange(P), eligible),
        served=np.array([max(t - c.start, 0.0) if c is not None else 0.0 for c in cur]),
        strikes=np.array([c.marks if c is not None else 0 for c in cur]), limit=limit))
    marked = set([i for i in order if below[i]][:limit])
    evicted = []
    for i, c in enumerate(cur):
        if c is None:
            continue
        c.marks = c.marks + 1 if i in marked else 0
        if c.marks >= a.strikes:
            evicted.append(i)
    return evicted


def card_scores(cur, owned, rated, t, W, sigma_hour, eps, mean=None) -> tuple:
    """Each slot's card's score at ``t`` on its window ``[max(t − W, start), t)``:
    ``max(0, m·(1 + σ(w)·ε)·shared)`` with ``(m, shared) = mean(i, card, lo, w)``
    (default: its true rate less its dips ``owned(i, card)``, nothing shared); an
    unscored card (no window) scores ``r`` × the scored cards' median ``s / r``.
    Returns ``(score, scored, typical)``."""
    P = len(cur)
    score, scored = [0.0] * P, [False] * P
    for i, c in enumerate(cur):
        if c is None:
            continue
        lo = max(t - W, c.start)
        w = t - lo
        if w <= 0:
            continue
        if mean is None:
            lost = sum(depth * overlap(b, e, lo, t) for b, e, depth in owned(i, c))
            m, shared = c.t * max(0.0, 1.0 - lost / w), 1.0
        else:
            m, shared = mean(i, c, lo, w)
        score[i] = max(0.0, m * (1.0 + sigma_hour * math.sqrt(1.0 / w) * float(eps[i])) * shared)
        scored[i] = True
    rels = [score[i] / rated[i] for i in range(P) if scored[i]]
    typical = median(rels) if rels else 1.0
    for i, c in enumerate(cur):
        if c is not None and not scored[i]:
            score[i] = rated[i] * typical
    return score, scored, typical


def class_medians(cur, cls_of, groups: int) -> dict:
    """Each class's median true rate over the cards in slots now (0 for none)."""
    med = {}
    for g in range(groups):
        rates = [cur[i].t for i in range(len(cur)) if cur[i] is not None and cls_of[i] == g]
        med[g] = median(rates) if rates else 0.0
    return med


def month(d, sc, wander=None) -> dict:
    """SPEC §6 outputs (money in integer cents) and, per round, the evicted
    slots, the run set and each slot's card's true rate."""
    pool, a = sc.pool, sc.autoscaler
    classes = [c for c, n in pool.groups for _ in range(n)]
    cls_of = [k for k, (c, n) in enumerate(pool.groups) for _ in range(n)]
    P = len(classes)
    rated = [c.rated for c in classes]
    cents = [int(round(c.price * 100)) for c in classes]
    fee = [int(round(c * sc.eviction.churn)) for c in cents]
    W = sc.window.hours
    L = sc.lottery

    # Each slot's dips (§1.3 on the slot).
    lam = sc.dips.rate * (HOURS + W) / HOURS
    cdf = [poisson_cdf(k, lam) for k in range(sc.dips.max_count)]
    dips = []
    for i in range(P):
        n = sum(float(d.month.dips.u_count[i]) >= c for c in cdf)
        slot = []
        for j in range(n):
            b = -W + float(d.month.dips.u_begin[i, j]) * (HOURS + W)
            e = b + sc.dips.mean_hours * float(d.month.dips.e_length[i, j])
            depth = sc.dips.depth_lo + float(d.month.dips.u_depth[i, j]) * (sc.dips.depth_hi - sc.dips.depth_lo)
            slot.append((b, e, depth))
        dips.append(slot)

    # The original cards (§1.2).
    history = []
    for i in range(P):
        q, lemon = _quality(L, d.month.lottery.z[i], d.month.lottery.u_lemon[i])
        history.append([Card(rated[i] * q, q, lemon, -W, -W)])
    originals = [h[0].t for h in history]

    # SPEC §1.4.1: the original cards' paths; a replacement placed at t starts its own
    # path in the stationary law there (sd·z at t, then the recurrence on its slot's
    # later normals), hour by hour.
    structured = getattr(d.month, "structure", None) is not None
    if structured:
        one_c, u, first_hour = structure_paths(d.month, sc, P, wander)
        for i in range(P):
            history[i][0].u = u[i]
        common = 0.0 if d.month.structure.common is None else float(d.month.structure.common)
        rho = math.exp(-1.0 / sc.wander.hours)

    def own_path(i, t):
        if d.month.structure.wander is None:
            return u[i]
        z = np.asarray(wander[i], np.float64)
        x = np.zeros(len(z))
        k0 = t - first_hour
        x[k0] = sc.wander.sd * z[k0]
        for k in range(k0 + 1, len(z)):
            x[k] = rho * x[k - 1] + math.sqrt(1 - rho * rho) * sc.wander.sd * z[k]
        return x

    def owned(i, card):
        """The dips of slot i that belong to ``card``, cut to its life."""
        out = []
        for b, e, depth in dips[i]:
            if card.placed <= b < card.leave:
                lo, hi = max(b, card.start), min(e, card.leave)
                if hi > lo:
                    out.append((lo, hi, depth))
        return out

    D = demand_profile(d.month.demand, sc.demand)
    K = -(-HOURS // a.period)
    starts = [k * a.period for k in range(K)]
    ends = [min(t + a.period, HOURS) for t in starts]
    sigma_hour = sc.window.sigma_hour
    limit = math.floor(sc.eviction.rule.cap() * P + 1e-9)

    present = [True] * P
    warm = churn = n_evicted = n_wrong = n_replaced = lemons_evicted = 0
    first = HOURS
    run_hours = 0
    rounds = []
    for k, (t, end) in enumerate(zip(starts, ends)):
        eps = d.month.noise if k == 0 else d.noise[k]
        cur = [history[i][-1] if present[i] else None for i in range(P)]
        # Scores.
        mean = None
        if structured:
            def mean(i, c, lo, w):
                return (structured_mean(c.t, one_c, c.u, first_hour, owned(i, c), lo, t),
                        1.0 + sc.window.common_hour * math.sqrt(1.0 / w) * common)
        score, scored, typical = card_scores(cur, owned, rated, t, W, sigma_hour, eps, mean)
        rel = [score[i] / rated[i] for i in range(P)]

        evicted = evictions(sc, cur, rel, score, rated, scored, t, limit)
        # Wrong evictions: against the class median of the cards in slots now.
        med = class_medians(cur, cls_of, len(pool.groups))
        for i in evicted:
            c = cur[i]
            n_evicted += 1
            n_wrong += c.t >= med[cls_of[i]]
            lemons_evicted += c.lemon
            churn += fee[i]
            c.leave = t
            if a.replace:
                q, lemon = _quality(L, d.tickets.z[k, i], d.tickets.u_lemon[k, i])
                history[i].append(Card(rated[i] * q, q, lemon, t, t + a.boot_hours))
                if structured:
                    history[i][-1].u = own_path(i, t)
                score[i] = rated[i] * typical
                n_replaced += 1
            else:
                present[i] = False
        if evicted and first == HOURS:
            first = t

        # The run set.
        run = run_set(score, cents, {i for i in range(P) if not present[i]}, D[t:end], sc)
        for i in run:
            warm += int(round(cents[i] * (end - t) / HOURS))
        run_hours += len(run) * (end - t)
        rounds.append({"evicted": set(evicted), "run": run,
                       "rate": [history[i][-1].t if present[i] else 0.0 for i in range(P)]})

    # Capacity, hour by hour, round by round.
    cap = np.zeros(HOURS)
    for k, (t, end) in enumerate(zip(starts, ends)):
        h = np.arange(t, end, dtype=np.float64)
        for i in rounds[k]["run"]:
            c = next(c for c in history[i] if c.placed <= t < c.leave)
            served = np.clip(h + 1 - np.maximum(h, c.start), 0.0, 1.0)
            if structured:  # SPEC §1.4.1 as amended: r·q·(1 + c)·(served·(1 + u) − dips)
                served = served * (1.0 + c.u[t - first_hour:end - first_hour])
            for lo, hi, depth in owned(i, c):
                served = served - depth * np.clip(np.minimum(hi, h + 1) - np.maximum(lo, h), 0.0, None)
            scale = one_c[t - first_hour:end - first_hour] if structured else 1.0
            cap[t:end] += c.t * scale * served
    cap = np.maximum(cap, 0.0)
    demand_tok = D.sum() * 3600
    delivered = np.minimum(D, cap).sum() * 3600
    capacity_tok = cap.sum() * 3600

    # The ideal: per round, the cheapest cover of its peak from the original
    # cards, at prorated rents.
    best = [sorted((originals[i] for i in range(P) if cls_of[i] == g), reverse=True)
            for g in range(len(pool.groups))]
    ideal = 0
    for t, end in zip(starts, ends):
        peak = D[t:end].max()
        price = [int(round(c.price_cents * (end - t) / HOURS)) for c in pool.classes]
        cost = sum(len(b) * p for b, p in zip(best, price))
        for counts in itertools.product(*[range(len(b) + 1) for b in best]):
            if sum(sum(b[:n]) for b, n in zip(best, counts)) >= peak:
                cost = min(cost, sum(n * p for n, p in zip(counts, price)))
        ideal += cost

    bill = warm + churn
    convergence = ideal / bill if bill > 0 else 1.0
    shortfall = 1.0 - delivered / demand_tok if demand_tok > 0 else 0.0
    idle = (warm / 100) * (1.0 - delivered / capacity_tok) if capacity_tok > 0 else warm / 100
    end_cards = [history[i][-1] for i in range(P) if present[i]]
    return {
        "rounds": rounds,
        "bill": bill, "warm_bill": warm, "churn_bill": churn, "ideal_bill": ideal,
        "convergence": convergence, "n_run": len(rounds[0]["run"]), "n_evicted": n_evicted,
        "n_wrong": n_wrong, "wrong_share": n_wrong / n_evicted if n_evicted else 0.0,
        "demand_tokens": demand_tok, "delivered_tokens": delivered, "capacity_tokens": capacity_tok,
        "shortfall": shortfall, "idle_burn": idle,
        "pass_capacity": shortfall <= sc.checks.max_shortfall,
        "pass_convergence": convergence >= sc.checks.min_convergence,
        "pass_eviction": n_wrong <= sc.checks.max_wrong,
        "n_replaced": n_replaced, "mean_run": run_hours / HOURS,
        "quality_end": sum(c.q for c in end_cards) / len(end_cards) if end_cards else 0.0,
        "lemons_end": sum(c.lemon for c in end_cards), "lemons_evicted": lemons_evicted,
        "first_eviction_hour": first,
    }
