"""Pool entries rated at their pool's SLO (``rated_from = "pool-slo"``, SPEC §9)."""

import pytest

from mc._validate import ParamError
from mc.fleet.scenario import pool_from_data

E = dict(model="8b", gpu="h100", batcher="continuous", slo_ttft=0.5, price_hour=2.5, n=100, warmup=10,
         replications=4, rel_tol=0.2, answer_mean=32)


def test_one_card_pool_slo_is_the_cards_slo_rating():
    a = pool_from_data([dict(rated_from="slo", count=1, **E)])
    b = pool_from_data([dict(rated_from="pool-slo", count=1, router="random", **E)])
    assert b.classes[0].rated == a.classes[0].rated


def test_a_pool_rating_is_per_card():
    b = pool_from_data([dict(rated_from="pool-slo", count=3, speeds=[1, 1, 0.5], **E)])
    one = pool_from_data([dict(rated_from="slo", count=1, **E)])
    # three cards of 2.5 nominal cards' speed: the per-card rating sits below one full card's
    assert 0.3 * one.classes[0].rated < b.classes[0].rated < 1.2 * one.classes[0].rated


@pytest.mark.parametrize("entry, match", [
    (dict(rated_from="slo", router="random"), "pool.router"),
    (dict(rated_from="pool-slo", router="fastest"), "router='fastest'"),
    (dict(rated_from="pool-slo", speeds=[1, 1]), "speeds"),
])
def test_bad_pool_slo_entries_are_refused(entry, match):
    with pytest.raises(ParamError, match=match):
        pool_from_data([dict(count=3, **E, **entry)])
