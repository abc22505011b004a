"""The cost of burstiness: p95 time to first token against offered load for four
kinds of traffic at the same lengths, under both batchers, and the H100s a stated
demand needs under each at p95 TTFT <= 0.5 s (results/real_traffic; runs
experiments/real_traffic.py if missing). Traffic from the Azure LLM inference
trace 2023 (CC-BY 4.0).

A rating whose 95% interval spans more than a factor of CHAOTIC (gamma CV 4's: it
meets the SLO only near load 0.004, where one replication's p95 is one burst) is
labelled with the cards' 95% interval, not a bare count: a count from such a
rating moves with any change to the draws."""

import json
import math
import sys

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

import _data
import style
from mc.units import HOURS


CHAOTIC = 2.0  # rate_hi / rate_lo beyond which a rating is labelled by its interval


def two_figures(v: float) -> float:
    """``v`` to two significant figures: a rating known to a few percent at best (its
    95% interval spans a factor of five for gamma CV 4) gives a card count no finer."""
    return float(f"{v:.2g}")


OUT = _data.RESULTS / "real_traffic"
if not (OUT / "slo.parquet").exists():
    sys.path.insert(0, str(_data.ROOT / "experiments"))
    import real_traffic

    real_traffic.main(["--quiet"])
curves = pd.read_parquet(OUT / "curves.parquet")
slo = pd.read_parquet(OUT / "slo.parquet")
cfg = json.loads((OUT / "manifest.json").read_text())["config"]

traffics = [t[0] for t in cfg["traffics"]]
colour = dict(zip(traffics, [style.PALETTE[i] for i in (0, 1, 2, 4)]))  # one colour a traffic, in every panel
log_traffic = next(t[0] for t in cfg["traffics"] if t[1] == "log")
short = {"Poisson": "Poisson", "gamma, CV 2": "gamma\nCV 2", "gamma, CV 4": "gamma\nCV 4", log_traffic: "Azure\nlog"}
names = {log_traffic: f"Azure log ({cfg['block']:g} s blocks, bootstrapped)"}

fig, axes = style.figure(3, width=style.FULL_WIDTH, height=3.4, gridspec_kw={"width_ratios": [1, 1, 1.05]})
axes[1].sharey(axes[0])
for ax, (label, kind, mb, mw) in zip(axes[:2], cfg["batchers"]):
    for i, traffic in enumerate(traffics):
        g = curves[(curves["batcher"] == label) & (curves["traffic"] == traffic) & (curves["kind"] == "grid")]
        g = g.sort_values("load")
        x = g["load"].to_numpy() + (i - 1.5) * 0.008  # a small dodge, so the p5..p95 bars do not overlap
        c = colour[traffic]
        ax.errorbar(x, g["ttft_p95"], yerr=[g["ttft_p95"] - g["ttft_p95_p5"], g["ttft_p95_p95"] - g["ttft_p95"]],
                    fmt="none", ecolor=c, elinewidth=0.6, alpha=0.55, capsize=0)
        ax.fill_between(x, g["ttft_p95_lo"], g["ttft_p95_hi"], color=c, alpha=0.3, lw=0)
        ax.plot(x, g["ttft_p95"], "-", marker=_data.MARKERS[i], ms=3, lw=1.2, color=c,
                label=names.get(traffic, traffic))
    rep = curves[(curves["batcher"] == label) & (curves["kind"] == "replay")]
    ax.plot(rep["load"], rep["ttft_p95"], "*", ms=10, color=colour[log_traffic], mec="k", mew=0.7, zorder=5,
            label="Azure log, the whole hour replayed at its own rate")
    ax.axhline(cfg["slo_ttft"], color="0.4", lw=0.8, ls=":")
    ax.text(0.07, cfg["slo_ttft"] * 1.1, f"{cfg['slo_ttft']:g} s SLO", fontsize="x-small", color="0.3")
    ax.set_yscale("log")
    ax.set_xlim(0.05, 0.95)
    ax.set_xlabel("offered load (rate / capacity)", fontsize="small")
    ax.set_xticks([0.1, 0.3, 0.5, 0.7, 0.9])
    ax.set_title(f"{kind} (batch {mb}" + (f", wait {mw * 1e3:g} ms)" if kind == "static" else ")"),
                 fontsize="small")
