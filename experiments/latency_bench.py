"""Replications per second of ``mc latency`` (SPEC §7) against the step-by-step
Python reference (tests/ref_latency.py), on the same draws, in one run.

For each batcher at the CLI's defaults (8B on one H100, lognormal 1,024 / 256-token
prompts and answers, 1,000 measured requests after 200 warm-up), at a rate near its
SLO rate: the engine's replications per second after one untimed run that compiles,
and the reference's on replications 0..k-1 of the same seed (its event times
checked against the engine's). Writes results/latency_bench/bench.json and a
manifest beside it.
"""

from __future__ import annotations

import json
import sys
import time

import _study

CASES = [  # batcher, max batch, rate (req/s)
    ("static", 16, 0.05),
    ("continuous", 64, 12.0),
]


def run(args) -> dict:
    sys.path.insert(0, str(_study.ROOT / "tests"))
    import jax
    import numpy as np
    import ref_latency

    from mc import engine
    from mc.files import write_text
    from mc.serving import latency as L
    from mc.studies import manifest

    rows = []
    for batcher, mb, rate in CASES:
        s = L.Serving("8b", "h100", batcher=batcher, max_batch=mb)
        L.simulate(s, rate, args.n, seed=args.seed + 1)  # compiles
        t0 = time.perf_counter()
        res = L.simulate(s, rate, args.n, seed=args.seed)
        engine_s = time.perf_counter() - t0
        p = s.params(rate)
        keys = engine.month_keys(args.seed, np.uint32(0), args.ref)
        d = jax.tree_util.tree_map(np.asarray, jax.vmap(L.draw, in_axes=(0, None))(keys, p))
        r = jax.tree_util.tree_map(np.asarray, jax.vmap(L.requests, in_axes=(0, None))(keys, p))
        c = ref_latency.constants(p)
        t0 = time.perf_counter()
        refs = [ref_latency.simulate(d.gap[i], d.prompt[i], d.answer[i], c) for i in range(args.ref)]
        ref_s = time.perf_counter() - t0
        worst, apart = 0.0, 0
        for i, ref in enumerate(refs):
            a = r["arrival"][0][i].astype(np.float64) + r["arrival"][1][i]
            diff = np.abs(a + r["e2e"][i] - ref["finish"])
            worst, apart = max(worst, float(diff.max())), apart + int(np.sum(diff > 1e-4))
        row = {"batcher": batcher, "max_batch": mb, "rate": rate, "requests": s.n + s.warmup,
               "engine_replications": res.replications, "engine_s": round(engine_s, 3),
               "engine_per_s": res.replications / engine_s, "reference_replications": args.ref,
               "reference_s": round(ref_s, 3), "reference_per_s": args.ref / ref_s,
               "speedup": (res.replications / engine_s) / (args.ref / ref_s),
               "max_finish_difference_s": worst, "requests_apart_over_1e-4_s": apart, "backend": jax.default_backend(),
               "devices": len(jax.devices())}
        rows.append(row)
        if not args.quiet:
            print(f"{batcher:10s} engine {row['engine_per_s']:8.1f} rep/s, reference {row['reference_per_s']:6.2f} "
                  f"rep/s: {row['speedup']:.0f}x (finish times agree to {worst:.2g} s)", file=sys.stderr)
    args.out.mkdir(parents=True, exist_ok=True)
    write_text(args.out / "bench.json", json.dumps(rows, indent=2) + "\n")
    cfg = {"cases": CASES, "n": args.n, "ref": args.ref, "seed": args.seed}
    manifest.write(args.out, manifest.build(cfg, seed=args.seed, n=args.n,
                                            seeding="replication i uses fold_in(key(seed), i)", rows=rows))
    return {"rows": rows}


def main(argv=None) -> int:
    p = _study.parser("latency_bench", __doc__.splitlines()[0], n=256)
    p.add_argument("--ref", type=int, default=4, help="replications the reference runs (default 4)")
    args = p.parse_args(argv)
    run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
