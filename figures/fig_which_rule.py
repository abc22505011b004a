"""Which eviction rule? (results/which_rule) One panel per lemon pool (lemon rate ×
headroom), one frontier per rule family: the largest saving against the yardstick (no
eviction, at the window its own calibration picks) that any of the family's
calibrated settings reached at or below each risk of a wrong eviction (settings over
the capacity limit left out), on the months the calibration ran. The star is each family's pick under
the limits, run again on fresh months, with its paired 95% interval; a hollow star
where none of the family's settings meets the limits (the closest)."""

import json

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

import _data
import style

path = _data.RESULTS / "which_rule"
if not (path / "best.parquet").exists():
    raise SystemExit(f"{path} not found: run experiments/which_rule.py first")
cand = pd.read_parquet(path / "candidates.parquet")
best = pd.read_parquet(path / "best.parquet")
RULES = list(dict.fromkeys(best["rule"]))
COLOURS = dict(zip(RULES, [style.PALETTE[i] for i in (0, 1, 2, 4)]))
limits = json.loads((path / "manifest.json").read_text())["config"]["limits"]
LIMIT, CAPACITY = limits["max_wrong"], limits["max_capacity_risk"]
K = 1e3
lemons, heads = sorted(best["lemon_rate"].unique()), sorted(best["headroom"].unique())
fig, axes = style.figure(len(lemons), len(heads), width=style.FULL_WIDTH, height=2.6 * len(heads) + 0.8,
                         squeeze=False)


def frontier(c: pd.DataFrame) -> pd.DataFrame:
    """The largest saving at or below each risk: one step per distinct risk, to 100%."""
    levels = c.groupby("p_wrong_eviction")["saving"].max()
    steps = pd.DataFrame({"p": levels.index.to_numpy(), "saving": np.maximum.accumulate(levels.to_numpy())})
    return pd.concat([steps, pd.DataFrame({"p": [1.0], "saving": [steps["saving"].iloc[-1]]})], ignore_index=True)


for i, head in enumerate(heads):
    for j, lemon in enumerate(lemons):
        ax = axes[i, j]
        pool = (cand["lemon_rate"] == lemon) & (cand["headroom"] == head)
        c = cand[pool & (cand["p_capacity_fail_hi"] <= CAPACITY)]
        b = best[(best["lemon_rate"] == lemon) & (best["headroom"] == head)]
        shown = []
        for k, rule in enumerate(RULES):
            colour, r = COLOURS[rule], c[c["rule"] == rule]
            ax.plot(r["p_wrong_eviction"], r["saving"] / K, _data.MARKERS[k], ms=2.5, color=colour, alpha=0.35,
                    mew=0)
            if len(r):
                f = frontier(r)
                ax.plot(f["p"], f["saving"] / K, drawstyle="steps-post", ls=_data.DASHES[k], lw=1.2, color=colour,
                        label=rule)
                shown += list(f["saving"])
            p = b[b["rule"] == rule].iloc[0]
            ax.errorbar(p["p_wrong_eviction"], p["saving"] / K,
                        xerr=[[p["p_wrong_eviction"] - p["p_wrong_eviction_lo"]],
                              [p["p_wrong_eviction_hi"] - p["p_wrong_eviction"]]],
                        yerr=[[(p["saving"] - p["saving_lo"]) / K], [(p["saving_hi"] - p["saving"]) / K]],
                        fmt="*", ms=10, color=colour, mfc=colour if p["meets_limits"] else "white", mec=colour,
                        elinewidth=0.9, capsize=1.5, zorder=5)
            shown += [p["saving_lo"], p["saving_hi"]]
        # The scale is set by the frontiers and the picks; far costlier settings fall below it.
        lo, hi = min(min(shown), 0.0) / K, max(max(shown), 0.0) / K
        pad = 0.12 * (hi - lo) + 0.05
        ax.set_ylim(lo - pad, hi + pad)
        below = int((c["saving"] / K < lo - pad).sum())
        if below:
            ax.text(0.98, 0.02, f"{below} costlier settings below the panel", transform=ax.transAxes, ha="right",
                    va="bottom", fontsize="x-small", color="0.4")
        ax.axhline(0, color="0.4", lw=0.8, ls=":")
        ax.axvline(LIMIT, color="0.4", ls=":", lw=1)
        ax.text(LIMIT * 1.1, 0.99, f"limit {LIMIT:.0%}", transform=ax.get_xaxis_transform(), fontsize="x-small",
                va="top", color="0.3")
        ax.set_xscale("symlog", linthresh=0.01)
        ax.set_xticks([0, 0.01, 0.1, 1], ["0", "1%", "10%", "100%"])
        ax.set_xlim(-0.001, 1.5)
        size = "just enough" if head < 1.3 else "ample"
        ax.set_title(f"{lemon:.0%} lemons, headroom {head:g} ({size})", fontsize="small")
        if i == len(heads) - 1:
            ax.set_xlabel("P(any wrong eviction in a month)")
        if j == 0:
            ax.set_ylabel("saving against no eviction\n($ thousand a month)")

handles, labels = axes[0, 0].get_legend_handles_labels()
windows = sorted(set(best["none_setting"].str.split(",").str[0]))
handles += [Line2D([], [], ls="none", marker="*", ms=9, color="0.3"),
            Line2D([], [], ls="none", marker="*", ms=9, color="0.3", mfc="white"),
            Line2D([], [], ls=":", lw=0.8, color="0.4"), Line2D([], [], ls=":", lw=1, color="0.4")]
labels += ["the rule's pick within the limits, on fresh months (bars: 95% CI)",
           "none of its settings within the limits: the closest",
           f"saving 0: no eviction, at its best window ({' or '.join(w.removesuffix(' window') for w in windows)})",
           f"limit {LIMIT:.0%}, judged on the upper end of the 95% CI"]
fig.legend(handles, labels, loc="outside lower center", ncols=2, fontsize="small")
fig.suptitle("Which eviction rule? The most each rule saves for a given risk of a wrong eviction",
             fontsize="medium")
style.save(fig, "fig_which_rule")
