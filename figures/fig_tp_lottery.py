"""The lottery at tensor parallel (results/tp_lottery): 64 H100s serving Llama-3-70B in
8-bit on replicas of 1, 2, 4 and 8 cards, at 0%, 5% and 10% lemons (the field preset's
10%-slower lemons and dips). Top: the share of replicas holding a lemon at the month's
start against 1 − (1 − π)^tp (lines); the capacity the run set delivered against its
rating; what the lottery costs a month (the bill less that of no lemons, paired), at
each demand (solid: the demand every tp serves; dashed: the one tp 2-8 serve near
their peak). Bottom: what the calibrated eviction saves a month against no eviction on
fresh months (paired 95% intervals), under evict = "replica" (filled circles) and
"member" (hollow squares; the same at tp 1), at each demand (grey where no setting met
the calibration's limits: the closest); and, for every setting the calibrations raced
at the busier demand and 10% lemons, the chance of a wrong eviction in a month (Wilson
95% intervals) against the cards it evicted, coloured by tp."""

import sys
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

import style

path = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "results" / "tp_lottery"
if not (path / "service.parquet").exists():
    raise SystemExit(f"{path} not found: run experiments/tp_lottery.py first")
svc = pd.read_parquet(path / "service.parquet")
ev = pd.read_parquet(path / "eviction.parquet")
TPS = sorted(svc["tp"].unique())
LEMONS = sorted(svc["lemon_rate"].unique())
DEMANDS = list(dict.fromkeys(svc["demand"]))
COLOURS = {lemon: style.PALETTE[i] for i, lemon in enumerate(LEMONS)}
DASH = {d: ls for d, ls in zip(DEMANDS, ("-", "--"))}
X = {tp: i for i, tp in enumerate(TPS)}
K = 1e3


def err(ax, x, r, name, scale=1.0, **kw):
    y, lo, hi = (r[c] / scale for c in (name, f"{name}_lo", f"{name}_hi"))
    ax.errorbar([x], [y], yerr=[[max(y - lo, 0.0)], [max(hi - y, 0.0)]], capsize=1.5, lw=0.9, ms=3.5, **kw)


def tp_axis(ax, bottom=True):
    ax.set_xticks(range(len(TPS)), [str(t) for t in TPS])
    ax.set_xlim(-0.5, len(TPS) - 0.5)
    if bottom:
        ax.set_xlabel("cards per replica (tp)")


fig, axes = style.figure(3, 2, width=style.FULL_WIDTH, height=5.0)
(a, b, c), (d, e, f) = axes

# (a) replicas holding a lemon, against 1 - (1 - p)^tp
s = svc[svc["demand"] == DEMANDS[0]]
grid = np.linspace(0, len(TPS) - 1, 61)
for lemon in LEMONS:
    ks = np.interp(grid, range(len(TPS)), np.log2(TPS))
    a.plot(grid, 1 - (1 - lemon) ** (2 ** ks), color=COLOURS[lemon], lw=0.7, ls=":")
    for _, r in s[s["lemon_rate"] == lemon].iterrows():
        err(a, X[r["tp"]], r, "lemon_share", fmt="o", color=COLOURS[lemon])
a.set_ylabel("replicas holding a lemon")
a.set_title("(a) the lottery's reach", loc="left")
tp_axis(a, False)

# (b) capacity delivered against the run set's rating; (c) the lottery's cost
for ax, name, scale, label, title in ((b, "capacity_ratio", 1.0, "capacity / rated (run set)", "(b) what a card gives"),
                                      (c, "lottery_cost", K, "lottery's cost ($k / month)", "(c) what lemons cost")):
    for dem in DEMANDS:
        for k, lemon in enumerate(LEMONS):
            g = svc[(svc["demand"] == dem) & (svc["lemon_rate"] == lemon)].sort_values("tp")
            xs = [X[t] + (k - 1) * 0.08 for t in g["tp"]]
            ax.plot(xs, g[name] / scale, color=COLOURS[lemon], ls=DASH[dem], lw=0.8)
            for x, (_, r) in zip(xs, g.iterrows()):
                err(ax, x, r, name, scale, fmt="o", color=COLOURS[lemon], mfc=COLOURS[lemon] if dem == DEMANDS[0]
                    else "white")
    ax.set_ylabel(label)
    ax.set_title(title, loc="left")
    tp_axis(ax, False)
