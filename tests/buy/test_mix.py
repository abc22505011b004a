"""The mix optimiser: cheapest passing mix, common random numbers, bad input."""

from __future__ import annotations

import pytest

from mc.buy import mix
from mc import buy as P
from mc._validate import ParamError
from mc.fleet.demand import Demand

N = 200
GRID = dict(owned_chips=("b200", "h100"), rent_chips=("b200",), owned_fractions=(0.0, 0.6, 0.9, 1.2),
            rent_fractions=(0.0, 0.3, 0.6))
BASE = P.Procurement(model="chat-8b", forecast_tokens=2e12, sigma=0.15,
                     demand=Demand(shape="diurnal", amplitude=0.3, peak_hour=14.0))


@pytest.fixture(scope="module")
def result():
    return mix.optimise(BASE, target=0.5, n=N, seed=3, **GRID)


def test_candidates_share_one_shape_and_are_distinct():
    plans = mix.candidates(BASE, **GRID)
    assert len({p.slots for p in plans}) == 1
    assert len({(p.owned, p.rented) for p in plans}) == len(plans)
    # 0.6 × (2e12 / 2,628,000 s = 761,035 tok/s) / 24,000 tok/s per B200 = 19.03 → 19 cards
    assert any(p.owned == (0, 19, 0) for p in plans)


def test_best_is_cheapest_passing(result):
    t = result.table
    assert list(t["bill_mean"]) == sorted(t["bill_mean"])
    passing = t[t["pass_all"] >= result.target]
    assert result.best is not None and result.best_row["bill_mean"] == passing["bill_mean"].min()
    assert result.best_row["pass_all"] >= 0.5


@pytest.mark.slow
def test_candidate_figures_equal_simulate(result):
    """Common random numbers: a candidate's months are simulate's months, and the
    padding of its shape does not change them."""
    exact = result.best.replace(slots=None)
    assert sum(exact.slots) < sum(result.best.slots)
    s = P.simulate(exact, N, seed=3).summary
    assert s["stats"]["bill"]["mean"] == pytest.approx(result.best_row["bill_mean"], rel=1e-6)
    assert list(s["pass"]) == list(mix.CHECKS)
    for check in mix.CHECKS:
        assert s["pass"][check]["rate"] == result.best_row[f"pass_{check}"]


def test_target_beyond_every_candidate_gives_no_best(result):
    top = result.table["pass_all"].max()
    assert top < 1.0  # no mix passes every one of these months
    r = mix.optimise(BASE, target=1.0, n=N, seed=3, **GRID)  # same shape: no recompilation
    assert r.best is None and r.best_row is None and len(r.table) == len(result.table)


@pytest.mark.parametrize("kw, message", [
    (dict(target=1.5), "target=1.5"),
    (dict(owned_chips=("tpu",)), "owned_chips='tpu'"),
    (dict(owned_fractions=(-0.5,)), "owned_fractions=-0.5"),
])
def test_bad_input(kw, message):
    with pytest.raises(ParamError, match=message.replace("(", r"\(")):
        mix.optimise(BASE, n=N, **kw)


def test_evaluate_rejects_mixed_shapes():
    with pytest.raises(ParamError, match="plans="):
        mix.evaluate([BASE, BASE.replace(owned={"h100": 3})], N)
