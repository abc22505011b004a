"""Calibration: every distinct setting of the search (settings with identical months
merged) as mean bill against P(any wrong eviction), coloured by which limit it breaks,
with the front, the recommendation and the scenario's current setting
(results/calibration). Each story's axis is broken in two: below, the settings near
the answer; above, on their own scale, the far dearer ones (every card kept warm)."""

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
K = 1e3  # $ thousand
fig, axes = style.figure(3, 2, width=style.FULL_WIDTH, height=4.0, sharex="col",
                         gridspec_kw={"height_ratios": [1, 2.6]})


def draw(ax, c, kind, cur, best, front) -> None:
    for label, (marker, colour) in KINDS.items():
        g = c[kind == label]
        ax.errorbar(g["p_wrong_eviction"], g["bill"] / K,
                    xerr=None if marker == "x" else [g["p_wrong_eviction"] - g["p_wrong_eviction_lo"],
                                                     g["p_wrong_eviction_hi"] - g["p_wrong_eviction"]],
                    fmt=marker, ms=3 if marker == "o" else 3.5, color=pal[colour],
                    alpha=0.7 if marker == "o" else 0.5, elinewidth=0.4, lw=0, label=label)
    ax.plot(front["p_wrong_eviction"], front["bill"] / K, "-", color="k", lw=0.8,
            label="front: cheapest for its risk")
    ax.plot(cur["p_wrong_eviction"], cur["bill"] / K, "s", mfc="none", mec="k", ms=7, label="the preset's setting")
    ax.plot(best["p_wrong_eviction"], best["bill"] / K, "*", color="k", ms=11,
            label="recommended: the cheapest within both limits")


for j, name in enumerate(NAMES):
    up, ax = axes[0, j], axes[1, j]
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
    cur, best = c[c["current"]], c[c["status"] == "recommended"]
    front = c[c["pareto"]].sort_values("p_wrong_eviction")
    # The lower scale is set around the answer (or the cheapest setting within the
    # capacity limit); the settings dearer than 1.3 times that get the upper strip, on
    # a scale of their own (each point drawn on one scale only).
    ref = float(best["bill"].iloc[0] if len(best) else c.loc[~cap, "bill"].min()) / K
    cut = ref * 1.3
    bills = c["bill"] / K
    for a, on in ((up, bills > cut), (ax, bills <= cut)):
        draw(a, c[on], kind[on.to_numpy()], cur[on[cur.index]], best[on[best.index]], front)
        a.axvline(lim["max_wrong"], color="0.4", ls=":", lw=1)
    lo, hi = float(bills.min()), float(bills[bills <= cut].max())
    ax.set_ylim(lo - 0.04 * (hi - lo), cut)
    dear = bills[bills > cut]
    if len(dear):
        pad = max(0.08 * (float(dear.max()) - float(dear.min())), 0.01 * cut)
        up.set_ylim(float(dear.min()) - pad, float(dear.max()) + pad)
        # Break marks between the two scales.
        for a, y in ((up, 0), (ax, 1)):
            a.plot([0, 0.03], [y - 0.02, y + 0.02], transform=a.transAxes, color="k", lw=0.8, clip_on=False)
    else:
        up.set_ylim(cut, cut * 1.1)
        up.text(0.5, 0.5, "none dearer", transform=up.transAxes, ha="center", va="center",
                fontsize="x-small", color="0.4")
    up.spines["bottom"].set_visible(False)
    up.tick_params(axis="x", bottom=False)
    up.set_title(f"{name.replace('-', ' ')}: {len(c)} distinct settings (of {report['searched']})\n"
                 f"{len(dear)} far dearer ones: top strip, own scale", fontsize="x-small")
    ax.text(lim["max_wrong"] * 1.1, 0.03, f"limit {lim['max_wrong']:.0%}", transform=ax.get_xaxis_transform(),
            fontsize="x-small", va="bottom", color="0.3")
    ax.set_xscale("symlog", linthresh=0.01)
    ax.set_xticks([0, 0.01, 0.1, 1], ["0", "1%", "10%", "100%"])
    ax.set_xlim(-0.001, 1.5)
    ax.set_xlabel("P(any wrong eviction)\n(symlog; bars: 95% Wilson)")
fig.supylabel("mean bill ($ thousand a month)", fontsize="small")
fig.suptitle("Calibration: each point a distinct setting; ★ the cheapest that passes both limits",
             fontsize="medium")
_data.legend_below(fig, axes[1, 1], "", ncols=3)
style.save(fig, "fig_calibration_pareto")
