"""Window length x eviction share, and window length x threshold theta, on the noise
evictor: median convergence, P(any wrong eviction), P(capacity failure).

Sweeps ``sweeps/window_share.toml`` into results/window_eviction/share/ and
``sweeps/window_threshold.toml`` into results/window_eviction/threshold/.
"""

from __future__ import annotations

import sys

import _study


def main(argv=None) -> int:
    args = _study.parser("window_eviction", __doc__.splitlines()[0], n=5_000).parse_args(argv)
    _study.run_toml("window_share", args, args.out / "share")
    _study.run_toml("window_threshold", args, args.out / "threshold")
    return 0


if __name__ == "__main__":
    sys.exit(main())
