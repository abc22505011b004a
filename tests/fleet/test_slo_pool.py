"""A pool entry rated by its SLO (SPEC §7): ``rated_from = "slo"``."""

import pytest

import mc
from mc.files import load_scenario as load
from mc.fleet.pool import slo_card
from mc.serving import latency, slo

QUEUE = dict(model="8b", gpu="h100", batcher="continuous", max_batch=32, answer_mean=64, n=200, warmup=20)
SEARCH = dict(slo_ttft=0.3, share=0.75, replications=8, rel_tol=0.1)


def test_an_slo_entry_is_rated_at_its_slo_tok_s():
    card = slo_card({"rated_from": "slo", "price": 2600, **QUEUE, **SEARCH})
    want = slo.slo_rate(latency.Serving(**QUEUE), **SEARCH)
    assert card.name == "8b@h100" and card.price == 2600.0
    assert card.rated == want.tok_s


def test_a_scenario_runs_on_slo_rated_cards(tmp_path):
    path = tmp_path / "s.toml"
    fields = ", ".join(f"{k} = {v!r}".replace("'", '"') for k, v in {**QUEUE, **SEARCH}.items())
    path.write_text(f'preset = "golden-idler"\npool = [{{rated_from = "slo", name = "honest", price = 2600, '
                    f'count = 40, {fields}}}]\n')
    sc = load(path)
    (cls,) = sc.pool.classes
    assert cls.name == "honest" and sc.pool.size == 40
    assert cls.rated == slo_card({"rated_from": "slo", "price": 2600, **QUEUE, **SEARCH}).rated
    res = mc.simulate(sc, 64)
    assert res.n == 64 and res.summary["stats"]["capacity_tokens"]["mean"] > 0


@pytest.mark.parametrize("entry, match", [
    (dict(rated_from="arithmetic"), "rated_from='arithmetic': must be one of slo"),
    (dict(slo_ttft=None), "needs slo_ttft"),
    (dict(colour="red"), "pool.colour='red': is not a field of an SLO-rated card"),
    (dict(price=-1), "price=-1"),
    (dict(max_batch=0), "max_batch=0"),
])
def test_bad_slo_entries_are_refused(entry, match):
    base = {"rated_from": "slo", "price": 2600, **QUEUE, **SEARCH, **entry}
    base = {k: v for k, v in base.items() if v is not None}
    with pytest.raises(mc.ParamError, match=match):
        slo_card(base)


def test_an_slo_entry_prices_like_a_hardware_entry():
    by_month = slo_card({"rated_from": "slo", "price_month": 1825, **QUEUE, **SEARCH})
    by_hour = slo_card({"rated_from": "slo", "price_hour": 2.5, **QUEUE, **SEARCH})
    assert by_hour.price == pytest.approx(1825.0) and by_hour.rated == by_month.rated
