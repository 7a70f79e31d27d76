#!/bin/bash
set -euo pipefail
cd /app
cat config/base.env config/production.json templates/nginx.conf.tmpl
mkdir -p deploy
python3 - <<'PY'
import json
import re

merged = {}
for line in open("config/base.env"):
    line = line.strip()
    if not line or line.startswith("#"):
        continue
    key, _, value = line.partition("=")
    if len(value) >= 2 and value[0] == value[-1] == '"':
        value = value[1:-1]
    merged[key] = value
for key, value in json.load(open("config/production.json")).items():
    merged[key] = str(value).lower() if isinstance(value, bool) else str(value)

with open("deploy/app.env", "w") as out:
    for key in sorted(merged, key=str.encode):
        value = merged[key]
        out.write(f'{key}="{value}"\n' if " " in value else f"{key}={value}\n")


def substitute(match):
    name, default = match.group(1), match.group(3)
    if name in merged:
        return merged[name]
    if default is not None:
        return default
    raise SystemExit(f"undefined variable {name}")


template = open("templates/nginx.conf.tmpl").read()
open("deploy/nginx.conf", "w").write(re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}", substitute, template))
PY
cat deploy/app.env deploy/nginx.conf
