"""`rlvr init` packages of every kind, installed as a user installs them, through the whole chain.

`pip install -e DIR` -> `rlvr envs` lists it -> `rlvr check` passes (oracle correct, no-op wrong,
deterministic) -> `rlvr check --adversarial` finds no false pass -> `rlvr eval --policy oracle`
scores 1.0 -> `rlvr export --backend verl` writes its files; the package's own tests pass; and in the
TRL environment `rlvr train --backend trl --steps 1` runs on one of them. So the templates cannot
drift from rlvr's API.

The packages go into a fresh virtual environment layered on the one running the tests (a `.pth`
file adds its site-packages: rlvr from this checkout and its dependencies, nothing copied); they
are installed with `uv pip install -e` (their build backend from the package index or uv's cache,
`--no-deps`: rlvr is not on the index, and it is already importable), so the test venv itself is
never modified and the entry points are read from the installed metadata, as in a user's venv.
"""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rlvr.runners.init import KINDS, Scaffold, init_env
from test_installed_wheel import _run, _uv

CHAIN = Path(__file__).with_name("cli_chain.py")


def _layered_venv(where: Path) -> Path:
    """A venv whose Python also sees this interpreter's site-packages; returns its python."""
    _run([_uv(), "venv", "-q", "--python", sys.executable, str(where)], cwd=where.parent)
    python = where / "bin" / "python"
    inner = Path(subprocess.run([str(python), "-c", "import site; print(site.getsitepackages()[0])"],
                                capture_output=True, text=True, check=True).stdout.strip())
    lines = [f"import site; site.addsitedir({p!r})" for p in site.getsitepackages()]
    (inner / "_rlvr_test_base.pth").write_text("\n".join(lines) + "\n")
    return python


def _install(kinds: list[str], root: Path) -> tuple[Path, dict[str, Scaffold]]:
    made = {kind: init_env(f"made-{kind}", kind, root / kind) for kind in kinds}
    python = _layered_venv(root / "venv")
    editable = [arg for m in made.values() for arg in ("-e", str(m.directory))]
    _run([_uv(), "pip", "install", "-q", "--python", str(python), "--no-deps", *editable], cwd=root)
    return python, made


def _chain(python: Path, commands: list[list[str]], cwd: Path) -> list[dict[str, Any]]:
    out = _run([str(python), str(CHAIN), json.dumps(commands)], cwd=cwd, env={**os.environ, "COLUMNS": "200"})
    results: list[dict[str, Any]] = json.loads(out.strip().splitlines()[-1])
    return results


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Scaffold]]:
    return _install(list(KINDS), tmp_path_factory.mktemp("init"))


def test_every_kind_passes_the_chain(installed: tuple[Path, dict[str, Scaffold]], tmp_path: Path) -> None:
    python, made = installed
    commands = [["envs"]]
    for kind, m in made.items():
        commands += [["check", m.env_id, "-n", "8"],
                     ["check", m.env_id, "--adversarial", "-n", "6", "--report", str(tmp_path / f"{kind}.json")],
                     ["eval", "--env", m.env_id, "--policy", "oracle", "--limit", "6", "-o",
                      str(tmp_path / f"{kind}-oracle.jsonl")],
                     ["eval", "--env", m.env_id, "--policy", "noop", "--limit", "6", "-o",
                      str(tmp_path / f"{kind}-noop.jsonl")],
                     ["export", "--backend", "verl", "--env", m.env_id, "--limit", "16", "-o",
                      str(tmp_path / f"{kind}-verl")]]
    results = _chain(python, commands, tmp_path)
    failed = [(r["argv"], r["output"][-1500:]) for r in results if r["exit_code"] != 0]
    assert not failed, failed
    listed = results[0]["output"]
    assert all(m.env_id in listed for m in made.values()), listed
    for kind, m in made.items():
        check = next(r["output"] for r in results if r["argv"][:2] == ["check", m.env_id])
        episodes = {"oracle_episode", "noop_episode"} if kind != "single" else set()
        assert {"reference_correct", "junk_rejected", "deterministic", *episodes} <= set(check.split()), check
        audit = json.loads((tmp_path / f"{kind}.json").read_text())
        assert audit["tried"] >= 6 * 8 and audit["false_passes"] == 0 and audit["controls_failed"] == 0
        generic = {"empty", "format-only", "guess"} | ({"echo"} if audit["domain"] == "generic" else set())
        assert audit["domain"] == ("math" if kind == "tool" else "generic") and generic <= set(audit["families"])
        for policy, reward in (("oracle", 1.0), ("noop", 0.0)):
            rows = [json.loads(line) for line in (tmp_path / f"{kind}-{policy}.jsonl").read_text().splitlines()]
            assert [r["verdict"]["reward"] for r in rows] == [reward] * 6, (kind, policy)
        export = tmp_path / f"{kind}-verl"
        manifest = json.loads((export / "rlvr_export.json").read_text())
        assert manifest["env_id"] == m.env_id and manifest["n_train"] == 16
        assert manifest["multi_turn"] == (kind != "single")
        assert all((export / name).stat().st_size > 0 for name in manifest["files"].values())


@pytest.mark.slow
def test_the_packages_own_tests_pass(installed: tuple[Path, dict[str, Scaffold]]) -> None:
    python, made = installed
    dirs = [str(m.directory / "tests") for m in made.values()]
    out = _run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", *dirs], cwd=next(iter(made.values()))
               .directory.parent)
    assert f"{5 * len(made)} passed" in out, out


@pytest.mark.trl
def test_trl_trains_a_scaffolded_environment_one_step(tmp_path: Path) -> None:
    pytest.importorskip("trl")
    python, made = _install(["single"], tmp_path)
    env_id, out = made["single"].env_id, tmp_path / "run"
    results = _chain(python, [["train", "--backend", "trl", "--env", env_id, "--steps", "1", "-o", str(out),
                               "--trainer-arg", "num_generations=2", "--trainer-arg", "per_device_train_batch_size=2",
                               "--trainer-arg", "max_completion_length=8"]], tmp_path)
    assert results[0]["exit_code"] == 0, results[0]["output"][-3000:]
    assert env_id in results[0]["output"] and any(out.iterdir())
