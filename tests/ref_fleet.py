"""A plain NumPy/Python reference of SPEC §1, for one fleet-month at a time.

It consumes the very draws the JAX core consumes (``mc.fleet.Draws`` as NumPy
arrays) and recomputes everything in float64 with loops and brute force, never
calling the core's code (an eviction rule's line is its own NumPy twin,
``mark_numpy``; the cap is the reference's): the tests hold the two to exact
agreement on sets and money and to float tolerance on tokens.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from mc.fleet.policies import NumpyCards

HOURS = 730


def overlap(b, e, x, y):
    return max(0.0, min(e, y) - max(b, x))


def poisson_cdf(k, lam):
    return sum(math.exp(-lam) * lam**j / math.factorial(j) for j in range(k + 1))


def demand_profile(d, p):
    h = np.arange(HOURS, dtype=np.float64)
    if p.shape == "flat":
        return np.full(HOURS, p.level)
    if p.shape in ("diurnal", "weekly"):
        D = p.level * (1 + p.amplitude * np.cos(2 * np.pi * (h - p.peak_hour) / 24))
        if p.shape == "weekly":
            D = D * np.where((h // 24) % 7 >= 5, p.weekend_factor, 1.0)
        return D
    if p.shape == "bursty":
        n = sum(float(d.u_count) >= poisson_cdf(k, p.burst_rate) for k in range(p.max_bursts))
        D = np.full(HOURS, p.level)
        for j in range(n):
            b = float(d.u_begin[j]) * HOURS
            D += p.burst_height * np.clip(np.minimum(b + p.burst_hours, h + 1) - np.maximum(b, h), 0.0, None)
        return D
    return np.asarray(p.trace, dtype=np.float64)


def ar1_path(z, rho, sd):
    """A stationary AR(1) hour by hour in float64: ``x_0 = sd·z_0``,
    ``x_h = rho·x_{h−1} + sqrt(1 − rho²)·sd·z_h`` (over the last axis)."""
    z = np.asarray(z, np.float64)
    x = np.empty_like(z)
    x[..., 0] = sd * z[..., 0]
    for h in range(1, z.shape[-1]):
        x[..., h] = rho * x[..., h - 1] + math.sqrt(1 - rho * rho) * sd * z[..., h]
    return x


def structure_paths(d, sc, P, wander=None):
    """SPEC §1.4.1 on the grid of clock hours ``−G .. 729``: the fleet's ``1 + c(h)``
    (G + 730,), each card's wander ``u_i(h)`` (P, G + 730), and the grid's first hour ``−G``.

    The wander is simulated hour by hour from ``wander`` ((P, G + 730) standard
    normals of the caller's own: the core samples it at checkpoints, so the two agree
    in law, not draw by draw); the swing's path from the core's own normals."""
    G = sc.structure.grid
    n = G + HOURS
    u = np.zeros((P, n))
    if d.structure.wander is not None:
        if wander is None:
            raise ValueError("wander is on: give the reference hourly normals of its own")
        u = ar1_path(wander, math.exp(-1.0 / sc.wander.hours), sc.wander.sd)
    c = np.zeros(n)
    for k in range(n):
        clock = (sc.swing.start_hour + (k - G)) % 24.0
        c[k] = -sc.swing.diurnal * math.cos(2 * math.pi * (clock - sc.swing.hot_hour) / 24.0)
    if d.structure.swing is not None:
        c += ar1_path(d.structure.swing, math.exp(-1.0 / sc.swing.hours), sc.swing.sd)
    return 1.0 + c, u, -G


def structured_mean(true_i, one_c, u_i, first, card_dips, lo, hi):
    """A card's mean rate over ``[lo, hi)``, hour by hour: ``r·q·(1 + c(h))·(1 + u(h) −
    Σ δ·overlap)`` (SPEC §1.4.1 as amended: the dips' loss on the wander-free rate),
    each hour weighted by its overlap with the window."""
    total = 0.0
    for h in range(math.floor(lo), math.ceil(hi)):
        a, b = max(h, lo), min(h + 1, hi)
        if b <= a:
            continue
        dipped = sum(depth * overlap(bd, ed, a, b) for bd, ed, depth in card_dips)
        total += one_c[h - first] * ((b - a) * (1.0 + u_i[h - first]) - dipped)
    return true_i * max(0.0, total) / (hi - lo)


def median(values):
    s = sorted(values)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def cards(d, sc):
    """Each card's class index, rated rate, cents, true rate and dips (a list of
    ``(begin, end, depth)``) from the month's draws."""
    pool = sc.pool
    classes = [c for c, n in pool.groups for _ in range(n)]
    cls_of = [k for k, (c, n) in enumerate(pool.groups) for _ in range(n)]
    P = len(classes)
    rated = np.array([c.rated for c in classes], dtype=np.float64)
    cents = [int(round(c.price * 100)) for c in classes]

    # Lottery.
    L = sc.lottery
    true = np.empty(P)
    for i in range(P):
        q = min(max(L.mean + L.sd * float(d.lottery.z[i]), L.lo), L.hi)
        if float(d.lottery.u_lemon[i]) < L.lemon_rate:
            q *= L.lemon_factor
        true[i] = rated[i] * q

    # Dips.
    W = sc.window.hours
    lam = sc.dips.rate * (HOURS + W) / HOURS
    cdf = [poisson_cdf(k, lam) for k in range(sc.dips.max_count)]
    dips = []  # per card: list of (begin, end, depth)
    for i in range(P):
        n = sum(float(d.dips.u_count[i]) >= c for c in cdf)
        card = []
        for j in range(n):
            b = -W + float(d.dips.u_begin[i, j]) * (HOURS + W)
            e = b + sc.dips.mean_hours * float(d.dips.e_length[i, j])
            depth = sc.dips.depth_lo + float(d.dips.u_depth[i, j]) * (sc.dips.depth_hi - sc.dips.depth_lo)
            card.append((b, e, depth))
        dips.append(card)
    return cls_of, rated, cents, true, dips


