"""A plain Python reference of SPEC §11 in §6's month: the autoscaler's rounds over replicas.

It takes the very draws the JAX month takes (``mc.fleet.autoscaler.Draws`` as NumPy
arrays), keeps each card slot's history of cards (``ref_autoscaler.Card``), gives each
dip to the card that held its slot when it began, and integrates a replica's rate, the
minimum over its cards at every instant, by brute force (cut at every boundary, the
minimum evaluated in each piece). The rule's marks, the cap and strikes are
``ref_autoscaler.evictions``; the rest is written out here.
"""

from __future__ import annotations

import math

import numpy as np

import ref_fleet
from ref_autoscaler import Card, _quality, card_scores, class_medians, evictions
from ref_fleet import HOURS, demand_profile, median
from ref_replicas import layout


class Marks:
    """A replica's strikes (``evictions`` reads ``start`` and ``marks``)."""

    def __init__(self):
        self.start, self.marks = 0.0, 0


def month(d, sc) -> dict:
    pool, a, L = sc.pool, sc.autoscaler, sc.lottery
    cls_of, rated, cents, _, dips = ref_fleet.cards(d.month, sc)
    P, W = len(rated), sc.window.hours
    fee = [int(round(c * sc.eviction.churn)) for c in cents]
    units = layout(sc)
    U = len(units)
    by_member = sc.eviction.evict == "member"
    history = []
    for i in range(P):
        q, lemon = _quality(L, d.month.lottery.z[i], d.month.lottery.u_lemon[i])
        history.append([Card(rated[i] * q, q, lemon, -W, -W)])
    first_lemons = [history[i][0].lemon for i in range(P)]
    present = [True] * P

    def owned(i, c):
        return [(max(b, c.start), min(e, c.leave), dp) for b, e, dp in dips[i]
                if c.placed <= b < c.leave and min(e, c.leave) > max(b, c.start)]

    def speed(cards, tau):
        """A replica's rate at ``tau`` from its cards ``[(slot, card)]``: 0 until all serve."""
        if any(tau < c.start for _, c in cards):
            return 0.0
        return len(cards) * min(c.t * (1.0 - sum(dp for b, e, dp in owned(i, c) if b <= tau < e))
                                for i, c in cards)

    def integral(cards, lo, hi):
        cuts = {lo, hi, *(c.start for _, c in cards if lo < c.start < hi)}
        cuts |= {x for i, c in cards for b, e, _ in owned(i, c) for x in (b, e) if lo < x < hi}
        cuts = sorted(cuts)
        return sum((y - x) * speed(cards, x) for x, y in zip(cuts[:-1], cuts[1:]) if y > x)

    D = demand_profile(d.month.demand, sc.demand)
    starts = [k * a.period for k in range(-(-HOURS // a.period))]
    ends = [min(t + a.period, HOURS) for t in starts]
    sig = sc.window.sigma_hour
    marks = [Marks() for _ in range(U)]
    ranked = P if by_member else U
    limit = math.floor(sc.eviction.rule.cap() * ranked + 1e-9)
    u_rated = [k * rated[m[0]] for m, _, k in units]
    u_cents = [k * cents[m[0]] for m, _, k in units]
    warm = churn = n_evicted = members = n_wrong = lemons_evicted = 0
    first, run_hours, rounds = HOURS, 0, []
    for k, (t, end) in enumerate(zip(starts, ends)):
        eps = d.month.noise if k == 0 else d.noise[k]
        cur = [history[i][-1] if present[i] else None for i in range(P)]
        whole = [all(present[i] for i in m) for m, _, _ in units]
        score, scored = [0.0] * U, [False] * U
        for j, (m, _, _) in enumerate(units):
            if not whole[j]:
                continue
            cards = [(i, cur[i]) for i in m]
            marks[j].start = max(c.start for _, c in cards)
            lo = max(t - W, marks[j].start)
            w = t - lo
            if w > 0:
                score[j] = max(0.0, integral(cards, lo, t) / w * (1.0 + sig * math.sqrt(1.0 / w) * float(eps[m[0]])))
                scored[j] = True
        rels = [score[j] / u_rated[j] for j in range(U) if scored[j]]
        typical = median(rels) if rels else 1.0
        for j in range(U):
            if whole[j] and not scored[j]:
                score[j] = u_rated[j] * typical
        med = class_medians(cur, cls_of, len(pool.groups))
        if by_member:
            ms, mscored, _ = card_scores(cur, owned, rated, t, W, sig, eps)
            gone = evictions(sc, cur, [ms[i] / rated[i] for i in range(P)], ms, rated, mscored, t, limit)
            left = {j for j, (m, _, _) in enumerate(units) if any(i in gone for i in m)}
            n_evicted += len(gone)
            n_wrong += sum(cur[i].t >= med[cls_of[i]] for i in gone)
        else:
            ucur = [marks[j] if whole[j] else None for j in range(U)]
            rel = [score[j] / u_rated[j] for j in range(U)]
            left = set(evictions(sc, ucur, rel, score, u_rated, scored, t, limit))
            gone = [i for j in sorted(left) for i in units[j][0]]
            n_evicted += len(left)
            n_wrong += sum(min(cur[i].t for i in units[j][0]) >= med[units[j][1]] for j in left)
        for j in left:
            marks[j].marks = 0
        for i in gone:
            c = cur[i]
            members += 1
            lemons_evicted += c.lemon
            churn += fee[i]
            c.leave = t
            if a.replace:
                q, lemon = _quality(L, d.tickets.z[k, i], d.tickets.u_lemon[k, i])
                history[i].append(Card(rated[i] * q, q, lemon, t, t + a.boot_hours))
            else:
                present[i] = False
        if (gone or left) and first == HOURS:
            first = t
        if a.replace:
            for j in left:
                score[j] = u_rated[j] * typical
        gone = {j for j, (m, _, _) in enumerate(units) if not all(present[i] for i in m)}
        run = ref_fleet.run_set(score, u_cents, gone, D[t:end], sc)
        for j in run:
            warm += sum(int(round(cents[i] * (end - t) / HOURS)) for i in units[j][0])
        run_hours += len(run) * (end - t)
        now = [[(i, history[i][-1]) for i in m] for m, _, _ in units]
        rounds.append({"evicted": left, "run": run, "cards": now})

    cap = np.zeros(HOURS)
    for k, (t, end) in enumerate(zip(starts, ends)):
        for j in rounds[k]["run"]:
            for h in range(t, end):
                cap[h] += integral(rounds[k]["cards"][j], h, h + 1)

    originals = [len(m) * min(history[i][0].t for i in m) for m, _, _ in units]
    u_cls = [g for _, g, _ in units]
    ideal = 0
    for t, end in zip(starts, ends):
        price = [int(round(c.tp * c.price_cents * (end - t) / HOURS)) for c in pool.classes]
        ideal += ref_fleet.ideal(originals, u_cls, price, D[t:end].max(), [price[g] for g in u_cls])
    out = ref_fleet.report(D, cap, warm, churn, ideal, len(rounds[0]["run"]), n_evicted, n_wrong, sc)
    end_cards = [history[i][-1] for i in range(P) if present[i]]
    lemon_end = [present[i] and history[i][-1].lemon for i in range(P)]
    out.update(
        rounds=rounds, n_replaced=n_evicted if a.replace else 0, mean_run=run_hours / HOURS,
        quality_end=sum(c.q for c in end_cards) / len(end_cards) if end_cards else 0.0,
        lemons_end=sum(c.lemon for c in end_cards), lemons_evicted=lemons_evicted, first_eviction_hour=first,
        n_replicas=U, replicas_with_lemon=sum(any(first_lemons[i] for i in m) for m, _, _ in units),
        replicas_with_lemon_end=sum(all(present[i] for i in m) and any(lemon_end[i] for i in m)
                                    for m, _, _ in units),
        members_evicted=members)
    return out
