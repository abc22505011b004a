"""The seed verdicts and their fixes as distributions (SPEC §3).

Runs the presets of cards that stay (the seed stories, the autoscaler's, the field
preset: ``STORIES``) with every fleet-month kept and writes, under results/seed_stories/:
``<preset>.parquet`` (one row per fleet-month: bill, convergence, wrong evictions,
shortfall, ...), ``summary.parquet`` (tidy: preset | statistic | mean std p5 p50 p95 |
rate lo hi) and ``manifest.json``. Prints the ``mc presets`` table.
"""

from __future__ import annotations

import sys
import time

import pandas as pd

import _study

COLUMNS = ["bill", "convergence", "n_wrong", "n_evicted", "n_run", "shortfall", "idle_burn",
           "delivered_tokens"]


def stories(presets) -> list[str]:
    """The presets this study tells: every one whose cards stay and run one by one. Those
    with failures or spot cards (SPEC §10) or replicas (§11) cost tens of times more a
    month; ``mc presets`` and ``mc run`` show them."""
    return [n for n in presets.names() if presets.get(n).outages is None and not presets.get(n).by_replica]


def main(argv=None) -> int:
    args = _study.parser("seed_stories", __doc__.splitlines()[0], n=50_000).parse_args(argv)
    from mc.files import atomic_write
    from mc.fleet import presets, simulate
    from mc.studies import manifest
    from mc.studies import sweep as sw
    from mc.studies.presets import preset_row, presets_table
    from tqdm.auto import tqdm

    start = time.perf_counter()
    args.out.mkdir(parents=True, exist_ok=True)
    rows, summaries = [], []
    names = stories(presets)
    for name in tqdm(names, desc="seed_stories", unit="preset", disable=args.quiet or not sys.stderr.isatty()):
        scenario = presets.get(name)
        path = args.out / f"{name}.parquet"
        result = simulate(scenario, args.n, seed=args.seed, chunk=_study.chunk(args.n), keep_samples=True)
        samples = result.samples[COLUMNS].assign(preset=name)
        atomic_write(path, lambda tmp: samples.to_parquet(tmp, index=False))
        rows.append(preset_row(name, result))
        point = sw.Point(0, {"preset": name}, {"preset": name}, scenario, name)
        summaries.append(sw.rows(point, result).drop(columns="point"))
    summary = pd.concat(summaries, ignore_index=True)
    atomic_write(args.out / "summary.parquet", lambda tmp: summary.to_parquet(tmp, index=False))
    config = {"presets": {n: presets.get(n).to_dict() for n in names}, "n": args.n, "seed": args.seed}
    manifest.write(args.out, manifest.build(config, seed=args.seed, n=args.n,
                                            wall_s=round(time.perf_counter() - start, 1)))
    if not args.quiet:
        print(f"{args.n:,} fleet-months per preset, seed {args.seed}\n")
        print(presets_table(rows))
        print(f"\nseed_stories: {time.perf_counter() - start:.0f} s -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
