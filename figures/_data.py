"""Reading study results and drawing their intervals, shared by the figure scripts."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

from mc.engine import mean_half

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "results"
WINDOW_TICKS = {1.0: "1h", 4.0: "4h", 24.0: "1d", 72.0: "3d", 168.0: "1wk"}
CARD_RATE = 7000 * 0.96  # a flagship card's mean true rate, tok/s (SPEC §1.1–1.2)


def sweep(name: str) -> pd.DataFrame:
    """A finished sweep's tidy table from results/NAME/, or exit with a hint."""
    path = RESULTS / name / "sweep.parquet"
    if not path.exists():
        sys.exit(f"{path} not found: run the study first (python experiments/run_all.py or make study)")
    return pd.read_parquet(path)


def stat(table: pd.DataFrame, statistic: str) -> pd.DataFrame:
    return table[table["statistic"] == statistic].reset_index(drop=True)


def risk(table: pd.DataFrame, check: str) -> pd.DataFrame:
    """P(check fails) with its Wilson interval: columns ``p, p_lo, p_hi``."""
    d = stat(table, f"pass_{check}").copy()
    d["p"], d["p_lo"], d["p_hi"] = 1 - d["rate"], 1 - d["hi"], 1 - d["lo"]
    return d


def frontier(table: pd.DataFrame, p: str = "pass_all", cost: str = "bill_mean") -> pd.DataFrame:
    """The cheapest ``cost`` of any row whose ``p`` is at least each level of ``p``:
    one row per distinct value of ``p``, highest first (columns ``p`` and ``cost``),
    for a step curve (``where="post"``). Rows tied on ``p`` count once, at their
    cheapest, so the result hangs only on the rows' values, never on their order (a
    sort that orders ties by the processor's vector width changes nothing)."""
    levels = table.groupby(p, sort=True)[cost].min().iloc[::-1]  # highest p first
    return pd.DataFrame({p: levels.index.to_numpy(), cost: np.minimum.accumulate(levels.to_numpy())})


def window_axis(ax, label: bool = False) -> None:
    ax.set_xscale("log")
    ax.set_xticks(list(WINDOW_TICKS), list(WINDOW_TICKS.values()))
    ax.minorticks_off()
    if label:
        ax.set_xlabel("measurement window")


MARKERS = "osD^vPX*"
DASHES = ["-", "--", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1, 1, 1))]


def lines(ax, d: pd.DataFrame, x: str, y: str, hue: str, *, lo: str | None = None, hi: str | None = None,
          palette=None, fmt=str, band: bool = True, dodge: float = 0.0, markers: bool = True) -> None:
    """One line per ``hue`` level, each with its own colour, marker and dash (so lines
    that coincide stay distinguishable), with a shaded band (or error bars) from ``lo``
    to ``hi``. ``dodge``: a multiplicative x offset between levels (log axes)."""
    levels = sorted(d[hue].unique())
    palette = palette or ordered_palette(len(levels))
    for i, (level, colour) in enumerate(zip(levels, palette)):
        g = d[d[hue] == level].sort_values(x)
        xs = g[x].to_numpy(float)
        if dodge:
            xs = xs * (1 + dodge) ** (i - (len(levels) - 1) / 2)
        ax.plot(xs, g[y], marker=MARKERS[i % len(MARKERS)] if markers else None, ms=3.5, lw=1.1,
                ls=DASHES[i % len(DASHES)], color=colour, label=fmt(level), mfc="white" if i % 2 else colour,
                mew=0.9)
        if lo and hi:
            if band:
                ax.fill_between(xs, g[lo], g[hi], color=colour, alpha=0.15, lw=0)
            else:
                ax.errorbar(xs, g[y], yerr=[g[y] - g[lo], g[hi] - g[y]], fmt="none", ecolor=colour,
                            elinewidth=0.8, capsize=1.5)


def ordered_palette(n: int):
    """Colours for an ordered variable: a colour-blind-safe sequence, dark to light
    (viridis without its palest yellows)."""
    import seaborn as sns

    return sns.color_palette("viridis", n + 1)[:n] if n > 1 else sns.color_palette("viridis", 2)[:1]


def coincide(d: pd.DataFrame, x: str, y: str, hue: str, tol: float) -> list[list]:
    """Groups of ``hue`` levels (two or more) whose ``y`` is within ``tol`` of each
    other at every ``x``: lines that draw on top of one another."""
    wide = d.pivot_table(index=x, columns=hue, values=y)
    groups, left = [], list(wide.columns)
    while left:
        first = left.pop(0)
        same = [c for c in left if (wide[c] - wide[first]).abs().max() <= tol]
        left = [c for c in left if c not in same]
        if same:
            groups.append([first, *same])
    return groups


