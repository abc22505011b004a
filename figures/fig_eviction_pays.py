"""Does eviction pay once evicted cards are replaced? By pool headroom
(results/eviction_pays): (a) the saving of the best threshold-eviction setting against
the same autoscaler evicting nothing, paired month by month; (b) what eviction buys a
pool short of its peak instead: capacity. θ, the window and strikes are in
fig_eviction_pays_theta."""

import pandas as pd

import _data
import style

path = _data.RESULTS / "eviction_pays"
if not (path / "settings.parquet").exists():
    raise SystemExit(f"{path} not found: run experiments/eviction_pays.py first")
t = pd.read_parquet(path / "settings.parquet")
heads = sorted(t["headroom"].unique())
# Short of the peak, just big enough, ample: three colours used by no window elsewhere.
colours = dict(zip(heads, [style.PALETTE[5], style.PALETTE[0], style.PALETTE[7]]))
ev = t[t["evicts"]]
n_settings = int(ev.groupby(["lemon_rate", "headroom"]).size().max())
best = ev.loc[ev.groupby(["lemon_rate", "headroom"])["saving"].idxmax()]

fig, (a, b) = style.figure(2, width=style.FULL_WIDTH, height=3.1)
for i, h in enumerate(heads):
    g = best[best["headroom"] == h].sort_values("lemon_rate")
    x = g["lemon_rate"] + (i - 1) * 0.004
    a.errorbar(x, g["saving"], yerr=[g["saving"] - g["saving_lo"], g["saving_hi"] - g["saving"]], marker="o",
               ms=3.5, lw=1.2, capsize=1.5, color=colours[h], label=f"headroom {h:g}")
    for _, r in g[g["saving"] > 0].iterrows():
        window = _data.WINDOW_TICKS[r["window"]]
        rounds = "daily" if r["period"] == 24 else "weekly"
        a.annotate(f"{window}, θ {r['theta']:g}, {int(r['strikes'])} strikes, {rounds}",
                   (r["lemon_rate"] + (i - 1) * 0.004, r["saving"]), xytext=(-6, 4), textcoords="offset points",
                   ha="right", fontsize="x-small", color=colours[h])
a.axhline(0, color="0.4", lw=0.8, ls=":")
right = float(t["lemon_rate"].max()) + 0.01
a.text(right, 60, "pays", fontsize="x-small", color="0.3", va="bottom", ha="right")
a.text(right, -60, "costs", fontsize="x-small", color="0.3", va="top", ha="right")
nobody = best[(best["lemon_rate"] == 0) & (best["n_evicted"] == 0)]
a.set_xlabel("lemon rate")
a.set_ylabel("saving against no eviction\n($ a month; bars: paired 95% CI)")
a.set_title(f"(a) the best of {n_settings} eviction settings"
            + ("\n(at 0% lemons it evicts nobody)" if len(nobody) == len(heads) else ""), fontsize="small")
a.set_xticks(sorted(t["lemon_rate"].unique()))
_data.pct(a, "x")
a.legend(fontsize="x-small", loc="lower left")

short = heads[0]
daily = (t["period"] == 24) & (t["window"] == 24.0)
theta0 = sorted(t["theta"].dropna().unique())[0]
for evicts, ls, label in ((False, ":", "no eviction"), (True, "-", f"θ {theta0:g}, 1 strike")):
    sel = daily & (t["headroom"] == short) & (t["evicts"] == evicts)
    if evicts:
        sel &= (t["theta"] == theta0) & (t["strikes"] == 1)
    g = t[sel].sort_values("lemon_rate")
    b.plot(g["lemon_rate"], g["p_capacity_fail"], ls=ls, marker="o", ms=3.5, lw=1.2, color=colours[short],
           label=label)
    b.fill_between(g["lemon_rate"], g["p_capacity_fail_lo"], g["p_capacity_fail_hi"], color=colours[short],
                   alpha=0.15, lw=0)
rest = t[daily & (t["headroom"] != short) & (~t["evicts"] | ((t["theta"] == theta0) & (t["strikes"] == 1)))]
b.text(0.98, 0.04, f"headroom {', '.join(f'{h:g}' for h in heads[1:])}: under "
       f"{max(0.01, float(rest['p_capacity_fail'].max())):.0%} either way",
       transform=b.transAxes, ha="right", va="bottom", fontsize="x-small", color="0.3")
b.set_xlabel("lemon rate")
b.set_ylabel("P(capacity check fails)\n(band: 95% Wilson)")
b.set_title(f"(b) headroom {short:g}: eviction buys capacity\n(1-day window, daily rounds)", fontsize="small")
b.set_ylim(-0.03, 1.03)
b.set_xticks(sorted(t["lemon_rate"].unique()))
_data.pct(b)
_data.pct(b, "x")
b.legend(fontsize="x-small", loc="center right")
fig.suptitle("Eviction pays only where the pool is just big enough", fontsize="medium")
style.save(fig, "fig_eviction_pays")
