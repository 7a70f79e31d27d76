"""`rlvr init` (`rlvr.runners.init`): what it writes, and the bad input it refuses with nothing written."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlvr.core.errors import ConfigError
from rlvr.runners.cli import app
from rlvr.runners.init import KINDS, TEMPLATE_DIST, TEMPLATE_ENV_ID, TEMPLATE_MODULE, init_env

runner = CliRunner()


@pytest.mark.parametrize("kind", list(KINDS))
def test_writes_a_package_with_every_placeholder_replaced(tmp_path: Path, kind: str) -> None:
    made = init_env("word-sort", kind, tmp_path / "pkg")
    assert (made.dist, made.module, made.env_id, made.kind) == ("word-sort", "word_sort", "word_sort/default-v1", kind)
    assert set(map(str, made.files)) == {"README.md", "pyproject.toml", "word_sort/__init__.py", "word_sort/env.py",
                                         "tests/test_word_sort.py"}
    assert sorted(p.relative_to(made.directory) for p in made.directory.rglob("*") if p.is_file()) == list(made.files)
    for path in made.files:
        text = (made.directory / path).read_text()
        assert not [t for t in (TEMPLATE_ENV_ID, TEMPLATE_MODULE, TEMPLATE_DIST, "scaffold") if t in text], path
        if path.suffix == ".py":
            ast.parse(text)
    pyproject = (made.directory / "pyproject.toml").read_text()
    assert '[project.entry-points."rlvr.environments"]\n"word_sort/default-v1" = "word_sort.env:make_env"' in pyproject
    assert 'name = "word-sort"' in pyproject and 'packages = ["word_sort"]' in pyproject
    assert not list(tmp_path.glob(".pkg-*"))  # the staging folder was renamed into place


def test_kinds_differ_in_their_environment_module(tmp_path: Path) -> None:
    envs = {kind: (init_env(f"k-{kind}", kind, tmp_path / kind).directory / f"k_{kind}/env.py").read_text()
            for kind in KINDS}
    assert "SingleTurnEnv" in envs["single"] and "PooledVerifier" in envs["single"]
    assert "@tool" in envs["tool"] and "ToolEnv" in envs["tool"]
    assert "async def env_response" in envs["multi"] and "MultiTurnEnv" in envs["multi"]


def test_an_empty_folder_and_a_chosen_id_are_accepted(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    made = init_env("quiz", "multi", tmp_path / "empty", env_id="games/quiz-v2")
    assert made.directory == (tmp_path / "empty").absolute() and made.env_id == "games/quiz-v2"
    assert '"games/quiz-v2" = "quiz.env:make_env"' in (made.directory / "pyproject.toml").read_text()


@pytest.mark.parametrize(("name", "kind", "env_id", "message"), [
    ("Word-Sort", "single", None, r"NAME 'Word-Sort' must be a package name"),
    ("2sort", "single", None, "must be a package name"),
    ("word--sort", "single", None, "must be a package name"),
    ("class", "single", None, "Python keyword"),
    ("json", "single", None, r"module named 'json' is already importable"),
    ("rlvr", "single", None, "already importable"),
    ("word-sort", "chat", None, r"--kind must be one of single, tool, multi; got 'chat'"),
    ("word-sort", "single", "word-sort", r"--id 'word-sort' must look like 'family/name-vN'"),
    ("word-sort", "single", "math/gsm8k-v1", r"'math/gsm8k-v1' is already registered .*pick another with --id"),
])
def test_bad_input_is_refused_with_the_fix_and_nothing_written(tmp_path: Path, name: str, kind: str,
                                                              env_id: str | None, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        init_env(name, kind, tmp_path / "out", env_id=env_id)
    assert not list(tmp_path.iterdir())


def test_a_non_empty_folder_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match="exists and is not an empty folder; pass another folder with -o DIR"):
        init_env("word-sort", "single", tmp_path / "out")
    (tmp_path / "file").write_text("x")
    with pytest.raises(ConfigError, match="is not an empty folder"):
        init_env("word-sort", "single", tmp_path / "file")
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["file", "notes.txt", "out"]


def test_a_failed_write_leaves_nothing_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = {"n": 0}
    real = Path.write_text

    def flaky(self: Path, *args: object, **kwargs: object) -> int:
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError(28, "No space left on device")
        return real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "write_text", flaky)
    with pytest.raises(OSError, match="No space left"):
        init_env("word-sort", "tool", tmp_path / "out")
    assert not list(tmp_path.iterdir())


def test_cli_writes_and_prints_the_next_commands(tmp_path: Path) -> None:
    result = runner.invoke(app, ["init", "word-sort", "--kind", "tool", "-o", str(tmp_path / "ws")])
    assert result.exit_code == 0, result.output
    assert "wrote word-sort (tool: environment word_sort/default-v1)" in result.output
    assert "rlvr check word_sort/default-v1 --adversarial" in result.output and "pip install -e" in result.output
    again = runner.invoke(app, ["init", "word-sort", "-o", str(tmp_path / "ws")])
    assert again.exit_code == 2 and "not an empty folder" in again.output
    assert runner.invoke(app, ["init", "Bad Name", "-o", str(tmp_path / "b")]).exit_code == 2
    assert not (tmp_path / "b").exists()
    assert "init" in runner.invoke(app, ["--help"]).output
