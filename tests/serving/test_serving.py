"""Serving arithmetic (SPEC §5): every formula against hand-computed values."""

from __future__ import annotations

import json

import pytest

from mc import serving
from mc.serving import catalogue
from mc._validate import ParamError
from mc.cli import main

GIB = 2**30


@pytest.mark.parametrize("model, bytes_, want", [
    # 2 (K and V) · 80 layers · 8 KV heads · 128 head dim · 2 bytes = 327,680 bytes
    ("llama-3-70b", 2, 327_680),
    # 2 · 80 · 8 · 128 · 1 = 163,840 bytes (8-bit KV cache)
    ("70b", 1, 163_840),
    # 2 · 32 · 8 · 128 · 2 = 131,072 bytes
    ("llama-3-8b", 2, 131_072),
])
def test_kv_bytes_per_token(model, bytes_, want):
    m = catalogue.model(model)
    assert serving.kv_bytes_per_token(m.layers, m.kv_heads, m.head_dim, bytes_) == want


@pytest.mark.parametrize("params, bytes_, want", [
    (70e9, 1, 70e9),  # 70B in 8-bit: 70 GB
    (70e9, 2, 140e9),  # in bf16: 140 GB
    (8_030_261_248, 0.5, 4_015_130_624),  # Llama-3-8B in 4-bit
])
def test_weight_bytes(params, bytes_, want):
    assert serving.weight_bytes(params, bytes_) == want


def test_seats():
    # usable 0.9 · 80 GiB = 77,309,411,328; minus 70e9 of weights = 7,309,411,328 free;
    # one 4,096-token request at 327,680 bytes/token holds 1,342,177,280 bytes;
    # 7,309,411,328 / 1,342,177,280 = 5.446 → 5 seats.
    assert serving.seats(0.9 * 80 * GIB, 70e9, 327_680, 4096) == 5
    assert serving.seats(100.0, 40.0, 2.0, 10) == 3  # 60 / 20 = 3 exactly
    assert serving.seats(100.0, 90.0, 2.0, 10) == 0  # 10 / 20 = 0.5 → 0
    assert serving.seats(100.0, 40.0, 2.0, 0) is None  # no KV cache, no seat limit


def test_prefill_seconds():
    # 2 · 70e9 · 1,000 tokens / (989e12 · 0.5) = 1.4e14 / 4.945e14 = 0.28311 s
    assert serving.prefill_seconds(70e9, 1000, 989e12, 0.5) == pytest.approx(1.4e14 / 4.945e14, rel=1e-12)


def test_step_seconds():
    # weights only: 70e9 / 3.35e12 = 0.0208955 s
    assert serving.step_seconds(70e9, 16, 0, 163_840, 3.35e12) == pytest.approx(70e9 / 3.35e12, rel=1e-12)
    # 16 requests × 2,048 tokens × 163,840 bytes = 5,368,709,120 bytes of KV read per step
    # (70e9 + 5.368709120e9) / 3.35e12 = 0.0225011 s
    assert serving.step_seconds(70e9, 16, 2048, 163_840, 3.35e12) == \
        pytest.approx(75_368_709_120 / 3.35e12, rel=1e-12)


def test_tokens_per_dollar():
    # 765.714 tok/s · 3,600 s / $2.50 = 1,102,628.6 tokens per dollar
    assert serving.tokens_per_dollar(765.714, 2.5) == pytest.approx(765.714 * 3600 / 2.5, rel=1e-12)


def test_worked_example():
    """SPEC §5: a 70B model in 8-bit on one H100 (3.35 TB/s), weights only: one user
    gets 3.35e12 / 70e9 = 47.857 tok/s; a batch of 16 gives 16 × that in aggregate."""
    one = serving.card("70b", "h100", weight_bytes_per_param=1, batch=1, context=0)
    many = serving.card("70b", "h100", weight_bytes_per_param=1, batch=16, context=0)
    assert one.per_user_tok_s == pytest.approx(3.35e12 / 70e9, rel=1e-12)
    assert round(one.per_user_tok_s) == 48
    assert many.per_user_tok_s == pytest.approx(one.per_user_tok_s, rel=1e-12)
    assert many.aggregate_tok_s == pytest.approx(16 * one.per_user_tok_s, rel=1e-12)  # 765.7
    assert many.seats is None and many.batch == 16


