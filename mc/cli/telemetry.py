"""``mc telemetry``: synthetic telemetry of a scenario's cards (SPEC §8), and the truth
beside it.

Rows stream to the file as the engine makes them (memory bounded by the chunk),
with a progress bar in cards on a terminal. Ctrl-C stops after the chunk in hand
and writes nothing (exit 130): only a whole run is saved, sealed by its manifest.
"""

from __future__ import annotations

import dataclasses
import math
import sys
import time
from statistics import NormalDist

from .. import _validate as v
from .. import engine, telemetry
from ..fleet.swing import Swing
from ..fleet.wander import Wander
from ..telemetry import columns as cols
from ..telemetry import slots
from ..telemetry.cadence import Cadence
from ..studies import manifest
from ._common import add_progress, load_scenario, print_json, progress_of

SEEDING = "card i uses fold_in(key(seed), i)"


def _check(args) -> tuple:
    """Every input, before anything runs: the scenario, sampling, cards, seed,
    chunk and the output paths (one-line errors naming the flag)."""
    scenario = load_scenario(args.scenario, args.quiet)
    sampling = telemetry.Sampling(args.every, args.hours)
    blocks = telemetry.layout(scenario.pool, args.cards)
    n = sum(count for _, _, count in blocks)
    engine.check_run_args(n, args.seed, args.chunk)
    paths = telemetry.paths(args.out)
    cadence = Cadence(jitter=args.jitter, splay=args.splay, missed=args.missed, outage_rate=args.outages,
                      outage_hours=args.outage_hours, probe=args.probe or 0.0)
    if args.probe is not None:
        slots.check_probe(args.probe)
    wander, swing = _structure(args.structure, scenario)
    return scenario, sampling, blocks, n, paths, cadence, wander, swing


def _structure(text: str | None, scenario) -> tuple[Wander, Swing]:
    """``--structure wander.sd=0.02,swing.diurnal=0.015,...`` over the scenario's own
    (an empty list, a malformed pair or a field given twice refused)."""
    got: dict[str, dict] = {"wander": {}, "swing": {}}
    fields = ("wander.sd, wander.hours, swing.diurnal, swing.hot_hour, swing.start_hour, swing.sd or swing.hours")
    for key, value in v.pairs("--structure", text, "wander.sd=0.02,swing.diurnal=0.015") if text is not None else []:
        head, _, tail = key.partition(".")
        if head not in got or not tail:
            v.fail("--structure", text, f"names {key}; each FIELD is one of {fields}")
        try:
            got[head][tail] = float(value)
        except ValueError:
            v.fail(f"--structure {key}", value, "must be a number")
    with v.renamed(prefix="--structure "):
        try:
            wander = dataclasses.replace(scenario.wander, **got["wander"])
            swing = dataclasses.replace(scenario.swing, **got["swing"])
        except TypeError:
            v.fail("--structure", text, f"names a field neither section has; each FIELD is one of {fields}")
    return wander, swing


def _zero_share(sigma: float) -> float:
    """The chance the law's clip at zero takes a sample outside dips: ``P(1 + σ·ε < 0)``."""
    return NormalDist().cdf(-1.0 / sigma) if sigma > 0 else 0.0


def run(args) -> int:
    scenario, sampling, blocks, n, (rows, truth, dips), cadence, wander, swing = _check(args)
    sigma = sampling.sigma(scenario.window.sigma_hour)
    config = {"scenario": args.scenario, "fields": scenario.to_dict(),
              "telemetry": {"cards": n, "classes": {c.name: k for c, _, k in blocks}, "every_minutes": sampling.every,
                            "hours": sampling.hours, "samples_per_card": sampling.samples,
                            "sigma_sample": sigma, "cadence": dataclasses.asdict(cadence),
                            "wander": dataclasses.asdict(wander), "swing": dataclasses.asdict(swing)}}
    seal = manifest.beside(rows)
    # The run's identity in the manifest and in every table's metadata (``manifest.verify``).
    made = {**manifest.build(config, seed=args.seed, n=n, seeding=SEEDING), "run": manifest.run_id(seal.parent)}
    manifest.unseal(seal)
    t0 = time.perf_counter()
    emitted, digests = telemetry.write(rows, scenario, sampling, cards=args.cards, seed=args.seed, chunk=args.chunk,
                                       progress=progress_of(args), metadata=manifest.to_json(made),
                                       cadence=cadence, wander=wander, swing=swing)
    wall = time.perf_counter() - t0
    if emitted.partial:
        raise KeyboardInterrupt(f"after {emitted.done:,} of {n:,} cards; nothing was written to {rows} "
                                "(only a whole run is saved)")
    samples = emitted.n_samples
    manifest.seal(seal, {**made, "wall_s": round(wall, 3), "samples": samples, "dips": len(emitted.dips)}, digests)
    rate = samples / wall if wall > 0 else math.inf
    if args.json:
        print_json({"scenario": args.scenario, "seed": args.seed, "cards": n,
                    "classes": {c.name: k for c, _, k in blocks}, "every_minutes": sampling.every,
                    "hours": sampling.hours, "samples_per_card": sampling.samples, "samples": samples,
                    "dips": len(emitted.dips), "sigma_sample": sigma, "zero_share": _zero_share(sigma),
                    "cadence": dataclasses.asdict(cadence), "wander": dataclasses.asdict(wander),
                    "swing": dataclasses.asdict(swing), "files": {"rows": str(rows), "truth": str(truth), "dips": str(dips), "manifest": str(seal)},
                    "units": {name: cols.units(table) for name, table in cols.FILES.items()},
                    "wall_s": round(wall, 3), "samples_per_s": rate,
                    "provenance": manifest.provenance(seed=args.seed, n=n, wall_s=round(wall, 3))})
    else:
        classes = " + ".join(f"{k:,} x {c.name}" for c, _, k in blocks)
        print(f"{args.scenario}: {n:,} cards ({classes}), a sample every {sampling.every:g} min over "
              f"{sampling.hours:g} h: {samples:,} samples in {wall:.1f} s ({rate:,.0f} samples/s, compilation and "
              "writing included)")
        zero = _zero_share(sigma)
        print(f"one sample errs by sigma = {100 * sigma:.1f}% of the card's rate (sigma_hour "
              f"{scenario.window.sigma_hour:g} x sqrt(60 / {sampling.every:g}))"
              + (f"; {100 * zero:.1f}% of samples outside dips read 0 (the clip at zero)" if zero >= 1e-3 else ""))
        if not (cadence.regular and wander.sd == 0 and swing.diurnal == 0 and swing.sd == 0):
            print(f"irregular cadence {dataclasses.asdict(cadence)}; wander {dataclasses.asdict(wander)}; "
                  f"swing {dataclasses.asdict(swing)} (the truth, also in the manifest)")
        print(f"rows in {rows}; truth in {truth} (one row per card) and {dips} ({len(emitted.dips):,} dips); "
              f"manifest {seal}")
    sys.stdout.flush()
    return 0


