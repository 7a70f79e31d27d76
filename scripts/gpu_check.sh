#!/usr/bin/env bash
# GPU check: TRL, veRL and OpenRLHF on one small model (SmolLM2-135M-Instruct) and one environment, on a
# single GPU, in under 8 minutes; writes OUT/report.html, OUT/summary.json and OUT/results.md (a table for
# BENCHMARKS.md).
#
#   bash scripts/gpu_check.sh [--dry-run] [-o OUT]
#
# It runs `rlvr compare --backends trl,verl,openrlhf` (parity replay of recorded rollouts through each
# backend's adapter, then STEPS training steps per backend, each stopped at TRAIN_TIMEOUT seconds, the
# whole compare at COMPARE_TIMEOUT seconds) with each backend in its own venv:
#   RLVR_TRL_PYTHON       (default .venvs/trl/bin/python)
#   RLVR_VERL_PYTHON      (default .venvs/verl/bin/python)
#   RLVR_OPENRLHF_PYTHON  (default .venvs/openrlhf/bin/python)
# Those venvs need a CUDA build of torch for veRL/OpenRLHF to train (scripts/setup.sh installs the CPU
# build: on the GPU machine, `pip install torch==2.13.0` from the CUDA index into them first).
# Knobs (environment variables): GPU_CHECK_ENV, GPU_CHECK_ENV_ARGS (space-separated KEY=VALUE), STEPS,
# TRAIN_TIMEOUT, COMPARE_TIMEOUT.
#
# --dry-run (no GPU needed): builds and prints every command without training: the veRL and OpenRLHF
# commands through `rlvr train --dry-run` in their venvs, veRL's overrides composed with veRL's own hydra
# config (unknown keys fail), and the compare command line.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DRY_RUN=0
OUT="gpu-check"
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) DRY_RUN=1 ;;
    -o|--output) OUT="$2"; shift ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"

TRL_PY="${RLVR_TRL_PYTHON:-$ROOT/.venvs/trl/bin/python}"
VERL_PY="${RLVR_VERL_PYTHON:-$ROOT/.venvs/verl/bin/python}"
OPENRLHF_PY="${RLVR_OPENRLHF_PYTHON:-$ROOT/.venvs/openrlhf/bin/python}"
ENV_ID="${GPU_CHECK_ENV:-math/reasoning-gym-v1}"
# easy arithmetic (two 1-digit terms, + and -): SmolLM2-135M gets a non-zero reward within a few steps
ENV_ARGS="${GPU_CHECK_ENV_ARGS:-size=256 seed=0 config={\"min_terms\":2,\"max_terms\":2,\"min_digits\":1,\"max_digits\":1,\"operators\":[\"+\",\"-\"]}}"
STEPS="${STEPS:-3}"
TRAIN_TIMEOUT="${TRAIN_TIMEOUT:-130}"
COMPARE_TIMEOUT="${COMPARE_TIMEOUT:-450}"

for py in "$TRL_PY" "$VERL_PY" "$OPENRLHF_PY"; do
  [ -x "$py" ] || { echo "missing interpreter $py (run scripts/setup.sh, or set RLVR_*_PYTHON)" >&2; [ "$DRY_RUN" = 1 ] || exit 2; }
done
env_flags=()
for kv in $ENV_ARGS; do env_flags+=(--env-arg "$kv"); done

# Tight settings for a 135M model on one GPU: short sequences, no checkpoints, eager vLLM (no graph capture).
verl_args=(
  --verl-arg data.max_prompt_length=256 --verl-arg data.max_response_length=128
  --verl-arg actor_rollout_ref.rollout.gpu_memory_utilization=0.4 --verl-arg actor_rollout_ref.rollout.enforce_eager=True
  --verl-arg actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=8
  --verl-arg actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=8
  --verl-arg actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=8 --verl-arg trainer.save_freq=-1
)
openrlhf_args=(
  --openrlhf-arg rollout.max_new_tokens=128 --openrlhf-arg data.max_len=512
  --openrlhf-arg vllm.gpu_memory_utilization=0.4 --openrlhf-arg vllm.enforce_eager=true
  --openrlhf-arg rollout.micro_batch_size=8 --openrlhf-arg train.micro_batch_size=8
)
trl_args=(--trl-arg max_completion_length=128 --trl-arg num_generations=4 --trl-arg per_device_train_batch_size=16)

start=$(date +%s)
if [ "$DRY_RUN" = 1 ]; then
  MODEL="smollm2"