def test_context_erodes_per_user_rate():
    """KV reads grow with context: per-user tok/s falls monotonically, and the
    batch is capped by seats once the caches fill memory."""
    cards = [serving.card("70b", "h100", weight_bytes_per_param=1, kv_bytes_per_element=1,
                          batch=16, context=c) for c in (0, 512, 1024, 2048, 4096)]
    rates = [c.per_user_tok_s for c in cards]
    assert rates == sorted(rates, reverse=True) and rates[0] > rates[-1]
    # context 1,024: 16 × 1,024 × 163,840 = 2,684,354,560 bytes of KV;
    # 3.35e12 / (70e9 + 2.68435456e9) = 46.09 tok/s per user, 737.4 aggregate
    assert cards[2].per_user_tok_s == pytest.approx(3.35e12 / 72_684_354_560, rel=1e-12)
    # context 4,096: free 7,309,411,328 / (4,096 × 163,840 = 671,088,640) = 10.9 → 10 seats
    assert cards[4].seats == 10 and cards[4].batch == 10
    assert cards[4].aggregate_tok_s == pytest.approx(10 * 3.35e12 / (70e9 + 10 * 671_088_640), rel=1e-12)


def test_ttft_is_prefill():
    # 2 · 8e9 · 2,000 / (2.25e15 · 0.5) = 3.2e13 / 1.125e15 = 0.028444 s on a B200
    c = serving.card("8b", "b200", prompt=2000, context=4096)
    assert c.ttft_s == pytest.approx(3.2e13 / 1.125e15, rel=1e-12)


@pytest.mark.parametrize("alias, name", [("h100", "h100-sxm"), ("H100", "h100-sxm"), ("a100", "a100-80gb"),
                                         ("h200", "h200"), ("b200", "b200")])
def test_gpu_aliases(alias, name):
    assert catalogue.gpu(alias).name == name


def test_catalogue_entries_have_sources():
    for entry in list(catalogue.MODELS.values()) + list(catalogue.GPUS.values()):
        assert entry.source
    assert catalogue.model("70b").params == 70e9 and catalogue.model("8b").params == 8e9
    for generic, real in (("70b", "llama-3-70b"), ("8b", "llama-3-8b")):
        g, r = catalogue.model(generic), catalogue.model(real)
        assert (g.layers, g.kv_heads, g.head_dim) == (r.layers, r.kv_heads, r.head_dim)


def test_card_class():
    from mc.fleet.pool import CardClass

    cc = CardClass.from_serving("70b", "h100", 2100.0, weight_bytes_per_param=1, batch=16, context=0)
    assert isinstance(cc, CardClass) and cc.name == "70b@h100" and cc.price == 2100.0
    assert cc.rated == pytest.approx(16 * 3.35e12 / 70e9, rel=1e-12)


@pytest.mark.parametrize("kw, message", [
    (dict(model="gpt-9"), "model='gpt-9': must be one of 70b, 8b, chat-8b, llama-3-70b"),
    (dict(gpu="v100"), "gpu='v100': must be one of a100, a100-80gb, a100-used, b200"),
    (dict(batch=0), "batch=0"),
    (dict(weight_bytes_per_param=0), "weight_bytes=0"),
    (dict(weight_bytes_per_param=2), "70b weights take 1.4e+11 bytes but h100-sxm has 7.731e+10 usable"),
    (dict(context=100_000), "context=100000: leaves no seat: one request's KV cache is 1.638e+10 bytes"),
    (dict(context=-1), "context=-1"),
    (dict(mem_util=1.5), "mem_util=1.5"),
])
def test_bad_input(kw, message):
    args = {"model": "70b", "gpu": "h100", "weight_bytes_per_param": 1, "kv_bytes_per_element": 1, **kw}
    with pytest.raises(ParamError) as exc:
        serving.card(args.pop("model"), args.pop("gpu"), **args)
    assert message in str(exc.value) and "\n" not in str(exc.value)


def test_card_class_bad_price():
    with pytest.raises(ParamError, match="price=0"):
        __import__("mc").CardClass.from_serving("8b", "h100", 0, batch=1)


@pytest.mark.slow
def test_cli_worked_example(capsys):
    argv = ["card", "--model", "70b", "--gpu", "h100", "--weight-bytes", "1", "--batch", "16",
            "--context", "0", "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["per_user_tok_s"] == pytest.approx(47.857, rel=1e-4)
    assert out["aggregate_tok_s"] == pytest.approx(16 * 47.857, rel=1e-4)
    assert out["seats"] is None and out["kv_bytes_per_token"] == 327_680 and out["ttft_s"] > 0


@pytest.mark.slow
def test_cli_text(capsys):
    assert main(["card", "--model", "llama-3-8b", "--gpu", "h200", "--batch", "64", "--price-hour", "3"]) == 0
    text = capsys.readouterr().out
    assert "per-user" in text and "aggregate" in text and "tokens per $" in text


@pytest.mark.parametrize("argv, message", [
    (["--model", "gpt-9", "--gpu", "h100"], "must be one of"),
    (["--model", "70b", "--gpu", "h100"], "weight_bytes=2.0"),
    (["--model", "70b", "--gpu", "h100", "--weight-bytes", "1", "--context", "100000"], "leaves no seat"),
    (["--model", "8b", "--gpu", "h100", "--batch", "-3"], "batch=-3"),
])
def test_cli_errors(capsys, argv, message):
    assert main(["card", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
