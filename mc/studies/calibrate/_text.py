"""``mc calibrate``'s report for people: a ``Calibration`` as text, the answer first.
Nothing here runs a model."""

from __future__ import annotations

from ._report import Calibration


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


OBJECTIVE_WORDS = {"bill": "lowest mean bill", "convergence": "highest mean convergence (capped at 1)",
                   "shortfall": "lowest mean shortfall", "wrong_mean": "fewest wrong evictions"}


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


__all__ = ["OBJECTIVE_WORDS", "format_calibration"]
