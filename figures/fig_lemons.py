"""Lemon rate x window x share: the more lemons, the fewer wrong evictions
(results/lemons). The bill is not drawn: what eviction does to it does not move with
the lemon rate or the window, so the figure states it in words beside the panel."""

import numpy as np

import _data
import style

t = _data.sweep("lemons")
keys = ["runset", "lottery.lemon_rate", "window.hours"]
bill = _data.stat(t, "bill")
base = bill[bill["eviction.share"] == 0.0].set_index(keys)
ev = bill[bill["eviction.share"] > 0].copy()
ev["change"] = ev["mean"].to_numpy() - base.loc[list(ev.set_index(keys).index)]["mean"].to_numpy()
# The bill's change against share 0 is one number per run set and share: the same at
# every lemon rate and window (say how far from it, should it ever move).
change = ev.groupby(["runset", "eviction.share"])["change"]
spread = float(change.agg(np.ptp).max())
change = change.mean()

wrong = _data.risk(t, "eviction")
wrong = wrong[wrong["eviction.share"] > 0]
# Eviction comes before the run set, so its risk is the same for both run sets: draw it once.
same = wrong.pivot_table(index=["lottery.lemon_rate", "window.hours", "eviction.share"], columns="runset",
                         values="p")
assert float((same["all"] - same["steady"]).abs().max()) == 0.0
wrong = wrong[wrong["runset"] == "all"]

fig, (ax, side) = style.figure(2, width=6.2, height=3.0, gridspec_kw={"width_ratios": [1.55, 1]})
shares = {0.2: ("-", "s"), 0.1: ("--", "o")}
for window in (1.0, 24.0, 168.0):
    colour = _data.WINDOW_COLOURS[window]
    for share, (ls, marker) in shares.items():
        w = wrong[(wrong["eviction.share"] == share) & (wrong["window.hours"] == window)]
        w = w.sort_values("lottery.lemon_rate")
        ax.plot(w["lottery.lemon_rate"], w["p"], ls=ls, marker=marker, color=colour, ms=3.5, lw=1.1)
        ax.fill_between(w["lottery.lemon_rate"], w["p_lo"], w["p_hi"], color=colour, alpha=0.18, lw=0)
ax.set_xlabel("lemon rate (share of cards at 0.67× rate)")
ax.set_ylabel("P(any wrong eviction)\n(share of months; band: 95% Wilson)")
ax.set_xticks([0, 0.1, 0.2, 0.3])
ax.set_ylim(-0.03, 1.03)
_data.pct(ax, "x")
_data.pct(ax)

side.axis("off")
colours = side.legend(handles=_data.swatches({_data.WINDOW_TICKS[w]: _data.WINDOW_COLOURS[w]
                                              for w in (1.0, 24.0, 168.0)}),
                      title="window", loc="upper left", bbox_to_anchor=(0.0, 1.0), fontsize="x-small",
                      title_fontsize="x-small", alignment="left")
side.add_artist(colours)
side.legend(handles=_data.styles({f"{s:g} of the cards": (ls, m) for s, (ls, m) in shares.items()}),
            title="eviction share", loc="upper left", bbox_to_anchor=(0.42, 1.0), fontsize="x-small",
            title_fontsize="x-small", alignment="left")
within = "exactly" if spread == 0 else f"within ${spread:,.0f} of"
note = (f"Same for either run set: eviction\ncomes before the run set.\n\n"
        f"Not drawn, as it is flat: the bill.\nAgainst share 0, eviction changes\nit by {within} the same amount\n"
        f"at every lemon rate and window:\n"
        f"  run set all: {change['all', 0.1]:+,.0f} (share 0.1),\n      {change['all', 0.2]:+,.0f} (share 0.2)\n"
        f"  run set steady: {change['steady', 0.1]:+,.0f}, {change['steady', 0.2]:+,.0f}\n"
        f"($ a month)")
side.text(0.0, 0.62, note.replace("-", "−"), transform=side.transAxes, ha="left", va="top", fontsize="x-small",
          color="0.2", linespacing=1.3)
fig.suptitle("The more lemons, the fewer wrong evictions", fontsize="medium")
style.save(fig, "fig_lemons")
