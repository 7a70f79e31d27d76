#!/bin/bash
set -euo pipefail
cd /app
head -3 logs/access.log
mkdir -p report
python3 - <<'PY'
import json
import re
from collections import Counter

pattern = re.compile(r'^(\S+) \S+ \S+ \[[^\]]+\] "(\S+) (\S+) [^"]*" (\d{3}) (\S+)')
ips, statuses, paths = set(), Counter(), Counter()
total = size = 0
with open("logs/access.log") as fh:
    for line in fh:
        if not line.strip():
            continue
        m = pattern.match(line)
        if m is None:
            raise SystemExit(f"unparsed line: {line!r}")
        ip, _method, path, status, nbytes = m.groups()
        total += 1
        ips.add(ip)
        statuses[status] += 1
        paths[path.split("?", 1)[0]] += 1
        size += 0 if nbytes == "-" else int(nbytes)
top = sorted(paths.items(), key=lambda kv: (-kv[1], kv[0].encode()))[:5]
summary = {
    "total_requests": total,
    "unique_ips": len(ips),
    "status_counts": dict(sorted(statuses.items())),
    "bytes_total": size,
    "top_paths": [{"path": p, "count": n} for p, n in top],
    "server_error_rate": round(sum(n for s, n in statuses.items() if s.startswith("5")) / total, 4),
}
with open("report/summary.json", "w") as fh:
    json.dump(summary, fh, indent=2)
PY
cat report/summary.json
