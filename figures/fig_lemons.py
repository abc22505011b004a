"""Lemon rate x window x share: what eviction does to the bill against share 0, and
how often it evicts a healthy card (results/lemons)."""

import numpy as np

import _data
import style

t = _data.sweep("lemons")
keys = ["runset", "lottery.lemon_rate", "window.hours"]
bill = _data.stat(t, "bill")
base = bill[bill["eviction.share"] == 0.0].set_index(keys)
ev = bill[bill["eviction.share"] > 0].copy()
b0 = base.loc[list(ev.set_index(keys).index)]
ev["change"] = ev["mean"].to_numpy() - b0["mean"].to_numpy()
# Conservative 95% interval of a difference of means (independent samples; the common
# random numbers make the true one narrower).
ev["half"] = 1.96 * np.sqrt((b0["std"].to_numpy() ** 2 + ev["std"].to_numpy() ** 2) / ev["n"].to_numpy())
# The change does not depend on the window: say so and draw it once (the 1-day window).
spread = ev.groupby(["runset", "eviction.share", "lottery.lemon_rate"])["change"].agg(np.ptp).max()
wrong = _data.risk(t, "eviction")
wrong = wrong[wrong["eviction.share"] > 0]
# Eviction comes before the run set, so its risk is the same for both run sets: draw it once.
same = wrong.pivot_table(index=["lottery.lemon_rate", "window.hours", "eviction.share"], columns="runset",
                         values="p")
assert float((same["all"] - same["steady"]).abs().max()) == 0.0
wrong = wrong[wrong["runset"] == "all"]

fig, (ax, bx) = style.figure(2, width=style.FULL_WIDTH, height=3.3)
runsets = {"all": style.PALETTE[0], "steady": style.PALETTE[3]}
shares = {0.1: ("--", "o"), 0.2: ("-", "s")}
for runset, colour in runsets.items():
    for share, (ls, marker) in shares.items():
        g = ev[(ev["runset"] == runset) & (ev["eviction.share"] == share) & (ev["window.hours"] == 24.0)]
        g = g.sort_values("lottery.lemon_rate")
        ax.errorbar(g["lottery.lemon_rate"], g["change"] / 1000, yerr=g["half"] / 1000, ls=ls, marker=marker,
                    color=colour, ms=3.5, lw=1.1, capsize=1.5, label=f"run set {runset}, share {share:g}")
ax.axhline(0, color="0.4", lw=0.8)
ax.text(0.15, -1.2, "above 0: evicting costs more\nbelow 0: evicting saves", ha="center", va="top",
        fontsize="x-small", color="0.3")
ax.set_ylabel("bill with eviction − bill at share 0\n($ thousand / month, mean, 95% CI)")
ax.set_title("exactly the same for 1 h, 1 d and 1 wk windows" if spread == 0 else
             f"the same for 1 h, 1 d and 1 wk windows (within ${spread:,.0f})", fontsize="x-small")
ax.legend(fontsize="x-small", loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=2)

windows = {1.0: style.PALETTE[1], 24.0: style.PALETTE[2], 168.0: style.PALETTE[4]}
for window, colour in windows.items():
    for share, (ls, marker) in shares.items():
        w = wrong[(wrong["eviction.share"] == share) & (wrong["window.hours"] == window)]
        w = w.sort_values("lottery.lemon_rate")
        bx.plot(w["lottery.lemon_rate"], w["p"], ls=ls, marker=marker, color=colour, ms=3.5, lw=1.1,
                label=f"{_data.WINDOW_TICKS[window]} window, share {share:g}")
        bx.fill_between(w["lottery.lemon_rate"], w["p_lo"], w["p_hi"], color=colour, alpha=0.18, lw=0)
bx.set_ylabel("P(any wrong eviction)\n(share of months; band: 95% Wilson)")
bx.set_title("either run set (eviction comes first)", fontsize="x-small")
bx.legend(fontsize="x-small", loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=3)
_data.pct(bx)
for a in (ax, bx):
    a.set_xlabel("lemon rate (share of cards at 0.67× rate)")
    a.set_xticks([0, 0.1, 0.2, 0.3])
    _data.pct(a, "x")
style.save(fig, "fig_lemons")
