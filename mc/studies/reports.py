"""Tables for people: the text the commands print and the studies reuse.

Every function takes results (``mc.fleet.Result``, ``mc.buy.BuyResult``, a
``Calibration``, a bench dict, a ``serving.Card``) and returns a string or a
row; nothing here runs a model.
"""

from __future__ import annotations

from ..buy import BuyResult
from ..serving import Card, catalogue
from ..units import SECONDS
from .calibrate import Calibration
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

STATS = ("mean", "std", "p5", "p50", "p95")
# Each output's unit as the table prints it (tokens in millions, "ratio" for a ratio).
UNITS = {c: {"": "ratio", "tokens": "M tokens"}.get(u, u) for c, u in FLEET_UNITS.items()}
SCALE = {"demand_tokens": 1e-6, "delivered_tokens": 1e-6, "capacity_tokens": 1e-6}


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
    s = result.summary
    partial = "  (PARTIAL: stopped early)" if s.get("partial") else ""
    lines = [f"{name}: {s['n']:,} fleet-months, seed {result.seed}{partial}", ""]
    if not s["n"]:
        return lines[0]
    rows = []
    for col, st in s["stats"].items():
        unit, k = UNITS.get(col, ""), SCALE.get(col, 1.0)
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
                 f"modal run set {m['n_run']['value']} cards ({m['n_run']['share']:.1%}); "
                 f"modal evictions {m['n_evicted']['value']} ({m['n_evicted']['share']:.1%})")
    err = {c: e * SCALE.get(c, 1.0) for c, e in s.get("quantile_error", {}).items() if e}
    if err:
        lines.append("")
        lines.append("binned quantiles (p5/p50/p95) are within: "
                     + ", ".join(f"{c} ±{e:.3g}" for c, e in err.items()))
    return "\n".join(lines)

BUY_ROWS = (("bill", "bill ($)", "{:>16,.0f}"), ("api_bill", "API bill ($)", "{:>16,.0f}"),
            ("idle_share", "idle share", "{:>16.1%}"), ("blended_ratio", "blended / API", "{:>16.1%}"),
            ("api_share", "API share", "{:>16.1%}"), ("unserved_share", "unserved share", "{:>16.2%}"),
            ("demand_tokens", "demand (T tok)", "{:>16,.2f}"), ("unserved_tokens", "unserved (T tok)", "{:>16,.4f}"))
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
    for col, label, fmt in BUY_ROWS:
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


def _ci(row, name: str, fmt: str) -> str:
    return f"{fmt.format(row[name])} [{fmt.format(row[name + '_lo'])}, {fmt.format(row[name + '_hi'])}]"


def _plural(n: int, word: str, words: str | None = None) -> str:
    """``"1 row"``, ``"2 rows"``: a count with its noun in the right number."""
    return f"{n:,} {word if n == 1 else (words or word + 's')}"


def _names(row, current: bool = False) -> str:
    """A row's first setting name in full, and how many identical settings it
    stands for. On the ``current`` line the current setting's own wrapper
    ``current (...)`` is dropped: the tag already says it."""
    names = row["names"].split("; ")
    head = names[0]
    if current and head.startswith("current (") and head.endswith(")"):
        head = head[len("current ("):-1]
    return head + (f" (+{len(names) - 1} identical)" if len(names) > 1 else "")


def _figures(row) -> tuple[str, ...]:
    """A row's figures as the table prints them (two rows that print alike)."""
    return (_ci(row, "bill", "{:,.0f}"), _ci(row, "p_capacity_fail", "{:.1%}"),
            _ci(row, "p_wrong_eviction", "{:.1%}"), f"{row['convergence']:.3f}")


