"""Host summaries: the Wilson interval against published values, pass counts."""

import math

import numpy as np
import pytest

from mc.engine import Z95, describe, mean_figure, mean_half, mean_interval, of_columns, pass_count, wilson


@pytest.mark.parametrize("k, n, lo, hi", [
    # Wilson (1927) score interval at 95%, as tabulated by Newcombe (1998), Table I.
    (81, 263, 0.2553, 0.3662),
    (15, 148, 0.0624, 0.1605),
    (0, 20, 0.0, 0.1611),
    (1, 29, 0.0061, 0.1718),
])
def test_wilson_known_values(k, n, lo, hi):
    got = wilson(k, n)
    assert got[0] == pytest.approx(lo, abs=1e-4) and got[1] == pytest.approx(hi, abs=1e-4)


def test_wilson_edges():
    assert wilson(0, 10)[0] == 0.0 and wilson(10, 10)[1] == 1.0
    assert all(math.isnan(x) for x in wilson(0, 0))
    assert Z95 == pytest.approx(1.959963984540054)


def test_pass_count_and_of_columns():
    assert pass_count(3, 4)["rate"] == 0.75
    cols = {"bill": np.array([1.0, 2.0, 2.0, 9.0]), "pass_x": np.array([True, False, True, True])}
    s = of_columns(cols, modes=("bill",))
    assert s["n"] == 4 and s["stats"]["bill"] == describe(cols["bill"])
    assert s["pass"]["x"]["rate"] == 0.75 and s["modes"]["bill"] == {"value": 2.0, "share": 0.5}


@pytest.mark.slow
def test_quantiles_among_exact_zeros_are_zero():
    import mc

    sc = mc.presets.get("noise-evictor-day")  # most months evict no healthy card: wrong_share is 0
    streamed = mc.simulate(sc, 2000).summary
    exact = mc.simulate(sc, 2000, keep_samples=True).summary
    for col in ("wrong_share", "idle_burn", "shortfall"):
        for q in ("p5", "p50", "p95"):
            if exact["stats"][col][q] == 0.0:
                assert streamed["stats"][col][q] == 0.0, (col, q)
    assert streamed["stats"]["wrong_share"]["p50"] == 0.0


def test_mean_interval_is_the_standard_error_of_the_sample():
    """Z95 · s / sqrt(n) with s the sample sd (n − 1), from a sample, per column,
    and from a population std as mean_figure gives it; none below two months."""
    x = np.array([3.0, 5.0, 4.0, 8.0])
    half = Z95 * x.std(ddof=1) / math.sqrt(4)
    assert mean_interval(x) == pytest.approx((5.0, 5.0 - half, 5.0 + half), rel=1e-15)
    assert mean_half(x.std(), 4) == pytest.approx(half, rel=1e-15)
    f = mean_figure(5.0, float(x.std()), 4)
    assert (f["lo"], f["hi"]) == pytest.approx((5.0 - half, 5.0 + half), rel=1e-15)
    cols = np.stack([x, 2 * x], axis=1)  # (months, columns)
    mean, lo, hi = mean_interval(cols)
    np.testing.assert_allclose(mean, [5.0, 10.0])
    np.testing.assert_allclose(hi - mean, [half, 2 * half], rtol=1e-14)
    np.testing.assert_allclose(mean_half(cols.std(axis=0), np.array([4, 1])), [half, np.nan], rtol=1e-14)
    assert all(math.isnan(v) for v in mean_interval([7.0])[1:])
