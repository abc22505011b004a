"""The calibration text: full setting names, the current setting named once,
counts in the right number, and settings that print exactly as the
recommendation folded into one line instead of repeated as runners-up."""

from __future__ import annotations

import dataclasses
import re

import pytest

from mc.fleet import presets
from mc.studies import calibrate as cal
from mc.studies.calibrate import format_calibration

# Every test here reads one calibration run: the module is in the slow tier.
pytestmark = pytest.mark.slow

N, FIRST = 512, 256
BASE = "golden-idler-steady"  # 168h window, share 0.2, steady: outside the grid below
# Under runset "all" with share 0 the 24h and 168h windows bill alike, but their
# months differ in outputs the figures do not show (capacity_tokens, idle_burn).
GRID = {"window.hours": [24.0, 168.0], "eviction.share": [0.0], "runset": ["all"]}


@pytest.fixture(scope="module")
def result():
    return cal.calibrate(presets.get(BASE), GRID, n=N, first=FIRST, progress=False)


@pytest.fixture(scope="module")
def text(result):
    return format_calibration(BASE, result)


def test_names_are_printed_in_full(result, text):
    assert "…" not in text
    cur = result.table.loc[result.current, "names"].split("; ")[0]
    assert cur.startswith("current (") and len(cur) > 34
    inner = cur[len("current ("):-1]
    assert inner in text


def test_long_names_widen_the_column(result):
    t = result.table.copy()
    long = "a setting with a very long name, " * 3 + "end"
    t.loc[result.best, "names"] = long + "; other one"
    text = format_calibration(BASE, dataclasses.replace(result, table=t))
    assert "…" not in text
    rec = next(ln for ln in text.splitlines() if ln.startswith("recommended"))
    assert long + " (+1 identical)" in rec
    head = next(ln for ln in text.splitlines() if "bill $ [95% CI]" in ln)
    # the figures start under their heading
    bill = re.search(r"\d[\d,]* \[", rec[14 + len(long):]).start() + 14 + len(long)
    assert head.index("bill $") == bill


def test_current_is_said_once(result, text):
    assert "current current" not in text
    line = next(ln for ln in text.splitlines() if ln.startswith("current "))
    assert line.split()[1:4] == ["168h", "window,", "share"]


def test_counts_in_the_right_number(result, text):
    assert not re.search(r"\b1 (rows|settings)\b", text)
    assert not re.search(r"\b([02-9]|\d\d+) (row|setting)(?![\w-])", text)
    n = int(result.table["pareto"].sum())
    assert f"capacity limit met): {n} row{'s' if n != 1 else ''}" in text
    one = dataclasses.replace(result, table=result.table.assign(pareto=result.table.index == result.best))
    assert "capacity limit met): 1 row\n" in format_calibration(BASE, one) + "\n"


def test_same_figures_are_not_repeated_as_runners_up(result, text):
    t = result.table
    best = t.loc[result.best]
    same = [i for i in t.index if i != result.best and t.loc[i, "feasible"] and t.loc[i, "status"] == "finished"
            and t.loc[i, "bill"] == best["bill"] and t.loc[i, "p_wrong_eviction"] == best["p_wrong_eviction"]
            and t.loc[i, "p_capacity_fail"] == best["p_capacity_fail"]
            and round(t.loc[i, "convergence"], 3) == round(best["convergence"], 3)]
    assert same, "the grid should give a setting that prints as the recommendation"
    # They are separate rows because their outputs differ bit for bit somewhere.
    assert all(t.loc[i, "names"] != best["names"] for i in same)
    assert "runner-up" not in text
    k = int(t.loc[same, "settings"].sum())
    assert f"({k} more setting{'s' if k != 1 else ''} with the same figures: " in text
    for i in same:
        assert t.loc[i, "names"] in text
