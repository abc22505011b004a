"""``mc run``'s table for people: a fleet's summary (``simulation.Result``) as text.

Units come from the month's column table (``autoscaler.COLUMNS``); the table prints
tokens in millions and ``"ratio"`` for a ratio. Nothing here runs a model.
"""

from __future__ import annotations

from ..engine import column_units
from . import autoscaler
from .replicas import outputs as replica_outputs

# SPEC §2 and §6 outputs of a fleet-month, from their column table (the JSON figures' units).
FLEET_UNITS = column_units(autoscaler.COLUMNS)
STATS = ("mean", "std", "p5", "p50", "p95")
# Each output's unit as the table prints it (tokens in millions, "ratio" for a ratio).
UNITS = {c: {"": "ratio", "tokens": "M tokens"}.get(u, u) for c, u in FLEET_UNITS.items()}
SCALE = {"demand_tokens": 1e-6, "delivered_tokens": 1e-6, "capacity_tokens": 1e-6}
# SPEC §11: with replicas the run set counts replicas, and so does the rule's tally
# unless it ranks cards (``evict = "member"``).
RUN_COUNTS, RULE_COUNTS = ("n_run", "mean_run"), ("n_evicted", "n_wrong", "n_replaced")


def units_of(scenario) -> dict[str, str]:
    """Each output's unit as the table prints it for ``scenario``."""
    if not scenario.by_replica:
        return UNITS
    out = {**UNITS, **column_units(replica_outputs.COLUMNS)}
    counted = RUN_COUNTS if scenario.eviction.evict == "member" else RUN_COUNTS + RULE_COUNTS
    return {**out, **{c: "replicas" for c in counted}}


def cell(x: float, unit: str) -> str:
    """A number as a person reads it: dollars to the cent with thousands
    separators, ratios to four places, never scientific notation."""
    if unit == "$":
        return f"{x:,.2f}"
    if unit in ("ratio", "share"):
        return f"{x:.4f}"
    if abs(x) >= 100 or x == int(x):
        return f"{x:,.0f}" if x == int(x) or abs(x) >= 1e4 else f"{x:,.1f}"
    return f"{x:,.3f}" if abs(x) >= 0.001 or x == 0 else f"{x:.3g}"


def format_summary(name: str, result) -> str:
    """``mc run``'s report of a ``Result``: each output's mean, sd and p5/p50/p95 with
    its unit, each check's pass rate with its 95% interval and rule, the modes."""
    s = result.summary
    partial = "  (PARTIAL: stopped early)" if s.get("partial") else ""
    lines = [f"{name}: {s['n']:,} fleet-months, seed {result.seed}{partial}", ""]
    if not s["n"]:
        return lines[0]
    rows = []
    units = units_of(result.scenario)
    for col, st in s["stats"].items():
        unit, k = units.get(col, ""), SCALE.get(col, 1.0)
        rows.append([col, unit] + [cell(st[q] * k, unit) for q in STATS])
    head = ["output", "unit", *STATS]
    widths = [max(len(r[j]) for r in rows + [head]) for j in range(len(head))]
    fmt = lambda r: "  ".join(x.ljust(w) if j < 2 else x.rjust(w) for j, (x, w) in enumerate(zip(r, widths)))
    lines += [fmt(head)] + [fmt(r) for r in rows] + [""]
    checks = result.scenario.checks
    rule = {"capacity": f"shortfall <= {checks.max_shortfall:g}",
            "convergence": f"convergence >= {checks.min_convergence:g}",
            "eviction": f"wrong evictions <= {checks.max_wrong}"}
    for check, pr in s["pass"].items():
        lines.append(f"pass {check:<12} {pr['rate']:7.2%}   95% CI [{pr['lo']:.2%}, {pr['hi']:.2%}]"
                     + (f"   ({rule[check]})" if check in rule else ""))
    lines.append("")
    m = s["modes"]
    lines.append(f"modal bill ${m['bill']['value']:,.2f} in {m['bill']['share']:.1%} of months; "
                 f"modal run set {m['n_run']['value']} {units['n_run']} ({m['n_run']['share']:.1%}); "
                 f"modal evictions {m['n_evicted']['value']} ({m['n_evicted']['share']:.1%})")
    err = {c: e * SCALE.get(c, 1.0) for c, e in s.get("quantile_error", {}).items() if e}
    if err:
        lines.append("")
        lines.append("binned quantiles (p5/p50/p95) are within: "
                     + ", ".join(f"{c} ±{e:.3g}" for c, e in err.items()))
    return "\n".join(lines)


__all__ = ["FLEET_UNITS", "STATS", "UNITS", "SCALE", "cell", "format_summary"]
