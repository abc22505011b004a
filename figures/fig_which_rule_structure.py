"""Which eviction rule, once cards wander and the fleet swings
(results/which_rule_structure). One panel per lemon pool (headroom 1.1); for each rule
family, its pick under each variant of the structure (none, the field preset's wander,
its diurnal swing read at the hot hour, both), run again on fresh months: the saving
against no eviction calibrated under the same variant, with its paired 95% interval;
hollow where none of the family's settings meets the limits (the closest). The label
under each point is the pick: window, knob and strikes."""

import sys
from pathlib import Path

import pandas as pd
from matplotlib.lines import Line2D

import _data
import style

path = Path(sys.argv[1]) if len(sys.argv) > 1 else _data.RESULTS / "which_rule_structure"
if not (path / "best.parquet").exists():
    raise SystemExit(f"{path} not found: run experiments/which_rule_structure.py first")
best = pd.read_parquet(path / "best.parquet")
VARIANTS = list(dict.fromkeys(best["variant"]))
RULES = list(dict.fromkeys(best["rule"]))
LABELS = {"none": "none", "wander": "wander", "swing": "swing at the hot hour", "field": "wander and swing"}
COLOURS = {"none": style.PALETTE[7], "wander": style.PALETTE[0], "swing": style.PALETTE[3], "field": style.PALETTE[2]}
lemons = sorted(best["lemon_rate"].unique())
K = 1e3
fig, axes = style.figure(len(lemons), width=style.FULL_WIDTH, height=3.2, squeeze=False, sharey=True)
step = 0.8 / max(len(VARIANTS), 1)
for j, lemon in enumerate(lemons):
    ax = axes[0, j]
    b = best[best["lemon_rate"] == lemon]
    for k, var in enumerate(VARIANTS):
        for i, rule in enumerate(RULES):
            r = b[(b["variant"] == var) & (b["rule"] == rule)]
            if r.empty:
                continue
            r = r.iloc[0]
            x = i - 0.4 + step * (k + 0.5)
            colour = COLOURS[var]
            ax.errorbar([x], [r["saving"] / K], yerr=[[(r["saving"] - r["saving_lo"]) / K],
                                                      [(r["saving_hi"] - r["saving"]) / K]],
                        fmt="o", ms=4, color=colour, mfc=colour if r["meets_limits"] else "white", capsize=1.5,
                        lw=0.9)
    ax.axhline(0.0, color="0.5", lw=0.6)
    ax.set_xticks(range(len(RULES)), RULES)
    ax.set_title(f"{lemon:.0%} lemons, headroom {b['headroom'].iloc[0]:g}", loc="left")
    if j == 0:
        ax.set_ylabel("saving against no eviction ($k / month)")
handles = [Line2D([], [], marker="o", ls="", color=COLOURS[v], label=LABELS.get(v, v)) for v in VARIANTS]
handles.append(Line2D([], [], marker="o", ls="", color="0.4", mfc="white", label="no setting meets the limits"))
fig.legend(handles=handles, loc="outside lower center", ncols=len(handles), fontsize="small", handletextpad=0.2,
           columnspacing=1.0)
style.save(fig, "fig_which_rule_structure")
