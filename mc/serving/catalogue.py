"""Real models and GPUs for the serving arithmetic (SPEC §5), each with its source.

Units: bytes, bytes/s, FLOP/s. Datasheet "GB" of HBM are read as GiB (2^30 bytes):
the parts are built from binary-sized stacks and ``nvidia-smi`` reports, e.g.,
81,920 MiB for the 80 GB A100 and 81,559 MiB for the 80 GB H100. Bandwidth
(TB/s) and FLOP/s are decimal, as datasheets state them. Peak FLOP/s are
*dense* bf16 (datasheets headline the 2:4-sparse figure, twice as large).

A replica of several cards (tensor parallel, SPEC §11) adds each model's ``hidden``
size (the width of the activations its layers all-reduce) and each GPU's link:
``link_bandwidth`` in bytes/s *one direction* (datasheets state NVLink as the total
of both directions: 900 GB/s for H100 SXM is 450 GB/s each way) and
``link_latency``, the fixed cost of one small all-reduce among the cards of a node.
No datasheet states that latency; the figures below are labelled typical.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import _validate as v

GIB = 2**30


@dataclass(frozen=True)
class ModelSpec:
    """A decoder-only transformer, as far as serving cost goes."""

    name: str
    layers: int
    kv_heads: int  # grouped-query attention: KV heads, not query heads
    head_dim: int
    params: float  # parameter count
    source: str
    hidden: int  # hidden size: the activation width a tensor-parallel replica all-reduces


@dataclass(frozen=True)
class GPUSpec:
    name: str
    memory: float  # bytes of HBM
    bandwidth: float  # bytes/s of HBM bandwidth
    flops: float  # FLOP/s, peak dense bf16
    source: str
    link_bandwidth: float  # bytes/s one direction between cards of one node (NVLink, or PCIe)
    link_latency: float  # s: the fixed cost of one all-reduce among the node's cards
    link_source: str  # where the two link figures come from


_LLAMA3_8B = "meta-llama/Meta-Llama-3-8B config.json and model card"
_LLAMA3_70B = "meta-llama/Meta-Llama-3-70B config.json and model card"

MODELS: dict[str, ModelSpec] = {m.name: m for m in (
    # 32 layers, hidden 4096 / 32 query heads = head_dim 128, 8 KV heads. Parameters
    # from the config: 32 × 218,112,000 per layer + 2 × 128,256 × 4,096 (untied
    # embeddings) + 4,096 (final norm) = 8,030,261,248.
    ModelSpec("llama-3-8b", 32, 8, 128, 8_030_261_248,
              _LLAMA3_8B + ": num_hidden_layers=32, num_key_value_heads=8, hidden_size=4096, "
              "num_attention_heads=32, 8.03B parameters", hidden=4096),
    # 80 layers, hidden 8192 / 64 query heads = head_dim 128, 8 KV heads;
    # 80 × 855,654,400 + 2 × 128,256 × 8,192 + 8,192 = 70,553,706,496.
    ModelSpec("llama-3-70b", 80, 8, 128, 70_553_706_496,
              _LLAMA3_70B + ": num_hidden_layers=80, num_key_value_heads=8, hidden_size=8192, "
              "num_attention_heads=64, 70.6B parameters", hidden=8192),
    # 32 × 218,112,000 + 2 × 32,000 × 4,096 + 4,096 = 7,241,732,096.
    ModelSpec("mistral-7b", 32, 8, 128, 7_241_732_096,
              "mistralai/Mistral-7B-v0.1 config.json: num_hidden_layers=32, "
              "num_key_value_heads=8, hidden_size=4096, head_dim 4096/32=128, 7.24B parameters",
              hidden=4096),
    # 126 layers, hidden 16384 / 128 query heads = head_dim 128, 8 KV heads, MLP 53,248,
    # vocabulary 128,256 (untied): 126 × 3,187,703,808 per layer + 2 × 128,256 × 16,384
    # + 16,384 = 405,853,388,800. Too large for one card: a replica of several (SPEC §11).
    ModelSpec("llama-3.1-405b", 126, 8, 128, 405_853_388_800,
              "meta-llama/Llama-3.1-405B config.json: num_hidden_layers=126, num_key_value_heads=8, "
              "hidden_size=16384, num_attention_heads=128, intermediate_size=53248, vocab_size=128256, "
              "405.9B parameters", hidden=16384),
    # Round-number generics for back-of-envelope work (SPEC §5's worked example).
    ModelSpec("70b", 80, 8, 128, 70e9, "generic: exactly 70e9 parameters, KV shape and hidden size of Llama-3-70B",
              hidden=8192),
    ModelSpec("8b", 32, 8, 128, 8e9, "generic: exactly 8e9 parameters, KV shape and hidden size of Llama-3-8B",
              hidden=4096),
)}

# One small all-reduce among the cards of a node: no datasheet states it; these are
# typical figures, labelled so in each source (NVLink: a few µs; PCIe: tens of µs at most).
_NVLINK_LATENCY = 5e-6
_NVLINK_LATENCY_SOURCE = "Latency typical, not a datasheet figure: a small all-reduce within an NVLink node, 5 µs"
_PCIE_LATENCY = 15e-6

GPUS: dict[str, GPUSpec] = {g.name: g for g in (
    GPUSpec("a100-80gb", 80 * GIB, 2.039e12, 312e12,
            "NVIDIA A100 Tensor Core GPU datasheet, A100 80GB SXM: 80GB HBM2e, 2,039 GB/s, "
            "BF16 312 TFLOPS (624 with sparsity)",
            300e9, _NVLINK_LATENCY, "A100 datasheet: NVLink (3rd generation) 600 GB/s, both directions; "
            "300e9 each way. " + _NVLINK_LATENCY_SOURCE),
    GPUSpec("h100-sxm", 80 * GIB, 3.35e12, 989e12,
            "NVIDIA H100 Tensor Core GPU datasheet, H100 SXM: 80GB, 3.35 TB/s, "
            "BF16 1,979 TFLOPS with sparsity (989 dense)",
            450e9, _NVLINK_LATENCY, "H100 datasheet, SXM: NVLink (4th generation) 900 GB/s, both directions; "
            "450e9 each way. " + _NVLINK_LATENCY_SOURCE),
    GPUSpec("h200", 141 * GIB, 4.8e12, 989e12,
            "NVIDIA H200 Tensor Core GPU datasheet, H200 SXM: 141GB HBM3e, 4.8 TB/s, "
            "BF16 1,979 TFLOPS with sparsity (989 dense)",
            450e9, _NVLINK_LATENCY, "H200 datasheet, SXM: NVLink 900 GB/s, both directions; 450e9 each way. "
            + _NVLINK_LATENCY_SOURCE),
    GPUSpec("b200", 180 * GIB, 8.0e12, 2.25e15,
            "NVIDIA HGX B200 datasheet, per GPU (1/8 of the HGX board): 180GB HBM3e, 8 TB/s, "
            "FP16/BF16 4.5 PFLOPS with sparsity (2.25 dense)",
            900e9, _NVLINK_LATENCY, "HGX B200 datasheet: NVLink (5th generation) 1.8 TB/s per GPU, both "
            "directions (14.4 TB/s over the board's 8); 900e9 each way. " + _NVLINK_LATENCY_SOURCE),
    GPUSpec("l40s", 48 * GIB, 0.864e12, 362.05e12,
            "NVIDIA L40S datasheet: 48GB GDDR6, 864 GB/s, BF16 362.05 TFLOPS "
            "(733 with sparsity)",
            32e9, _PCIE_LATENCY, "L40S datasheet: no NVLink; PCIe Gen4 x16, 64 GB/s both directions, so 32e9 "
            "each way (the datasheet's peak; cards all-reduce through PCIe). Latency typical, not a datasheet "
            "figure: a small all-reduce over PCIe, about 15 µs"),
)}

# Other names of the same model or GPU; the last ones are the buying catalogue's
# (SPEC §4: chat-8b and premium-70b are the generic 8b and 70b, a100-used an A100
# 80GB bought used), so every command takes every name.
MODEL_ALIASES = {"llama3-8b": "llama-3-8b", "llama3-70b": "llama-3-70b", "llama3.1-405b": "llama-3.1-405b", "chat-8b": "8b", "premium-70b": "70b"}
GPU_ALIASES = {"a100": "a100-80gb", "h100": "h100-sxm", "h200-sxm": "h200", "hgx-b200": "b200",
               "a100-used": "a100-80gb"}


def _lookup(kind: str, name: str, table: dict, aliases: dict):
    key = name.strip().lower() if isinstance(name, str) else None  # a list or an array is no name
    key = aliases.get(key, key)
    if key not in table:
        known = sorted(list(table) + list(aliases))
        v.fail(kind, name, "must be one of " + ", ".join(known))
    return table[key]


def model(name: str) -> ModelSpec:
    """A model by name or alias (case-insensitive); unknown names list the known."""
    return _lookup("model", name, MODELS, MODEL_ALIASES)


def gpu(name: str) -> GPUSpec:
    """A GPU by name or short alias (``h100``, ``a100``, ...)."""
    return _lookup("gpu", name, GPUS, GPU_ALIASES)
