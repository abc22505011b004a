"""Lemon rate x window x share, for the all and steady run sets: when eviction pays for itself against share 0 (sweeps/lemons.toml).

Writes results/lemons/sweep.parquet and manifest.json.
"""

from __future__ import annotations

import sys

import _study


def main(argv=None) -> int:
    args = _study.parser("lemons", __doc__.splitlines()[0], n=2_500).parse_args(argv)
    _study.run_toml("lemons", args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
