"""GPU check for the streaming engine: correctness against the CPU, then throughput.

Run on a machine with an NVIDIA GPU, from the repository root, through
``scripts/gpu_check.sh`` (which installs the ``gpu`` extra first), or directly
with a CUDA-enabled jax already installed::

    python scripts/gpu_check.py [--quick] [--out gpu_check.json]

1. Correctness: months 0..N-1 of every preset, same seed, on the GPU and on the
   host CPU (both backends in one process): money, counts and pass checks
   identical, float outputs within float32 tolerance; streamed summaries agree.
2. Throughput: the standard month (golden-idler-steady) streamed at several
   chunk sizes (target 1e8 fleet-months/s), then 1e9 months with summaries
   (target under a minute); ``mc bench`` figures for the record.
Writes a JSON report and exits non-zero if a correctness check fails.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import jax
import numpy as np


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="smaller N everywhere")
    ap.add_argument("--out", default="gpu_check.json")
    args = ap.parse_args()

    import mc
    from mc import engine
    from mc.fleet import model
    from mc.studies import bench

    report: dict = {"jax": jax.__version__, "backend": jax.default_backend(),
                    "devices": [d.device_kind for d in jax.devices()]}
    gpus = [d for d in jax.devices() if d.platform == "gpu"]
    if not gpus:
        print("no GPU visible to jax; install the gpu extra (scripts/gpu_check.sh)", file=sys.stderr)
        return 2
    cpu = jax.devices("cpu")[0]
    ok = True

    # 1. Correctness: the same months on the GPU and the CPU.
    n = 2000 if args.quick else 20000
    report["correctness"] = {}
    for name in mc.presets.names():
        sc = mc.presets.get(name)
        fleet_month, columns = model(sc)  # §1's month, or §6's for a preset with an [autoscaler]
        exact = tuple(columns.money) + tuple(columns.counts) + tuple(columns.passes)
        g = engine.sample(fleet_month, sc, n, seed=123, chunk=4096)
        with jax.default_device(cpu):
            keys = jax.device_put(engine.month_keys(123, np.uint32(0), n), cpu)
            c = jax.jit(jax.vmap(lambda k: fleet_month(k, sc)))(keys)
            c = {k: np.asarray(v) for k, v in c.items()}
        row = {}
        for k in g:
            if k in exact:
                row[k] = int(np.sum(g[k] != c[k]))  # months that differ
                ok &= row[k] == 0 or k in columns.passes and row[k] <= max(1, n // 10000)
            else:
                rel = np.abs(g[k] - c[k]) / np.maximum(np.abs(c[k]), 1e-6)
                row[k] = float(rel.max())
                ok &= row[k] < 1e-3
        s_gpu = mc.simulate(sc, n, seed=123).summary
        row["summary_pass_equal"] = s_gpu["pass"] == mc.simulate(sc, n, seed=123, keep_samples=True).summary["pass"]
        report["correctness"][name] = row
        print(name, json.dumps(row), flush=True)

    # 2. Throughput of the standard month.
    report["bench"] = bench.run(chunks=[1 << 16, 1 << 18, 1 << 20, 1 << 22], numpy_batches=[4096],
                                seconds=2.0 if args.quick else 5.0)
    print(json.dumps(report["bench"]["engine"]), flush=True)
    best = max((r for r in report["bench"]["engine"] if "error" not in r), key=lambda r: r["months_per_s"])["chunk"]
    big = 10**8 if args.quick else 10**9
    sc = mc.presets.get("golden-idler-steady")
    mc.simulate(sc, best, chunk=best)  # compile
    t0 = time.perf_counter()
    r = mc.simulate(sc, big, chunk=best)
    dt = time.perf_counter() - t0
    report["big_run"] = {"n": r.summary["n"], "seconds": dt, "months_per_s": big / dt, "chunk": best,
                         "modal_bill": r.summary["modes"]["bill"]}
    print(json.dumps(report["big_run"]), flush=True)
    report["ok"] = bool(ok)
    with open(args.out, "w") as fh:
        json.dump(report, fh, indent=2, default=float)
    print("correctness", "OK" if ok else "FAILED", "; report in", args.out)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
