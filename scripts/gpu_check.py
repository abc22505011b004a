"""GPU check of the streaming engine: agreement with the CPU, throughput, a profile.

Run through ``scripts/gpu_check.sh OUTDIR`` (which installs mc over the machine's
own jax, offline), or directly with mc importable::

    python scripts/gpu_check.py OUTDIR [--dry]

Steps, each writing its figures under OUTDIR as soon as it ends:

1. ``agreement.json``: months 0..N-1 of the six seed stories on the default
   backend and on the host CPU (one process, the same keys): money, counts and
   checks identical, floats within float32 tolerance.
2. ``throughput.json``: the standard month (golden-idler-steady) streamed at one
   chunk (2^20 months on a GPU): the full month, the month without its token
   pass, the month without the reducer (each output summed instead), and the
   month with the reducer's one-scatter CPU layout (same-address atomic adds)
   in place of its parallel one.
3. ``trace/``: one ``jax.profiler`` trace of a few full chunks.
4. ``big_run.json``: 10^9 months with summaries (the modal bill and its share).

``--dry`` runs every step on whatever backend is there (the CPU in tests) at tiny
sizes, so the script is exercised without a GPU. The whole check is sized to end
in under 5 minutes on one GPU. Exit status 1 when the agreement fails.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

SIX = ("golden-idler", "noise-evictor", "bargain-shortfall", "golden-idler-steady", "noise-evictor-day",
       "bargain-flagship")


def _write(out: str, name: str, obj) -> None:
    with open(os.path.join(out, name), "w") as fh:
        json.dump(obj, fh, indent=2, default=float)
    print(name, json.dumps(obj, default=float)[:2000], flush=True)


def agreement(n: int, chunk: int, names=SIX) -> dict:
    """The same months on the default backend and on the CPU."""
    import mc
    from mc import engine
    from mc.fleet import model

    cpu = jax.devices("cpu")[0]
    report, ok = {}, True
    for name in names:
        sc = mc.presets.get(name)
        fleet_month, columns = model(sc)
        exact = set(columns.money) | set(columns.counts) | set(columns.passes)
        dev = engine.sample(fleet_month, sc, n, seed=123, chunk=chunk)
        with jax.default_device(cpu):
            keys = jax.device_put(engine.month_keys(123, np.uint32(0), n), cpu)
            ref = jax.jit(jax.vmap(fleet_month, in_axes=(0, None)))(keys, jax.device_put(sc, cpu))
            ref = {k: np.asarray(x) for k, x in ref.items()}
        row = {}
        for k in dev:
            if k in exact:
                row[k] = int(np.sum(dev[k] != ref[k]))  # months that differ
                ok &= row[k] == 0
            else:
                rel = np.abs(dev[k].astype(np.float64) - ref[k]) / np.maximum(np.abs(ref[k]), 1e-6)
                row[k] = float(rel.max())
                ok &= row[k] < 1e-4
        report[name] = row
    return {"n": n, "ok": bool(ok), "presets": report}


def _stub_tokens(true_rate, run, dips, demand, flat=False):
    from mc.fleet.accounting import Tokens

    rate = jnp.sum(jnp.where(run, true_rate, 0.0)) + 0.0 * jnp.sum(dips.begin[:, 0])
    return Tokens(rate * 730.0, rate * 700.0, rate * 730.0, rate * 30.0)


def _sum_reducer(out, mask, aux):
    from mc.engine import AXIS

    total = sum(jnp.sum(jnp.where(mask, x, 0).astype(jnp.float32)) for x in out.values())
    return jax.lax.psum(total, AXIS)


class _OneScatter:
    """The engine's reducer kept in its CPU layout on any device (it has no
    ``on``, so the engine cannot re-lay it): every count one scatter-add."""

    def __init__(self, red):
        self.red = red

    def __call__(self, out, mask, aux):
        return self.red(out, mask, aux)


def throughput(chunk: int, steps: int) -> dict:
    """Months/s of the standard month at one chunk: full, without the token pass,
    without the reducer, with the one-scatter reducer; each after one untimed
    step that compiles."""
    import mc
    from mc import engine
    from mc.fleet import accounting, model

    sc = mc.presets.get("golden-idler-steady")
    fleet_month, cols = model(sc)
    red, aux = engine.plan(cols)
    aux = engine.ranges_from(engine.first_chunk(fleet_month, sc, chunk, reducer=red, aux=aux, seed=1, chunk=chunk),
                             aux)
    real = accounting.month_tokens

    def no_tokens(key, p):
        accounting.month_tokens = _stub_tokens
        try:
            return fleet_month(key, p)
        finally:
            accounting.month_tokens = real

    out = {"chunk": chunk, "backend": jax.default_backend(), "device": jax.devices()[0].device_kind}
    for label, month, reducer in (("full", fleet_month, red), ("no_token_pass", no_tokens, red),
                                  ("no_reducer", fleet_month, _sum_reducer),
                                  ("one_scatter_reducer", fleet_month, _OneScatter(red))):
        def go(k):
            acc = engine.Accumulator(red, aux, cols)
            merge = (lambda res, take: None) if reducer is _sum_reducer else acc.merge
            engine.stream(month, sc, k * chunk, reducer=reducer, merge=merge, aux=aux, seed=1, chunk=chunk)
        t0 = time.perf_counter()
        go(1)
        compiled = time.perf_counter() - t0
        t0 = time.perf_counter()
        go(steps)
        dt = time.perf_counter() - t0
        out[label] = {"months": steps * chunk, "seconds": dt, "months_per_s": steps * chunk / dt,
                      "first_step_s": compiled}
    return out


def profile(path: str, chunk: int, steps: int) -> dict:
    """One ``jax.profiler`` trace of ``steps`` chunks of the standard month."""
    import mc

    sc = mc.presets.get("golden-idler-steady")
    mc.simulate(sc, chunk, chunk=chunk)  # compiled before the trace
    with jax.profiler.trace(path):
        t0 = time.perf_counter()
        mc.simulate(sc, steps * chunk, chunk=chunk)
        dt = time.perf_counter() - t0
    return {"path": path, "months": steps * chunk, "seconds": dt}


def big_run(n: int, chunk: int) -> dict:
    import mc

    sc = mc.presets.get("golden-idler-steady")
    mc.simulate(sc, chunk, chunk=chunk)  # compile
    t0 = time.perf_counter()
    r = mc.simulate(sc, n, chunk=chunk)
    dt = time.perf_counter() - t0
    return {"n": r.summary["n"], "seconds": dt, "months_per_s": n / dt, "chunk": chunk,
            "modal_bill": r.summary["modes"]["bill"], "shortfall_mean": r.summary["stats"]["shortfall"]["mean"]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", help="folder for the figures (created)")
    ap.add_argument("--dry", action="store_true", help="tiny sizes on any backend (proves the script on a CPU)")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    devs = jax.devices()
    gpu = devs[0].platform == "gpu"
    if not gpu and not args.dry:
        print("no GPU visible to jax (use --dry to exercise the check on this backend)", file=sys.stderr)
        return 2
    if args.dry:
        sizes = dict(agree_n=64, agree_chunk=32, chunk=64, steps=2, trace_steps=1, big=256)
    else:
        sizes = dict(agree_n=4096, agree_chunk=4096, chunk=1 << 20, steps=16, trace_steps=3, big=10**9)
    started = time.perf_counter()
    _write(args.out, "machine.json", {"jax": jax.__version__, "backend": jax.default_backend(),
                                      "devices": [d.device_kind for d in devs], "dry": args.dry, "sizes": sizes})
    # The dry run checks two presets (each costs two compilations on a CPU); a GPU all six.
    agree = agreement(sizes["agree_n"], sizes["agree_chunk"], SIX[:2] if args.dry else SIX)
    _write(args.out, "agreement.json", agree)
    _write(args.out, "throughput.json", throughput(sizes["chunk"], sizes["steps"]))
    _write(args.out, "profile.json", profile(os.path.join(args.out, "trace"), sizes["chunk"], sizes["trace_steps"]))
    _write(args.out, "big_run.json", big_run(sizes["big"], sizes["chunk"]))
    _write(args.out, "done.json", {"ok": agree["ok"], "seconds": time.perf_counter() - started})
    print("agreement", "OK" if agree["ok"] else "FAILED", "; figures in", args.out, flush=True)
    return 0 if agree["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
