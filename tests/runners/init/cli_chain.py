"""Run several `rlvr` commands in one process (the real CLI app, argv as typed) and print their results as JSON.

Used by test_init_packages.py inside the virtual environment the scaffolded packages are installed in
(`python cli_chain.py '[["envs"], ["check", "ID"]]'`), so the chain costs one interpreter start, not one a
command. Prints `[{"argv": [...], "exit_code": int, "output": str}, ...]` on its last line.
"""

from __future__ import annotations

import json
import sys

from typer.testing import CliRunner

from rlvr.runners.cli import app


def main() -> None:
    """Run each argv of the JSON list in `sys.argv[1]`; print one JSON list of results."""
    runner = CliRunner()
    results = []
    for argv in json.loads(sys.argv[1]):
        result = runner.invoke(app, argv)
        results.append({"argv": argv, "exit_code": result.exit_code, "output": result.output})
    print(json.dumps(results))


if __name__ == "__main__":
    main()
