"""Which parameter drives each check: Sobol first-order (S1) and total (ST) indices
of P(pass) for the noise evictor and the bargain shortfall (results/sensitivity)."""

import sys

import numpy as np
import pandas as pd

import _data
import style

PRESETS = ("noise-evictor", "bargain-shortfall")
CHECKS = {"p_capacity": "capacity", "p_convergence": "convergence", "p_eviction": "no wrong eviction"}
LABELS = {"window.hours": "window length", "eviction.share": "eviction share", "lottery.sd": "lottery spread",
          "lottery.lemon_rate": "lemon rate", "dips.rate": "dip rate", "dips.depth_hi": "dip depth",
          "demand.level": "demand level"}

tables = {}
for name in PRESETS:
    path = _data.RESULTS / "sensitivity" / name / "sensitivity.parquet"
    if not path.exists():
        sys.exit(f"{path} not found: run the study first (python experiments/run_all.py or make study)")
    tables[name] = pd.read_parquet(path)

fig, axes = style.figure(3, 2, width=style.FULL_WIDTH, height=4.6, sharex=True, sharey=True)
params = list(LABELS)
y = np.arange(len(params))
for row, name in enumerate(PRESETS):
    t = tables[name]
    for col, (figure, title) in enumerate(CHECKS.items()):
        ax = axes[row, col]
        part = t[t["figure"] == figure].set_index("parameter").reindex(params)
        noise = part["noise_share"].iloc[0]
        if part["ST"].isna().all() or noise > 0.5:
            ax.text(0.5, 0.5, "the same at every point\n(up to Monte Carlo noise):\nno indices", ha="center",
                    va="center", transform=ax.transAxes, fontsize="small", color="0.4")
        else:
            ax.barh(y + 0.2, part["ST"].clip(lower=0), 0.4, xerr=part["ST_conf"], color=style.PALETTE[0],
                    alpha=0.45, label="total (ST)", error_kw={"lw": 0.8, "capsize": 1.5})
            ax.barh(y - 0.2, part["S1"].clip(lower=0), 0.4, xerr=part["S1_conf"], color=style.PALETTE[0],
                    label="first order (S1)", error_kw={"lw": 0.8, "capsize": 1.5})
            ax.text(0.98, 0.02, f"MC noise {noise:.1%}", ha="right", va="bottom", transform=ax.transAxes,
                    fontsize="x-small", color="0.4")
        if row == 0:
            ax.set_title(f"P(pass {title})", fontsize="small")
        if col == 0:
            ax.set_ylabel(name, fontsize="small", fontweight="bold")
        ax.set_yticks(y, [LABELS[p] for p in params])
        ax.set_xlim(0, 1.05)
        ax.axvline(0, color="0.3", lw=0.6)
axes[0, 0].invert_yaxis()  # shared: the first parameter on top everywhere
fig.supxlabel("Sobol index of P(pass) across the ranges (error bars: 95% bootstrap)", fontsize="small")
handles, labels = axes[0, 0].get_legend_handles_labels()
if not handles:
    handles, labels = next((a.get_legend_handles_labels() for a in axes.flat if a.get_legend_handles_labels()[0]),
                           ([], []))
fig.legend(handles, labels, loc="outside upper center", ncols=2, fontsize="small")
style.save(fig, "fig_sensitivity")