grid = curves[curves["kind"] == "grid"]
axes[0].set_ylim(grid["ttft_p95_p5"].min() * 0.7, grid["ttft_p95_p95"].max() * 1.5)
axes[1].tick_params(labelleft=False)
axes[0].set_ylabel("p95 time to first token (s), median of\nreplications (shade: 95% CI; bars: p5–p95)")

bx = axes[2]
s = slo.set_index("traffic").loc[traffics]
x = np.arange(len(traffics))
y = s["tok_s"].to_numpy()
bx.bar(x, y, 0.65, color=[colour[t] for t in traffics],
       yerr=np.vstack([y - s["tok_s_lo"], s["tok_s_hi"] - y]), capsize=2, error_kw={"lw": 0.7})


def cards_at(r, rate: float) -> float:
    """Cards for the demand at ``rate`` (tok/s scaled with the rate from the rated
    point's; inf at 0)."""
    return math.ceil(cfg["demand_tok_s"] / (r["tok_s"] * rate / r["rate"])) if rate > 0 else math.inf


def thousands(v: float) -> str:
    """A card count to two significant figures, thousands as ``k`` (``∞`` for none)."""
    if math.isinf(v):
        return "∞"
    v = two_figures(v)
    return f"{v / 1e3:g}k" if v >= 1000 else f"{v:,.0f}"


def label(r) -> str:
    """The bar's text: the cards and their rent a month; a chaotic rating's with
    the cards' 95% interval (from the rating's)."""
    if not r["tok_s"] > 0:
        return "none meets\nthe SLO"
    if r["rate_hi"] > CHAOTIC * r["rate_lo"]:
        lo, hi = cards_at(r, r["rate_hi"]), cards_at(r, r["rate_lo"])
        return (f"≈{two_figures(r['cards']):,.0f} cards\n(95%: {thousands(lo)}–{thousands(hi)})\n"
                f"≈\\${two_figures(r['usd_month']) / 1e6:,.1f}M/mo")
    if r["cards"] < 100:
        return f"{r['cards']:,.0f} cards\n\\${r['usd_month'] / 1e3:,.0f}k/mo"
    return f"≈{two_figures(r['cards']):,.0f} cards\n≈\\${two_figures(r['usd_month']) / 1e6:,.1f}M/mo"


for xi, (traffic, r) in zip(x, s.iterrows()):
    text = label(r)
    bx.text(xi, max(r["tok_s_hi"], r["tok_s"]) + 0.02 * y.max(), text, ha="center", va="bottom",
            fontsize="x-small", color="0.15")
bx.set_ylim(0, y.max() * 1.32)
bx.set_xticks(x, [short.get(t, t) for t in traffics], fontsize="small")
bx.set_ylabel("SLO-rated tok/s per H100\n(rate × mean answer; 95% CI)")
bx.set_title(f"H100s for {cfg['demand_tok_s'] / 1e3:g}k generated tok/s", fontsize="small")

bx.text(0.98, 0.98, f"at \\${cfg['price_hour']:.2f} per H100-hour\n(assumed), {HOURS} h a month",
        transform=bx.transAxes, ha="right", va="top", fontsize="x-small", color="0.3")

handles, labels = axes[0].get_legend_handles_labels()
slo_key = Line2D([], [], color="0.4", lw=0.8, ls=":")
fig.legend(handles + [slo_key],
           labels + [f"SLO: p{cfg['slo']['percentile']:g} TTFT ≤ {cfg['slo_ttft']:g} s "
                     f"with probability {cfg['slo']['share']:.0%} over replications"],
           loc="outside lower center", ncols=3, fontsize="x-small", title_fontsize="x-small",
           title="traffic: every kind has the prompt and answer lengths of the Azure LLM inference trace 2023\n"
                 f"(CC-BY 4.0; conversation, {cfg['log']['rows']:,} requests in 1 h), so only arrival timing differs")
fig.suptitle("Burstier arrivals at the same load: slower first tokens, more cards (8B on one H100)",
             fontsize="medium")
style.save(fig, "fig_real_traffic")
