"""``mc presets``: every preset's figures side by side, as a row each (the keys of
``mc presets --json``) and as the table it prints. Nothing here runs a model."""

from __future__ import annotations

from ..units import SECONDS
from .figures import FLEET_UNITS, of_summary

# (key, label, format) in the order the table and the JSON give them.
PRESET_ROWS = [
    ("bill_mode", "modal bill ($)", "{:,.2f}"),
    ("bill_mode_share", "  share of months", "{:.1%}"),
    ("n_run_mode", "modal cards run", "{:d}"),
    ("n_evicted_mode", "modal cards evicted", "{:d}"),
    ("convergence_p50", "convergence p50", "{:.3f}"),
    ("delivered_rate_p50", "delivered p50 (tok/s)", "{:,.0f}"),
    ("idle_burn_p50", "idle burn p50 ($)", "{:,.0f}"),
    ("n_wrong_mean", "wrong evictions mean", "{:.2f}"),
    ("n_wrong_p5", "wrong evictions p5", "{:.0f}"),
    ("n_wrong_p95", "wrong evictions p95", "{:.0f}"),
    ("shortfall_p50", "shortfall p50", "{:.1%}"),
    ("pass_capacity", "pass capacity", "{:.1%}"),
    ("pass_convergence", "pass convergence", "{:.1%}"),
    ("pass_eviction", "pass eviction", "{:.1%}"),
]


def preset_row(name: str, result) -> dict:
    """One preset's figures, with the keys of ``mc presets --json``."""
    s = result.summary
    st, modes, passes = s["stats"], s["modes"], s["pass"]
    return {
        "name": name, "n": s["n"],
        "bill_mode": modes["bill"]["value"], "bill_mode_share": modes["bill"]["share"],
        "n_run_mode": int(modes["n_run"]["value"]), "n_evicted_mode": int(modes["n_evicted"]["value"]),
        "convergence_p50": st["convergence"]["p50"],
        "delivered_rate_p50": st["delivered_tokens"]["p50"] / SECONDS,
        "idle_burn_p50": st["idle_burn"]["p50"],
        "n_wrong_mean": st["n_wrong"]["mean"], "n_wrong_p5": st["n_wrong"]["p5"],
        "n_wrong_p95": st["n_wrong"]["p95"], "shortfall_p50": st["shortfall"]["p50"],
        "pass_capacity": passes["capacity"]["rate"], "pass_convergence": passes["convergence"]["rate"],
        "pass_eviction": passes["eviction"]["rate"],
        # 95% Wilson intervals of the pass rates
        **{f"pass_{c}_{end}": passes[c][end] for c in ("capacity", "convergence", "eviction") for end in ("lo", "hi")},
        # every figure in the shape of every --json (the same block as mc run --json)
        "figures": of_summary(s, FLEET_UNITS),
    }


def presets_table(rows: list[dict]) -> str:
    width = max(len(label) for _, label, _ in PRESET_ROWS)
    cols = [max(len(r["name"]), 12) for r in rows]
    lines = [" " * width + "  " + "  ".join(r["name"].rjust(c) for r, c in zip(rows, cols))]
    for key, label, fmt in PRESET_ROWS:
        cells = [fmt.format(r[key]).rjust(c) for r, c in zip(rows, cols)]
        lines.append(label.ljust(width) + "  " + "  ".join(cells))
    return "\n".join(lines)


__all__ = ["PRESET_ROWS", "preset_row", "presets_table"]
