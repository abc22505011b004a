"""Calibration: mean convergence against P(any wrong eviction) for every searched
setting, the Pareto front and the recommendation (results/calibration)."""

import json

import pandas as pd
import seaborn as sns

import _data
import style

NAMES = ["golden-idler-steady", "golden-idler"]
fig, axes = style.figure(2, width=style.FULL_WIDTH, height=3.2)
pal = dict(zip(["share", "threshold"], sns.color_palette("colorblind", 2)))
for ax, name in zip(axes, NAMES):
    out = _data.RESULTS / "calibration" / name
    if not (out / "candidates.parquet").exists():
        raise SystemExit(f"{out} not found: run experiments/calibration.py first")
    c = pd.read_parquet(out / "candidates.parquet")
    report = json.loads((out / "calibration.json").read_text())
    limit = report["constraints"]["max_wrong"]
    cap_ok = c["cap_hi"] <= report["constraints"]["max_shortfall_risk"]
    for policy, colour in pal.items():
        for ok, alpha in [(True, 0.9), (False, 0.25)]:
            g = c[(c["policy"] == policy) & (cap_ok == ok)]
            ax.errorbar(g["wrong_risk"], g["conv_mean"],
                        xerr=[g["wrong_risk"] - g["wrong_lo"], g["wrong_hi"] - g["wrong_risk"]],
                        yerr=[g["conv_mean"] - g["conv_lo"], g["conv_hi"] - g["conv_mean"]],
                        fmt="o", ms=3, color=colour, alpha=alpha, elinewidth=0.6, lw=0,
                        label=f"{policy}" + ("" if ok else " (capacity risk over limit)"))
    front = c[c["pareto"]].sort_values("wrong_risk")
    ax.plot(front["wrong_risk"], front["conv_mean"], "-", color="k", lw=1, label="Pareto front")
    best = report["recommendation"]
    if best is not None:
        ax.plot(best["p_wrong_eviction"]["value"], best["convergence_mean"]["value"], "*", color="k", ms=10,
                label="recommended")
    ax.axvline(limit, color="0.4", ls=":", lw=1)
    ax.set_xscale("symlog", linthresh=0.01)
    ax.set_xticks([0, 0.01, 0.05, 0.1, 1], ["0", "1%", "5%", "10%", "100%"])
    ax.set_xlim(-0.001, 1.1)
    ax.set_xlabel("P(any wrong eviction) (symlog; bars: 95% Wilson)")
    ax.set_title(name)
axes[0].set_ylabel("convergence, mean (bars: 95% CI)")
_data.legend_below(fig, axes[1], "", ncols=3)
style.save(fig, "fig_calibration_pareto")
