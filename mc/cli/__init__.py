"""The ``mc`` command line. Each subcommand lives in ``mc/cli/<name>.py`` and
exposes ``register(subparsers)``, which adds its parser with ``func`` set."""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from .._validate import ParamError
from .._version import __version__

# Subcommand modules, in the order ``mc --help`` lists them.
COMMANDS = ["presets", "show", "run", "bench", "sweep", "calibrate", "sensitivity", "card", "buy", "latency"]


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse's own exit-2 path, kept to one line
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="mc", description="Monte Carlo answers to money questions "
                     "about GPU inference fleets.")
    parser.add_argument("--version", action="version", version=f"mc {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"mc.cli.{name}")
        except ModuleNotFoundError as err:
            if err.name == f"mc.cli.{name}":
                continue  # a subcommand not built yet
            raise
        module.register(sub)
    return parser


def _compile_cache() -> None:
    """Keep compiled scenario shapes between runs (a month compiles in seconds on a
    CPU; a cached one loads in milliseconds). ``JAX_COMPILATION_CACHE_DIR`` wins;
    ``MC_NO_COMPILE_CACHE=1`` turns it off."""
    if os.environ.get("MC_NO_COMPILE_CACHE") or os.environ.get("JAX_COMPILATION_CACHE_DIR"):
        return
    import jax

    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    jax.config.update("jax_compilation_cache_dir", os.path.join(base, "mc", "jax"))


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    _compile_cache()
    try:
        return int(args.func(args) or 0)
    except ParamError as err:
        print(f"mc {args.command}: error: {err}", file=sys.stderr)
        return 2
    except FileNotFoundError as err:
        print(f"mc {args.command}: error: {err.filename}: no such file", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"mc {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (``mc run ... | head``): stop quietly, as Unix tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as err:  # a folder, a permission, a full disk: one line, never a traceback
        where = f"{err.filename}: " if err.filename else ""
        print(f"mc {args.command}: error: {where}{err.strerror or err}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
