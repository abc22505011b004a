"""Helpers shared by the subcommands: arguments and JSON output."""

from __future__ import annotations

import argparse
import json
from typing import Any


def add_sampling(p: argparse.ArgumentParser, n: int) -> None:
    p.add_argument("--n", type=int, default=n, help=f"fleet-months to simulate (default {n:,})")
    p.add_argument("--seed", type=int, default=0, help="seed; month i uses fold_in(key(seed), i) (default 0)")
    p.add_argument("--chunk", type=int, default=None, help="fleet-months per device batch (default: automatic)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def print_json(obj: Any) -> None:
    print(json.dumps(obj, indent=2, default=float))
