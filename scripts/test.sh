#!/usr/bin/env bash
# Run every test suite, each in the virtual environment its users would have.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh

echo "== lint (ruff) and types (mypy, strict)"
.venv/bin/python -m ruff check src tests benchmarks
.venv/bin/python -m mypy

echo "== core suite (.venv, no extras)"
.venv/bin/python -m pytest -m "not trl and not vllm and not extras and not verl and not openrlhf" "$@"

echo "== extras suite (.venvs/extras: sql/code/ray/e2b extras, PostgreSQL)"
.venvs/extras/bin/python -m pytest -m extras "$@"

echo "== TRL suite (.venvs/trl)"
.venvs/trl/bin/python -m pytest -m trl "$@"

echo "== vLLM suite (.venvs/vllm: a real vLLM server on loopback)"
.venvs/vllm/bin/python -m pytest -m vllm "$@"

echo "== veRL suite (.venvs/verl)"
.venvs/verl/bin/python -m pytest -m verl "$@"

echo "== OpenRLHF suite (.venvs/openrlhf)"
.venvs/openrlhf/bin/python -m pytest -m openrlhf "$@"
