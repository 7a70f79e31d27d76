"""Set-up time from a fresh clone: `bash scripts/setup.sh all` cold (empty uv cache) and warm (second run).

Clones this checkout's HEAD into a temporary folder (so no venv or cache of the checkout is reused),
runs the set-up twice and prints one table: seconds per venv (from the set-up's own `NAME ready (N s)`
lines) and in all, cold and warm, with the load average at the start of each run. Targets (issue 14):
all six venvs cold <= 300 s, warm <= 60 s. Downloads about 6 GB on the cold run.

    python benchmarks/setup_time.py [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
READY = re.compile(r"^\s+(\w+) (?:ready|FAILED) \((\d+) s\)", re.M)


def run_setup(clone: Path) -> tuple[dict[str, int], float, float]:
    """(seconds per venv, total seconds, 1-min load average at start) of one `setup.sh all` run."""
    load = os.getloadavg()[0]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UV_", "VIRTUAL_ENV"))}
    start = time.monotonic()
    proc = subprocess.run(["bash", "scripts/setup.sh", "all"], cwd=clone, env=env, capture_output=True, text=True)
    total = time.monotonic() - start
    if proc.returncode != 0:
        raise SystemExit(f"setup failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return {name: int(s) for name, s in READY.findall(proc.stdout)}, total, load


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keep", type=Path, help="clone into DIR and keep it (default: a temporary folder)")
    args = parser.parse_args()
    base = args.keep or Path(tempfile.mkdtemp(prefix="rlvr-setup-"))
    clone = base / "rlvr"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    cold = run_setup(clone)
    warm = run_setup(clone)
    names = list(cold[0])
    print("| run | load avg | " + " | ".join(names) + " | total s | target |")
    print("|---|---|" + "---|" * len(names) + "---|---|")
    for label, (parts, total, load), target in (("cold", cold, 300), ("warm", warm, 60)):
        cells = " | ".join(str(parts.get(n, "-")) for n in names)
        verdict = "met" if total <= target else "missed"
        print(f"| {label} | {load:.1f} | {cells} | {total:.0f} | <= {target} s: {verdict} |")
    if args.keep is None:
        subprocess.run(["rm", "-rf", str(base)], check=False)


if __name__ == "__main__":
    main()
