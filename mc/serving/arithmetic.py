"""Serving arithmetic (SPEC §5): what one card does for one model, from first principles.

Decode is memory-bound: every step reads every weight byte once plus each seated
request's KV cache, so a batch shares the weight read and the aggregate rate grows
with the batch until the KV reads (or the seats) run out.

Two defaults are choices, stated here:
- **usable memory** = ``MEM_UTIL`` × the card's memory, ``MEM_UTIL = 0.90`` — vLLM's
  default ``gpu_memory_utilization``: weights and KV cache get 90%; the rest is the
  CUDA context, activations and fragmentation.
- **prefill utilisation** ``PREFILL_UTIL = 0.5`` of peak dense bf16 FLOP/s — the
  middle of the 40–60% model-FLOPs utilisation usually reported for prefill.

The formula functions take plain numbers (or NumPy arrays); ``card`` validates and
assembles them for a catalogue model on a catalogue GPU.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from .. import _validate as v
from .._fields import Field
from ..engine import Column
from . import catalogue

MEM_UTIL = 0.90
PREFILL_UTIL = 0.5
SECONDS_PER_HOUR = 3600

# What ``card`` derives (SPEC §5), each with its kind and units: exact numbers, no
# interval; ``tokens_per_dollar`` needs a price (``Card.tokens_per_dollar``).
OUTPUTS = {"kv_bytes_per_token": Column("float", "bytes"), "weight_bytes": Column("float", "bytes"),
           "usable_bytes": Column("float", "bytes"), "seats": Column("count", "requests"),
           "batch": Column("count", "requests"), "step_s": Column("float", "s"),
           "per_user_tok_s": Column("float", "tok/s"), "aggregate_tok_s": Column("float", "tok/s"),
           "ttft_s": Column("float", "s"), "tokens_per_dollar": Column("float", "tokens/$")}

# The inputs of one card (SPEC §5), as a pool entry and ``mc card`` name them;
# ``Serving`` declares its memory fields with the same four.
INPUTS = {
    "batch": Field(1, lo=1, hi=1_000_000, kind="integer", unit="requests", doc="concurrent requests"),
    "context": Field(4096, lo=0, hi=100_000_000, kind="integer", unit="tokens", doc="KV cache each request holds"),
    "prompt": Field(1024, lo=0, hi=100_000_000, kind="integer", unit="tokens",
                    doc="prompt prefilled before the first token"),
    "weight_bytes": Field(2.0, lo=0.0, lo_open=True, hi=8.0, unit="bytes per parameter", doc="weight precision"),
    "kv_bytes": Field(2.0, lo=0.0, lo_open=True, hi=8.0, unit="bytes per element", doc="KV cache precision"),
    "mem_util": Field(MEM_UTIL, lo=0.0, lo_open=True, hi=1.0, unit="share", doc="usable share of memory"),
    "prefill_util": Field(PREFILL_UTIL, lo=0.0, lo_open=True, hi=1.0, unit="share",
                          doc="share of peak FLOP/s reached in prefill"),
}


def kv_bytes_per_token(layers, kv_heads, head_dim, bytes_per_element):
    """Bytes of KV cache one token holds: a K and a V vector per layer per KV head."""
    return 2 * layers * kv_heads * head_dim * bytes_per_element


def weight_bytes(params, bytes_per_param):
    """Bytes of weights: parameters × bytes per parameter."""
    return params * bytes_per_param


def seats(usable, weights, kv_per_token, context) -> int | None:
    """Requests of ``context`` tokens whose KV caches fit beside the weights:
    ``floor((usable − weights) / (kv_per_token · context))``. ``None`` (no limit)
    when the context is zero, since then no request holds any cache."""
    per_seat = kv_per_token * context
    if per_seat == 0:
        return None
    return max(0, math.floor((usable - weights) / per_seat))


def prefill_seconds(params, prompt, flops, utilisation):
    """Seconds to prefill a prompt, compute-bound: ``2 · params · prompt / (flops · util)``."""
    return 2 * params * prompt / (flops * utilisation)


def step_seconds(weights, batch, context, kv_per_token, bandwidth):
    """Seconds per decode step: ``(weights + batch · context · kv_per_token) / bandwidth``."""
    return (weights + batch * context * kv_per_token) / bandwidth


def tokens_per_dollar(aggregate_tok_s, hourly_price):
    """Tokens per dollar of a card: ``aggregate · 3600 / hourly price``. A fleet of
    identical cards has the same tokens per dollar and ``cards ×`` the tokens."""
    return aggregate_tok_s * SECONDS_PER_HOUR / hourly_price


@dataclass(frozen=True)
class Card:
    """One model on one card: the inputs (canonical names) and what follows from them."""

    model: str
    gpu: str
    weight_bytes_per_param: float
    kv_bytes_per_element: float
    batch_requested: int
    context: int  # tokens of KV cache each seated request holds
    prompt: int  # tokens prefilled before the first output token
    mem_util: float
    prefill_util: float
    kv_bytes_per_token: float  # bytes
    weight_bytes: float  # bytes
    usable_bytes: float  # bytes: mem_util × memory
    seats: int | None  # requests whose KV fits; None = unlimited (context 0)
    batch: int  # requested batch capped by seats
    step_s: float  # s per decode step
    per_user_tok_s: float  # tok/s one request sees: 1 / step
    aggregate_tok_s: float  # tok/s the card emits: batch / step
    ttft_s: float  # s to first token: the prompt's prefill

    def tokens_per_dollar(self, hourly_price: float) -> float:
        return tokens_per_dollar(self.aggregate_tok_s, v.positive("price_per_hour", hourly_price))

    def as_dict(self) -> dict:
        return asdict(self)


def card(model: str, gpu: str, *, weight_bytes_per_param: float = INPUTS["weight_bytes"].default,
         kv_bytes_per_element: float = INPUTS["kv_bytes"].default, batch: int = INPUTS["batch"].default,
         context: int = INPUTS["context"].default, prompt: int = INPUTS["prompt"].default,
         mem_util: float = MEM_UTIL, prefill_util: float = PREFILL_UTIL) -> Card:
    """Serve ``model`` on one ``gpu`` (catalogue names or aliases).

    Defaults: bf16 weights and KV cache (2 bytes), one request holding 4,096 tokens
    of context after a 1,024-token prompt.

    Raises:
        ParamError: unknown names (listing the known), non-positive sizes, weights
        that do not fit in usable memory, or a context that leaves no seat.
    """
    m, g = catalogue.model(model), catalogue.gpu(gpu)
    wb, kb, batch, context, prompt, mem_util, prefill_util = (
        INPUTS[f].check(f, x) for f, x in (("weight_bytes", weight_bytes_per_param), ("kv_bytes", kv_bytes_per_element),
                                           ("batch", batch), ("context", context), ("prompt", prompt),
                                           ("mem_util", mem_util), ("prefill_util", prefill_util)))

    kv = kv_bytes_per_token(m.layers, m.kv_heads, m.head_dim, kb)
    weights = weight_bytes(m.params, wb)
    usable = mem_util * g.memory
    if weights >= usable:
        v.fail("weight_bytes", wb, f"{m.name} weights take {weights:.4g} bytes but {g.name} has "
               f"{usable:.4g} usable ({mem_util:g} x {g.memory:.4g}); use fewer bytes per parameter")
    n_seats = seats(usable, weights, kv, context)
    if n_seats == 0:
        v.fail("context", context, f"leaves no seat: one request's KV cache is {kv * context:.4g} bytes "
               f"({kv:.4g} per token) but only {usable - weights:.4g} bytes are free beside the weights")
    eff = batch if n_seats is None else min(batch, n_seats)
    step = step_seconds(weights, eff, context, kv, g.bandwidth)
    return Card(model=m.name, gpu=g.name, weight_bytes_per_param=wb, kv_bytes_per_element=kb,
                batch_requested=batch, context=context, prompt=prompt, mem_util=mem_util,
                prefill_util=prefill_util, kv_bytes_per_token=kv, weight_bytes=weights,
                usable_bytes=usable, seats=n_seats, batch=eff, step_s=step,
                per_user_tok_s=1.0 / step, aggregate_tok_s=eff / step,
                ttft_s=prefill_seconds(m.params, prompt, g.flops, prefill_util))


def format_card(c: Card, price_per_hour: float | None) -> str:
    """``mc card``'s report: the card's memory, seats, batch, decode step, rates and time
    to first token, and tokens per dollar at ``price_per_hour`` (None: left out)."""
    g = catalogue.gpu(c.gpu)
    seated = "unlimited (no KV cache at context 0)" if c.seats is None else f"{c.seats:,}"
    capped = "" if c.batch == c.batch_requested else f" (requested {c.batch_requested:,}, capped by seats)"
    lines = [
        f"{c.model} on {c.gpu}: {c.weight_bytes_per_param:g}-byte weights ({c.weight_bytes / 1e9:,.1f} GB), "
        f"{c.kv_bytes_per_element:g}-byte KV cache",
        f"usable memory    {c.usable_bytes / 1e9:,.1f} GB ({c.mem_util:g} x {g.memory / 1e9:,.1f} GB)",
        f"KV per token     {c.kv_bytes_per_token:,.0f} bytes",
        f"seats            {seated} at {c.context:,} tokens of context",
        f"batch            {c.batch:,}{capped}",
        f"decode step      {c.step_s * 1e3:,.2f} ms",
        f"per-user         {c.per_user_tok_s:,.2f} tok/s",
        f"aggregate        {c.aggregate_tok_s:,.1f} tok/s",
        f"time to first    {c.ttft_s:,.3f} s ({c.prompt:,}-token prompt at {c.prefill_util:g} of "
        f"{g.flops / 1e12:,.0f} TFLOP/s)",
    ]
    if price_per_hour is not None:
        lines.append(f"tokens per $     {c.tokens_per_dollar(price_per_hour):,.0f} at ${price_per_hour:g}/hour")
    return "\n".join(lines)
