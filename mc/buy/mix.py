"""The cheapest mix that passes (SPEC §4): search owned cards and rent caps for the
lowest expected bill whose probability of passing all four checks reaches a target
(served among them: a mix without the API that leaves demand unserved fails it).

The search owns one chip at a time (each mix's bill is linear in cards, so a blend
of owned chips only matters by card granularity) at fractions of the forecast's
mean rate, and caps rented cards of one chip at fractions of it; a plan that rents
spot cards has their count searched too (spot cards of one chip at fractions of the
mean rate). Every candidate
sees the same months: the draws are made once per month (from the same keys as
``mc.buy.simulate``) and every candidate's outcome is computed from them,
so candidates differ only by their mix (common random numbers), and a candidate's
figures equal ``simulate`` of that mix with the same seed.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import numpy as np
import pandas as pd

from .. import _validate as v
from .. import engine
from .._pytree import set_field
from ..units import SECONDS
from .catalogue import CHIP_NAMES
from .month import OUTPUTS, draw, outcome
from .plan import Procurement
from .settle import PROCUREMENT, settle

OWNED_FRACTIONS = tuple(np.round(np.arange(0.0, 1.21, 0.1), 2))
RENT_FRACTIONS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.6, 0.8, 1.0)
SPOT_FRACTIONS = (0.0, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0)  # searched when the base plan rents spot cards
CAND_CHUNK = 32  # candidates evaluated per device call


def candidates(base: Procurement, *, owned_chips=CHIP_NAMES, rent_chips=CHIP_NAMES,
               owned_fractions=OWNED_FRACTIONS, rent_fractions=RENT_FRACTIONS, spot_chips=None,
               spot_fractions=None) -> list[Procurement]:
    """Mixes of ``base``: owned cards of one chip carrying ``f ×`` the forecast mean
    rate (rated, rounded to whole cards), rent capped at ``g ×`` the mean rate of one
    chip, spot cards of one chip carrying ``s ×`` the mean rate, API, failures and
    spot market as in ``base``. Spot counts are searched when ``spot_fractions`` is
    given, or by default when ``base`` rents spot cards (``SPOT_FRACTIONS``, over the
    chips it rents them of); otherwise every mix keeps ``base``'s spot cards. Mixes
    that rent and own the same cards appear once (the smallest cap); all share one
    padded shape so one compilation evaluates them all."""
    v.instance("base", base, Procurement, PROCUREMENT)
    searched = spot_fractions is not None or any(base.rent_spot)
    if spot_chips is None:
        spot_chips = tuple(c for c, n in zip(CHIP_NAMES, base.rent_spot) if n) or CHIP_NAMES[:1]
    if spot_fractions is None:
        spot_fractions = SPOT_FRACTIONS if any(base.rent_spot) else (0.0,)
    for name, chips in (("owned_chips", owned_chips), ("rent_chips", rent_chips), ("spot_chips", spot_chips)):
        for c in v.listed(name, chips):
            v.choice(name, c, CHIP_NAMES)
    for name, fracs in (("owned_fractions", owned_fractions), ("rent_fractions", rent_fractions),
                        ("spot_fractions", spot_fractions)):
        for f in v.listed(name, fracs):
            v.number(name, f, lo=0.0, hi=100.0)
    mean_rate = base.forecast_tokens / SECONDS
    rate = dict(zip(CHIP_NAMES, (float(r) for r in base.card_rate)))
    spots = ([{sc: round(s * mean_rate / rate[sc])} for sc in spot_chips for s in spot_fractions] if searched
             else [None])
    seen, plans = set(), []
    for oc in owned_chips:
        for f in owned_fractions:
            owned = round(f * mean_rate / rate[oc])
            for rc in rent_chips:
                for g in rent_fractions:
                    cap = round(g * mean_rate / rate[rc])
                    for spot in spots:
                        if not owned and not cap and not base.api and not (spot and any(spot.values())):
                            continue
                        p = base.replace(owned={oc: owned}, rent_cap={rc: cap},
                                         **({} if spot is None else {"rent_spot": spot}))
                        if (p.owned, p.rented, p.rent_spot) not in seen:  # a cap above the need changes nothing
                            seen.add((p.owned, p.rented, p.rent_spot))
                            plans.append(p)
    if not plans:
        v.fail("candidates", "none", "the grid gives no mix (no cards and no API)")
    n = len(CHIP_NAMES)
    slots = tuple(int(max(p.owned[i] + p.rented[i] for p in plans)) for i in range(n))
    spot_slots = tuple(int(max(p.rent_spot[i] for p in plans)) for i in range(n))
    return [p.replace(slots=slots, spot_slots=spot_slots) for p in plans]


CHECKS = ("idle", "margin", "overflow", "served", "all")  # the table's pass_* columns (settle's checks)
MIX_FIELDS = ("owned_cards", "rented_cards", "spot_cards")  # all candidates of one base differ only here
MONTH_CHUNK = 250  # months per engine step
CANDIDATES = engine.Schema(columns=OUTPUTS, kept=OUTPUTS)  # (months, candidates) token flows, kept


def _with(p: Procurement, **fields) -> Procurement:
    """A copy of ``p`` with fields replaced, bypassing validation (device use only)."""
    leaves, treedef = jax.tree.flatten(p)
    q = jax.tree.unflatten(treedef, leaves)
    for name, val in fields.items():
        set_field(q, name, val)
    return q


def candidates_month(key: jax.Array, batch: Procurement) -> dict[str, jax.Array]:
    """One month's token flows of every candidate in ``batch`` (its mix fields
    stacked on a leading axis of candidates), each (candidates,) float32. The draws
    are made once, so each card's quality is computed once for all candidates."""
    _, treedef = jax.tree.flatten(batch)
    axes = _with(jax.tree.unflatten(treedef, [None] * treedef.num_leaves), **dict.fromkeys(MIX_FIELDS, 0))
    return jax.vmap(outcome, in_axes=(None, axes))(draw(key, batch), batch)


