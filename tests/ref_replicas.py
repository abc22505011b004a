"""A plain Python reference of SPEC §11's month: replicas paced by their slowest card.

It takes the very draws the JAX core takes (``mc.fleet.Draws`` as NumPy arrays), reads
the cards as the §1 reference does (``ref_fleet.cards``) and integrates each replica's
rate, the minimum over its members at every instant, by brute force: within each hour
(and over the window) it cuts at every member's dip boundary and evaluates the minimum
in each piece directly. The rule, the run set, the ideal and the report are the §1
reference's, applied to replicas (or to members, ``evict = "member"``).
"""

from __future__ import annotations

import math

import numpy as np

import ref_fleet
from ref_fleet import HOURS, demand_profile, median


def speed(true, dips, members, t):
    """A replica's rate at instant ``t``: ``K · min_i r·q_i(1 − Σ active δ)``."""
    return len(members) * min(true[i] * (1.0 - sum(dp for b, e, dp in dips[i] if b <= t < e)) for i in members)


def integral(true, dips, members, lo, hi):
    """∫ of a replica's rate over ``[lo, hi)``: piecewise at every member's dip boundary."""
    cuts = sorted({lo, hi, *(x for i in members for b, e, _ in dips[i] for x in (b, e) if lo < x < hi)})
    return sum((b - a) * speed(true, dips, members, a) for a, b in zip(cuts[:-1], cuts[1:]) if b > a)


def layout(sc):
    """Each replica's cards, class index and size, class by class."""
    units, start = [], 0
    for k, (c, n) in enumerate(sc.pool.groups):
        for j in range(start, start + n, c.tp):
            units.append((list(range(j, j + c.tp)), k, c.tp))
        start += n
    return units


def month(d, sc) -> dict:
    """SPEC §2's outputs and §11's of one month (money in integer cents)."""
    pool = sc.pool
    cls_of, rated, cents, true, dips = ref_fleet.cards(d, sc)
    units = layout(sc)
    U, W = len(units), sc.window.hours
    sigma = sc.window.sigma_hour * math.sqrt(1.0 / W)
    u_true = np.array([len(m) * min(true[i] for i in m) for m, _, _ in units])
    u_rated = np.array([k * rated[m[0]] for m, _, k in units])
    u_cents = [k * cents[m[0]] for m, _, k in units]
    u_score = np.array([max(0.0, integral(true, dips, m, -W, 0.0) / W * (1.0 + sigma * float(d.noise[m[0]])))
                        for m, _, _ in units])
    churn_of = [int(round(cents[i] * sc.eviction.churn)) for i in range(len(true))]
    med = [median([true[i] for i in range(len(true)) if cls_of[i] == k]) for k in range(len(pool.groups))]

    if sc.eviction.evict == "member":
        score = np.array([ref_fleet.plain_score(true[i], dips[i], d.noise[i], sc) for i in range(len(true))])
        gone = ref_fleet.evict(score, rated, sc)
        evicted = {j for j, (m, _, _) in enumerate(units) if any(i in gone for i in m)}
        churn = sum(churn_of[i] for i in gone)
        n_wrong = sum(1 for i in gone if true[i] >= med[cls_of[i]])
        n_evicted = members = len(gone)
    else:
        evicted = ref_fleet.evict(u_score, u_rated, sc, ranked=U)
        churn = sum(churn_of[i] for j in evicted for i in units[j][0])
        n_wrong = sum(1 for j in evicted if min(true[i] for i in units[j][0]) >= med[units[j][1]])
        n_evicted, members = len(evicted), sum(units[j][2] for j in evicted)

    D = demand_profile(d.demand, sc.demand)
    run = ref_fleet.run_set(u_score, u_cents, evicted, D, sc)
    cap = np.array([sum(integral(true, dips, units[j][0], h, h + 1) for j in run) for h in range(HOURS)])
    warm = sum(u_cents[j] for j in run)
    prices = [c.tp * c.price_cents for c in pool.classes]
    ideal = ref_fleet.ideal(u_true, [k for _, k, _ in units], prices, D.max(), u_cents)
    out = ref_fleet.report(D, cap, warm, churn, ideal, len(run), n_evicted, n_wrong, sc)
    lemon = np.asarray(d.lottery.u_lemon, np.float64) < sc.lottery.lemon_rate
    out.update(n_replicas=U, replicas_with_lemon=sum(1 for m, _, _ in units if lemon[m].any()),
               members_evicted=members, evicted=evicted, run=run, score=u_score)
    return out
