"""Eviction's threshold θ, window and strikes at 10% lemons (results/eviction_pays):
(a) the risk of a wrong eviction; (b) the fleet's quality at month end it buys, against
the same autoscaler evicting nothing. What eviction saves by headroom is in
fig_eviction_pays."""

import pandas as pd

import _data
import style

path = _data.RESULTS / "eviction_pays"
if not (path / "settings.parquet").exists():
    raise SystemExit(f"{path} not found: run experiments/eviction_pays.py first")
t = pd.read_parquet(path / "settings.parquet")
heads = sorted(t["headroom"].unique())
mid, lemons = heads[len(heads) // 2], 0.1
at = (t["lemon_rate"] == lemons) & (t["headroom"] == mid) & (t["period"] == 24)
g = t[at & t["evicts"]]
windows = sorted(g["window"].unique())
strikes = {1: ("-", "o"), 2: ("--", "s")}

fig, (a, b) = style.figure(2, width=style.FULL_WIDTH, height=3.0)
for j, window in enumerate(windows):
    for k, (n, (ls, marker)) in enumerate(strikes.items()):
        gg = g[(g["window"] == window) & (g["strikes"] == n)].sort_values("theta")
        x = gg["theta"] + (2 * j + k - 1.5) * 0.004  # dodged so the bars stay apart
        for ax, y in ((a, "p_wrong_eviction"), (b, "quality_end")):
            ax.errorbar(x, gg[y], yerr=[gg[y] - gg[f"{y}_lo"], gg[f"{y}_hi"] - gg[y]], ls=ls, marker=marker, ms=3.5,
                        lw=1.1, capsize=1.5, color=_data.WINDOW_COLOURS[window])
none = t[at & ~t["evicts"] & (t["window"] == windows[-1])]
b.axhline(float(none["quality_end"].iloc[0]), color="0.3", ls=":", lw=1)
b.text(0.02, float(none["quality_end"].iloc[0]) + 0.002, "no eviction", transform=b.get_yaxis_transform(),
       fontsize="x-small", color="0.3", va="bottom")
a.set_ylabel("P(any wrong eviction)\n(bars: 95% Wilson)")
a.set_ylim(-0.03, 1.03)
_data.pct(a)
a.set_title("(a) the risk: a healthy card evicted", fontsize="small")
b.set_ylabel("fleet quality at month end\n(mean q of cards in slots; bars: 95% CI)")
b.set_title("(b) what it buys: a better fleet", fontsize="small")
for ax in (a, b):
    ax.set_xlabel("θ (evict below θ × the median score)")
    ax.set_xticks(sorted(g["theta"].unique()))
b.legend(handles=_data.swatches({f"{_data.WINDOW_TICKS[w]} window": _data.WINDOW_COLOURS[w] for w in windows})
         + _data.styles({f"{n} strike{'s' * (n > 1)}": s for n, s in strikes.items()}),
         fontsize="x-small", loc="lower right", bbox_to_anchor=(1.0, 0.1), ncols=2)
fig.suptitle(f"Two strikes and a 1-day window keep evictions right\n"
             f"({lemons:.0%} lemons, headroom {mid:g}, daily rounds)", fontsize="medium")
style.save(fig, "fig_eviction_pays_theta")