def plain_score(true_i, card_dips, eps, sc):
    """A card's window score without §1.4.1's terms: ``max(0, m·(1 + σ(W)·ε))``."""
    W = sc.window.hours
    lost = sum(depth * overlap(b, e, -W, 0.0) for b, e, depth in card_dips)
    m = true_i * max(0.0, 1.0 - lost / W)
    return max(0.0, m * (1.0 + sc.window.sigma_hour * math.sqrt(1.0 / W) * float(eps)))


def evict(score, rated, sc, ranked=None):
    """The evicted set: the rule's NumPy twin marks (every card eligible, each has
    served the window); at most ``limit`` marks are kept, lowest relative score first."""
    P = len(score)
    rel = score / rated
    order = sorted(range(P), key=lambda i: (rel[i], i))
    limit = math.floor(sc.eviction.rule.cap() * (P if ranked is None else ranked) + 1e-9)
    below = sc.eviction.rule.mark_numpy(NumpyCards(
        rel=rel, score=score, rated=rated, eligible=np.ones(P, bool), served=np.full(P, float(sc.window.hours)),
        strikes=np.zeros(P, np.int64), limit=limit))
    return set([i for i in order if below[i]][:limit])


def run_set(score, cents, evicted, D, sc):
    """The run set: every survivor, or the best tokens per dollar first up to the target."""
    survivors = [i for i in range(len(score)) if i not in evicted]
    if sc.runset == "all":
        return set(survivors)
    target = D.mean() if sc.runset == "steady" else D.max()
    run, added = set(), 0.0
    for i in sorted(survivors, key=lambda i: (-score[i] / cents[i], i)):
        if added >= target:
            break
        run.add(i)
        added += score[i]
    return run


def ideal(true, cls_of, prices, peak, cents):
    """Brute force over units per class, each class best first (the whole pool
    when none suffice)."""
    best = [sorted((true[i] for i in range(len(true)) if cls_of[i] == k), reverse=True) for k in range(len(prices))]
    out = sum(cents)
    for counts in itertools.product(*[range(len(b) + 1) for b in best]):
        if sum(sum(b[:k]) for b, k in zip(best, counts)) >= peak:
            out = min(out, sum(k * p for k, p in zip(counts, prices)))
    return out


