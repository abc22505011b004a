"""The price of reliability when buying the fleet: the cheapest mean bill of any mix
that passes all four checks with at least a given probability, one line per forecast
uncertainty (results/mix_study; runs experiments/mix_study.py if missing)."""

import json
import sys

import pandas as pd

import _data
import style

OUT = _data.RESULTS / "mix_study"
if not (OUT / "mixes.parquet").exists():
    sys.path.insert(0, str(_data.ROOT / "experiments"))
    import mix_study

    mix_study.main(["--quiet"])
t = pd.read_parquet(OUT / "mixes.parquet")
cfg = json.loads((OUT / "manifest.json").read_text())["config"]
target = cfg["target"]

sigmas = sorted(t["sigma"].unique())
fig, ax = style.figure(width=style.FULL_WIDTH * 0.72, height=3.2)
for i, (sigma, colour) in enumerate(zip(sigmas, _data.ordered_palette(len(sigmas)))):
    g = t[t["sigma"] == sigma]
    # The frontier: the cheapest mean bill among mixes passing with at least p, one
    # point per pass rate (mixes tied on it count once, at their cheapest), so it does
    # not hang on how a sort orders ties.
    f = _data.frontier(g)
    p = f["pass_all"].to_numpy()
    cheapest = f["bill_mean"].to_numpy() / 1e3
    ax.step(p, cheapest, where="post", color=colour, lw=1.3, ls=_data.DASHES[i],
            label=f"forecast ±{sigma:.0%} (sigma {sigma:g}); best reaches {p.max():.0%}")
    best = g[g["best"]]
    if len(best):
        b = best.iloc[0]
        ax.errorbar(b["pass_all"], b["bill_mean"] / 1e3,
                    xerr=[[b["pass_all"] - b["pass_all_lo"]], [b["pass_all_hi"] - b["pass_all"]]],
                    fmt=_data.MARKERS[i], ms=6, color=colour, mec="k", mew=0.6, capsize=2, lw=0.9, zorder=5)
        chips = (b["owned_chip"] if b["rent_chip"] in (b["owned_chip"], "none")
                 else f"{b['owned_chip']} / {b['rent_chip']}")
        # Beside its marker, just above the frontier (fixed axes positions collide with
        # the curves once the frontier's range changes).
        ax.annotate(f"{b['owned']:.0f} owned + {b['rented']:.0f} rented {chips}: ${b['bill_mean'] / 1e3:,.0f}k / month",
                    (b["pass_all"], b["bill_mean"] / 1e3), xytext=(-8, 7), textcoords="offset points",
                    ha="right", va="center", fontsize="x-small", color="0.15")
ax.axvline(target, color="0.5", ls=":", lw=0.9)
ax.text(target, 0.02, f" target {target:.0%}", transform=ax.get_xaxis_transform(), fontsize="x-small",
        color="0.3", ha="left")
ax.set_xlim(0, 1.0)
_data.pct(ax, "x")
ax.set_xlabel(f"P(pass idle, margin, overflow and served) over {cfg['n']:,} months")
ax.set_ylabel("cheapest mean bill of a mix\npassing with at least that ($k / month)")
ax.set_title(f"{cfg['model']}, {cfg['forecast_tokens'] / 1e12:g}T tokens a month; large marker: the cheapest mix "
             f"reaching {target:.0%} (bar: 95% Wilson)", fontsize="x-small")
ax.legend(fontsize="x-small", loc="upper left")
style.save(fig, "fig_mix")
