"""``mc bench``: fleet-months per second of the engine and of vectorized NumPy."""

from __future__ import annotations

from .. import _validate as v
from ..studies import bench
from .. import files
from ..studies.benchreport import (format_bench, format_bench_autoscaler, format_bench_latency, format_bench_pool,
                                   format_bench_replicas, format_bench_structure)
from ._common import print_json


def run(args) -> int:
    args.chunks_given = args.chunks is not None
    chunks = [v.count("chunk", c, lo=1, hi=2**24) for c in (args.chunks or [512, 1024, 4096, 16384])]
    seconds = v.number("seconds", args.seconds, lo=0.0, lo_open=True, hi=3600)
    if args.pool is not None:
        pools = _sizes(args.pool)
        r = bench.pool_curve(pools, seconds=seconds, devices=args.devices,
                             chunk=chunks[0] if args.chunks_given else None)
        print_json(r) if args.json else print(format_bench_pool(r))
        return 0
    if args.latency:
        log = None if args.log is None else files.read_request_log(args.log)
        r = bench.latency(log, chunk=chunks[0] if args.chunks_given else None)
        print_json(r) if args.json else print(format_bench_latency(r))
        return 0
    if args.log is not None:
        v.fail("log", args.log, "is the request log --latency times: give --latency too")
    if args.structure:
        r = bench.structure(chunk=chunks[0] if args.chunks_given else 256, seconds=seconds, devices=args.devices)
        print_json(r) if args.json else print(format_bench_structure(r))
        return 0
    if args.replicas:
        r = bench.replicas(chunk=chunks[0] if args.chunks_given else 256, seconds=seconds, devices=args.devices)
        print_json(r) if args.json else print(format_bench_replicas(r))
        return 0
    if args.autoscaler:
        r = bench.autoscaler(chunk=chunks[0], seconds=seconds, devices=args.devices)
        print_json(r) if args.json else print(format_bench_autoscaler(r))
        return 0
    r = bench.run(chunks=chunks, seconds=seconds, devices=args.devices,
                  numpy_batches=[v.count("numpy-batch", b, lo=1, hi=2**20) for b in args.numpy_batches])
    print_json(r) if args.json else print(format_bench(r))
    return 0


def _sizes(text: str) -> list[int]:
    """``--pool 8,32,128``: each item a whole count of cards (an empty list or item refused)."""
    out = []
    for item in v.items("--pool", text, "8,32,128"):
        try:
            out.append(int(item))
        except ValueError:
            v.fail("--pool", text, f"must be comma-separated card counts, e.g. 8,32,128; {item!r} is not a whole number")
        v.count("--pool", out[-1], lo=1, hi=1 << 16)
    return out


def register(sub) -> None:
    p = sub.add_parser("bench", help="fleet-months per second: the engine against vectorized NumPy",
                       description="Time the standard month (golden-idler-steady, dips on, hourly "
                       "capacity) on the current backend at several chunk sizes, and a vectorized "
                       "NumPy implementation of the same month in the same run.")
    p.add_argument("--chunks", type=int, nargs="+", default=None,
                   help="engine chunk sizes, months per step (default 512 1024 4096 16384)")
    p.add_argument("--numpy-batches", type=int, nargs="+", default=[1024, 4096],
                   help="NumPy batch sizes (default 1024 4096)")
    p.add_argument("--seconds", type=float, default=3.0, help="time per measurement (default 3)")
    p.add_argument("--devices", type=int, default=None, help="use the first N local devices (default: all)")
    p.add_argument("--structure", action="store_true",
                   help="time the standard month and the autoscaler's with wander and swing on (docs/model.md "
                   "§1.4.1) against each with them off, at the first chunk size (default 256)")
    p.add_argument("--replicas", action="store_true",
                   help="time the standard month and the autoscaler's with their cards as replicas of 2, 4 and 8 "
                        "(docs/model.md §11) against the same cards one by one, at the first chunk size (default 256)")
    p.add_argument("--autoscaler", action="store_true",
                   help="time the autoscaler's month (docs/model.md §6; lemon-hunter: daily rounds) against the "
                   "same scenario as one decision, at the first chunk size")
    p.add_argument("--pool", default=None, metavar="CARDS,...",
                   help="time the standard month against pool size (flagship cards, demand scaled with the "
                   "pool), e.g. --pool 8,32,128,512,4096; the chunk is the automatic one unless --chunks is given")
    p.add_argument("--latency", action="store_true",
                   help="time one card's queue under Poisson, gamma (cv 4), a log's bootstrap (100 replications "
                   "of 1,000 requests each) and one replay of the whole log, in one run")
    p.add_argument("--log", metavar="FILE", default=None,
                   help="--latency: the request log (default: a synthetic 20,000-request bursty log)")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.set_defaults(func=run)
