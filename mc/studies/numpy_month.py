"""The fleet month (SPEC §1) in vectorized NumPy, over a batch of months.

The baseline ``mc bench`` measures the JAX engine against: every step is a
whole-batch NumPy operation (no Python loop over months or cards), in float32
like the device code, with sorts along the card axis and the per-hour capacity
pass done with one ``bincount`` per interval end plus a ``cumsum``. ``outcome``
consumes the same draws as ``mc.fleet.outcome`` (batched, as NumPy), so tests
hold the two to agreement; ``draw`` makes a batch with NumPy's own generator.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ..fleet import Scenario
from ..fleet.accounting import ideal_plan
from ..fleet.policies import NumpyCards
from ..units import HOURS, SECONDS


def draw(rng: np.random.Generator, sc: Scenario, batch: int) -> SimpleNamespace:
    """A batch of draws shaped like ``mc.fleet.Draws`` with a leading batch axis."""
    p, k = sc.pool.size, sc.dips.max_count
    f32 = np.float32

    def unif(*shape):  # open (0, 1), like the device's
        return rng.random(shape, dtype=f32) * f32(1 - 2**-23) + f32(2**-24)

    structure = None
    st = sc.structure
    if st is not None:  # SPEC §1.4.1: normals for each term that is on
        n = st.grid + HOURS
        structure = SimpleNamespace(
            wander=rng.standard_normal((batch, p, n), dtype=f32) if st.wander else None,
            swing=rng.standard_normal((batch, n), dtype=f32) if st.swing else None,
            common=rng.standard_normal(batch, dtype=f32) if st.common else None)
    demand = None
    if sc.demand.shape == "bursty":
        demand = SimpleNamespace(u_count=unif(batch), u_begin=unif(batch, sc.demand.max_bursts))
    return SimpleNamespace(
        lottery=SimpleNamespace(z=rng.standard_normal((batch, p), dtype=f32), u_lemon=unif(batch, p)),
        dips=SimpleNamespace(u_count=unif(batch, p), u_begin=unif(batch, p, k),
                             e_length=rng.standard_exponential((batch, p, k), dtype=f32),
                             u_depth=unif(batch, p, k)),
        noise=rng.standard_normal((batch, p), dtype=f32), demand=demand, structure=structure)


def _poisson_cdf(mean: float, cap: int) -> np.ndarray:
    pmf = np.empty(cap)
    pmf[0] = np.exp(-mean)
    for j in range(1, cap):
        pmf[j] = pmf[j - 1] * mean / j
    return np.cumsum(pmf).astype(np.float32)


def per_hour(begin: np.ndarray, end: np.ndarray, weight: np.ndarray, hours: int = HOURS) -> np.ndarray:
    """(batch, hours): ``Σ weight · overlap([begin, end), [h, h+1))`` per month;
    inputs (batch, m)."""
    HOURS = hours  # noqa: N806 (the month's hours, or a longer grid's)
    batch = begin.shape[0]
    b = np.clip(begin, 0.0, HOURS)
    e = np.clip(end, b, HOURS)
    fb, fe = np.floor(b), np.floor(e)
    row = (np.arange(batch) * (HOURS + 2))[:, None]
    ib, ie = fb.astype(np.int64) + row, fe.astype(np.int64) + row
    size = batch * (HOURS + 2)
    point = (np.bincount(ib.ravel(), (weight * (fb + 1 - b)).ravel(), size)
             + np.bincount(ie.ravel(), (weight * (e - fe)).ravel(), size))
    step = np.bincount((ib + 1).ravel(), weight.ravel(), size) - np.bincount(ie.ravel(), weight.ravel(), size)
    point, step = point.reshape(batch, HOURS + 2), step.reshape(batch, HOURS + 2)
    return (point[:, :HOURS] + np.cumsum(step, axis=1)[:, :HOURS]).astype(np.float32)


def _profile(d, sc: Scenario, batch: int) -> np.ndarray:
    p = sc.demand
    h = np.arange(HOURS, dtype=np.float32)
    if p.shape == "flat":
        base = np.full(HOURS, p.level, np.float32)
    elif p.shape in ("diurnal", "weekly"):
        base = (p.level * (1 + p.amplitude * np.cos(2 * np.pi * (h - p.peak_hour) / 24))).astype(np.float32)
        if p.shape == "weekly":
            base = base * np.where((np.arange(HOURS) // 24) % 7 >= 5, np.float32(p.weekend_factor), 1)
    elif p.shape in ("trace", "log"):  # a log's profile is held as its trace
        base = np.asarray(p.trace, np.float32)
    else:
        n = np.sum(d.u_count[:, None] >= _poisson_cdf(p.burst_rate, p.max_bursts)[None, :], axis=1)
        begin = d.u_begin * HOURS
        height = np.where(np.arange(p.max_bursts)[None, :] < n[:, None], np.float32(p.burst_height), 0)
        return (p.level + per_hour(begin, begin + p.burst_hours, height)).astype(np.float32)
    return np.broadcast_to(base, (batch, HOURS))


def _ar1(z: np.ndarray, rho: float, sd: float) -> np.ndarray:
    """A stationary AR(1) over the last axis, hour by hour (float32)."""
    f32 = np.float32
    x = np.empty_like(z)
    x[..., 0] = f32(sd) * z[..., 0]
    step = f32(np.sqrt(1 - rho * rho) * sd)
    for h in range(1, z.shape[-1]):
        x[..., h] = f32(rho) * x[..., h - 1] + step * z[..., h]
    return x


def _structure(d, sc: Scenario, begin, end, depth):
    """SPEC §1.4.1 over the grid's hours ``−G .. 729``, hour by hour (the brute-force
    method: each card's wander path in full): the fleet's factor ``1 + c(h)`` (B, 1,
    G + 730), each card's ``1 + u(h)`` (B, P, G + 730, or 1 without wander) and its
    dips' hourly share of its wander-free rate (B, P, G + 730). A card runs at
    ``r·q·(1 + c)·(1 + u − dipped)`` (the dips' loss on the wander-free rate)."""
    st, f32 = sc.structure, np.float32
    batch, size = d.noise.shape
    G = st.grid
    h = np.arange(-G, HOURS, dtype=f32)
    c = np.zeros((batch, G + HOURS), f32)
    if st.diurnal:
        clock = np.mod(f32(sc.swing.start_hour) + h, f32(24))
        c = c - f32(sc.swing.diurnal) * np.cos(f32(2 * np.pi / 24) * (clock - f32(sc.swing.hot_hour)))
    if st.swing:
        c = c + _ar1(d.structure.swing, np.exp(-1 / sc.swing.hours), sc.swing.sd)
    wander = f32(1)
    if st.wander:
        if d.structure.wander.shape[-1] != G + HOURS:
            raise ValueError("the NumPy month simulates wander hour by hour: it takes its own draws "
                             "(numpy_month.draw), not the core's checkpoint draws")
        wander = 1 + _ar1(d.structure.wander, np.exp(-1 / sc.wander.hours), sc.wander.sd)
    k = begin.shape[-1]
    dipped = per_hour((begin + G).reshape(batch * size, k), (end + G).reshape(batch * size, k),
                      depth.reshape(batch * size, k), G + HOURS).reshape(batch, size, G + HOURS)
    return (1 + c)[:, None, :], wander, dipped


def outcome(d, sc: Scenario) -> dict[str, np.ndarray]:
    """SPEC §2 outputs of a batch of months (money in int64 cents)."""
    pool, f32 = sc.pool, np.float32
    batch, size = d.noise.shape
    rated = pool.rated()
    cents = pool.price_cents().astype(np.int64)
    churn = np.asarray(sc.churn_cents, np.int64)
    L, Wn, E, Dp = sc.lottery, sc.window, sc.eviction, sc.dips
    W = f32(Wn.hours)

    q = np.clip(f32(L.mean) + f32(L.sd) * d.lottery.z, f32(L.lo), f32(L.hi))
    q = np.where(d.lottery.u_lemon < L.lemon_rate, q * f32(L.lemon_factor), q)
    true = rated * q  # (B, P)

    # Dips: count by CDF inversion, then begin, end, depth per slot.
    cdf = _poisson_cdf(Dp.rate * (HOURS + Wn.hours) / HOURS, Dp.max_count)
    count = np.sum(d.dips.u_count[..., None] >= cdf, axis=-1)
    live = np.arange(Dp.max_count) < count[..., None]
    begin = -W + d.dips.u_begin * (HOURS + W)
    end = begin + f32(Dp.mean_hours) * d.dips.e_length
    depth = np.where(live, f32(Dp.depth_lo) + d.dips.u_depth * f32(Dp.depth_hi - Dp.depth_lo), 0).astype(f32)

    # Window score.
    seen = np.maximum(0, np.minimum(end, 0) - np.maximum(begin, -W))
    m = true * np.maximum(0, 1 - np.sum(depth * seen, axis=-1) / W)
    st = sc.structure
    if st is not None:  # the window's mean hour by hour through the structure
        one_c, wander, dipped = _structure(d, sc, begin, end, depth)
        h = np.arange(-st.grid, 0, dtype=f32)
        inside = np.clip(np.minimum(h + 1, 0) - np.maximum(h, -W), 0, None)
        w_in = wander[..., :st.grid] if st.wander else wander
        seen_f = np.sum(one_c[..., :st.grid] * (inside * w_in - dipped[..., :st.grid]), axis=-1)
        m = true * np.maximum(0, seen_f / W)
    score = np.maximum(0, m * (1 + f32(Wn.sigma_hour * np.sqrt(1.0 / Wn.hours)) * d.noise))
    if st is not None and st.common:
        score = np.maximum(0, score * (1 + f32(Wn.common_hour * np.sqrt(1.0 / Wn.hours)) * d.structure.common[:, None]))

    # Eviction: the rule's NumPy twin marks (every card eligible, each has served
    # the window), the cap keeps the lowest marked relative scores (stable: ties by index).
    rel = score / rated
    cards = NumpyCards(rel=rel, score=score, rated=np.broadcast_to(rated, rel.shape), eligible=np.ones(rel.shape, bool),
                       served=np.full(rel.shape, W), strikes=np.zeros(rel.shape, np.int32), limit=sc.evict_limit)
    marked = E.rule.mark_numpy(cards)
    rank = np.empty((batch, size), np.int64)
    order = np.argsort(np.where(marked, rel, np.inf), axis=1, kind="stable")
    np.put_along_axis(rank, order, np.arange(size)[None, :], axis=1)
    evicted = marked & (rank < sc.evict_limit)

    # Run set.
    demand = _profile(d.demand, sc, batch)
    survivors = ~evicted
    if sc.runset == "all":
        run = survivors
    else:
        target = demand.max(axis=1) if sc.runset == "peak" else demand.mean(axis=1, dtype=np.float64).astype(f32)
        key = np.where(survivors, -(score / cents.astype(f32)), np.inf)
        order = np.argsort(key, axis=1, kind="stable")
        s_sorted = np.where(np.take_along_axis(survivors, order, 1), np.take_along_axis(score, order, 1), 0)
        # Exclusive prefix sums in float64: the core's compensated sums decide
        # near-ties like exact arithmetic does.
        inc = np.cumsum(s_sorted, axis=1, dtype=np.float64)
        before = np.concatenate([np.zeros((batch, 1)), inc[:, :-1]], axis=1)
        take = np.take_along_axis(survivors, order, 1) & (before < target[:, None].astype(np.float64))
        run = np.zeros_like(survivors)
        np.put_along_axis(run, order, take, axis=1)

    # Hourly capacity and tokens.
    rate = np.where(run, true, 0).astype(f32)
    if st is None:
        lost = per_hour(begin.reshape(batch, -1), end.reshape(batch, -1), (depth * rate[..., None]).reshape(batch, -1))
        cap = np.maximum(0, rate.sum(axis=1, keepdims=True) - lost)
    else:
        w_month = wander[..., st.grid:] if st.wander else wander
        month_share = one_c[..., st.grid:] * (w_month - dipped[..., st.grid:])
        cap = np.maximum(0, np.sum(rate[..., None] * month_share, axis=1))
    hour = f32(SECONDS / HOURS)
    demand_tok = demand.sum(axis=1) * hour
    delivered = np.minimum(demand, cap).sum(axis=1) * hour
    capacity = cap.sum(axis=1) * hour
    unmet = np.maximum(0, demand - cap).sum(axis=1) * hour

    # Money.
    warm = (run * cents).sum(axis=1)
    churn_bill = (evicted * churn).sum(axis=1)
    bill = warm + churn_bill
    last, combos, class_cents = ideal_plan(pool)
    peak = demand.max(axis=1)
    cover = []
    for s in pool.slices:
        best = -np.sort(-true[:, s], axis=1)
        cover.append(np.concatenate([np.zeros((batch, 1)), np.cumsum(best, axis=1, dtype=np.float64)], axis=1))
    rest = sum(cover[c][:, combos[:, c]] for c in range(len(cover)) if c != last) \
        if len(cover) > 1 else np.zeros((batch, 1))
    k_last = np.sum(cover[last][:, None, :] + rest[..., None] < peak[:, None, None].astype(np.float64), axis=-1)
    cost = (combos @ class_cents.astype(np.int64))[None, :] + k_last * int(class_cents[last])
    whole = int(np.dot(pool.counts, class_cents.astype(np.int64)))
    ideal = np.where(k_last <= pool.counts[last], cost, whole).min(axis=1)

    # Wrong evictions: at or above the class median true rate.
    median = np.concatenate([np.repeat(np.median(true[:, s], axis=1, keepdims=True), s.stop - s.start, 1)
                             for s in pool.slices], axis=1)
    n_evicted = evicted.sum(axis=1)
    n_wrong = (evicted & (true >= median)).sum(axis=1)

    def ratio(a, b, empty=0.0):
        return np.where(b > 0, a / np.where(b > 0, b, 1), empty)

    convergence = ratio(ideal.astype(f32), bill.astype(f32), 1.0)
    shortfall = ratio(unmet, demand_tok)
    c = sc.checks
    return {
        "bill": bill, "warm_bill": warm, "churn_bill": churn_bill, "ideal_bill": ideal,
        "convergence": convergence, "n_run": run.sum(axis=1), "n_evicted": n_evicted, "n_wrong": n_wrong,
        "wrong_share": ratio(n_wrong.astype(f32), n_evicted.astype(f32)),
        "demand_tokens": demand_tok, "delivered_tokens": delivered, "capacity_tokens": capacity,
        "shortfall": shortfall, "idle_burn": (warm / 100).astype(f32) * (1 - ratio(delivered, capacity)),
        "pass_capacity": shortfall <= c.max_shortfall, "pass_convergence": convergence >= c.min_convergence,
        "pass_eviction": n_wrong <= c.max_wrong,
    }


def months(sc: Scenario, n: int, *, seed: int = 0, batch: int = 4096) -> dict[str, np.ndarray]:
    """Outputs of ``n`` months drawn with NumPy's generator, ``batch`` at a time."""
    rng = np.random.default_rng(seed)
    parts = []
    for start in range(0, n, batch):
        parts.append(outcome(draw(rng, sc, min(batch, n - start)), sc))
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
