"""SPEC §6's month in one run: the engine with daily rounds, the same scenario as
one §1 decision, and the plain NumPy reference the tests hold the month to.

Run from the repository root::

    python scripts/bench_autoscaler.py [--chunk 1024] [--seconds 3] [--reference-months 20]

The reference lives with the tests (``tests/ref_autoscaler.py``), so this script
adds it to ``mc bench --autoscaler``'s figures.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from mc.studies import bench  # noqa: E402
from mc.studies.benchreport import format_bench_autoscaler  # noqa: E402
from ref_autoscaler import month as reference  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--chunk", type=int, default=1024)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--reference-months", type=int, default=20)
    args = ap.parse_args()
    r = bench.autoscaler(chunk=args.chunk, seconds=args.seconds, reference=reference,
                         reference_months=args.reference_months)
    print(format_bench_autoscaler(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
