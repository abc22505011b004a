"""The XLA options the tests compile with, printed for the Makefile:
``python tests/compile_flags.py`` prints ``XLA_FLAGS`` (what it already holds, then
the options below that this jaxlib knows).

Compiling is most of a test's time: a month compiles in about 8 CPU-seconds on a CPU
and runs a test's few hundred months in milliseconds. The tests compile with XLA's
older fusion code generator (``--xla_cpu_use_fusion_emitters=false``) and LLVM at
level 1: a month compiles in about 4.6 CPU-seconds and runs about a quarter slower,
and every result keeps the bits users get at the default options (checked on this
project's CPU: each preset's months, the buying presets, the latency queue alone,
routed and rated, and the telemetry came out the same bytes; the full tier's
fingerprint tests compare months with bits taken at the default options).
LLVM at level 0 compiles faster still but rounds some floats in the last bit
differently, which the bit-for-bit checks would have to forgive.

An option this jaxlib does not know is left out (XLA stops the process on an unknown
flag), so the tests run on other jax versions too, only slower.
"""

from __future__ import annotations

import os

from mc import ParamError
from mc.cli import check_xla_flags

OPTIONS = ["--xla_backend_optimization_level=1", "--xla_cpu_use_fusion_emitters=false"]


def accepted(flags: list[str]) -> bool:
    """XLA starts a backend with ``flags`` (the command line's own probe, which
    remembers a value that passed)."""
    before = os.environ.get("XLA_FLAGS")
    os.environ["XLA_FLAGS"] = " ".join(flags)
    try:
        check_xla_flags()
        return True
    except ParamError:
        return False
    finally:
        if before is None:
            del os.environ["XLA_FLAGS"]
        else:
            os.environ["XLA_FLAGS"] = before


def flags(options: list[str] = OPTIONS) -> str:
    """``XLA_FLAGS`` as given, then each of ``options`` XLA accepts."""
    given = os.environ.get("XLA_FLAGS", "").split()
    wanted = list(options)
    if not accepted(given + wanted):
        wanted = [f for f in wanted if accepted(given + [f])]
    return " ".join(given + wanted)


if __name__ == "__main__":
    print(flags())
