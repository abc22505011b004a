"""Lemon rate x window x share: when eviction pays for itself against share 0
(results/lemons)."""

import numpy as np

import _data
import style

t = _data.sweep("lemons")
keys = ["runset", "lottery.lemon_rate", "window.hours"]
bill = _data.stat(t, "bill")
base = bill[bill["eviction.share"] == 0.0].set_index(keys)
ev = bill[bill["eviction.share"] > 0].copy()
b0 = base.loc[list(ev.set_index(keys).index)]
ev["saving"] = b0["mean"].to_numpy() - ev["mean"].to_numpy()
# Conservative 95% interval of a difference of means (independent samples; the common
# random numbers make the true one narrower).
ev["half"] = 1.96 * np.sqrt((b0["std"].to_numpy() ** 2 + ev["std"].to_numpy() ** 2) / ev["n"].to_numpy())
wrong = _data.risk(t, "eviction")
wrong = wrong[wrong["eviction.share"] > 0]

fig, axes = style.figure(2, 2, width=style.FULL_WIDTH, height=4.4, sharex=True)
for j, runset in enumerate(["all", "steady"]):
    for share, ls in [(0.1, "--"), (0.2, "-")]:
        for window, colour in zip([1.0, 24.0, 168.0], style.PALETTE):
            g = ev[(ev["runset"] == runset) & (ev["eviction.share"] == share) & (ev["window.hours"] == window)]
            g = g.sort_values("lottery.lemon_rate")
            label = f"{_data.WINDOW_TICKS[window]} window, share {share}"
            axes[0, j].errorbar(g["lottery.lemon_rate"], g["saving"] / 1000, yerr=g["half"] / 1000, ls=ls,
                                color=colour, marker="o", ms=3, lw=1.1, capsize=1.5, label=label)
            w = wrong[(wrong["runset"] == runset) & (wrong["eviction.share"] == share)
                      & (wrong["window.hours"] == window)].sort_values("lottery.lemon_rate")
            axes[1, j].plot(w["lottery.lemon_rate"], w["p"], ls=ls, color=colour, marker="o", ms=3, lw=1.1)
            axes[1, j].fill_between(w["lottery.lemon_rate"], w["p_lo"], w["p_hi"], color=colour, alpha=0.18, lw=0)
    axes[0, j].axhline(0, color="0.4", lw=0.8)
    axes[0, j].set_title(f"run set: {runset}")
    axes[1, j].set_xlabel("lemon rate (share of cards at 0.67× rate)")
    _data.pct(axes[1, j])
    _data.pct(axes[1, j], "x")
axes[0, 0].set_ylabel("saving vs share 0, mean\n($ thousand / month, 95% CI)")
axes[1, 0].set_ylabel("P(any wrong eviction)\n(band: 95% Wilson)")
axes[0, 1].legend(fontsize="x-small", ncols=2)
style.save(fig, "fig_lemons")
