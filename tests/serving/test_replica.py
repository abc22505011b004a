"""A replica of several cards (SPEC §11) in the serving arithmetic: one card's figures
bit for bit at tp = 1 on every catalogue pair, the replica's against a plain
reference of the formulas, the refusals, and docs/model.md's hand-worked example."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from mc import serving
from mc._validate import ParamError
from mc.serving import catalogue
from mc.serving.arithmetic import ACTIVATION_BYTES, TP_SIZES, allreduce_seconds
from mc.serving.queue import Serving

PAIRS = list(itertools.product(catalogue.MODELS, catalogue.GPUS))
CONFIGS = [dict(weight_bytes_per_param=wb, batch=b, context=ctx, prompt=pr)
           for wb in (2.0, 1.0, 0.5) for b, ctx, pr in ((1, 4096, 1024), (8, 2048, 512), (3, 0, 7))]


def one_card(m, g, weight_bytes_per_param, batch, context, prompt, kv=2.0, mem_util=0.9, prefill_util=0.5):
    """SPEC §5 for one card, written out here (no all-reduce anywhere), or None when
    the weights do not fit or no request is seated."""
    kvt = 2 * m.layers * m.kv_heads * m.head_dim * kv
    w = m.params * weight_bytes_per_param
    usable = mem_util * g.memory
    if w >= usable:
        return None
    seats = None if kvt * context == 0 else max(0, math.floor((usable - w) / (kvt * context)))
    if seats == 0:
        return None
    b = batch if seats is None else min(batch, seats)
    step = (w + b * context * kvt) / g.bandwidth
    return dict(kv_bytes_per_token=kvt, weight_bytes=w, usable_bytes=usable, seats=seats, batch=b, step_s=step,
                per_user_tok_s=1.0 / step, aggregate_tok_s=b / step,
                ttft_s=2 * m.params * prompt / (g.flops * prefill_util))


@pytest.mark.parametrize("model, gpu", PAIRS)
def test_one_card_is_section_5_bit_for_bit(model, gpu):
    m, g = catalogue.model(model), catalogue.gpu(gpu)
    for kw in CONFIGS:
        want = one_card(m, g, **kw)
        if want is None:
            with pytest.raises(ParamError):
                serving.card(model, gpu, **kw)
            continue
        c = serving.card(model, gpu, **kw)
        for k, x in want.items():
            assert getattr(c, k) == x, (kw, k)  # the same bits, not approximately
        assert (c.tp, c.allreduce_step_s, c.allreduce_prefill_s) == (1, 0.0, 0.0)
        assert c.weight_bytes_per_card == c.weight_bytes and c.aggregate_tok_s_per_card == c.aggregate_tok_s
        assert c.tokens_per_dollar(3.0) == c.aggregate_tok_s * 3600 / 3.0


@pytest.mark.parametrize("model, gpu", PAIRS)
def test_one_card_queue_constants_bit_for_bit(model, gpu):
    m, g = catalogue.model(model), catalogue.gpu(gpu)
    if m.params * 2.0 >= 0.9 * g.memory:
        return
    s = Serving(model, gpu, n=20, warmup=2, prompt_max=512, answer_max=256)
    want = {"step_base": m.params * 2.0 / g.bandwidth, "step_kv": 2 * m.layers * m.kv_heads * m.head_dim * 2.0
            / g.bandwidth, "prefill_token": 2 * m.params / (g.flops * 0.5), "step_req": 0.0, "prefill_base": 0.0}
    assert s.constants() == want
    p = s.params(1.0)
    assert p.step_req == 0 and p.prefill_base == 0 and p.tp == 1


def replica(m, g, tp, weight_bytes_per_param, batch, context, prompt, kv=2.0, mem_util=0.9, prefill_util=0.5):
    """SPEC §11's replica, written out here with NumPy, or None where it is refused."""
    kvt = 2 * m.layers * np.ceil(m.kv_heads / tp) * m.head_dim * kv
    w = m.params * weight_bytes_per_param / tp
    usable = mem_util * g.memory
    if w >= usable:
        return None
    seats = None if context == 0 else int(np.floor((usable - w) / (kvt * context)))
    if seats == 0:
        return None
    b = batch if seats is None else min(batch, seats)

    def ar(x):
        return g.link_latency + 2 * (tp - 1) / tp * x / g.link_bandwidth

    step = (w + b * context * kvt) / g.bandwidth + 2 * m.layers * ar(b * m.hidden * 2)
    ttft = 2 * m.params * prompt / (tp * g.flops * prefill_util) + 2 * m.layers * ar(prompt * m.hidden * 2)
    return dict(kv_bytes_per_token=kvt, weight_bytes_per_card=w, seats=seats, batch=b, step_s=step,
                aggregate_tok_s=b / step, aggregate_tok_s_per_card=b / step / tp, ttft_s=ttft)


@pytest.mark.parametrize("model, gpu", PAIRS)
def test_replica_against_the_formulas(model, gpu):
    m, g = catalogue.model(model), catalogue.gpu(gpu)
    for tp, kw in itertools.product(TP_SIZES[1:], CONFIGS):
        want = replica(m, g, tp, **kw)
        if want is None:
            with pytest.raises(ParamError):
                serving.card(model, gpu, tp=tp, **kw)
            continue
        c = serving.card(model, gpu, tp=tp, **kw)
        for k, x in want.items():
            assert getattr(c, k) == (x if x is None else pytest.approx(x, rel=1e-12)), (tp, kw, k)