def format_calibration(name: str, result: Calibration, k: int = 4) -> str:
    """The answer first (or that there is none), then its runners-up, the
    current setting, the front, the merged settings and the race.

    Settings whose figures print exactly as the recommendation's (different
    outputs elsewhere, so not merged) are not listed as runners-up: one line
    says how many there are and names them."""
    t, lim = result.table, result.limits
    judged = "the upper end of its 95% interval" if lim.judge == "upper" else "the point estimate"
    limits = [f"P(capacity fail) <= {lim.max_capacity_risk:.1%}", f"P(wrong eviction) <= {lim.max_wrong:.1%}"]
    if lim.max_wrong_mean is not None:
        limits.append(f"mean wrong evictions <= {lim.max_wrong_mean:g}")
    race = "; ".join(f"{s['months']:,} months: {s['rows']} -> {s['kept']}" for s in result.stages)
    ok = int(t["feasible"].sum())
    lines = [f"{name}: {_plural(result.searched, 'setting')} ({len(t):,} after merging identical ones), "
             f"seed {result.seed}, {result.months_run:,} setting-months in {result.wall_s:.0f} s",
             f"objective: {OBJECTIVE_WORDS[result.objective]}; limits: {', '.join(limits)}, each judged on {judged}",
             f"race (rows left in it): {race}",
             f"{ok:,} of {_plural(len(t), 'row')} {'meets' if ok == 1 else 'meet'} the limits", ""]

    # (tag, row, current?) for every table line, or a plain text line; the
    # setting column is as wide as its longest name.
    table: list = []
    if result.best is None:
        table.append(("closest", t.loc[result.closest], False))
    else:
        best = t.loc[result.best]
        ups, same = [], []
        for i in result.runners_up(len(t)).index:
            if i == result.best:
                continue
            if _figures(t.loc[i]) == _figures(best):
                same.append(i)
            elif len(ups) < k:
                ups.append(i)
        table.append(("recommended", best, False))
        if same:
            folded = int(t.loc[same, "settings"].sum())
            table.append(f"{'':<14}({_plural(folded, 'more setting')} with the same figures: "
                         + "; ".join(t.loc[i, "names"] for i in same) + ")")
        table += [(f"runner-up {j}", t.loc[i], False) for j, i in enumerate(ups, 1)]
    if result.current is not None and result.current != result.best:
        table.append(("current", t.loc[result.current], True))
    front = t[t["pareto"]].sort_values("p_wrong_eviction")
    rows = [e for e in table if not isinstance(e, str)] + [("  front", r, False) for _, r in front.iterrows()]
    width = max([49] + [len(_names(r, cur)) for _, r, cur in rows])

    def line(tag, row, cur=False):
        bill, cap, wrong, conv = _figures(row)
        return (f"{tag:<14}{_names(row, cur):<{width}} {bill:<28}{cap:<25}{wrong:<25}{conv:>12}{row['months']:>8,}")

    lines.append(f"{'':<14}{'setting':<{width + 1}}{'bill $ [95% CI]':<28}{'P(cap fail) [95% CI]':<25}"
                 f"{'P(wrong) [95% CI]':<25}{'convergence':>12}{'months':>8}")
    lines += [e if isinstance(e, str) else line(*e) for e in table]
    if len(front):
        lines += ["", "Pareto front (mean bill against P(wrong eviction), capacity limit met): "
                  + _plural(len(front), "row")]
        lines += [line("  front", r) for _, r in front.iterrows()]
    pick = result.best if result.best is not None else result.closest
    if pick is not None:
        r = t.loc[pick]
        lines += ["", "checks of the " + ("recommendation" if result.best is not None else "closest") + ": "
                  f"capacity fails {r['p_capacity_fail']:.1%}, convergence fails {r['p_convergence_fail']:.1%}, "
                  f"a wrong eviction in {r['p_wrong_eviction']:.1%} of months; mean wrong evictions "
                  f"{r['wrong_mean']:.3f}, evictions {r['n_evicted']:.2f}, replacements {r['n_replaced']:.2f}"]
        if len(r["names"].split("; ")) > 1:
            lines.append("identical settings (the same outputs every month): " + r["names"])
    if result.saving is not None:
        v, lo, hi = result.saving
        if v >= 0:
            lines.append(f"against the current setting it saves ${v:,.0f} a month [95% CI {lo:,.0f}, {hi:,.0f}] "
                         "(paired, the same months)")
        else:
            cur = t.loc[result.current]
            why = "which does not meet the limits" if not cur["feasible"] else "which did not finish the race"
            lines.append(f"it costs ${-v:,.0f} a month more than the current setting [95% CI {-hi:,.0f}, {-lo:,.0f}] "
                         f"(paired, the same months), {why}")
    merged = int((t["settings"] > 1).sum())
    if merged:
        folded = int(t["settings"].sum()) - len(t)
        lines.append(f"{_plural(merged, 'row merges', 'rows merge')} identical settings "
                     f"({_plural(folded, 'setting')} folded)")
    lines += [f"NOTE: {w}" for w in result.warnings()]
    return "\n".join(lines)


