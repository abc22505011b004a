"""How much of a pool can be spot? (results/spot_share): (a, b) each setting's mean
bill against the share of months whose capacity check fails, by how long a spot
zone stays away (hours or days), spot share along each line, zones and fallback
by colour, spare cards by marker; the cheapest setting meeting the bar (capacity
passing in 99% of months, 95% confidence) starred; (c) what spare cards and the
failover buy."""

import matplotlib.lines as mlines
import numpy as np
import pandas as pd

import _data
import style

path = _data.RESULTS / "spot_share"
if not (path / "points.parquet").exists():
    raise SystemExit(f"{path} not found: run experiments/spot_share.py first")
t = pd.read_parquet(path / "points.parquet")
NEVER = float(t["fallback"].max())
t["fb"] = np.where(t["fallback"] >= NEVER, "never", "1 h")
on = t[t["failover"]]
combos = [(1, "never"), (3, "never"), (1, "1 h"), (3, "1 h")]
colours = dict(zip(combos, [style.PALETTE[3], style.PALETTE[1], style.PALETTE[0], style.PALETTE[2]]))
DOWN = {"hours": "1.7 h", "days": "48 h"}
BAR = 0.01  # the bar: at most 1% of months fail the capacity check


def yaxis(ax):
    ax.set_yscale("symlog", linthresh=0.01, linscale=1.0)
    ax.set_ylim(-0.001, 1.0)
    ticks = [0, 0.005, 0.01, 0.1, 1.0]
    ax.set_yticks(ticks)
    ax.set_yticklabels([f"{x:.1%}".replace(".0%", "%") for x in ticks])
    ax.axhline(BAR, color="0.4", lw=0.8, ls=":")


fig, axes = style.figure(3, width=style.FULL_WIDTH, height=3.6)
fewest = on["spares"].min()
for ax, regime, letter in zip(axes[:2], ("hours", "days"), "ab"):
    sel = on[on["regime"].isin([regime, "none"])]
    for (zones, fb), colour in colours.items():
        g = sel[(sel["spares"] == fewest) & (((sel["zones"] == zones) & (sel["fb"] == fb)) | (sel["share"] == 0))]
        g = g.sort_values("share")
        ax.plot(g["bill"] / 1e3, g["p_fail"], color=colour, lw=0.9, alpha=0.8)
        ax.errorbar(g["bill"] / 1e3, g["p_fail"], yerr=[g["p_fail"] - g["p_fail_lo"], g["p_fail_hi"] - g["p_fail"]],
                    fmt="o", ms=3.5, mfc="white" if fb == "never" else colour, color=colour, lw=0.6, capsize=0,
                    elinewidth=0.6)
    meets = sel[sel["meets"]].sort_values("bill")
    if len(meets):
        b = meets.iloc[0]
        ax.plot(b["bill"] / 1e3, b["p_fail"], marker="*", ms=11, color="k", mfc="gold", zorder=5)
        where = "no spot" if b["share"] == 0 else (f"{b['share']:.0%} spot, {int(b['zones'])} "
                                                 f"zone{'s' if b['zones'] > 1 else ''},\nfallback {b['fb']}")
        ax.annotate(f"cheapest passing:\n{where}, {int(b['spares'])} spares,\n${b['bill']:,.0f} a month",
                    (b["bill"] / 1e3, b["p_fail"]), xytext=(0.3, 0.45), textcoords="axes fraction",
                    fontsize="x-small", arrowprops=dict(arrowstyle="-", color="0.3", lw=0.6))
    top = ax.secondary_xaxis("top")
    shares = sorted(sel["share"].unique())
    top.set_xticks([sel[sel["share"] == x]["bill"].mean() / 1e3 for x in shares],
                   labels=[f"{x:.0%}" for x in shares], fontsize="x-small")
    top.set_xlabel("spot share", fontsize="x-small")
    yaxis(ax)
    ax.set_xlabel("mean bill ($k a month)")
    ax.set_title(f"({letter}) a zone stays away {DOWN[regime]} (mean)", fontsize="small")
axes[0].set_ylabel("P(capacity check fails)\n(bars: 95% Wilson; dotted: 1%)")

# What spares and failover buy: the mean shortfall (smooth in the pool, where a
# capacity failure is rare) with and without failover.
off = t[(t["zones"] == 1) & (t["fb"] == "never") & t["regime"].isin(["days", "none"]) & t["share"].isin([0.0, 0.5])]
ax = axes[2]
for (share, failover), g in off.groupby(["share", "failover"]):
    g = g.sort_values("spares")
    colour = style.PALETTE[7] if share == 0 else colours[(1, "never")]
    ax.errorbar(g["spares"] + (0.06 if failover else -0.06), g["shortfall"],
                yerr=[g["shortfall"] - g["shortfall_lo"], g["shortfall_hi"] - g["shortfall"]], marker="o", ms=3.5,
                ls="-" if failover else "--", color=colour, lw=1.0, capsize=1.5,
                label=f"{'no spot' if share == 0 else '50% spot, 1 zone'}, failover {'on' if failover else 'off'}")
ax.set_yscale("log")
ax.set_xticks(sorted(t["spares"].unique()))
ax.set_xlabel("spare cards beyond the 64")
ax.set_ylabel("mean shortfall (share of demand; 95% CI)")
ax.set_title("(c) what spares and failover buy\n(zones away 48 h, no fallback)", fontsize="small")
ax.legend(fontsize="xx-small", loc="center right")

handles = [mlines.Line2D([], [], color=c, marker="o", ms=3.5, lw=0.9, mfc="white" if fb == "never" else c,
                         label=f"{z} zone{'s' if z > 1 else ''}, fallback {fb}") for (z, fb), c in colours.items()]
fig.legend(handles=handles, loc="outside lower center", ncols=4, fontsize="x-small", frameon=False,
           title=f"(a, b): {int(fewest)} spares; lines run from all on demand (right) to all spot (left)",
           title_fontsize="x-small")
fig.suptitle("How much of a 64-card pool can be spot: the bill against the capacity risk", fontsize="medium")
style.save(fig, "fig_spot_share")
