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

A model too large for one card is served by a **replica** of ``tp`` cards (tensor
parallel, SPEC §11): each member holds ``1/tp`` of the weights and its share of every
request's KV cache (``ceil(kv_heads/tp)`` KV heads: whole heads, replicated where
``tp`` exceeds the KV heads), every layer all-reduces its activations twice (after
attention and after the MLP) over the cards' link, a ring, and the replica steps as
one. Activations all-reduced are ``ACTIVATION_BYTES = 2`` bytes each (16-bit, as
serving stacks keep them whatever the weights' precision). At ``tp = 1`` no term of
the all-reduce is computed at all, so every figure is the one-card arithmetic's.

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
ACTIVATION_BYTES = 2  # bytes per activation element a replica all-reduces (16-bit)
TP_SIZES = (1, 2, 4, 8, 16, 32, 64)  # cards per replica: powers of two, so KV heads split evenly
# Cards per replica, as ``mc card --tp`` and ``Serving(tp=...)`` take it (a power of two: ``check_tp``).
TP = Field(1, lo=1, hi=TP_SIZES[-1], kind="integer", unit="cards",
           doc="cards per replica (tensor parallel): 1, 2, 4, 8, 16, 32 or 64")

# What ``card`` derives (SPEC §5), each with its kind and units: exact numbers, no
# interval; ``tokens_per_dollar`` needs a price (``Card.tokens_per_dollar``).
OUTPUTS = {"kv_bytes_per_token": Column("float", "bytes"), "weight_bytes": Column("float", "bytes"),
           "usable_bytes": Column("float", "bytes"), "seats": Column("count", "requests"),
           "batch": Column("count", "requests"), "step_s": Column("float", "s"),
           "per_user_tok_s": Column("float", "tok/s"), "aggregate_tok_s": Column("float", "tok/s"),
           "ttft_s": Column("float", "s"), "tokens_per_dollar": Column("float", "tokens/$"),
           "tp": Column("count", "cards"), "weight_bytes_per_card": Column("float", "bytes"),
           "allreduce_step_s": Column("float", "s"), "allreduce_prefill_s": Column("float", "s"),
           "aggregate_tok_s_per_card": Column("float", "tok/s")}

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


def kv_bytes_per_token(layers, kv_heads, head_dim, bytes_per_element, tp=1):
    """Bytes of KV cache one token holds: a K and a V vector per layer per KV head;
    on each member of a replica of ``tp`` cards, ``ceil(kv_heads / tp)`` heads' worth
    (whole heads: where ``tp`` exceeds the KV heads, each member holds one, replicated)."""
    heads = kv_heads if tp == 1 else -(-kv_heads // tp)
    return 2 * layers * heads * head_dim * bytes_per_element


def allreduce_seconds(x_bytes, tp, link_bandwidth, link_latency):
    """Seconds to all-reduce ``x_bytes`` among ``tp`` cards by a ring:
    ``link_latency + 2 · (tp − 1)/tp · x_bytes / link_bandwidth`` (each card sends and
    receives ``2(tp − 1)/tp`` of the data, one direction at ``link_bandwidth``); 0 at
    ``tp = 1``, where nothing is all-reduced."""
    if tp == 1:
        return 0.0 * x_bytes
    return link_latency + 2 * (tp - 1) / tp * x_bytes / link_bandwidth


def smallest_tp(weights, usable) -> int | None:
    """The fewest cards per replica (of ``TP_SIZES``) whose share of ``weights``
    bytes fits below ``usable`` bytes a card; None when not even the largest does."""
    return next((tp for tp in TP_SIZES if weights / tp < usable), None)


def check_tp(field: str, tp) -> int:
    """Cards per replica: an integer in [1, 64] (``TP``) and a power of two, or a
    one-line ``ParamError`` naming ``field`` and the rule it breaks."""
    tp = TP.check(field, tp)
    if tp & (tp - 1):
        v.fail(field, tp, "must be a power of two (1, 2, 4, 8, 16, 32 or 64): a replica splits the weights and "
               "KV heads evenly")
    return tp


def check_fits(model, gpu, weights: float, usable: float, tp: int, wb: float, mem_util: float) -> None:
    """Refuses (one line) a replica of ``tp`` cards whose share of ``weights`` bytes
    is not below ``usable`` bytes a card, naming the fewest cards that hold them
    (``smallest_tp``) or, when not even 64 do, fewer bytes per parameter."""
    if weights / tp < usable:
        return
    there = f"but {gpu.name} has {usable:.4g} usable ({mem_util:g} x {gpu.memory:.4g})"
    k = smallest_tp(weights, usable)
    if k is None:
        v.fail("weight_bytes", wb, f"{model.name} weights take {weights:.4g} bytes, {weights / TP_SIZES[-1]:.4g} on "
               f"each card even of a replica of {TP_SIZES[-1]} (the most), {there}; use fewer bytes per parameter")
    held = f"{model.name} weights take {weights:.4g} bytes" + (
        "" if tp == 1 else f", {weights / tp:.4g} on each card of a replica of {tp},")
    fix = f"--tp {k}, a replica of {k} cards (the fewest that hold them)"
    if tp == 1:
        v.fail("weight_bytes", wb, f"{held} {there}; use fewer bytes per parameter or {fix}")
    v.fail("tp", tp, f"is too few cards: {held} {there}; use {fix}")


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
    identical cards has the same tokens per dollar and ``cards ×`` the tokens; a
    replica's hourly price is ``tp ×`` a card's."""
    return aggregate_tok_s * SECONDS_PER_HOUR / hourly_price


@dataclass(frozen=True)
class Card:
    """One model on one card, or on a replica of ``tp`` cards: the inputs (canonical
    names) and what follows from them. Rates and times are the replica's (one card's
    at ``tp = 1``); memory figures are per card unless named otherwise."""

    model: str
    gpu: str
    weight_bytes_per_param: float
    kv_bytes_per_element: float
    batch_requested: int
    context: int  # tokens of KV cache each seated request holds
    prompt: int  # tokens prefilled before the first output token
    mem_util: float
    prefill_util: float
    kv_bytes_per_token: float  # bytes one token's KV cache takes on each card
    weight_bytes: float  # bytes: the whole model's
    usable_bytes: float  # bytes: mem_util × one card's memory
    seats: int | None  # requests whose KV fits; None = unlimited (context 0)
    batch: int  # requested batch capped by seats
    step_s: float  # s per decode step
    per_user_tok_s: float  # tok/s one request sees: 1 / step
    aggregate_tok_s: float  # tok/s the card (the replica) emits: batch / step
    ttft_s: float  # s to first token: the prompt's prefill
    tp: int = 1  # cards per replica
    weight_bytes_per_card: float = 0.0  # bytes: weight_bytes / tp
    allreduce_step_s: float = 0.0  # s of step_s spent all-reducing (0 at tp = 1)
    allreduce_prefill_s: float = 0.0  # s of ttft_s spent all-reducing (0 at tp = 1)
    aggregate_tok_s_per_card: float = 0.0  # aggregate_tok_s / tp

    def tokens_per_dollar(self, hourly_price: float) -> float:
        """Tokens per dollar at ``hourly_price`` $ per card-hour (a replica costs ``tp ×`` that)."""
        return tokens_per_dollar(self.aggregate_tok_s, self.tp * v.positive("price_per_hour", hourly_price))

    def as_dict(self) -> dict:
        return asdict(self)


def card(model: str, gpu: str, *, weight_bytes_per_param: float = INPUTS["weight_bytes"].default,
         kv_bytes_per_element: float = INPUTS["kv_bytes"].default, batch: int = INPUTS["batch"].default,
         context: int = INPUTS["context"].default, prompt: int = INPUTS["prompt"].default,
         mem_util: float = MEM_UTIL, prefill_util: float = PREFILL_UTIL, tp: int = TP.default) -> Card:
    """Serve ``model`` on one ``gpu`` (catalogue names or aliases), or on a replica of
    ``tp`` such cards (SPEC §11): each holds ``1/tp`` of the weights and of every
    request's KV cache, and each step and prefill adds two all-reduces per layer
    (``allreduce_seconds`` of ``batch`` or prompt tokens × hidden × 2 bytes).

    Defaults: bf16 weights and KV cache (2 bytes), one request holding 4,096 tokens
    of context after a 1,024-token prompt, one card.

    Raises:
        ParamError: unknown names (listing the known), non-positive sizes, ``tp``
        not a power of two in [1, 64], weights whose share does not fit in a card's
        usable memory (naming the fewest cards that hold them), or a context that
        leaves no seat.
    """
    m, g = catalogue.model(model), catalogue.gpu(gpu)
    wb, kb, batch, context, prompt, mem_util, prefill_util = (
        INPUTS[f].check(f, x) for f, x in (("weight_bytes", weight_bytes_per_param), ("kv_bytes", kv_bytes_per_element),
                                           ("batch", batch), ("context", context), ("prompt", prompt),
                                           ("mem_util", mem_util), ("prefill_util", prefill_util)))
    tp = check_tp("tp", tp)

    kv = kv_bytes_per_token(m.layers, m.kv_heads, m.head_dim, kb, tp)
    weights = weight_bytes(m.params, wb)
    usable = mem_util * g.memory
    check_fits(m, g, weights, usable, tp, wb, mem_util)
    held = weights / tp  # each card's share (the whole at tp = 1, exactly)
    n_seats = seats(usable, held, kv, context)
    if n_seats == 0:
        v.fail("context", context, f"leaves no seat: one request's KV cache is {kv * context:.4g} bytes "
               f"({kv:.4g} per token) but only {usable - held:.4g} bytes are free beside the weights"
               + ("" if tp == 1 else f" on each of the replica's {tp} cards"))
    eff = batch if n_seats is None else min(batch, n_seats)
    step = step_seconds(held, eff, context, kv, g.bandwidth)
    ttft = prefill_seconds(m.params, prompt, tp * g.flops, prefill_util)
    ar_step = ar_prefill = 0.0
    if tp > 1:  # two all-reduces per layer of each token's activations
        ar_step = 2 * m.layers * allreduce_seconds(eff * m.hidden * ACTIVATION_BYTES, tp, g.link_bandwidth,
                                                   g.link_latency)
        ar_prefill = 2 * m.layers * allreduce_seconds(prompt * m.hidden * ACTIVATION_BYTES, tp, g.link_bandwidth,
                                                      g.link_latency)
        step, ttft = step + ar_step, ttft + ar_prefill
    return Card(model=m.name, gpu=g.name, weight_bytes_per_param=wb, kv_bytes_per_element=kb,
                batch_requested=batch, context=context, prompt=prompt, mem_util=mem_util,
                prefill_util=prefill_util, kv_bytes_per_token=kv, weight_bytes=weights,
                usable_bytes=usable, seats=n_seats, batch=eff, step_s=step,
                per_user_tok_s=1.0 / step, aggregate_tok_s=eff / step, ttft_s=ttft, tp=tp,
                weight_bytes_per_card=held, allreduce_step_s=ar_step, allreduce_prefill_s=ar_prefill,
                aggregate_tok_s_per_card=eff / step / tp)


def format_card(c: Card, price_per_hour: float | None) -> str:
    """``mc card``'s report: the card's memory, seats, batch, decode step, rates and time
    to first token, and tokens per dollar at ``price_per_hour`` (None: left out); for
    a replica (``tp > 1``), ``format_replica``."""
    if c.tp > 1:
        return format_replica(c, price_per_hour)
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


def format_replica(c: Card, price_per_hour: float | None) -> str:
    """``mc card --tp K``'s report: the replica's figures and, beside them, one card's
    (memory, weights and KV cache it holds, its share of the tokens and of the price);
    seats, the step, the per-user rate and the time to first token are the replica's,
    which its cards share."""
    g = catalogue.gpu(c.gpu)
    m = catalogue.model(c.model)
    k = c.tp
    heads = -(-m.kv_heads // k)
    seated = "unlimited (no KV cache at context 0)" if c.seats is None else f"{c.seats:,}"
    capped = "" if c.batch == c.batch_requested else f" (requested {c.batch_requested:,}, capped by seats)"

    def row(label: str, replica: str, card: str = "") -> str:
        return f"{label:16s} {replica:24s} {card}".rstrip()

    lines = [
        f"{c.model} on a replica of {k} x {c.gpu} (tensor parallel): {c.weight_bytes_per_param:g}-byte weights, "
        f"{c.kv_bytes_per_element:g}-byte KV cache",
        row("", "replica", "per card"),
        row("usable memory", f"{k * c.usable_bytes / 1e9:,.1f} GB", f"{c.usable_bytes / 1e9:,.1f} GB ({c.mem_util:g} x "
            f"{g.memory / 1e9:,.1f} GB)"),
        row("weights", f"{c.weight_bytes / 1e9:,.1f} GB", f"{c.weight_bytes_per_card / 1e9:,.2f} GB"),
        row("KV per token", f"{k * c.kv_bytes_per_token:,.0f} bytes", f"{c.kv_bytes_per_token:,.0f} bytes "
            f"({heads} of {m.kv_heads} KV heads{', replicated' if heads * k > m.kv_heads else ''})"),
        row("seats", f"{seated} at {c.context:,} tokens of context"),
        row("batch", f"{c.batch:,}{capped}"),
        row("decode step", f"{c.step_s * 1e3:,.2f} ms", f"(all-reduce {c.allreduce_step_s * 1e3:,.3f} ms of it; "
            "the cards step together)"),
        row("per-user", f"{c.per_user_tok_s:,.2f} tok/s"),
        row("aggregate", f"{c.aggregate_tok_s:,.1f} tok/s", f"{c.aggregate_tok_s_per_card:,.1f} tok/s"),
        row("time to first", f"{c.ttft_s:,.3f} s", f"({c.prompt:,}-token prompt at {c.prefill_util:g} of "
            f"{k} x {g.flops / 1e12:,.0f} TFLOP/s; all-reduce {c.allreduce_prefill_s * 1e3:,.2f} ms of it)"),
    ]
    if price_per_hour is not None:
        lines.append(row("price", f"${k * price_per_hour:g}/hour", f"${price_per_hour:g}/hour"))
        tpd = f"{c.tokens_per_dollar(price_per_hour):,.0f}"
        lines.append(row("tokens per $", tpd, tpd))
    return "\n".join(lines)
