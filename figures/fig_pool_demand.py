"""Pool size x mean demand: the share of the bill paid for idle capacity, and how often
the pool falls short (results/pool_demand)."""

import numpy as np

import _data
import style

t = _data.sweep("pool_demand")
t["pool size"] = t["pool"].str.split(" x ").str[0].astype(int)
t["demand_cards"] = t["demand.level"] / _data.CARD_RATE
fig, axes = style.figure(2, width=style.FULL_WIDTH, height=3.0)
fmt = lambda n: f"{n} cards"
idle = _data.stat(t, "idle_share")
_data.lines(axes[0], idle, "demand_cards", "mean", "pool size", lo="p5", hi="p95", fmt=fmt)
# The sawtooth: the run set is whole cards, so a demand of d cards' worth rents ceil(d)
# of them and about 1 - d / ceil(d) of the rent moves no tokens.
d = np.geomspace(idle["demand_cards"].min(), idle["demand_cards"].max(), 600)
axes[0].plot(d, 1 - d / np.ceil(d), color="0.35", lw=0.8, ls=":", zorder=0,
             label="whole cards: 1 − d / ⌈d⌉")
axes[0].text(0.62, 0.97, "each tooth: one more whole card\n(1 − d / ⌈d⌉ for demand d cards' worth)",
             transform=axes[0].transAxes, ha="left", va="top", fontsize="x-small", color="0.3")
axes[0].set_ylabel("idle share of the bill, mean\n(band: 5–95% of months)")
cap = _data.risk(t, "capacity")
_data.lines(axes[1], cap, "demand_cards", "p", "pool size", lo="p_lo", hi="p_hi", fmt=fmt)
axes[1].set_ylabel("P(capacity failure)\n(band: 95% Wilson)")
for n, colour in zip(sorted(t["pool size"].unique()), _data.ordered_palette(4)):
    if n * 0.96 * 7000 / _data.CARD_RATE < 30:
        axes[1].axvline(n, color=colour, lw=0.7, ls=(0, (1, 2)))
axes[1].text(0.03, 0.5, "dotted: demand the whole\npool carries (8 or 16 cards)", transform=axes[1].transAxes,
             fontsize="x-small", color="0.3", va="center")
for ax in axes:
    ax.set_xscale("log")
    ax.set_xticks([0.5, 1, 2, 5, 10, 20], ["0.5", "1", "2", "5", "10", "20"])
    ax.minorticks_off()
    ax.set_xlabel("mean demand d (cards' worth)")
    _data.pct(ax)
handles, labels = axes[0].get_legend_handles_labels()
fig.legend(handles, labels, title="pool (flagship, steady run set, no eviction); one card's worth = 6,720 tok/s, a flagship's mean true rate", loc="outside lower center",
           ncols=5, fontsize="small", title_fontsize="small")
style.save(fig, "fig_pool_demand")
