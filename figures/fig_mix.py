"""Cost against the probability of passing all three buying checks, one panel per
forecast uncertainty (results/mix_study; runs experiments/mix_study.py if missing)."""

import json
import sys

import numpy as np
import pandas as pd

import _data
import style

OUT = _data.RESULTS / "mix_study"
if not (OUT / "mixes.parquet").exists():
    sys.path.insert(0, str(_data.ROOT / "experiments"))
    import mix_study

    mix_study.main(["--quiet"])
t = pd.read_parquet(OUT / "mixes.parquet")
cfg = json.loads((OUT / "manifest.json").read_text())["config"]
target = cfg["target"]

sigmas = sorted(t["sigma"].unique())
chips = ["b200", "h100", "a100-used", "none"]
colours = dict(zip(chips, style.PALETTE[:3] + [style.PALETTE[7]]))
fig, axes = style.figure(len(sigmas), 1, width=style.FULL_WIDTH, height=2.6, sharey=True)
for ax, sigma in zip(np.atleast_1d(axes), sigmas):
    g = t[t["sigma"] == sigma]
    for chip in chips:
        c = g[g["owned_chip"] == chip]
        ax.scatter(c["pass_all"], c["bill_mean"] / 1e3, s=5, alpha=0.55, lw=0, color=colours[chip],
                   label=f"owned {chip}" if chip != "none" else "nothing owned")
    # The frontier: the cheapest mean bill that reaches at least each pass probability.
    f = g.sort_values("pass_all", ascending=False)
    ax.step(f["pass_all"], np.minimum.accumulate(f["bill_mean"].to_numpy()) / 1e3, where="post",
            color="0.25", lw=0.9, label="cheapest at ≥ p")
    ax.axvline(target, color="0.5", ls="--", lw=0.8)
    best = g[g["best"]]
    if len(best):
        b = best.iloc[0]
        ax.errorbar(b["pass_all"], b["bill_mean"] / 1e3,
                    xerr=[[b["pass_all"] - b["pass_all_lo"]], [b["pass_all_hi"] - b["pass_all"]]],
                    fmt="*", ms=9, color="k", capsize=2, lw=0.9, zorder=5)
        ax.annotate(f"{b['owned']:.0f} {b['owned_chip']} owned\n+ {b['rented']:.0f} {b['rent_chip']} rented",
                    (b["pass_all"], b["bill_mean"] / 1e3), xytext=(-6, 14), textcoords="offset points",
                    ha="right", fontsize="x-small")
    else:
        ax.text(target - 0.02, 0.97, f"no mix\nreaches {target:.0%}", transform=ax.get_xaxis_transform(),
                ha="right", va="top", fontsize="x-small")
    ax.set_title(f"forecast sigma {sigma:g}")
    _data.pct(ax, "x")
    ax.set_xlim(-0.02, 1.02)
axes = np.atleast_1d(axes)
axes[len(axes) // 2].set_xlabel(f"P(pass all three checks) over {cfg['n']:,} months")
axes[0].errorbar([], [], xerr=[[], []], fmt="*", ms=4, color="k", capsize=2, lw=0.9,
                 label=f"cheapest at ≥ {target:.0%} (95% Wilson)")
ax = np.atleast_1d(axes)[0]
ax.set_ylabel(f"mean bill ($k / month)\n{cfg['model']}, {cfg['forecast_tokens'] / 1e12:g}T tokens")
handles, labels = ax.get_legend_handles_labels()
fig.legend(handles, labels, loc="outside lower center", ncols=3, fontsize="small", markerscale=2.5)
style.save(fig, "fig_mix")
