"""``mc card``: what one GPU, or a replica of several (``--tp``), serves of one model (SPEC §5, §11)."""

from __future__ import annotations

from .. import _validate as v
from .. import serving
from ..serving import catalogue, slo
from ..serving.arithmetic import format_card
from ..studies import figures, manifest
from ._common import print_json

# The card's inputs, as the provenance's scenario (the rest of the JSON is derived from them).
INPUTS = ("model", "gpu", "weight_bytes_per_param", "kv_bytes_per_element", "batch_requested", "context", "prompt",
          "mem_util", "prefill_util", "price_hour", "tp")


def run(args) -> int:
    if args.price_hour is not None:  # with the card's own fields, before anything is printed
        v.positive("price-hour", args.price_hour)
    if not args.no_slo:
        slo.check_slo(args.slo_ttft)
    c = serving.card(args.model, args.gpu, weight_bytes_per_param=args.weight_bytes,
                     kv_bytes_per_element=args.kv_bytes, batch=args.batch, context=args.context,
                     prompt=args.prompt, mem_util=args.mem_util, prefill_util=args.prefill_util, tp=args.tp)
    if c.seats is not None and c.batch_requested > c.seats:  # refused, as a pool entry refuses it
        v.fail("batch", c.batch_requested, f"does not fit: {c.gpu} seats {c.seats} requests of "
               f"{c.context:,} tokens of context for {c.model}; use batch <= {c.seats} or a shorter context")
    rated = None if args.no_slo else slo.card_rating(c, args.slo_ttft)
    if args.json:
        out = c.as_dict()
        if rated is not None:
            out["slo_rated"] = rated
        if args.price_hour is not None:
            out["tokens_per_dollar"] = c.tokens_per_dollar(args.price_hour)
            out["price_hour"] = args.price_hour
            if c.tp > 1:
                out["price_hour_replica"] = c.tp * args.price_hour
        out["figures"] = figures.of_values(out, figures.column_units(serving.arithmetic.OUTPUTS))
        out["provenance"] = manifest.provenance(scenario={k: out[k] for k in INPUTS if k in out}, backend=False)
        print_json(out)
    else:
        print(format_card(c, args.price_hour))
        if rated is not None:
            print(slo.format_card_rating(rated))
    return 0


def register(sub) -> None:
    models = ", ".join(catalogue.MODELS)
    gpus = ", ".join(list(catalogue.GPUS) + list(catalogue.GPU_ALIASES))
    p = sub.add_parser("card", help="serving arithmetic: tok/s of one model on one GPU (or a replica of several)",
                       description="Per-user and aggregate tok/s, seats, KV bytes per token and time "
                       "to first token of one model on one GPU, from memory bandwidth and FLOP/s "
                       f"(docs/model.md §5). Usable memory is {serving.MEM_UTIL:g} of the card's; prefill runs "
                       f"at {serving.PREFILL_UTIL:g} of peak bf16. With --tp K, a replica of K cards (tensor "
                       "parallel, docs/model.md §11): each holds 1/K of the weights and of the KV cache, and "
                       "every layer all-reduces its activations over the cards' link; the replica's figures "
                       "are printed with one card's beside them.")
    p.add_argument("--model", required=True, help=f"model ({models})")
    p.add_argument("--gpu", required=True, help=f"GPU ({gpus})")
    p.add_argument("--weight-bytes", type=float, default=2.0, help="bytes per parameter (default 2, bf16)")
    p.add_argument("--kv-bytes", type=float, default=2.0, help="bytes per KV element (default 2, bf16)")
    p.add_argument("--batch", type=int, default=1, help="concurrent requests, at most the seats (default 1)")
    p.add_argument("--context", type=int, default=4096, help="KV tokens each request holds (default 4096)")
    p.add_argument("--prompt", type=int, default=1024, help="prompt tokens prefilled (default 1024)")
    p.add_argument("--mem-util", type=float, default=serving.MEM_UTIL,
                   help=f"usable fraction of memory (default {serving.MEM_UTIL:g})")
    p.add_argument("--prefill-util", type=float, default=serving.PREFILL_UTIL,
                   help=f"fraction of peak FLOP/s prefill reaches (default {serving.PREFILL_UTIL:g})")
    p.add_argument("--tp", type=int, default=1, metavar="K",
                   help="cards per replica (tensor parallel): 1, 2, 4, 8, 16, 32 or 64 (default 1: one card)")
    p.add_argument("--price-hour", type=float, default=None,
                   help="$ per card-hour, to add tokens per dollar (a replica costs K times that)")
    p.add_argument("--slo-ttft", type=float, default=0.5, metavar="S",
                   help="also rate the card at a latency SLO: the highest Poisson rate whose p95 time to first "
                   "token is at most S seconds, under a continuous batcher of --batch, times the answer tokens "
                   "(default 0.5)")
    p.add_argument("--no-slo", action="store_true", help="skip the SLO rating (the arithmetic alone, instant)")
    p.add_argument("--json", action="store_true", help="print a JSON object")
    p.set_defaults(func=run)
