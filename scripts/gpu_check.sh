#!/usr/bin/env bash
# The GPU check, from the repository root of a machine with an NVIDIA GPU:
#   scripts/gpu_check.sh OUTDIR          install mc over the machine's jax, then check
#   scripts/gpu_check.sh --dry OUTDIR    no install, tiny sizes, any backend (the tests run this)
# The GPU machine has no network: mc is installed without its dependencies over
# the jax (with CUDA), NumPy and pandas already there. Figures go to OUTDIR
# (agreement with the CPU, throughput at chunk 2^20, a jax.profiler trace,
# 10^9 months with summaries); sized to end in under 5 minutes.
set -euo pipefail
DRY=""
if [ "${1:-}" = "--dry" ]; then DRY="--dry"; shift; fi
OUT=${1:?usage: scripts/gpu_check.sh [--dry] OUTDIR}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ -z "$DRY" ]; then
  "$PY" -m pip install -q --no-deps --no-build-isolation -e .
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$OUT/nvidia-smi.csv" || true
fi
"$PY" -c "import jax; print('jax', jax.__version__, jax.devices())"
exec "$PY" scripts/gpu_check.py "$OUT" $DRY
