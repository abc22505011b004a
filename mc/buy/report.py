"""``mc buy``'s report for people, and the headline figures its JSON leads with,
from a ``BuyResult`` (``settle.simulate``). Nothing here runs a model."""

from __future__ import annotations

from .settle import BuyResult

BUY_ROWS = (("bill", "bill ($)", "{:>16,.0f}"), ("api_bill", "API bill ($)", "{:>16,.0f}"),
            ("idle_share", "idle share", "{:>16.1%}"), ("blended_ratio", "blended / API", "{:>16.1%}"),
            ("api_share", "API share", "{:>16.1%}"), ("unserved_share", "unserved share", "{:>16.2%}"),
            ("demand_tokens", "demand (T tok)", "{:>16,.2f}"), ("unserved_tokens", "unserved (T tok)", "{:>16,.4f}"))
# Rows a mix with failures or spot cards adds (what went away and what spot billed).
LOST_ROWS = (("spot_bill", "spot bill ($)", "{:>16,.0f}"), ("spot_tokens", "spot (T tok)", "{:>16,.4f}"),
             ("spot_lost_card_hours", "spot away (c-h)", "{:>16,.0f}"), ("n_preempted", "preempted", "{:>16,.0f}"),
             ("owned_down_card_hours", "owned down (c-h)", "{:>16,.0f}"), ("n_failed", "failed", "{:>16,.0f}"))
# (check, the ratio it judges, its BuyChecks limit): pass when ratio <= limit.
BUY_CHECKS = (("idle", "idle_share", "idle_max"), ("margin", "blended_ratio", "margin_max"),
              ("overflow", "api_share", "overflow_max"), ("served", "unserved_share", "unserved_max"))


def buy_headline(result: BuyResult) -> dict:
    """The figures a reader wants first: p50s and pass rates (all ratios in [0, 1];
    NaN for a run stopped before its first months)."""
    s = result.summary
    stats, passes = s.get("stats", {}), s.get("pass", {})
    out = {f"{key}_p50": stats[col]["p50"] if col in stats else float("nan") for key, col in
           (("bill", "bill"), ("idle", "idle_share"), ("blended_ratio", "blended_ratio"),
            ("api_share", "api_share"), ("unserved_share", "unserved_share"))}
    out.update({f"pass_{k}": passes[k]["rate"] if k in passes else float("nan")
                for k in [c for c, _, _ in BUY_CHECKS] + ["all"]})
    return out


def buy_partial(r: BuyResult) -> str | None:
    """The plain line a run stopped early carries (``format_summary``'s mark), else None."""
    if not r.summary.get("partial"):
        return None
    of = f" of {r.requested:,}" if r.requested is not None else ""
    return f"interrupted after {r.n:,}{of} months: partial; the figures below cover those months only"


def format_buy(name: str, r: BuyResult) -> str:
    """``mc buy``'s report: bill, shares and token flows (p5/p50/p95; tokens in
    10^12), then each check's pass rate with its Wilson interval and rule."""
    s, p = r.summary, r.plan
    partial = buy_partial(r)
    lines = [f"{name}: {s['n']:,} months, seed {r.seed}" + ("  (PARTIAL: stopped early)" if partial else "")]
    if partial:
        lines.append(partial)
    lines.append(p.describe())
    if not s["n"]:
        return "\n".join(lines)
    lines += ["", f"{'':<16}" + "".join(f"{q:>16}" for q in ("p5", "p50", "p95"))]
    for col, label, fmt in BUY_ROWS + (LOST_ROWS if p.terms is not None else ()):
        st = dict(s["stats"][col])
        if col.endswith("_tokens"):
            st = {k: x / 1e12 for k, x in st.items()}
        lines.append(f"{label:<16}" + "".join(fmt.format(st[q]) for q in ("p5", "p50", "p95")))
    lines.append("")
    for check, col, limit in BUY_CHECKS:
        pr = s["pass"][check]
        lines.append(f"pass {check:<9} {pr['rate']:7.1%}  95% CI [{pr['lo']:.1%}, {pr['hi']:.1%}]  "
                     f"({col} <= {getattr(p.checks, limit):g})")
    pr = s["pass"]["all"]
    lines.append(f"pass {'all':<9} {pr['rate']:7.1%}  95% CI [{pr['lo']:.1%}, {pr['hi']:.1%}]")
    if not p.api:
        lines.append("API off: what owned and rented cards cannot carry goes unserved "
                     f"(mean {s['stats']['unserved_tokens']['mean'] / 1e12:,.4f}T tokens a month)")
    return "\n".join(lines)


__all__ = ["BUY_ROWS", "LOST_ROWS", "BUY_CHECKS", "buy_headline", "buy_partial", "format_buy"]
