"""Reading study results and drawing their intervals, shared by the figure scripts."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

from mc.engine import Z95

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


def window_axis(ax, label: bool = False) -> None:
    ax.set_xscale("log")
    ax.set_xticks(list(WINDOW_TICKS), list(WINDOW_TICKS.values()))
    ax.minorticks_off()
    if label:
        ax.set_xlabel("measurement window")


def lines(ax, d: pd.DataFrame, x: str, y: str, hue: str, *, lo: str | None = None, hi: str | None = None,
          palette=None, fmt=str, band: bool = True, dodge: float = 0.0, markers: bool = True) -> None:
    """One line per ``hue`` level, with a shaded band (or error bars) from ``lo`` to ``hi``."""
    import seaborn as sns

    levels = sorted(d[hue].unique())
    palette = palette or sns.color_palette("colorblind", len(levels))
    for i, (level, colour) in enumerate(zip(levels, palette)):
        g = d[d[hue] == level].sort_values(x)
        xs = g[x].to_numpy(float)
        if dodge:
            xs = xs * (1 + dodge) ** (i - (len(levels) - 1) / 2)
        ax.plot(xs, g[y], marker="o" if markers else None, ms=3, lw=1.2, color=colour, label=fmt(level))
        if lo and hi:
            if band:
                ax.fill_between(xs, g[lo], g[hi], color=colour, alpha=0.18, lw=0)
            else:
                ax.errorbar(xs, g[y], yerr=[g[y] - g[lo], g[hi] - g[y]], fmt="none", ecolor=colour,
                            elinewidth=0.8, capsize=1.5, alpha=0.8)


def legend_below(fig, ax, title: str, ncols: int = 6) -> None:
    """One legend for the figure, in a row beneath the panels."""
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, title=title, loc="outside lower center", ncols=ncols, fontsize="small",
               title_fontsize="small")


def pct(ax, axis: str = "y") -> None:
    from matplotlib.ticker import PercentFormatter

    (ax.yaxis if axis == "y" else ax.xaxis).set_major_formatter(PercentFormatter(1.0, decimals=0))


def ci_half(d: pd.DataFrame) -> np.ndarray:
    """95% normal half-width of a mean from its std and n."""
    return Z95 * d["std"].to_numpy() / np.sqrt(d["n"].to_numpy())


def window_panels(name: str, hue: str, fmt, legend: str, out: str) -> None:
    """The three window-study panels (median convergence, P(any wrong eviction),
    P(capacity failure)) against the window, one line per value of ``hue``."""
    import style

    t = sweep(name)
    fig, axes = style.figure(3, width=style.FULL_WIDTH, height=2.7)
    lines(axes[0], stat(t, "convergence"), "window.hours", "p50", hue, lo="p5", hi="p95", fmt=fmt,
          band=False, dodge=0.06)
    axes[0].axhline(0.90, color="0.4", ls=":", lw=1)
    axes[0].set_ylabel("convergence, median\n(bars: 5–95% of months)")
    for ax, check, label in ((axes[1], "eviction", "P(any wrong eviction)"),
                             (axes[2], "capacity", "P(capacity failure)")):
        lines(ax, risk(t, check), "window.hours", "p", hue, lo="p_lo", hi="p_hi", fmt=fmt)
        ax.set_ylabel(f"{label}\n(band: 95% Wilson)")
        pct(ax)
    for ax in axes:
        window_axis(ax, label=True)
    legend_below(fig, axes[1], legend)
    style.save(fig, out)
