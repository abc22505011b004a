"""Calibration: every row of the search (settings with identical months merged) as
mean bill against P(any wrong eviction), coloured by how it left the race, with the
front, the recommendation and the scenario's current setting (results/calibration)."""

import json

import numpy as np
import pandas as pd
import seaborn as sns

import _data
import style

NAMES = ["golden-idler", "noise-evictor", "lemon-hunter"]
KINDS = {"meets both limits": ("o", 0), "wrong-eviction risk over its limit": ("o", 1),
         "capacity risk over its limit": ("x", 2)}
pal = sns.color_palette("colorblind", 3)
fig, axes = style.figure(3, width=style.FULL_WIDTH, height=3.0)
for ax, name in zip(axes, NAMES):
    out = _data.RESULTS / "calibration" / name
    if not (out / "candidates.parquet").exists():
        raise SystemExit(f"{out} not found: run experiments/calibration.py first")
    c = pd.read_parquet(out / "candidates.parquet")
    report = json.loads((out / "calibration.json").read_text())
    lim = report["limits"]
    upper = lim["judged_on"].startswith("upper")
    cap = c["p_capacity_fail_hi" if upper else "p_capacity_fail"] > lim["max_capacity_risk"]
    wrong = c["p_wrong_eviction_hi" if upper else "p_wrong_eviction"] > lim["max_wrong"]
    kind = np.where(cap, "capacity risk over its limit",
                    np.where(wrong, "wrong-eviction risk over its limit", "meets both limits"))
    k = 1e3
    for label, (marker, colour) in KINDS.items():
        g = c[kind == label]
        ax.errorbar(g["p_wrong_eviction"], g["bill"] / k,
                    xerr=None if marker == "x" else [g["p_wrong_eviction"] - g["p_wrong_eviction_lo"],
                                                     g["p_wrong_eviction_hi"] - g["p_wrong_eviction"]],
                    fmt=marker, ms=3 if marker == "o" else 3.5, color=pal[colour], alpha=0.7 if marker == "o" else 0.5,
                    elinewidth=0.4, lw=0, label=label)
    front = c[c["pareto"]].sort_values("p_wrong_eviction")
    ax.plot(front["p_wrong_eviction"], front["bill"] / k, "-", color="k", lw=0.8,
            label="front: cheapest for its risk")
    cur = c[c["current"]]
    ax.plot(cur["p_wrong_eviction"], cur["bill"] / k, "s", mfc="none", mec="k", ms=7, label="the preset's setting")
    best = c[c["status"] == "recommended"]
    ax.plot(best["p_wrong_eviction"], best["bill"] / k, "*", color="k", ms=11, label="recommended")
    ax.axvline(lim["max_wrong"], color="0.4", ls=":", lw=1)
    ax.text(lim["max_wrong"] * 1.1, 0.03, f"limit {lim['max_wrong']:.0%}", transform=ax.get_xaxis_transform(),
            fontsize="x-small", va="bottom", color="0.3")
    ax.set_xscale("symlog", linthresh=0.01)
    ax.set_xticks([0, 0.01, 0.1, 1], ["0", "1%", "10%", "100%"])
    ax.set_xlim(-0.001, 1.15)
    # The scale is set around the answer: rows far dearer (every card warm, many
    # evictions) are counted at the top instead of squashing the rest.
    ref = float(best["bill"].iloc[0] if len(best) else c.loc[~cap, "bill"].min()) / k
    top = ref * 1.3
    ax.set_ylim(ref * 0.9, top)
    above = int((c["bill"] / k > top).sum())
    ax.set_xlabel("P(any wrong eviction)\n(symlog; bars: 95% Wilson)")
    ax.set_title(f"{name}: {report['searched']} settings\n{len(c)} distinct, {above} dearer above the top",
                 fontsize="small")
axes[0].set_ylabel("mean bill ($ thousand a month)")
_data.legend_below(fig, axes[1], "", ncols=3)
style.save(fig, "fig_calibration_pareto")
