"""Pool size x mean demand: where whole-card rounding dominates the bill (sweeps/pool_demand.toml).

Writes results/pool_demand/sweep.parquet and manifest.json.
"""

from __future__ import annotations

import sys

import _study


def main(argv=None) -> int:
    args = _study.parser("pool_demand", __doc__.splitlines()[0], n=2_500).parse_args(argv)
    _study.run_toml("pool_demand", args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