def test_kv_heads_split_then_replicated():
    m = catalogue.model("llama-3-70b")  # 8 KV heads
    per = [serving.kv_bytes_per_token(m.layers, m.kv_heads, m.head_dim, 2, tp) for tp in TP_SIZES]
    assert per == [327_680, 163_840, 81_920, 40_960, 40_960, 40_960, 40_960]  # one whole head from 8 cards on


def test_allreduce_is_nothing_on_one_card_and_a_ring_on_several():
    assert allreduce_seconds(1e9, 1, 450e9, 5e-6) == 0.0
    # 2 cards: each sends and receives half of 900 MB at 450 GB/s: 5 µs + 2 ms
    assert allreduce_seconds(900e6, 2, 450e9, 5e-6) == pytest.approx(5e-6 + 2e-3, rel=1e-15)
    assert allreduce_seconds(900e6, 8, 450e9, 5e-6) == pytest.approx(5e-6 + 1.75 * 2e-3, rel=1e-15)


def test_catalogue_has_hidden_sizes_and_links_with_sources():
    for m in catalogue.MODELS.values():
        assert m.hidden > 0 and (f"hidden_size={m.hidden}" in m.source or m.source.startswith("generic"))
    for generic, real in (("70b", "llama-3-70b"), ("8b", "llama-3-8b")):
        assert catalogue.model(generic).hidden == catalogue.model(real).hidden
    for g in catalogue.GPUS.values():
        assert g.link_bandwidth > 0 and 0 < g.link_latency < 1e-4 and "typical" in g.link_source
    assert catalogue.gpu("h100").link_bandwidth == 450e9  # NVLink 4: 900 GB/s both directions
    assert ACTIVATION_BYTES == 2


@pytest.mark.parametrize("model, gpu, wb, fewest", [
    ("llama-3-70b", "h100", 2, 2), ("llama-3-70b", "l40s", 2, 4), ("llama-3.1-405b", "h100", 1, 8),
    ("llama-3.1-405b", "h100", 2, 16), ("70b", "h200", 2, 2),
])
def test_too_large_names_the_fewest_cards(model, gpu, wb, fewest):
    with pytest.raises(ParamError) as one:
        serving.card(model, gpu, weight_bytes_per_param=wb)
    assert str(one.value).startswith(f"weight_bytes={wb:g}") and "use fewer bytes per parameter" in str(one.value)
    assert f"--tp {fewest}," in str(one.value) and "\n" not in str(one.value)
    if fewest > 2:
        with pytest.raises(ParamError, match=rf"^tp=2: is too few cards: .* use --tp {fewest},"):
            serving.card(model, gpu, weight_bytes_per_param=wb, tp=2)
    assert serving.card(model, gpu, weight_bytes_per_param=wb, tp=fewest, batch=1, context=0).tp == fewest
    with pytest.raises(ParamError, match=rf"--tp {fewest},"):  # the queue says the same
        Serving(model, gpu, weight_bytes=wb)


@pytest.mark.parametrize("tp, message", [
    (3, "tp=3: must be a power of two"), (12, "tp=12: must be a power of two"), (0, "tp=0: must be an integer in [1, 64]"),
    (128, "tp=128: must be an integer in [1, 64]"), (2.5, "tp=2.5"), ("two", "tp='two'"),
])
def test_bad_tp(tp, message):
    for make in (lambda: serving.card("8b", "h100", tp=tp), lambda: Serving("8b", "h100", tp=tp)):
        with pytest.raises(ParamError) as err:
            make()
        assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_too_large_for_any_replica():
    with pytest.raises(ParamError) as err:
        serving.card("llama-3.1-405b", "l40s", mem_util=0.01, tp=64)
    assert str(err.value).startswith("weight_bytes=2.0: ") and "even of a replica of 64" in str(err.value)
    assert "use fewer bytes per parameter" in str(err.value) and "--tp" not in str(err.value)


def test_hand_worked_example():
    """docs/model.md §11's example: Llama-3-70B in 16-bit on a replica of 4 H100s,
    16 requests of 4,096 tokens of context after 1,024-token prompts, $3 a card-hour;
    each figure as worked there by hand."""
    c = serving.card("llama-3-70b", "h100", tp=4, batch=16, context=4096, prompt=1024)
    assert c.weight_bytes == 141_107_412_992 and c.weight_bytes_per_card == 35_276_853_248
    assert c.usable_bytes == 77_309_411_328
    assert c.kv_bytes_per_token == 81_920  # 2 · 80 · 2 heads · 128 · 2
    assert c.seats == 125  # floor(42,032,558,080 / 335,544,320) = floor(125.26)
    assert c.step_s - c.allreduce_step_s == pytest.approx(12.13300e-3, rel=1e-6)
    assert c.allreduce_step_s == pytest.approx(0.939810e-3, rel=1e-6)
    assert c.step_s == pytest.approx(13.07281e-3, rel=1e-6)
    assert c.per_user_tok_s == pytest.approx(76.4946, rel=1e-6)
    assert c.aggregate_tok_s == pytest.approx(1223.914, rel=1e-6)
    assert c.aggregate_tok_s_per_card == pytest.approx(305.9785, rel=1e-6)
    assert c.ttft_s - c.allreduce_prefill_s == pytest.approx(73.05055e-3, rel=1e-6)
    assert c.allreduce_prefill_s == pytest.approx(9.747849e-3, rel=1e-6)
    assert c.ttft_s == pytest.approx(82.7984e-3, rel=1e-6)
    assert c.tokens_per_dollar(3.0) == pytest.approx(367_174, rel=1e-6)  # at $12 a replica-hour
