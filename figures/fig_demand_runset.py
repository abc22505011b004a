"""Demand shape x run-set mode: idle burn against shortfall (results/demand_runset)."""

import seaborn as sns

import _data
import style

t = _data.sweep("demand_runset")
idle = _data.stat(t, "idle_burn").set_index(["demand.shape", "runset"])
short = _data.stat(t, "shortfall").set_index(["demand.shape", "runset"])
fig, ax = style.figure(height=2.9)
pal = dict(zip(["all", "peak", "steady"], sns.color_palette("colorblind", 3)))
marks = dict(zip(["flat", "diurnal", "bursty"], "os^"))
for (shape, runset), row in idle.iterrows():
    s = short.loc[(shape, runset)]
    ax.errorbar(s["mean"], row["mean"] / 1000,
                xerr=[[s["mean"] - s["p5"]], [s["p95"] - s["mean"]]],
                yerr=[[(row["mean"] - row["p5"]) / 1000], [(row["p95"] - row["mean"]) / 1000]],
                fmt=marks[shape], color=pal[runset], ms=5, elinewidth=0.8, capsize=1.5)
ax.set_xscale("symlog", linthresh=0.001, linscale=0.5)
ax.set_xticks([0, 0.001, 0.01, 0.1], ["0", "0.1%", "1%", "10%"])
ax.set_xlim(-0.0002, 0.2)
ax.axvline(0.01, color="0.4", ls=":", lw=1)
ax.set_xlabel("shortfall, mean (share of demand unmet;\nsymlog, bars: 5–95% of months)")
ax.set_ylabel("idle burn, mean ($k / month)")
handles = [ax.plot([], [], "o", color=c, label=f"run set {r}")[0] for r, c in pal.items()]
handles += [ax.plot([], [], m, color="0.4", label=s)[0] for s, m in marks.items()]
ax.legend(handles=handles, fontsize="x-small", ncols=2, loc="upper right")
style.save(fig, "fig_demand_runset")
