"""The six seed stories as distributions: bill, convergence, wrong evictions, shortfall
(results/seed_stories)."""

import numpy as np
import pandas as pd
import seaborn as sns
import matplotlib.pyplot as plt

import _data
import style

NAMES = ["golden-idler", "golden-idler-steady", "noise-evictor", "noise-evictor-day",
         "bargain-shortfall", "bargain-flagship"]
frames = []
for name in NAMES:
    path = _data.RESULTS / "seed_stories" / f"{name}.parquet"
    if not path.exists():
        raise SystemExit(f"{path} not found: run experiments/seed_stories.py first")
    frames.append(pd.read_parquet(path))
d = pd.concat(frames, ignore_index=True)
d["bill_k"] = d["bill"] / 1000
d["role"] = np.where(d["preset"].isin(NAMES[0::2]), "verdict", "fix")
pal = sns.color_palette("colorblind")
colours = {"verdict": pal[3], "fix": pal[2]}

panels = [("bill_k", "bill ($ thousand / month)", None),
          ("convergence", "convergence (ideal bill / bill)", (0.90, "convergence check: ≥ 0.90")),
          ("n_wrong", "wrong evictions (cards)", None),
          ("shortfall", "shortfall (share of demand unmet)", (0.01, "capacity check: ≤ 1%"))]
BUBBLE = 200  # marker area (pt²) of a share of 1: area ∝ sqrt(share)
fig, axes = style.figure(2, 2, width=style.FULL_WIDTH, height=4.6, sharey=True)
# Violins from a fixed subsample (KDE cost); the interval marks use every month.
sub = d.groupby("preset", sort=False).head(20_000)
for ax, (col, label, limit) in zip(axes.flat, panels):
    if col == "n_wrong":
        # Discrete: the share of months with k wrong evictions, as a dot size, not a smoothed violin.
        counts = d.groupby(["preset", col]).size().rename("months").reset_index()
        counts["share"] = counts["months"] / counts.groupby("preset")["months"].transform("sum")
        counts = counts[counts["share"] >= 0.002]
        y = counts["preset"].map({n: i for i, n in enumerate(NAMES)})
        role = np.where(counts["preset"].isin(NAMES[0::2]), "verdict", "fix")
        ax.scatter(counts[col], y, s=BUBBLE * np.sqrt(counts["share"]), c=[colours[r] for r in role],
                   alpha=0.6, lw=0)
        # What a bubble's size means, in the empty lower right of the panel.
        for k, share in enumerate((0.01, 0.1, 0.5)):
            ax.scatter(6.2 + 1.0 * k, 4.55, s=BUBBLE * np.sqrt(share), color="0.55", alpha=0.6, lw=0)
            ax.text(6.2 + 1.0 * k, 5.2, f"{share:.0%}", ha="center", va="center", fontsize="x-small")
        ax.text(7.2, 3.7, "bubble area: share of months\nwith that many", ha="center", va="center",
                fontsize="x-small")
    else:
        sns.violinplot(data=sub, x=col, y="preset", order=NAMES, hue="role", palette=colours, cut=0,
                       inner=None, density_norm="width", linewidth=0.5, legend=False, ax=ax, width=0.8)
        for c in ax.collections:
            c.set_alpha(0.45)
    q = d.groupby("preset")[col].quantile([0.05, 0.5, 0.95]).unstack()
    for i, name in enumerate(NAMES):
        ax.plot([q.loc[name, 0.05], q.loc[name, 0.95]], [i, i], color="k", lw=1.2)
        ax.plot(q.loc[name, 0.5], i, "o", color="k", ms=3.5)
    if limit is not None:
        x, text = limit
        ax.axvline(x, color="0.4", ls=":", lw=1)
        ax.text(x, -0.75, f" {text}", ha="left", va="center", fontsize="x-small", color="0.3")
    ax.set_xlabel(label)
    ax.set_ylabel("")
axes[1, 1].xaxis.set_major_formatter(__import__("matplotlib.ticker").ticker.PercentFormatter(1.0, decimals=0))
axes[0, 0].set_yticks(range(len(NAMES)), NAMES)
axes[0, 0].set_ylim(len(NAMES) - 0.5, -1.1)  # room above the first story for the checks' labels
handles = [plt.Line2D([], [], marker="s", ls="", color=c, alpha=0.6, label=f"{r}: shape of the month distribution")
           for r, c in colours.items()]
handles += [plt.Line2D([], [], color="k", lw=1.2, label="5–95% of months"),
            plt.Line2D([], [], marker="o", ls="", color="k", ms=3.5, label="median"),
            plt.Line2D([], [], color="0.4", ls=":", lw=1, label="a check's limit")]
fig.legend(handles=handles, loc="outside lower center", ncols=3, fontsize="small")
style.save(fig, "fig_seed_stories")
