"""p95 time to first token against arrival rate for both batchers, and SLO-rated
tokens per dollar of three GPUs for an 8B and a 70B model (results/latency; runs
experiments/latency.py if missing)."""

import json
import sys

import numpy as np
import pandas as pd

import _data
import style

OUT = _data.RESULTS / "latency"
if not (OUT / "slo.parquet").exists():
    sys.path.insert(0, str(_data.ROOT / "experiments"))
    import latency

    latency.main(["--quiet"])
curves = pd.read_parquet(OUT / "curves.parquet")
slo = pd.read_parquet(OUT / "slo.parquet")
cfg = json.loads((OUT / "manifest.json").read_text())["config"]

fig, (ax, bx) = style.figure(2, 1, width=style.FULL_WIDTH, height=2.9, gridspec_kw={"width_ratios": [1.35, 1]})
styles = {"static": "--", "continuous": "-"}
for (label, batcher, _, _), colour in zip(cfg["configs"], style.PALETTE):
    g = curves[curves["config"] == label].sort_values("rate")
    ax.plot(g["rate"], g["ttft_p95"], styles[batcher], color=colour, marker="o", ms=2.5, lw=1.1, label=label)
    ax.fill_between(g["rate"], g["ttft_p95_lo"], g["ttft_p95_hi"], color=colour, alpha=0.25, lw=0)
ax.axhline(0.5, color="0.4", lw=0.8, ls=":")
ax.text(0.021, 0.55, "0.5 s SLO", fontsize="x-small", color="0.3")
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("arrival rate (requests / s, Poisson)")
ax.set_ylabel("p95 time to first token (s)\nmedian over replications, 95% CI")
ax.set_title(f"8B on one H100, prompts ~{1024} / answers ~{256} tokens", fontsize="small")
ax.legend(fontsize="x-small", loc="upper left")

gpus = ["h100-sxm", "h200", "b200"]
bars = [(m, t) for t in cfg["slo_ttft"] for m in ("8b", "70b")]
width = 0.8 / len(bars)
for i, ((model, ttft), colour) in enumerate(zip(bars, style.PALETTE[4:])):
    g = slo[(slo["model"] == model) & (slo["slo_ttft"] == ttft)].set_index("gpu").loc[gpus]
    x = np.arange(len(gpus)) + (i - (len(bars) - 1) / 2) * width
    y = g["tokens_per_dollar"].to_numpy() / 1e6
    err = np.vstack([y - g["tokens_per_dollar_lo"] / 1e6, g["tokens_per_dollar_hi"] / 1e6 - y])
    bx.bar(x, y, width, color=colour, yerr=err, capsize=1.5, error_kw={"lw": 0.7},
           label=f"{model}, p95 TTFT ≤ {ttft:g} s")
    for xi, yi in zip(x, y):
        if yi == 0:
            bx.text(xi, 0.05, "none", rotation=90, ha="center", va="bottom", fontsize="xx-small")
bx.set_xticks(np.arange(len(gpus)), [f"{g}\n${cfg['prices'][g]:.2f}/h" for g in gpus])
bx.set_ylabel("SLO-rated tokens per dollar (M)\nrate × mean answer, 95% CI")
bx.set_title("continuous batch 64; SLO met w.p. 90%", fontsize="small")
bx.legend(fontsize="x-small")
style.save(fig, "fig_latency")
