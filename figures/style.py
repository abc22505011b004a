"""The shared look of every figure: colour-blind palette, paper context readable at
column width, PDF with editable text plus a small PNG.

    import style
    fig, ax = style.figure()          # one column wide
    ...
    style.save(fig, "fig_name")       # figures/fig_name.pdf and figures/fig_name.png
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import seaborn as sns  # noqa: E402

HERE = Path(__file__).resolve().parent
PALETTE = sns.color_palette("colorblind")
COLUMN_WIDTH = 3.4   # inches, one column of a two-column paper
FULL_WIDTH = 7.0     # inches, across both columns
DPI = 150            # PNG resolution: sharp at column width, ~100 KB a figure

# One fixed font, the DejaVu Sans that ships inside matplotlib (never a system font that
# differs between machines), so the same data draws the same bytes.
FONT = "DejaVu Sans"
sns.set_theme(context="paper", style="ticks", palette=PALETTE, font_scale=0.95, font=FONT,
              rc={"pdf.fonttype": 42, "ps.fonttype": 42, "savefig.dpi": DPI, "font.sans-serif": [FONT],
                  "svg.hashsalt": "mc", "path.simplify": True,
                  "axes.spines.top": False, "axes.spines.right": False,
                  "legend.frameon": False, "figure.constrained_layout.use": True})


def figure(ncols: int = 1, nrows: int = 1, *, width: float = COLUMN_WIDTH, height: float | None = None,
           **kw):
    """A figure sized for the page: ``width`` inches, ``height`` from the grid."""
    height = height or 2.4 * nrows
    return plt.subplots(nrows, ncols, figsize=(width, height), **kw)


def save(fig, name: str, out: str | Path | None = None) -> tuple[Path, Path]:
    """Write ``NAME.pdf`` (editable text) and ``NAME.png`` into ``figures/`` (or ``out``)."""
    out = Path(out) if out is not None else HERE
    out.mkdir(parents=True, exist_ok=True)
    pdf, png = out / f"{name}.pdf", out / f"{name}.png"
    # Fixed metadata (no version strings or dates), so an unchanged figure is unchanged bytes.
    fig.savefig(pdf, metadata={"Creator": None, "Producer": None, "CreationDate": None})
    fig.savefig(png, dpi=DPI, metadata={"Software": None})
    plt.close(fig)
    return pdf, png
