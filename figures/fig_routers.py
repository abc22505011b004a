"""What routing buys and what a lemon costs behind each router: p95 time to first
token of a 16-card lemon-hunter pool against offered load, four routers, Poisson
arrivals and the example log's (results/routers; runs experiments/routers.py if
missing). Traffic from the Azure LLM inference trace 2023 (CC-BY 4.0)."""

import json
import math
import sys

import pandas as pd
from matplotlib.ticker import FormatStrFormatter, FuncFormatter

import _data
import style

OUT = _data.RESULTS / "routers"
if not (OUT / "curves.parquet").exists():
    sys.path.insert(0, str(_data.ROOT / "experiments"))
    import routers

    routers.main(["--quiet"])
curves = pd.read_parquet(OUT / "curves.parquet")
cfg = json.loads((OUT / "manifest.json").read_text())["config"]


def minor_label(y, _pos) -> str:
    """A log axis's minor tick labelled only at 2, 3 and 5 times a power of ten (every
    one labelled crowds an axis spanning two decades)."""
    m = y / 10 ** math.floor(math.log10(y))
    return f"{y:g}" if min(abs(m - k) for k in (2, 3, 5)) < 1e-6 else ""


colour = dict(zip(cfg["routers"], [style.PALETTE[i] for i in (0, 1, 2, 4)]))

fig, axes = style.figure(3, width=style.FULL_WIDTH, height=3.2)
for ax, (label, _) in zip(axes[:2], cfg["traffics"]):
    for i, router in enumerate(cfg["routers"]):
        g = curves[(curves["traffic"] == label) & (curves["router"] == router)].sort_values("load")
        c = colour[router]
        ax.fill_between(g["load"], g["drawn_p95_lo"], g["drawn_p95_hi"], color=c, alpha=0.25, lw=0)
        ax.plot(g["load"], g["drawn_p95"], "-", marker=_data.MARKERS[i], ms=3, lw=1.2, color=c, label=router)
        ax.plot(g["load"], g["median_p95"], ":", lw=1.0, color=c)
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
    ax.yaxis.set_minor_formatter(FuncFormatter(minor_label))
    ax.tick_params(axis="y", which="minor", labelsize="x-small")
    ax.set_xlabel("offered load (pool rate / capacity)", fontsize="small")
    ax.set_title(label, fontsize="small")
axes[0].set_ylabel("p95 TTFT (s), median over replications", fontsize="small")
bx = axes[2]
width = 0.8 / len(cfg["routers"])
top = curves[curves["load"] == max(cfg["loads"])]
for i, router in enumerate(cfg["routers"]):
    for j, (label, _) in enumerate(cfg["traffics"]):
        r = top[(top["traffic"] == label) & (top["router"] == router)].iloc[0]
        x = j + (i - 1.5) * width
        bx.bar(x, r["cost_p95"], width, color=colour[router])
        if pd.notna(r["cost_p95_lo"]):
            bx.plot([x, x], [r["cost_p95_lo"], r["cost_p95_hi"]], color="0.2", lw=0.8)
bx.axhline(0, color="0.4", lw=0.6)
bx.set_xticks(range(len(cfg["traffics"])), ["Poisson", "Azure log"], fontsize="small")
bx.set_ylabel("p95 TTFT the lemons cost (s)", fontsize="small")
bx.set_title(f"the lemons' cost at load {max(cfg['loads']):g}\n(paired, 95% interval)", fontsize="small")
handles, labels = axes[0].get_legend_handles_labels()
fig.legend(handles, labels, loc="outside lower center", ncols=4, fontsize="x-small",
           title=f"{cfg['cards']} cards (8B, H100, continuous batch {cfg['max_batch']}), the {cfg['scenario']} "
                 "lottery per replication; dotted: the same pool, lemons replaced by median cards, same draws",
           title_fontsize="x-small")
fig.suptitle("A pool behind a router: what routing buys, what a lemon costs", fontsize="medium")
style.save(fig, "fig_routers")
