#!/usr/bin/env bash
# Set up (idempotent: scripts/setup.sh all) and run every test suite, each in the venv its users would have.
#   bash scripts/test.sh [PYTEST_ARGS ...]     (PYTEST_ARGS go to every pytest run, e.g. -x or -k NAME)
# Suites: ruff + mypy + the docs site, then core (.venv, no extras), extras, trl, vllm, verl, openrlhf. The last lines
# print one closing count over all suites ("total: N passed, N failed, N skipped").
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh all
source scripts/env.sh

echo "== lint (ruff) and types (mypy, strict)"
.venv/bin/python -m ruff check --no-cache src tests benchmarks scripts examples
.venv/bin/python -m mypy
echo "== docs site (mkdocs build --strict: a broken link or an unlisted page fails)"
NO_MKDOCS_2_WARNING=1 .venv/bin/python -m mkdocs build --strict --quiet

rm -rf .cache/test-reports && mkdir -p .cache/test-reports
suite() {  # NAME PYTHON MARKER-EXPRESSION: run one pytest suite, keep its JUnit report for the total
  local name="$1" py="$2" marker="$3"; shift 3
  echo "== $name suite ($py)"
  "$py" -m pytest -m "$marker" --durations=15 --junitxml=".cache/test-reports/$name.xml" "$@"
}
# Every suite runs, one after the other (the sandbox tests time kills and memory caps in tenths of a second: a
# suite beside them makes them flaky); a failing suite does not stop the others, the script fails at the end.
failed=0
suite core .venv/bin/python "not trl and not vllm and not extras and not verl and not openrlhf" "$@" || failed=1
suite extras .venvs/extras/bin/python extras "$@" || failed=1
suite trl .venvs/trl/bin/python trl "$@" || failed=1
suite vllm .venvs/vllm/bin/python vllm "$@" || failed=1
suite verl .venvs/verl/bin/python verl "$@" || failed=1
suite openrlhf .venvs/openrlhf/bin/python openrlhf "$@" || failed=1

.venv/bin/python - <<'PY'
import pathlib
import xml.etree.ElementTree as ET
total = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
for path in sorted(pathlib.Path(".cache/test-reports").glob("*.xml")):
    for suite in ET.parse(path).getroot().iter("testsuite"):
        for key in total:
            total[key] += int(suite.get(key, 0))
failed = total["failures"] + total["errors"]
passed = total["tests"] - failed - total["skipped"]
print(f"total: {passed} passed, {failed} failed, {total['skipped']} skipped")
PY
exit "$failed"
