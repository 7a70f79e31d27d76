"""`rlvr verify --verifier code` on a JSONL of completions (the real CLI, in a subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def test_rlvr_verify_code(tmp_path: Path) -> None:
    tests = {"format": "assert", "tests": "assert add(1, 2) == 3\nassert add(0, 0) == 0"}
    rows = [
        {"response": "```python\ndef add(a, b):\n    return a + b\n```", "reference": tests, "expected": "correct"},
        {"response": "def add(a, b):\n    return a - b", "reference": tests, "expected": "incorrect"},
        {"response": "sorry", "reference": tests, "expected": "no_answer"},
        {"response": "print(input()[::-1])", "expected": "correct",
         "reference": {"format": "stdio", "cases": [{"input": "abc", "output": "cba"}]}},
        {"response": "x = 1", "reference": {"format": "nope"}, "expected": "error"},
    ]
    src = tmp_path / "completions.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "verdicts.jsonl"
    rlvr = Path(sys.executable).with_name("rlvr")
    proc = subprocess.run([str(rlvr), "verify", "--verifier", "code", str(src), "-o", str(out), "--workers", "2",
                           "--verifier-arg", "reward=fraction"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    verdicts = [json.loads(line)["verdict"] for line in out.read_text().splitlines()]
    assert [v["status"] for v in verdicts] == [r["expected"] for r in rows]
    assert verdicts[1]["reward"] == 0.5 and verdicts[4]["reward"] is None
    assert "sandbox:" in verdicts[0]["detail"]
