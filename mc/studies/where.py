"""Where a result was computed: the CPU, its arithmetic features, the jaxlib and the
XLA options, so a difference between two machines' results can be traced.

This is a record, not an identity: a manifest carries it beside the arithmetic that
made a result (``madeby``), and nothing is recomputed because it differs. The
serving model's draws and queue have the same bits on every CPU (``mc.kernels.exact``);
the fleet's float32 samplers may differ in a last bit between CPUs with and without
fused multiply-add, which this record shows.
"""

from __future__ import annotations

import functools
import importlib.metadata as md
import os
import platform
import re
from pathlib import Path

CPUINFO = Path("/proc/cpuinfo")
# The feature flags that change what XLA compiles for a CPU: vector widths, fused
# multiply-add, half and bfloat16 arithmetic, matrix units (x86: /proc/cpuinfo
# "flags"; ARM: "Features").
ARITHMETIC_FEATURES = re.compile(r"^(sse\d?(_\d)?|ssse3|sse4[a-z_0-9]*|avx[a-z_0-9]*|fma\d?|f16c|amx[a-z_0-9]*|"
                                 r"fp|asimd[a-z0-9]*|sve[a-z0-9]*|sme\d*|sme[fib][a-z0-9]*|bf16|i8mm|fphp)$")


def _cpuinfo(text: str) -> tuple[str | None, list[str]]:
    """The CPU model and its arithmetic features from the text of /proc/cpuinfo
    (the first processor's; x86 and ARM layouts)."""
    model, flags = None, []
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip().lower()
        if model is None and key in ("model name", "cpu model", "hardware"):
            model = value.strip() or None
        elif not flags and key in ("flags", "features"):
            flags = sorted({f for f in value.split() if ARITHMETIC_FEATURES.match(f)})
    return model, flags


@functools.cache
def _cpu() -> tuple[str | None, tuple[str, ...]]:
    try:
        model, flags = _cpuinfo(CPUINFO.read_text(errors="replace"))
    except OSError:
        model, flags = None, []
    return model or platform.processor() or None, tuple(flags)


def machine() -> dict:
    """``{"cpu", "cpu_features", "arch", "os", "jaxlib", "xla_flags"}``: the CPU's
    model (None where the system does not say), its arithmetic features (x86 SIMD and
    FMA flags, ARM's ``Features``; empty where unknown), the architecture, the
    operating system, jaxlib's version and ``XLA_FLAGS`` as this process has it
    (``--xla_cpu_max_isa`` caps the features XLA uses)."""
    model, flags = _cpu()
    try:
        jaxlib = md.version("jaxlib")
    except md.PackageNotFoundError:
        jaxlib = None
    return {"cpu": model, "cpu_features": list(flags), "arch": platform.machine() or None,
            "os": platform.system() or None, "jaxlib": jaxlib, "xla_flags": os.environ.get("XLA_FLAGS", "")}


__all__ = ["ARITHMETIC_FEATURES", "CPUINFO", "machine"]
