#!/bin/bash
set -euo pipefail
cd /app
head -3 data/employees.csv
mkdir -p out
python3 - <<'PY'
import csv
import json
from collections import defaultdict

with open("data/employees.csv", newline="") as f:
    rows = list(csv.DictReader(f))

def number(text):
    value = float(text)
    return int(value) if value.is_integer() else value

employees = sorted(
    (
        {
            "id": int(r["id"]),
            "name": r["name"],
            "department": r["department"],
            "salary": number(r["salary"]),
            "start_date": r["start_date"],
            "active": r["active"] == "Y",
        }
        for r in rows
    ),
    key=lambda e: e["id"],
)
with open("out/employees.json", "w") as f:
    json.dump(employees, f, indent=2)

groups = defaultdict(list)
for e in employees:
    groups[e["department"]].append(e)
departments = {
    name: {
        "headcount": len(members),
        "active": sum(m["active"] for m in members),
        "avg_salary": round(sum(m["salary"] for m in members) / len(members), 2),
    }
    for name, members in sorted(groups.items())
}
with open("out/departments.json", "w") as f:
    json.dump(departments, f, indent=2)
PY
jq length out/employees.json
jq . out/departments.json
