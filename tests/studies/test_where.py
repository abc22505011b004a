"""Where a result ran (``mc.studies.where``): the CPU model and arithmetic features read
from /proc/cpuinfo on x86 and ARM, jaxlib and XLA_FLAGS, in every manifest, and never
part of the arithmetic that decides whether a result is reused."""

from __future__ import annotations

import json

from mc.studies import madeby, manifest, where

X86 = """processor	: 0
vendor_id	: GenuineIntel
model name	: Intel(R) Xeon(R) Platinum 8480+
flags		: fpu vme sse sse2 ssse3 fma cx16 sse4_1 sse4_2 popcnt avx f16c avx2 avx512f avx512_fp16 amx_tile amx_bf16 sse4a
processor	: 1
model name	: another
flags		: fpu
"""
ARM = """processor	: 0
BogoMIPS	: 50.00
Features	: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm sve sve2 bf16 i8mm
CPU implementer	: 0x41
"""


def test_cpuinfo_gives_the_first_processors_model_and_arithmetic_features():
    model, flags = where._cpuinfo(X86)
    assert model == "Intel(R) Xeon(R) Platinum 8480+"
    assert flags == sorted(["sse", "sse2", "ssse3", "fma", "sse4_1", "sse4_2", "avx", "f16c", "avx2", "avx512f",
                            "avx512_fp16", "amx_tile", "amx_bf16", "sse4a"])
    assert where._cpuinfo("flags : smep smap sme sme2 smef64f64")[1] == ["sme", "sme2", "smef64f64"]
    model, flags = where._cpuinfo(ARM)
    assert model is None and flags == ["asimd", "asimdhp", "asimdrdm", "bf16", "fp", "fphp", "i8mm", "sve", "sve2"]
    assert where._cpuinfo("") == (None, [])


def test_machine_says_where_and_a_manifest_records_it(monkeypatch):
    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_max_isa=AVX2")
    m = where.machine()
    assert set(m) == {"cpu", "cpu_features", "arch", "os", "jaxlib", "xla_flags"}
    assert m["xla_flags"] == "--xla_cpu_max_isa=AVX2" and m["jaxlib"] and isinstance(m["cpu_features"], list)
    made = manifest.build({"a": 1}, seed=0, n=1)
    assert made["machine"] == m
    json.dumps(made)  # plain data


def test_where_it_ran_is_not_the_arithmetic(monkeypatch):
    """Another CPU or other XLA options change the record, not the arithmetic that
    decides whether a stored result is reused."""
    before = madeby.arithmetic()
    assert "studies/where.py" not in madeby.counted()
    monkeypatch.setattr(where, "machine", lambda: {"cpu": "elsewhere"})
    made = manifest.build({"a": 1}, seed=0, n=1)
    assert made["machine"] == {"cpu": "elsewhere"} and made["arithmetic"] == before
