"""Pool entries rated at their pool's SLO (``rated_from = "pool-slo"``, SPEC §9)."""

import pytest

from mc._validate import ParamError
from mc.fleet.scenario import pool_from_data

# 8 seats a card: three cards' 24 seats turn over 4 times in 100 requests, and 20 warm-up
# requests leave at most 5% of them to the filling pool (RoutedPool.short_of_seats).
E = dict(model="8b", gpu="h100", batcher="continuous", max_batch=8, slo_ttft=0.5, price_hour=2.5, n=100, warmup=20,
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
    (dict(rated_from="pool-slo", count=4), r"^pool\.8b@h100\.n=100: must be at least 128 measured requests"),
    (dict(rated_from="pool-slo", warmup=10), r"^pool\.8b@h100\.warmup=10: must be at least 19 with n = 100"),
])
def test_bad_pool_slo_entries_are_refused(entry, match):
    with pytest.raises(ParamError, match=match):
        pool_from_data([{**E, "count": 3, **entry}])


def test_mc_run_refuses_a_pool_slo_entry_too_short_for_its_seats(tmp_path, capsys):
    from mc.cli import main

    f = tmp_path / "short.toml"
    f.write_text('runset = "peak"\n[[pool]]\nrated_from = "pool-slo"\nmodel = "8b"\ngpu = "h100"\nmax_batch = 64\n'
                 'slo_ttft = 0.5\nn = 400\nwarmup = 100\nprice_hour = 2.5\ncount = 16\n')
    assert main(["run", str(f), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pool.8b@h100.n=400: must be at least 4,096" in err, err