OBJECTIVE_WORDS = {"bill": "lowest mean bill", "convergence": "highest mean convergence (capped at 1)",
                   "shortfall": "lowest mean shortfall", "wrong_mean": "fewest wrong evictions"}


def format_card(c: Card, price_per_hour: float | None) -> str:
    g = catalogue.gpu(c.gpu)
    seats = "unlimited (no KV cache at context 0)" if c.seats is None else f"{c.seats:,}"
    capped = "" if c.batch == c.batch_requested else f" (requested {c.batch_requested:,}, capped by seats)"
    lines = [
        f"{c.model} on {c.gpu}: {c.weight_bytes_per_param:g}-byte weights ({c.weight_bytes / 1e9:,.1f} GB), "
        f"{c.kv_bytes_per_element:g}-byte KV cache",
        f"usable memory    {c.usable_bytes / 1e9:,.1f} GB ({c.mem_util:g} x {g.memory / 1e9:,.1f} GB)",
        f"KV per token     {c.kv_bytes_per_token:,.0f} bytes",
        f"seats            {seats} at {c.context:,} tokens of context",
        f"batch            {c.batch:,}{capped}",
        f"decode step      {c.step_s * 1e3:,.2f} ms",
        f"per-user         {c.per_user_tok_s:,.2f} tok/s",
        f"aggregate        {c.aggregate_tok_s:,.1f} tok/s",
        f"time to first    {c.ttft_s:,.3f} s ({c.prompt:,}-token prompt at {c.prefill_util:g} of "
        f"{g.flops / 1e12:,.0f} TFLOP/s)",
    ]
    if price_per_hour is not None:
        lines.append(f"tokens per $     {c.tokens_per_dollar(price_per_hour):,.0f} at ${price_per_hour:g}/hour")
    return "\n".join(lines)


SWEEP_FIGURES = (("bill", "mean", "bill mean ($)", "{:,.2f}"), ("convergence", "mean", "conv. mean", "{:.4f}"),
                 ("shortfall", "mean", "shortfall mean", "{:.4f}"), ("pass_capacity", "rate", "pass cap.", "{:.1%}"),
                 ("pass_convergence", "rate", "pass conv.", "{:.1%}"), ("pass_eviction", "rate", "pass evict.", "{:.1%}"))


def sweep_table(table, fields: list[str], most: int = 40) -> str:
    """A sweep's points, one line each: the grid fields, then mean bill,
    convergence and shortfall and the three pass rates (at most ``most`` lines)."""
    head = [*fields] + [label for _, _, label, _ in SWEEP_FIGURES]
    rows = []
    for _, g in table.groupby("point", sort=True):
        stat = g.set_index("statistic")
        first = g.iloc[0]
        cells = [str(first[f]) for f in fields]
        for name, col, _, fmt in SWEEP_FIGURES:
            cells.append(fmt.format(stat.loc[name][col]) if name in stat.index else "")
        rows.append(cells)
    shown = rows[:most]
    widths = [max(len(r[j]) for r in shown + [head]) for j in range(len(head))]
    line = lambda r: "  ".join(x.ljust(w) if j < len(fields) else x.rjust(w)
                               for j, (x, w) in enumerate(zip(r, widths)))
    out = [line(head)] + [line(r) for r in shown]
    if len(rows) > most:
        out.append(f"... and {len(rows) - most} more points (all in the table)")
    return "\n".join(out)
