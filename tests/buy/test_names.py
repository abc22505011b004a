"""One set of names: the buying catalogue (SPEC §4) and the serving catalogue
(SPEC §5: mc card, pool entries) take each other's names for the same model or
GPU, and buying prices take the pool entry's names (price_month, price_hour)."""

import json

import pytest

from mc import ParamError
from mc.buy import catalogue as C
from mc.buy import plan as P
from mc.cli import main
from mc.fleet.pool import slo_card
from mc.serving import catalogue as S


def test_each_buying_name_is_a_serving_name_of_the_same_part():
    for chip in C.CHIPS.values():
        assert S.gpu(chip.name).name == chip.serving
        assert C.chip_name(chip.serving) == chip.name
    for model in C.MODELS.values():
        assert S.model(model.name).name == model.serving
        assert C.model_name(model.serving) == model.name


@pytest.mark.parametrize("given, chip", [("h100-sxm", "h100"), ("H100", "h100"), ("a100", "a100-used"),
                                         ("a100-80gb", "a100-used"), ("hgx-b200", "b200")])
def test_serving_gpu_names_are_buying_chips(given, chip):
    a = P.Procurement(model="8b", owned={given: 10})
    b = P.Procurement(model="chat-8b", owned={chip: 10})
    assert a.to_dict() == b.to_dict()


@pytest.mark.parametrize("kw, message", [
    (dict(owned={"h200": 3}), "owned.chip='h200': must be one of h100, b200, a100-used (or another name of the "
                              "same one: a100, a100-80gb, h100-sxm, hgx-b200)"),
    (dict(model="mistral-7b"), "model='mistral-7b': must be one of chat-8b, premium-70b (or another name of the "
                               "same one: 70b, 8b)"),
    (dict(owned={"h100": 1, "h100-sxm": 2}), "owned.h100-sxm=2: names chip h100 a second time"),
])
def test_names_outside_the_buying_catalogue_list_the_known_ones(kw, message):
    with pytest.raises(ParamError) as exc:
        P.Procurement(**kw)
    assert message in str(exc.value) and "\n" not in str(exc.value)


def test_buying_prices_take_the_pool_entry_names():
    hour = P.Procurement.from_dict({"price_hour": {"a100": 2.5}})
    assert hour.prices == (2100.0, 2900.0, 2.5 * 730)
    assert P.Procurement.from_dict({"price_month": {"h100": 3000}}).prices == (3000.0, 2900.0, 1400.0)
    with pytest.raises(ParamError, match=r"^prices=\{'h100': 3000\}: is the older name of price_month: write "
                       "price_month instead$"):
        P.Procurement.from_dict({"prices": {"h100": 3000}})
    assert hour.to_dict()["price_month"] == {"h100": 2100.0, "b200": 2900.0, "a100-used": 1825.0}
    assert P.Procurement.from_dict(hour.to_dict()).prices == hour.prices
    with pytest.raises(ParamError, match="give one table of prices: price_month"):
        P.Procurement.from_dict({"price_hour": {"h100": 2.5}, "price_month": {"h100": 2000}})
    with pytest.raises(ParamError, match=r"price_hour.h100=-1"):
        P.Procurement.from_dict({"price_hour": {"h100": -1}})


def test_cards_take_the_buying_names(capsys):
    argv = ["--batch", "8", "--json", "--no-slo"]
    assert main(["card", "--model", "chat-8b", "--gpu", "a100-used", *argv]) == 0
    a = json.loads(capsys.readouterr().out)
    assert main(["card", "--model", "8b", "--gpu", "a100-80gb", *argv]) == 0
    b = json.loads(capsys.readouterr().out)
    a["provenance"].pop("created"), b["provenance"].pop("created")  # when each ran
    assert a == b


def test_buy_file_with_serving_names_and_hourly_prices(tmp_path, capsys):
    path = tmp_path / "b.toml"
    path.write_text('model = "8b"\nforecast_tokens = 1e12\nowned = {h100-sxm = 30}\nprice_hour = {h100-sxm = 2.5}\n')
    assert main(["buy", str(path), "--n", "50", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["owned"]["h100"] == 30 and out["provenance"]["scenario"]["price_month"]["h100"] == 1825.0
    path.write_text('model = "8b"\nowned = {h200 = 30}\n')
    assert main(["buy", str(path), "--n", "50"]) == 2
    err = capsys.readouterr().err
    assert "owned.chip='h200'" in err and err.count("\n") == 1


def test_an_slo_entry_takes_price_hour_or_price_month_but_not_both():
    base = {"rated_from": "slo", "model": "8b", "gpu": "h100", "slo_ttft": 0.3}
    with pytest.raises(ParamError, match="needs exactly one price: price_month"):
        slo_card({**base, "price_month": 2600, "price_hour": 3.5})
    with pytest.raises(ParamError, match="needs exactly one price"):
        slo_card(base)
