"""Demand shape x run-set mode: idle burn against shortfall (sweeps/demand_runset.toml).

Writes results/demand_runset/sweep.parquet and manifest.json.
"""

from __future__ import annotations

import sys

import _study


def main(argv=None) -> int:
    args = _study.parser("demand_runset", __doc__.splitlines()[0], n=5_000).parse_args(argv)
    _study.run_toml("demand_runset", args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
