"""The main job (``make study``): the seed stories, every study at its default size,
the calibration, then every figure, in one process so each scenario shape compiles once.

    python experiments/run_all.py [--presets-n N] [--scale K] [--quiet]

``--scale K`` multiplies every study's fleet-months per grid point. Results go under
results/ (resumable: finished grid points are kept), figures under figures/.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import runpy
import sys
import time
from pathlib import Path

from mc import engine

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
STUDIES = [  # (module, default fleet-months per point)
    ("window_eviction", 5_000),
    ("demand_runset", 5_000),
    ("lemons", 2_500),
    ("pool_demand", 2_500),
    ("calibration", 2_048),
    ("eviction_pays", 1_024),
    ("which_rule", 512),
    ("which_rule_structure", 512),  # the same, with wander and swing (SPEC §1.4.1)
    ("sensitivity", 1_024),
    ("latency", 32),  # replications per point (SPEC §7)
    ("mix_study", 1_000),  # months per candidate mix (SPEC §4)
    ("real_traffic", 32),  # replications per point (SPEC §7.1)
    ("routers", 12),  # replications per point (SPEC §9)
    ("spot_share", 1_000),  # months per setting (SPEC §10)
    ("tp_lottery", 256),  # calibration months per setting; 4x as many fresh (SPEC §11)
]
FIGURES = ["fig_seed_stories", "fig_window_share", "fig_window_threshold", "fig_demand_runset",
           "fig_lemons", "fig_pool_demand", "fig_calibration_pareto", "fig_eviction_pays", "fig_eviction_pays_theta", "fig_which_rule", "fig_which_rule_structure", "fig_window_spread", "fig_sensitivity", "fig_latency", "fig_mix",
           "fig_real_traffic", "fig_fit", "fig_routers", "fig_spot_share", "fig_tp_lottery"]


class Steps:
    """Says which step runs and how far the job is: ``[step i/n, elapsed] name``."""

    def __init__(self, total: int, quiet: bool):
        self.total, self.quiet, self.i = total, quiet, 0
        self.start = time.perf_counter()

    def elapsed(self) -> str:
        s = int(time.perf_counter() - self.start)
        return f"{s // 60}:{s % 60:02d}"

    def run(self, name: str, fn) -> None:
        self.i += 1
        t = time.perf_counter()
        if not self.quiet:
            print(f"[step {self.i}/{self.total}, {self.elapsed()} elapsed] {name} ...", file=sys.stderr, flush=True)
        fn()
        # Each compiled program holds its machine code in hundreds of memory maps, and
        # a process may hold at most about 65,000 (Linux's vm.max_map_count): the job
        # forgets a finished step's programs (the next step that needs one loads it
        # from the compile cache in a fraction of a second).
        engine.clear_caches()
        gc.collect()
        # Always one line per finished step, so a log says where the time went.
        print(f"[step {self.i}/{self.total}, {self.elapsed()} elapsed] {name} done in "
              f"{time.perf_counter() - t:.1f} s", file=sys.stderr, flush=True)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="experiments/run_all.py", description=__doc__.splitlines()[0])
    p.add_argument("--presets-n", type=int, default=50_000, help="fleet-months per seed story (default 50,000)")
    p.add_argument("--scale", type=int, default=1, help="multiply every study's size (default 1)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--no-figures", action="store_true")
    p.add_argument("--reuse-stale", action="store_true",
                   help="keep results made by other arithmetic (another version of mc, or changed model code) "
                   "instead of recomputing them")
    args = p.parse_args(argv)
    sys.path.insert(0, str(HERE))
    import jax

    # Compiled engines persist between runs of the job (on any backend that supports it).
    jax.config.update("jax_compilation_cache_dir", str(ROOT / "results" / ".jax-cache"))
    common = ["--seed", str(args.seed)] + (["--quiet"] if args.quiet else []) + \
        (["--reuse-stale"] if args.reuse_stale else [])
    steps = [("seed_stories", ["--n", str(args.presets_n)])]
    steps += [(name, ["--n", str(n * args.scale)]) for name, n in STUDIES]
    figs = ROOT / "figures"
    scripts = [] if args.no_figures else [figs / f"{name}.py" for name in FIGURES]
    job = Steps(len(steps) + len(scripts), args.quiet)
    for name, extra in steps:
        job.run(name, lambda name=name, extra=extra: importlib.import_module(name).main(extra + common))
    sys.path.insert(0, str(figs))
    for script in scripts:
        job.run(script.name, lambda script=script: runpy.run_path(str(script), run_name="__main__"))
    print(f"study done in {job.elapsed()} ({len(steps)} studies, {len(scripts)} figures)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
