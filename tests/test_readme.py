"""The README's code blocks run, exactly as written.

A block's tag is the HTML comment on the line before its opening fence:
`<!-- readme-test: core -->` runs it in the core suite, `<!-- readme-test: trl -->` in the TRL
suite, `<!-- readme-test: extras -->` in the extras suite, `<!-- readme-test: skip -->` never
(set-up commands: CI runs those itself). Untagged
python blocks run in the core suite; untagged shell blocks are skipped.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_BLOCK = re.compile(r"(?:<!--\s*readme-test:\s*(?P<tag>\w+)\s*-->\s*\n)?```(?P<lang>\w+)\n(?P<code>.*?)```", re.S)


def _blocks(tag: str, lang: str) -> list[str]:
    text = (ROOT / "README.md").read_text()
    out = []
    for m in _BLOCK.finditer(text):
        block_tag = m["tag"] or ("core" if m["lang"] == "python" else "skip")
        if block_tag == tag and m["lang"] == lang:
            out.append(m["code"])
    return out


def _run_shell(code: str, cwd: Path) -> None:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    proc = subprocess.run(["bash", "-euo", "pipefail", "-c", code], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, (
        f"README block failed:\n{code}\n--- stdout\n{proc.stdout[-3000:]}\n--- stderr\n{proc.stderr[-3000:]}"
    )


def _run_python(blocks: list[str], cwd: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(cwd)
    namespace: dict[str, object] = {"__name__": "__readme__"}
    for code in blocks:
        exec(compile(code, "README.md", "exec"), namespace)


def test_readme_core_python(tmp_path, monkeypatch):
    blocks = _blocks("core", "python")
    assert blocks, "the README must show the Python API"
    _run_python(blocks, tmp_path, monkeypatch)


def test_readme_core_shell(tmp_path):
    blocks = _blocks("core", "bash")
    assert blocks, "the README must show the CLI quick start"
    for code in blocks:
        _run_shell(code, tmp_path)


@pytest.mark.trl
def test_readme_trl(tmp_path, monkeypatch):
    pytest.importorskip("trl")
    for code in _blocks("trl", "bash"):
        _run_shell(code, tmp_path)
    python_blocks = _blocks("trl", "python")
    if python_blocks:
        _run_python(python_blocks, tmp_path, monkeypatch)


@pytest.mark.extras
def test_readme_extras(tmp_path, monkeypatch):
    pytest.importorskip("skyrl_gym")
    python_blocks = _blocks("extras", "python")
    assert python_blocks, "the README must show the skyrl-gym example"
    _run_python(python_blocks, tmp_path, monkeypatch)
