#!/usr/bin/env bash
# On an NVIDIA GPU machine, from the repository root:
#   scripts/gpu_check.sh [--quick]
# Installs mc with the gpu extra (jax[cuda13]) into .venv-gpu, checks per-month
# outputs against the CPU on the same seed, and times throughput
# (target: 1e8 fleet-months/s; 1e9 months with summaries in under a minute).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv-gpu/bin/python ]; then
  "$PY" -m venv .venv-gpu
  .venv-gpu/bin/pip install -q --upgrade pip
  .venv-gpu/bin/pip install -q -e ".[gpu,test]"
fi
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv || true
.venv-gpu/bin/python -c "import jax; print(jax.__version__, jax.devices())"
.venv-gpu/bin/python scripts/gpu_check.py "$@"
