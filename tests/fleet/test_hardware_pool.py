"""Pool entries that name real hardware: a catalogue GPU serving a catalogue model
at a batch (SPEC §5), priced by the hour or the month."""

import pytest

import mc
from mc import ParamError
from mc.fleet.scenario import pool_from_data
from mc.units import HOURS


def test_a_gpu_entry_is_rated_by_the_serving_arithmetic():
    pool = pool_from_data([{"gpu": "h100", "model": "llama-3-8b", "batch": 64, "context": 2048, "count": 64,
                            "price_hour": 2.5}])
    (card, count), = pool.groups
    served = mc.serving.card("llama-3-8b", "h100", batch=64, context=2048)
    assert count == 64 and card.name == "llama-3-8b@h100"
    assert card.rated == pytest.approx(served.aggregate_tok_s) and card.price == pytest.approx(2.5 * HOURS)


@pytest.mark.parametrize("entry", [{"card": "flagship", "price_hour": 3.0}, {"name": "x", "rated": 7000.0,
                                                                               "price_month": 2190.0}])
def test_prices_by_the_hour_or_the_month(entry):
    (card, _), = pool_from_data([{**entry, "count": 4}]).groups
    assert card.price == pytest.approx(2190.0)


def test_the_older_price_name_still_reads_as_per_month():
    (card, _), = pool_from_data([{"name": "x", "rated": 7000.0, "price_month": 2600.0, "count": 4}]).groups
    assert card.price == 2600.0


BAD = [
    ({"gpu": "h100", "model": "llama-3-8b", "batch": 640, "context": 8192, "price_hour": 2.5}, "seats 57"),
    ({"gpu": "tpu", "model": "llama-3-8b", "batch": 64, "price_hour": 2.5}, "gpu='tpu': must be one of"),
    ({"gpu": "h100", "model": "gpt9", "batch": 64, "price_hour": 2.5}, "model='gpt9': must be one of"),
    ({"gpu": "h100", "model": "llama-3-8b", "batch": 64, "price_hour": 2.5, "price_month": 1800}, "exactly one price"),
    ({"gpu": "h100", "model": "llama-3-8b", "batch": 64}, "exactly one price"),
    ({"gpu": "h100", "model": "llama-3-8b", "price_hour": 2.5}, "needs batch"),
    ({"gpu": "h100", "model": "llama-3-8b", "batch": 64, "price_hour": 2.5, "colour": "red"}, "pool.colour"),
    ({"gpu": "h100", "model": "llama-3-8b", "batch": 64, "price_hour": -1}, "price_hour=-1"),
    ({"gpu": "h100", "model": "llama-3-8b", "batch": 64, "price_hour": 2.5, "tp": 3}, "power of two"),
    ({"gpu": "h100", "model": "llama-3-8b", "batch": 64, "price_hour": 2.5, "tp": 8},
     r"pool.llama-3-8b@h100.count=4: must be a multiple of tp = 8"),
    ({"gpu": "h100", "model": "llama-3-8b", "rated_from": "slo", "slo_ttft": 0.5, "price_hour": 2.5, "tp": 8},
     r"pool.llama-3-8b@h100.count=4: must be a multiple of tp = 8"),
    ({"name": "x", "rated": 7000.0}, "exactly one price"),
    ({"rated": 7000.0, "price_month": 10.0}, "a custom card needs"),
]


@pytest.mark.parametrize("entry,match", BAD, ids=[m for _, m in BAD])
def test_bad_hardware_entries_are_one_line(entry, match):
    with pytest.raises(ParamError, match=match) as err:
        pool_from_data([{**entry, "count": 4}])
    assert "\n" not in str(err.value)


def test_from_serving_needs_the_batch():
    with pytest.raises(TypeError):
        mc.CardClass.from_serving("8b", "h100", 2100.0)
    with pytest.raises(ParamError, match="seats"):
        mc.CardClass.from_serving("70b", "h100", 2100.0, batch=500, context=8192, weight_bytes_per_param=1)
