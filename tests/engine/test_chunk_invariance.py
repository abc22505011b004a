"""Every figure a user sees is the same for any chunk size: quantiles, modes and pass
rates exactly, means and stds to float32 summation rounding of each chunk's sums."""

import pytest

import mc

pytestmark = pytest.mark.slow  # hundreds of one-month chunks

N = 600


@pytest.mark.parametrize("name", mc.presets.names())
def test_summaries_do_not_depend_on_the_chunk(name):
    sc = mc.presets.get(name)
    # One-month chunks, a chunk that divides nothing, and 256 (the automatic chunk of a
    # small run, compiled for the preset tests too) with a partial last chunk.
    runs = {c: mc.simulate(sc, N, seed=5, chunk=c).summary for c in (1, 7, 256)}
    base = runs[256]
    for chunk, s in runs.items():
        assert s["pass"] == base["pass"] and s["modes"] == base["modes"], chunk
        assert s["quantile_error"] == base["quantile_error"], chunk
        for col, st in base["stats"].items():
            for k in ("p5", "p50", "p95"):
                assert s["stats"][col][k] == st[k], (chunk, col, k)
            for k in ("mean", "std"):
                assert s["stats"][col][k] == pytest.approx(st[k], rel=1e-5, abs=1e-9), (chunk, col, k)
