# Caches and temp dirs under the checkout (sourced by setup.sh and test.sh).
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PIP_CACHE_DIR="${PIP_CACHE_DIR:-$ROOT/.cache/pip}"
export HF_HOME="${HF_HOME:-$ROOT/.cache/huggingface}"
export HF_HUB_OFFLINE="${HF_HUB_OFFLINE:-1}"
export MPLCONFIGDIR="${MPLCONFIGDIR:-$ROOT/.cache/matplotlib}"
export RAY_TMPDIR="${RAY_TMPDIR:-/tmp/rlvr-ray}"
export RLVR_CACHE="${RLVR_CACHE:-$ROOT/.cache/rlvr}"
export XDG_CACHE_HOME="${XDG_CACHE_HOME:-$ROOT/.cache}"
export PIP_DISABLE_PIP_VERSION_CHECK=1
