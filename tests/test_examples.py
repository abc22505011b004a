"""Every scenario file the project ships loads and runs (a few months each)."""

import warnings
from pathlib import Path

import pytest

import mc

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.toml"))


@pytest.mark.slow
@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_an_example_scenario_runs(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a short log used as its mean says so
        sc = mc.load_scenario(path)
    res = mc.simulate(sc, 64)
    assert res.n == 64 and res.summary["stats"]["bill"]["mean"] > 0


def test_the_examples_are_found():
    assert {"planner.toml", "real_traffic.toml"} <= {p.name for p in EXAMPLES}