else
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total --format=csv,noheader \
    || { echo "no GPU visible (nvidia-smi missing); use --dry-run" >&2; exit 2; }
  echo "== preparing SmolLM2-135M-Instruct once (GGUF -> transformers folder, in the TRL venv)"
  MODEL="$("$TRL_PY" -c 'from rlvr.runners.models import resolve_model; print(resolve_model("smollm2"))' | tail -n1)"
fi

compare_cmd=("$TRL_PY" -m rlvr.runners.cli compare --env "$ENV_ID" "${env_flags[@]}" --backends trl,verl,openrlhf
  --model "$MODEL" --steps "$STEPS" -o "$OUT" --trl-python "$TRL_PY" --verl-python "$VERL_PY"
  --openrlhf-python "$OPENRLHF_PY" --train-timeout "$TRAIN_TIMEOUT" "${trl_args[@]}" "${verl_args[@]}"
  "${openrlhf_args[@]}")

if [ "$DRY_RUN" = 1 ]; then
  echo "== dry run: backend commands (rlvr train --dry-run)"
  for backend in verl openrlhf; do
    py="$VERL_PY"; extra=("${verl_args[@]}")
    if [ "$backend" = openrlhf ]; then py="$OPENRLHF_PY"; extra=("${openrlhf_args[@]}"); fi
    [ -x "$py" ] || py="$(command -v python3)"
    targs=()
    for ((i = 1; i < ${#extra[@]}; i += 2)); do targs+=(--trainer-arg "${extra[$i]}"); done
    "$py" -m rlvr.runners.cli train --backend "$backend" --env "$ENV_ID" "${env_flags[@]}" --model "$MODEL" \
      --steps "$STEPS" -o "$OUT/dry-run/$backend" --dry-run --backend-python "$py" "${targs[@]}"
  done
  if [ -x "$VERL_PY" ] && "$VERL_PY" -c "import verl" 2>/dev/null; then
    echo "== veRL overrides composed with veRL's hydra config"
    "$VERL_PY" - "$OUT/dry-run/verl/run.json" <<'EOF'
import json, sys
from rlvr.adapters.verl import verl_config
command = json.load(open(sys.argv[1]))["command"]
config = verl_config(command[3:])
print(f"ok: {len(command) - 3} overrides; total_training_steps={config.trainer.total_training_steps}, "
      f"max_response_length={config.data.max_response_length}, rollout={config.actor_rollout_ref.rollout.name}")
EOF
  fi
  echo "== the compare command a GPU run executes (under timeout $COMPARE_TIMEOUT s):"
  printf '%q ' "${compare_cmd[@]}"; echo
  exit 0
fi

cleanup() {  # Ray clusters veRL/OpenRLHF started and left behind after a timeout
  for py in "$VERL_PY" "$OPENRLHF_PY"; do "$(dirname "$py")/ray" stop --force >/dev/null 2>&1 || true; done
}
trap cleanup EXIT

# rlvr compare writes only into a new folder or an earlier compare's: drop this script's own dry-run files
rm -rf "$OUT/dry-run"
echo "== rlvr compare (train timeout $TRAIN_TIMEOUT s per backend, $COMPARE_TIMEOUT s in all)"
status=0
timeout --signal=INT --kill-after=20 "$COMPARE_TIMEOUT" "${compare_cmd[@]}" 2>&1 | tee "$OUT/gpu_check.log" || status=$?
total=$(( $(date +%s) - start ))

"$TRL_PY" - "$OUT" "$total" "$status" <<'EOF'
import json, pathlib, sys
out, total, status = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3]
path = out / "summary.json"
lines = ["| backend | status | steps | final reward | train wall s | tokens/s | parity (agree/records) |",
         "|---|---|---|---|---|---|---|"]
if path.is_file():
    summary = json.loads(path.read_text())
    for b in summary["backends"]:
        t, p = b.get("train") or {}, b.get("parity") or {}
        fmt = lambda v, f="{:.3g}": "-" if v is None else f.format(v)
        parity = "failed" if "error" in p else (f"{p['agree']}/{p['records']}" if p else "-")
        lines.append(f"| {b['backend']} | {b['status']}{': ' + b['reason'] if b['reason'] else ''} | "
                     f"{t.get('steps', '-')} | {fmt(t.get('final_reward'))} | {fmt(t.get('wall_s'), '{:.0f}')} | "
                     f"{fmt(t.get('tokens_per_s'), '{:,.0f}')} | {parity} |")
else:
    lines.append(f"| (no summary.json: compare exited with {status}) | | | | | | |")
lines.append(f"\nTotal wall time {total} s (compare exit code {status}); report: {out / 'report.html'}")
(out / "results.md").write_text("\n".join(lines) + "\n")
print("\n".join(lines))
EOF
exit "$status"