def note_coincident(ax, d, x, y, hue, name: str, tol: float, where=(0.97, 0.97)) -> None:
    """Say in the panel which lines coincide (within ``tol``), instead of letting
    them hide behind one another: ``name a … b: one curve``."""
    groups = coincide(d, x, y, hue, tol)
    if not groups:
        return
    text = "\n".join(f"{name} {g[0]:g} … {g[-1]:g}:" if len(g) > 2 else f"{name} {g[0]:g} and {g[1]:g}:"
                      for g in groups) + f"\none curve (±{tol:.0%})"
    ax.text(*where, text, transform=ax.transAxes, ha="right" if where[0] > 0.5 else "left",
            va="top" if where[1] > 0.5 else "bottom", fontsize="x-small", color="0.2",
            bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.85, "pad": 1.5})


def legend_below(fig, ax, title: str, ncols: int = 6) -> None:
    """One legend for the figure, in a row beneath the panels."""
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, title=title, loc="outside lower center", ncols=ncols, fontsize="small",
               title_fontsize="small")


def pct(ax, axis: str = "y") -> None:
    from matplotlib.ticker import PercentFormatter

    (ax.yaxis if axis == "y" else ax.xaxis).set_major_formatter(PercentFormatter(1.0, decimals=0))


def ci_half(d: pd.DataFrame) -> np.ndarray:
    """95% normal half-width of a mean from its (population) std and n."""
    return mean_half(d["std"].to_numpy(), d["n"].to_numpy())


def window_panels(name: str, hue: str, fmt, legend: str, out: str, short: str) -> None:
    """The three window-study panels (mean convergence, P(any wrong eviction),
    P(capacity failure)) against the window, one line per value of ``hue``."""
    import style

    t = sweep(name)
    fig, axes = style.figure(3, width=style.FULL_WIDTH, height=2.9)
    conv = stat(t, "convergence").copy()
    half = ci_half(conv)
    conv["lo"], conv["hi"] = conv["mean"] - half, conv["mean"] + half
    lines(axes[0], conv, "window.hours", "mean", hue, lo="lo", hi="hi", fmt=fmt, band=False, dodge=0.05)
    axes[0].axhline(0.90, color="0.4", ls=":", lw=1)
    axes[0].text(1.0, 0.905, "convergence check (≥ 0.90)", fontsize="x-small", color="0.3", va="bottom")
    axes[0].set_ylabel("convergence (ideal bill / bill),\nmean (bars: 95% CI)")
    for ax, check, label in ((axes[1], "eviction", "P(any wrong eviction)"),
                             (axes[2], "capacity", "P(capacity failure)")):
        d = risk(t, check)
        lines(ax, d, "window.hours", "p", hue, lo="p_lo", hi="p_hi", fmt=fmt, dodge=0.05)
        ax.set_ylabel(f"{label}\n(band: 95% Wilson)")
        ax.set_ylim(-0.03, 1.03)
        pct(ax)
    note_coincident(axes[2], risk(t, "capacity"), "window.hours", "p", hue, short, tol=0.02, where=(0.98, 0.66))
    for ax in axes:
        window_axis(ax, label=True)
    axes[0].set_ylim(top=max(axes[0].get_ylim()[1], 1.0))
    legend_below(fig, axes[1], legend)
    style.save(fig, out)


def window_colours() -> dict:
    """One colour per measurement window (hours), the same in every figure that uses it."""
    import seaborn as sns

    p = sns.color_palette("colorblind")
    return {1.0: p[1], 4.0: p[3], 24.0: p[2], 72.0: p[9], 168.0: p[4]}


WINDOW_COLOURS = window_colours()


def swatches(colours: dict) -> list:
    """Legend handles that say only what a colour means: ``{label: colour}``."""
    from matplotlib.lines import Line2D

    return [Line2D([], [], color=c, lw=2.5, label=label) for label, c in colours.items()]


def styles(kinds: dict, colour="0.3") -> list:
    """Legend handles that say only what a line style means: ``{label: (ls, marker)}``."""
    from matplotlib.lines import Line2D

    return [Line2D([], [], color=colour, ls=ls, marker=marker, ms=3.5, lw=1.1, label=label)
            for label, (ls, marker) in kinds.items()]