def report(D, cap, warm, churn, ideal_bill, n_run, n_evicted, n_wrong, sc):
    """SPEC §2's outputs from the hourly demand and capacity, bills and counts."""
    cap = np.maximum(cap, 0.0)
    demand_tok = D.sum() * 3600
    delivered = np.minimum(D, cap).sum() * 3600
    capacity_tok = cap.sum() * 3600
    bill = warm + churn
    convergence = ideal_bill / bill if bill > 0 else 1.0
    shortfall = 1.0 - delivered / demand_tok if demand_tok > 0 else 0.0
    idle = (warm / 100) * (1.0 - delivered / capacity_tok) if capacity_tok > 0 else warm / 100
    return {
        "bill": bill, "warm_bill": warm, "churn_bill": churn, "ideal_bill": ideal_bill,
        "convergence": convergence, "n_run": n_run, "n_evicted": n_evicted,
        "n_wrong": n_wrong, "wrong_share": n_wrong / n_evicted if n_evicted else 0.0,
        "demand_tokens": demand_tok, "delivered_tokens": delivered, "capacity_tokens": capacity_tok,
        "shortfall": shortfall, "idle_burn": idle,
        "pass_capacity": shortfall <= sc.checks.max_shortfall,
        "pass_convergence": convergence >= sc.checks.min_convergence,
        "pass_eviction": n_wrong <= sc.checks.max_wrong,
    }


def month(d, sc, wander=None) -> dict:
    """SPEC §2 outputs of one month (money in integer cents); ``wander``: (P, G + 730)
    hourly normals of the caller's when wander is on (see ``structure_paths``)."""
    pool = sc.pool
    cls_of, rated, cents, true, dips = cards(d, sc)
    P = len(true)
    W = sc.window.hours

    # Window and score.
    sigma = sc.window.sigma_hour * math.sqrt(1.0 / W)
    score = np.empty(P)
    structured = getattr(d, "structure", None) is not None
    if structured:
        one_c, u, first = structure_paths(d, sc, P, wander)
        common = 1.0
        if d.structure.common is not None:
            common = 1.0 + sc.window.common_hour * math.sqrt(1.0 / W) * float(d.structure.common)
    for i in range(P):
        if structured:
            m = structured_mean(true[i], one_c, u[i], first, dips[i], -W, 0.0)
            score[i] = max(0.0, m * (1.0 + sigma * float(d.noise[i])) * common)
            continue
        score[i] = plain_score(true[i], dips[i], d.noise[i], sc)

    evicted = evict(score, rated, sc)
    D = demand_profile(d.demand, sc.demand)
    run = run_set(score, cents, evicted, D, sc)

    # Capacity, hour by hour.
    hours = np.arange(HOURS, dtype=np.float64)
    if structured:  # each run card's r·q·(1 + c)·(1 + u − its dips' share)
        cap = np.zeros(HOURS)
        for i in run:
            frac = 1.0 + u[i, -first:]
            for b, e, depth in dips[i]:
                frac -= depth * np.clip(np.minimum(e, hours + 1) - np.maximum(b, hours), 0.0, None)
            cap += true[i] * one_c[-first:] * frac
    else:
        cap = np.full(HOURS, sum(true[i] for i in run))
        for i in run:
            for b, e, depth in dips[i]:
                ov = np.clip(np.minimum(e, hours + 1) - np.maximum(b, hours), 0.0, None)
                cap -= depth * true[i] * ov

    # Money.
    warm = sum(cents[i] for i in run)
    churn = sum(int(round(cents[i] * sc.eviction.churn)) for i in evicted)
    ideal_bill = ideal(true, cls_of, [c.price_cents for c in pool.classes], D.max(), cents)

    # Wrong evictions: at or above the class median true rate.
    med = [median([true[i] for i in range(P) if cls_of[i] == k]) for k in range(len(pool.groups))]
    n_wrong = sum(1 for i in evicted if true[i] >= med[cls_of[i]])
    out = report(D, cap, warm, churn, ideal_bill, len(run), len(evicted), n_wrong, sc)
    out.update(evicted=evicted, run=run, score=score)
    return out
