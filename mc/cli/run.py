"""``mc run``: one scenario's distribution over N fleet-months.

Runs stream by default (memory bounded by the chunk, whatever ``--n``), with a
progress bar on a terminal; Ctrl-C stops after the chunk in hand and prints the
summary so far, marked partial. Several hosts run one simulation together when
each is started with ``--coordinator``, ``--num-processes`` and ``--process-id``.
"""

from __future__ import annotations

import re
import socket
import sys
import time

from .. import _validate as v
from .. import files
from ..fleet import presets as fleet_presets
from ..fleet import simulate
from ..fleet.logdemand import demand_line, log_demand
from ..fleet.report import format_summary
from ..studies import figures, manifest
from ._common import add_sampling, load_scenario, print_json, progress_of

_HOST_PORT = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9][A-Za-z0-9.-]*):(\d{1,5})$")


def check_coordinator(address: str) -> None:
    """``HOST:PORT`` with a port in 1..65535 and a host that resolves; anything
    else is one line (jax would abort the process on it)."""
    m = _HOST_PORT.match(address)
    if not m or not 1 <= int(m.group(2)) <= 65535:
        v.fail("coordinator", address, "must be HOST:PORT with a port in 1..65535, e.g. host0:12355")
    try:
        socket.getaddrinfo(m.group(1).strip("[]"), int(m.group(2)))
    except (socket.gaierror, UnicodeError) as err:
        v.fail("coordinator", address, f"names a host that does not resolve ({err})")


def init_distributed(args) -> None:
    """Join a multi-process run (one process per host) before any device is used."""
    if args.coordinator is None:
        return
    import jax

    check_coordinator(args.coordinator)
    v.count("num-processes", args.num_processes, lo=1)
    v.count("process-id", args.process_id, lo=0, hi=args.num_processes - 1)
    # CPU devices talk through gloo (GPUs use NCCL regardless of this setting).
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(coordinator_address=args.coordinator, num_processes=args.num_processes,
                               process_id=args.process_id)


def run(args) -> int:
    scenario = load_scenario(args.scenario, args.quiet)
    if args.out is not None:
        files.check_output(args.out)  # before the simulation, not after it
    init_distributed(args)
    import jax

    lead = jax.process_index() == 0
    progress = progress_of(args) if lead else False
    t0 = time.perf_counter()
    result = simulate(scenario, args.n, seed=args.seed, chunk=args.chunk, keep_samples=args.out is not None,
                      devices=args.devices, progress=progress)
    if not lead:
        return 0
    wall = round(time.perf_counter() - t0, 3)
    partial = bool(result.summary.get("partial"))
    if args.out is not None and result.samples is not None and not partial:
        made = manifest.build({"scenario": args.scenario, "fields": scenario.to_dict()}, seed=args.seed,
                              n=result.n, seeding=manifest.SEEDED, wall_s=wall)
        rows = result.samples.copy()
        rows.insert(0, "month", range(len(rows)))  # month i of the seed: fold_in(key(seed), i)
        manifest.write_sealed(manifest.beside(args.out), made, {args.out: (rows, manifest.to_json(made))})
    if args.json:
        log = log_demand(scenario.demand)
        print_json({"scenario": args.scenario, "seed": args.seed, **result.summary,
                    **({"demand_log": log} if log is not None else {}),
                    "figures": figures.of_summary(result.summary, figures.FLEET_UNITS),
                    "provenance": manifest.provenance(scenario=scenario.to_dict(), seed=args.seed, n=result.n,
                                                      wall_s=wall)})
    else:
        print(format_summary(args.scenario, result))
        line = demand_line(scenario.demand)
        if line is not None:
            print(f"\n{line}")
        if args.out and result.samples is not None and not partial:
            print(f"\nsamples written to {args.out} (manifest in {manifest.beside(args.out)})")
    sys.stdout.flush()
    if partial and args.out is not None:
        print(f"mc run: interrupted after {result.n:,} of {args.n:,} months; nothing was written to {args.out} "
              "(only a whole run is saved)", file=sys.stderr)
    return 130 if partial else 0


def register(sub) -> None:
    p = sub.add_parser("run", help="simulate one scenario and print its summary",
                       description="Simulate a preset or a scenario TOML file for N fleet-months. "
                       "Ctrl-C stops early and prints the summary so far, marked partial (exit 130); "
                       "--out is written only for a whole run. Presets: " + ", ".join(fleet_presets.names()) + ".")
    p.add_argument("scenario", metavar="PRESET|FILE.toml")
    add_sampling(p, n=100_000)
    p.add_argument("--out", metavar="FILE", help="also write every fleet-month as a row, in the format "
                   "the extension names: .parquet, .csv or .json (keeps all samples in memory), and "
                   "FILE.manifest.json beside it, written last with the file's sha256")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--devices", type=int, default=None,
                   help="use the first N local devices (default: all)")
    g = p.add_argument_group("several hosts (jax.distributed)")
    g.add_argument("--coordinator", metavar="HOST:PORT", default=None,
                   help="address of process 0; every process passes the same one")
    g.add_argument("--num-processes", type=int, default=1)
    g.add_argument("--process-id", type=int, default=0)
    p.set_defaults(func=run)