def evaluate(plans: list[Procurement], n: int, *, seed: int = 0) -> list[dict[str, np.ndarray]]:
    """Per-month columns (as ``mc.buy.settle`` gives them) of each plan on
    months ``0..n-1``. Plans must share one shape (``candidates`` makes them so)."""
    n, seed, _ = engine.check_run_args(n, seed, None)
    for p in v.listed("plans", plans):
        v.instance("plans", p, Procurement, "a list of Procurements (mc.buy.mix.candidates)")
    if not plans:
        v.fail("plans", "[]", "must hold at least one mix")
    structure = jax.tree.structure(plans[0])
    if any(jax.tree.structure(p) != structure for p in plans):
        v.fail("plans", "mixed shapes", "must share slots, model, API and demand shape")
    padded = plans + [plans[-1]] * (-len(plans) % CAND_CHUNK)
    out = []
    for c0 in range(0, len(plans), CAND_CHUNK):
        chunk = padded[c0:c0 + CAND_CHUNK]
        stacked = _with(plans[0], **{f: np.stack([getattr(q, f) for q in chunk]) for f in MIX_FIELDS})
        # With failures or spot cards each candidate spreads its own losses over the hours:
        # the engine sizes the step to the memory (a month's figures do not depend on it).
        chunk = MONTH_CHUNK if plans[0].terms is None else None
        flows = engine.summarise(candidates_month, stacked, n, CANDIDATES, seed=seed, chunk=chunk).columns
        for j in range(c0, min(c0 + CAND_CHUNK, len(plans))):
            out.append(settle(plans[j], {k: x[:, j - c0] for k, x in flows.items()}))
    return out


def _row(p: Procurement, cols: dict[str, np.ndarray]) -> dict:
    s = engine.of_columns(cols)
    owned = [(c, n) for c, n in zip(CHIP_NAMES, p.owned) if n] or [("none", 0)]
    cap = [(c, n) for c, n in zip(CHIP_NAMES, p.rent_cap) if n] or [("none", 0)]
    spot = [(c, n) for c, n in zip(CHIP_NAMES, p.rent_spot) if n] or [("none", 0)]
    row = {"owned_chip": owned[0][0], "owned": owned[0][1], "rent_chip": cap[0][0], "rent_cap": cap[0][1],
           "rented": int(sum(p.rented)), "spot_chip": spot[0][0], "spot": spot[0][1],
           "owned_bill": p.owned_cents() / 100, "rented_bill": p.rented_cents() / 100}
    for col in ("bill", "idle_share", "blended_ratio", "api_share", "unserved_share"):
        row.update({f"{col}_{k}": s["stats"][col][k] for k in ("mean", "p50", "p95")})
    row["spot_bill_mean"] = s["stats"]["spot_bill"]["mean"]
    for check in CHECKS:
        pr = s["pass"][check]
        row.update({f"pass_{check}": pr["rate"], f"pass_{check}_lo": pr["lo"], f"pass_{check}_hi": pr["hi"]})
    return row


@dataclass
class MixResult:
    """``table``: one row per candidate (mix, bill statistics, pass rates with Wilson
    intervals, ``best`` marking the answer), cheapest first; ``best``: the cheapest mix passing all four checks
    (``pass_all``) with probability ≥ ``target`` (None when no candidate does)."""

    target: float
    n: int
    seed: int
    table: pd.DataFrame
    best: Procurement | None
    best_row: dict | None


def optimise(base: Procurement, *, target: float = 0.9, n: int = 1000, seed: int = 0,
             **grid) -> MixResult:
    """The cheapest mix (lowest mean monthly bill) for ``base``'s forecast, demand and
    uncertainty whose pass-all rate over ``n`` months is at least ``target``: a month
    that leaves demand unserved (beyond ``checks.unserved_max``, 0 by default) fails,
    so without the API the answer carries the demand in at least ``target`` of months.
    ``grid`` goes to ``candidates``."""
    target = v.number("target", target, lo=0.0, hi=1.0)
    plans = candidates(base, **grid)
    rows = [_row(p, cols) for p, cols in zip(plans, evaluate(plans, n, seed=seed))]
    table = pd.DataFrame(rows)
    order = np.argsort(table["bill_mean"].to_numpy(), kind="stable")
    table = table.iloc[order].reset_index(drop=True)
    plans = [plans[i] for i in order]
    ok = np.flatnonzero(table["pass_all"].to_numpy() >= target)
    table["best"] = False
    if ok.size == 0:
        return MixResult(target, n, seed, table, None, None)
    i = int(ok[0])
    table.loc[i, "best"] = True
    return MixResult(target, n, seed, table, plans[i], table.iloc[i].to_dict())