c.axhline(0.0, color="0.5", lw=0.6)


# (d), (e) what eviction saves; (f) its wrong evictions
def forms(ax, dem, name, scale):
    g = ev[ev["demand"] == dem]
    for k, lemon in enumerate(LEMONS):
        for m, form in enumerate(("replica", "member")):
            rows = g[(g["lemon_rate"] == lemon) & ((g["form"] == form) | (g["form"] == "either"))]
            for _, r in rows.iterrows():
                if r["form"] == "either" and m == 1:
                    continue
                x = X[r["tp"]] + (k - 1) * 0.24 + (m - 0.5) * 0.1
                colour = COLOURS[lemon] if r["meets_limits"] else "0.6"
                err(ax, x, r, name, scale, fmt="o" if m == 0 else "s", color=colour,
                    mfc=colour if m == 0 else "white")
    ax.axhline(0.0, color="0.5", lw=0.6)
    tp_axis(ax)


for ax, dem, letter in ((d, DEMANDS[0], "d"), (e, DEMANDS[-1], "e")):
    forms(ax, dem, "saving", K)
    lv = svc.loc[svc["demand"] == dem, "level"].iloc[0]
    ax.set_title(f"({letter}) eviction saves, {lv / K:.1f}k", loc="left")
d.set_ylabel("saving against no eviction ($k / month)")
# (f) every raced setting at the busier demand and the most lemons: how often a month
# holds a wrong eviction against the cards it evicts (a replica's eviction takes tp cards)
cand = pd.read_parquet(path / "candidates.parquet")
g = cand[(cand["demand"] == DEMANDS[-1]) & (cand["lemon_rate"] == LEMONS[-1])]
TP_COLOURS = {1: style.PALETTE[7], 2: style.PALETTE[4], 4: style.PALETTE[5], 8: style.PALETTE[3]}
for _, r in g.iterrows():
    cards = r["n_evicted"] * (r["tp"] if r["form"] == "replica" else 1)
    colour = TP_COLOURS[r["tp"]]
    p, lo, hi = r["p_wrong_eviction"], r["p_wrong_eviction_lo"], r["p_wrong_eviction_hi"]
    f.errorbar([cards], [p], yerr=[[max(p - lo, 0.0)], [max(hi - p, 0.0)]], fmt="o" if r["form"] == "replica" else "s",
               color=colour, mfc=colour if r["form"] == "replica" else "white", ms=3.5, capsize=1.5, lw=0.7)
f.set_xscale("symlog", linthresh=1.0)
f.set_xlim(-0.1, None)
f.set_xlabel("cards evicted a month")
f.set_ylabel("P(wrong eviction) a month")
f.set_title(f"(f) wrong, {LEMONS[-1]:.0%} lemons", loc="left")
f.legend(handles=[Line2D([], [], marker="o", ls="", color=TP_COLOURS[t], label=f"tp {t}")
                  for t in sorted(g["tp"].unique())], loc="upper left", fontsize="x-small", handletextpad=0.2)

handles = [Line2D([], [], marker="o", ls="", color=COLOURS[x], label=f"{x:.0%} lemons") for x in LEMONS]
handles += [Line2D([], [], color="0.3", ls=DASH[dm], marker="o", mfc="0.3" if i == 0 else "white",
                   label=f"{svc.loc[svc['demand'] == dm, 'level'].iloc[0] / K:.1f}k tok/s ({dm})")
            for i, dm in enumerate(DEMANDS)]
handles += [Line2D([], [], marker="o", ls="", color="0.3", label='evict = "replica"'),
            Line2D([], [], marker="s", ls="", color="0.3", mfc="white", label='"member"')]
if not ev["meets_limits"].all():
    handles.append(Line2D([], [], marker="o", ls="", color="0.6", label="no setting met the limits"))
fig.legend(handles=handles, loc="outside lower center", ncols=4, fontsize="small", handletextpad=0.3,
           columnspacing=1.0)
style.save(fig, "fig_tp_lottery")
