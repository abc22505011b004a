"""What every study script shares: its command line, where results go, one engine size."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "results"
SWEEPS = Path(__file__).resolve().parent / "sweeps"
# Every study runs the engine in batches of this many fleet-months, so one
# compilation per scenario shape serves all of them (the engine compiles per batch
# size); study sizes are multiples of it.
CHUNK = 2500


def parser(name: str, doc: str, n: int) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=f"experiments/{name}.py", description=doc)
    p.add_argument("--n", type=int, default=n, help=f"fleet-months per grid point (default {n:,})")
    p.add_argument("--seed", type=int, default=0, help="seed of every grid point (default 0)")
    p.add_argument("--out", type=Path, default=RESULTS / name, help=f"output folder (default results/{name})")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    keep = p.add_mutually_exclusive_group()
    keep.add_argument("--fresh", action="store_true", help="recompute grid points already on disk")
    keep.add_argument("--reuse-stale", action="store_true",
                      help="keep results and grid points made by other arithmetic (another version of mc, or "
                      "changed model code) instead of recomputing them")
    return p


def up_to_date(name: str, args, files: tuple[str, ...], config=None, out: Path | None = None) -> bool:
    """Whether ``out`` (default ``args.out``) already holds ``files`` made from
    ``config`` (the manifest's, compared as JSON; any config when None) by this
    arithmetic (the manifest's ``arithmetic``; any with ``--reuse-stale``) and
    ``--fresh`` was not given; says so unless quiet (a result made by other
    arithmetic in one line: recomputed, or kept with ``--reuse-stale``)."""
    import json

    out = out or args.out
    man = out / "manifest.json"
    if args.fresh or not man.exists() or not all((out / f).exists() for f in files):
        return False
    made = json.loads(man.read_text())
    if config is not None and made.get("config") != json.loads(json.dumps(config)):
        return False
    if made.get("outputs"):  # a sealed result: its files must be the ones it sealed
        from mc import ParamError
        from mc.studies import manifest

        try:
            manifest.verify(man)
        except ParamError:
            return False
    from mc.studies import madeby, store

    if made.get("arithmetic") != madeby.arithmetic():
        if not args.quiet:
            print(f"{name}: {man} {store.stale_why(made.get('arithmetic'))}; "
                  f"{'kept (--reuse-stale)' if args.reuse_stale else 'recomputing'}", file=sys.stderr)
        if not args.reuse_stale:
            return False
    if not args.quiet:
        print(f"{name}: up to date in {out}", file=sys.stderr)
    return True


def chunk(n: int) -> int:
    return CHUNK if n >= CHUNK else n


def progress(args) -> bool | None:
    return False if args.quiet else None


def run_toml(name: str, args, out: Path | None = None):
    """Run ``sweeps/NAME.toml`` at the study's size into ``out`` (default ``args.out``)."""
    from mc.studies import sweep as sw

    spec = sw.load(SWEEPS / f"{name}.toml")
    spec = sw.Sweep(base=spec.base, grid=spec.grid, n=args.n, seed=args.seed, derive=spec.derive)
    result = sw.run(spec, out or args.out, chunk=chunk(args.n), progress=progress(args), fresh=args.fresh,
                    reuse_stale=args.reuse_stale, desc=name,
                    warn=lambda msg: args.quiet or print(f"{name}: warning: {msg}", file=sys.stderr))
    if not args.quiet:
        stale = f", {len(result.stale)} of them made by other arithmetic" if result.stale else ""
        print(f"{name}: {len(sw.points(spec))} points x {spec.n:,} fleet-months "
              f"({result.computed} computed, {result.reused} reused{stale}) in {result.wall_s:.0f} s "
              f"-> {result.out}", file=sys.stderr)
    return result
