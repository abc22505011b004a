"""Pool size x mean demand: the share of the bill paid for idle capacity
(results/pool_demand)."""

import _data
import style

t = _data.sweep("pool_demand")
t["pool size"] = t["pool"].str.split(" x ").str[0].astype(int)
t["demand_cards"] = t["demand.level"] / _data.CARD_RATE
fig, axes = style.figure(2, width=style.FULL_WIDTH, height=2.6)
fmt = lambda n: f"{n} cards"
idle = _data.stat(t, "idle_share")
_data.lines(axes[0], idle, "demand_cards", "mean", "pool size", lo="p5", hi="p95", fmt=fmt)
axes[0].set_ylabel("idle share of the bill, mean\n(band: 5–95% of months)")
cap = _data.risk(t, "capacity")
_data.lines(axes[1], cap, "demand_cards", "p", "pool size", lo="p_lo", hi="p_hi", fmt=fmt)
axes[1].set_ylabel("P(capacity failure)\n(band: 95% Wilson)")
for ax in axes:
    ax.set_xscale("log")
    ax.set_xlabel("mean demand (cards' worth, ÷ 6,720 tok/s)")
    ax.set_xticks([0.5, 1, 2, 5, 10, 20], ["0.5", "1", "2", "5", "10", "20"])
    ax.minorticks_off()
    _data.pct(ax)
axes[0].legend(title="pool (flagship)", fontsize="small")
style.save(fig, "fig_pool_demand")
