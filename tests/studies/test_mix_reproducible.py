"""The mix study reproduces: its table does not depend on how the months and the
candidates are chunked, and the figure's frontier (figures/_data.frontier) does not
depend on the order of the table's rows, so mixes tied on their pass rate draw the
same curve whatever order a sort leaves them in (NumPy's quicksort orders ties by
the processor's vector width: AVX2 and AVX-512 drew different tails)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _scripts import load

from mc.buy import mix

# Every test here reads the study run at two chunkings: the module is in the slow tier.
pytestmark = pytest.mark.slow

N = 128
SIGMAS = ("0.05", "0.3")
GRID = dict(owned_chips=("b200", "h100"), rent_chips=("b200",), owned_fractions=(0.0, 0.6, 0.9, 1.1),
            rent_fractions=(0.0, 0.2, 0.4))


@pytest.fixture(scope="module")
def study():
    return load("mix_study")


@pytest.fixture(scope="module")
def data():
    return load("_data", "figures")


def tables(study, month_chunk: int, cand_chunk: int) -> pd.DataFrame:
    """The study's table (its product, one row per sigma x candidate) on a small grid."""
    args = study.parser().parse_args(["--n", str(N), "--sigmas", *SIGMAS])
    saved = mix.MONTH_CHUNK, mix.CAND_CHUNK
    mix.MONTH_CHUNK, mix.CAND_CHUNK = month_chunk, cand_chunk
    try:
        frames = [mix.optimise(study.base(args, s), target=args.target, n=args.n, seed=args.seed, **GRID)
                  .table.assign(sigma=s) for s in args.sigmas]
    finally:
        mix.MONTH_CHUNK, mix.CAND_CHUNK = saved
    return pd.concat(frames, ignore_index=True)


@pytest.fixture(scope="module")
def runs(study):
    return tables(study, mix.MONTH_CHUNK, mix.CAND_CHUNK), tables(study, 48, 5)


def test_table_does_not_depend_on_chunks(runs):
    a, b = runs
    assert mix.MONTH_CHUNK > N and mix.CAND_CHUNK > len(a) // len(SIGMAS)  # one chunk against several
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    assert a["best"].sum() >= 1


def test_frontier_does_not_depend_on_chunks(runs, data):
    a, b = runs
    for s in a["sigma"].unique():
        pd.testing.assert_frame_equal(data.frontier(a[a["sigma"] == s]), data.frontier(b[b["sigma"] == s]),
                                      check_exact=True)


def test_frontier_does_not_depend_on_row_order(runs, data):
    t = runs[0]
    rng = np.random.default_rng(0)
    for s in t["sigma"].unique():
        g = t[t["sigma"] == s]
        assert g["pass_all"].duplicated().any()  # ties to order
        want = data.frontier(g)
        for _ in range(5):
            pd.testing.assert_frame_equal(data.frontier(g.iloc[rng.permutation(len(g))]), want, check_exact=True)
        # Its definition: at each pass rate, the cheapest bill of the mixes passing at least as often.
        p = g["pass_all"].to_numpy()
        assert list(want["pass_all"]) == sorted(set(p), reverse=True)
        assert list(want["bill_mean"]) == [g["bill_mean"][p >= x].min() for x in want["pass_all"]]


def test_the_old_frontier_hung_on_the_order_of_ties(runs, data):
    """Sorted on the pass rate alone, the curve's first point was whichever tied mix
    the sort put first; the frontier's is the cheapest of them."""
    g = runs[0][lambda t: t["sigma"] == 0.05]
    top = g[g["pass_all"] == g["pass_all"].max()]
    assert top["bill_mean"].nunique() > 1
    firsts = {np.minimum.accumulate(h.sort_values("pass_all", ascending=False, kind="stable")["bill_mean"]
                                    .to_numpy())[0] for h in (g, g.iloc[::-1])}
    assert len(firsts) == 2
    assert data.frontier(g)["bill_mean"].iloc[0] == top["bill_mean"].min()
