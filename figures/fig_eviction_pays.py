"""Does eviction pay once evicted cards are replaced? (results/eviction_pays)

(a) the bill saving of threshold eviction against the same autoscaler evicting
nothing, paired month by month, by pool headroom; (b) the risk of a wrong eviction
by θ, window and strikes; (c) the fleet's quality at month end; (d) the capacity
risk with and without eviction; below, the calibration's answer per lemon rate."""

import numpy as np
import pandas as pd
import seaborn as sns

import _data
import style

path = _data.RESULTS / "eviction_pays"
if not (path / "settings.parquet").exists():
    raise SystemExit(f"{path} not found: run experiments/eviction_pays.py first")
t = pd.read_parquet(path / "settings.parquet")
answers = pd.read_parquet(path / "calibration.parquet")
heads = sorted(t["headroom"].unique())
mid = heads[len(heads) // 2]
pal = sns.color_palette("colorblind", 6)
fig, axes = style.figure(2, 2, width=style.FULL_WIDTH, height=5.4)
(a, b), (c, d) = axes
daily = (t["period"] == 24) & (t["window"] == 24.0)
theta0 = sorted(t["theta"].dropna().unique())[0]

for i, h in enumerate(heads):
    for strikes, ls in ((1, "-"), (2, "--")):
        g = t[daily & (t["theta"] == theta0) & (t["strikes"] == strikes) & (t["headroom"] == h)].sort_values("lemon_rate")
        a.plot(g["lemon_rate"], g["saving"], ls, marker="o", ms=3, color=pal[i],
               label=f"headroom {h:g}" if strikes == 1 else None)
        a.fill_between(g["lemon_rate"], g["saving_lo"], g["saving_hi"], color=pal[i], alpha=0.15, lw=0)
a.axhline(0, color="0.4", lw=0.8, ls=":")
a.set_xlabel("lemon rate")
a.set_ylabel("saving against no eviction\n($ a month; band: paired 95% CI)")
a.set_title(f"(a) θ {theta0:g}, 1-day window, daily rounds\n(solid: 1 strike, dashed: 2)", fontsize="small")
_data.pct(a, "x")
a.legend(fontsize="x-small")

g = t[(t["lemon_rate"] == 0.1) & (t["headroom"] == mid) & (t["period"] == 24) & t["evicts"]]
for j, ((window, strikes), gg) in enumerate(g.groupby(["window", "strikes"])):
    gg = gg.sort_values("theta")
    off = (j - 1.5) * 0.004
    b.errorbar(gg["theta"] + off, gg["p_wrong_eviction"],
               yerr=[gg["p_wrong_eviction"] - gg["p_wrong_eviction_lo"], gg["p_wrong_eviction_hi"] - gg["p_wrong_eviction"]],
               marker="o" if strikes == 1 else "s", ms=3, lw=1, ls="-" if strikes == 1 else "--", capsize=1.5,
               color=pal[3 + (window == 24.0)], label=f"{window:g}h window, {strikes} strike{'s' * (strikes > 1)}")
b.set_xlabel("θ (evict below θ × the median score)")
b.set_ylabel("P(any wrong eviction)\n(bars: 95% Wilson)")
b.set_title(f"(b) 10% lemons, headroom {mid:g}, daily rounds", fontsize="small")
_data.pct(b)
b.legend(fontsize="x-small")

none = t[~t["evicts"] & daily & (t["headroom"] == mid)].sort_values("lemon_rate")
c.plot(none["lemon_rate"], none["quality_end"], "-", marker="o", ms=3, color="0.3", label="no eviction")
for k, theta in enumerate(sorted(t["theta"].dropna().unique())):
    g = t[daily & (t["theta"] == theta) & (t["strikes"] == 1) & (t["headroom"] == mid)].sort_values("lemon_rate")
    c.plot(g["lemon_rate"], g["quality_end"], "-", marker="o", ms=3, color=pal[k], label=f"θ {theta:g}")
    c.fill_between(g["lemon_rate"], g["quality_end_lo"], g["quality_end_hi"], color=pal[k], alpha=0.15, lw=0)
c.set_xlabel("lemon rate")
c.set_ylabel("fleet quality at month end\n(mean q of cards in slots)")
c.set_title(f"(c) headroom {mid:g}, 1-day window, daily, 1 strike", fontsize="small")
_data.pct(c, "x")
c.legend(fontsize="x-small")

for i, h in enumerate(heads):
    for evicts, ls in ((False, ":"), (True, "-")):
        sel = daily & (t["headroom"] == h) & (t["evicts"] == evicts)
        if evicts:
            sel &= (t["theta"] == theta0) & (t["strikes"] == 1)
        g = t[sel].sort_values("lemon_rate")
        d.plot(g["lemon_rate"], g["p_capacity_fail"], ls, marker="o", ms=3, color=pal[i],
               label=f"headroom {h:g}" if evicts else None)
d.set_xlabel("lemon rate")
d.set_ylabel("P(capacity check fails)")
d.set_title(f"(d) solid: θ {theta0:g}, 1 strike; dotted: no eviction", fontsize="small")
_data.pct(d)
_data.pct(d, "x")
d.legend(fontsize="x-small")

lines = []
for _, r in answers.iterrows():
    name = str(r["recommended"]).split("; ")[0] if r["recommended"] is not None else "none meets the limits"
    lines.append(f"{r['lemon_rate']:.0%} lemons: {name} (${r['bill']:,.0f})")
fig.suptitle(f"The calibration's answer at headroom {answers['headroom'].iloc[0]:g} (cheapest within 5% risks)\n"
             + "\n".join(lines), fontsize="x-small")
style.save(fig, "fig_eviction_pays")
