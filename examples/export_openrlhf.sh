#!/usr/bin/env bash
# OpenRLHF from rlvr's files: `rlvr export` writes what OpenRLHF reads (jsonl rows with input/label keys,
# `reward_func.py`, and for a multi-turn env `agent_func.py`, the manifest), then `rlvr train --dry-run` writes
# the OpenRLHF command that trains on such an export (command.sh), without launching it. Core install: no
# OpenRLHF needed here; run command.sh where OpenRLHF is installed. The default env is a tool env (multi-turn).
#   bash examples/export_openrlhf.sh [OUT] [ENV_ID]  (default OUT: runs/examples/openrlhf, ENV_ID: math/reasoning-gym-tool-v1)
set -euo pipefail
out="${1:-runs/examples/openrlhf}"
env_id="${2:-math/reasoning-gym-tool-v1}"

echo "== rlvr export: the data, reward, agent and manifest files OpenRLHF reads"
rlvr export --backend openrlhf --env "$env_id" --env-arg size=64 --val-size 8 -o "$out/export" --overwrite
echo "== $out/export/rlvr_export.json"
cat "$out/export/rlvr_export.json"

echo "== rlvr train --dry-run: OpenRLHF's command over its own export in $out/run/export"
rlvr train --backend openrlhf --env "$env_id" --env-arg size=64 --steps 4 --dry-run -o "$out/run" >/dev/null
echo "== $out/run/command.sh"
cat "$out/run/command.sh"