def register(sub) -> None:
    p = sub.add_parser("telemetry", help="synthetic telemetry of a scenario's cards, with the truth beside it",
                       description="What a fleet's monitoring would record of a preset's or scenario's cards "
                       "(docs/model.md §8): each card sampled every --every minutes over --hours hours, a "
                       "sample being the card's mean rate over the minutes before it, after its dips, times "
                       "(1 + sigma·e) with sigma = window.sigma_hour x sqrt(60 / every), clipped at 0. The "
                       "cards' qualities and dips are drawn exactly as the fleet month draws them; card i "
                       "uses fold_in(key(seed), i), so rows never depend on --chunk. Writes FILE (rows: "
                       f"{cols.describe(cols.SAMPLES)}), FILE's stem + .truth (per card: {cols.describe(cols.TRUTH)}) "
                       f"and + .dips (per dip: {cols.describe(cols.DIPS)}), in the format FILE's extension names "
                       "(a Parquet file's fields carry their units and meanings), and FILE.manifest.json last. "
                       "Ctrl-C writes nothing (exit 130).")
    p.add_argument("scenario", metavar="PRESET|FILE.toml")
    p.add_argument("--out", metavar="FILE", required=True,
                   help="the rows file, .parquet or .csv; the truth goes beside it (x.parquet: x.truth.parquet, "
                   "x.dips.parquet) with x.parquet.manifest.json")
    p.add_argument("--cards", type=int, default=None,
                   help="cards to observe (default: the scenario's pool); a mixed pool keeps its classes' shares, "
                   "class by class")
    p.add_argument("--every", type=float, default=5.0, help="minutes between samples (default 5)")
    p.add_argument("--hours", type=float, default=730.0, help="hours observed from t = 0 (default 730)")
    p.add_argument("--jitter", type=float, default=0.0,
                   help="each sample's time varies uniformly within this share of the interval (default 0)")
    p.add_argument("--splay", type=float, default=0.0,
                   help="each card's samples start at a random offset within this share of the interval (default 0)")
    p.add_argument("--missed", type=float, default=0.0, help="chance a scrape is missed (default 0)")
    p.add_argument("--outages", type=float, default=0.0,
                   help="outages a card goes dark, per 730 h (default 0; at most 8 a month)")
    p.add_argument("--outage-hours", type=float, default=48.0, help="mean hours of an outage (default 48)")
    p.add_argument("--probe", type=float, default=None, metavar="SECONDS",
                   help="write a probe series: each sample a benchmark of SECONDS from its time (default: an "
                   "interval series, each sample the mean since the card's previous one)")
    p.add_argument("--structure", default=None, metavar="FIELD=VALUE,...",
                   help="wander and swing the cards' rates carry (docs/model.md 1.4.1), over the scenario's: "
                   "wander.sd, wander.hours, swing.diurnal, swing.hot_hour, swing.start_hour, swing.sd, swing.hours")
    p.add_argument("--seed", type=int, default=0, help="seed; card i uses fold_in(key(seed), i) (default 0)")
    p.add_argument("--chunk", type=int, default=None, help="cards per device batch (default: automatic)")
    p.add_argument("--json", action="store_true", help="print what was written as JSON")
    add_progress(p, unit="cards")
    p.set_defaults(func=run)
