"""Figures are byte-deterministic: the same data draws the same PNG and PDF bytes
(fixed metadata, no dates or version strings, one bundled font), so ``make study``
leaves git clean when nothing changed."""

import hashlib
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def style():
    sys.path.insert(0, str(ROOT / "figures"))
    try:
        import style as s
    finally:
        sys.path.remove(str(ROOT / "figures"))
    return s


def draw(style, out):
    fig, ax = style.figure(2, width=style.FULL_WIDTH)
    ax[0].plot([1, 2, 3], [3, 1, 2], marker="o", label="a line")
    ax[1].fill_between([1, 2, 3], [0, 1, 0], [1, 2, 1], alpha=0.2)
    ax[0].set_xlabel("a label with units ($ / month)")
    ax[0].legend()
    return style.save(fig, "probe", out)


def test_the_same_figure_is_the_same_bytes(style, tmp_path):
    a = [p.read_bytes() for p in draw(style, tmp_path / "a")]
    b = [p.read_bytes() for p in draw(style, tmp_path / "b")]
    assert [hashlib.sha256(x).hexdigest() for x in a] == [hashlib.sha256(x).hexdigest() for x in b]
    pdf, png = a
    assert b"CreationDate" not in pdf and b"matplotlib" not in pdf.lower()
    assert b"Software" not in png and b"matplotlib" not in png.lower()


def test_one_bundled_font(style):
    import matplotlib
    from matplotlib import font_manager

    path = font_manager.findfont(font_manager.FontProperties(family=matplotlib.rcParams["font.family"]))
    assert Path(path).name == "DejaVuSans.ttf" and "matplotlib" in path
