#!/usr/bin/env bash
# veRL from rlvr's files: `rlvr export` writes what veRL reads (parquet rows, a `compute_score` reward module,
# the manifest), then `rlvr train --dry-run` writes the veRL command that trains on such an export (command.sh),
# without launching it. Core install: no veRL needed here; run command.sh where veRL is installed.
#   bash examples/export_verl.sh [OUT] [ENV_ID]      (default OUT: runs/examples/verl, ENV_ID: math/reasoning-gym-v1)
set -euo pipefail
out="${1:-runs/examples/verl}"
env_id="${2:-math/reasoning-gym-v1}"

echo "== rlvr export: the data, reward and manifest files veRL reads"
rlvr export --backend verl --env "$env_id" --env-arg size=64 --val-size 8 -o "$out/export" --overwrite
echo "== $out/export/rlvr_export.json"
cat "$out/export/rlvr_export.json"

echo "== rlvr train --dry-run: veRL's command over its own export in $out/run/export"
rlvr train --backend verl --env "$env_id" --env-arg size=64 --steps 4 --dry-run -o "$out/run" >/dev/null
echo "== $out/run/command.sh"
cat "$out/run/command.sh"
