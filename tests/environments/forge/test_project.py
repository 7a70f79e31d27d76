"""Reading a project for forge (`rlvr.environments.forge.project`): layouts, refusals, sdists, the package index."""

from __future__ import annotations

import hashlib
import http.server
import tarfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from rlvr.core.errors import DataError
from rlvr.environments.forge.project import ProjectError, fetch_sdist, host_copies, open_project, read_project


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_a_flat_package_with_a_tests_folder(tinycalc: Path) -> None:
    (tinycalc / "tinycalc.egg-info").mkdir()
    (tinycalc / "tinycalc.egg-info" / "SOURCES.txt").write_text("x")
    _write(tinycalc, {"PKG-INFO": "Metadata-Version: 2.1\nName: tinycalc\nVersion: 1.0\n", "build/lib/x.py": "",
                      "tinycalc/__pycache__/core.cpython-311.pyc": "", "setup.py": "", "docs/conf.py": "",
                      "tests/data/case.json": "{}"})
    project = read_project(tinycalc)
    assert (project.name, project.version, project.import_root, project.modules) == ("tinycalc", "1.0", "",
                                                                                      ("tinycalc",))
    assert project.tests_dir == "tests" and project.test_files == ("tests/test_core.py",)
    assert project.test_support == ("tests/data/case.json",)
    assert project.tests_name("tests/test_core.py") == "test_core.py"
    # the workspace: no tests, no second copy of the source (egg-info, PKG-INFO, build/, bytecode)
    assert sorted(project.workspace_files) == ["README.md", "docs/conf.py", "pyproject.toml", "setup.py",
                                               "tinycalc/__init__.py", "tinycalc/core.py"]
    assert project.source_files() == ["tinycalc/__init__.py", "tinycalc/core.py"]


def test_a_src_layout_and_top_level_test_files(tmp_path: Path) -> None:
    root = _write(tmp_path / "p", {"setup.cfg": "", "src/pkg/__init__.py": "", "src/pkg/a.py": "",
                                   "src/helper.py": "", "test_pkg.py": "", "conftest.py": "", "noxfile.py": ""})
    project = read_project(root)
    assert (project.import_root, project.modules, project.tests_dir) == ("src", ("helper", "pkg"), "")
    assert project.test_files == ("test_pkg.py",) and project.test_support == ("conftest.py",)
    assert "conftest.py" not in project.workspace_files and "noxfile.py" in project.workspace_files


@pytest.mark.parametrize("files,reason", [
    ({"pyproject.toml": "", "pkg/__init__.py": ""}, "no tests"),
    ({"pyproject.toml": "", "pkg/__init__.py": "", "pkg/tests/test_x.py": ""}, "tests live inside the package"),
    ({"pyproject.toml": "", "pkg/__init__.py": "", "pkg/_speed.c": "", "tests/test_x.py": ""}, "needs a compiler"),
    ({"setup.py": "from setuptools import Extension\next_modules=[Extension('x', ['x.c'])]\n",
      "pkg/__init__.py": "", "tests/test_x.py": ""}, "needs a compiler"),
    ({"pyproject.toml": "[build-system]\nbuild-backend = 'maturin'\n", "pkg/__init__.py": "", "tests/test_x.py": ""},
     "build backend is maturin"),
    ({"pyproject.toml": "", "json/__init__.py": "", "tests/test_x.py": ""}, "standard-library module"),
    ({"pyproject.toml": "", "tests/test_x.py": ""}, "no importable package"),
    ({"README": "", "pkg/__init__.py": ""}, "not a Python project"),
])
def test_projects_forge_cannot_use_are_refused_with_the_reason(tmp_path: Path, files: dict[str, str],
                                                                reason: str) -> None:
    with pytest.raises(ProjectError, match=reason) as info:
        read_project(_write(tmp_path / "bad", files))
    assert info.value.project and info.value.reason


def _sdist(tmp_path: Path, project: Path, name: str) -> Path:
    archive = tmp_path / f"{name}.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(project, arcname=name)
    return archive


def test_an_sdist_is_unpacked_into_the_cache(tmp_path: Path, tinycalc: Path) -> None:
    archive = _sdist(tmp_path, tinycalc, "tinycalc-1.0")
    project = open_project(archive, cache_dir=tmp_path / "cache")
    assert project.name == "tinycalc" and Path(project.root).is_relative_to(tmp_path / "cache")
    with pytest.raises(DataError, match="exactly one of --source"):
        open_project(archive, "tinycalc==1.0", cache_dir=tmp_path / "cache")


def test_an_sdist_with_a_member_outside_it_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "evil-1.0.tar.gz"
    payload = tmp_path / "x"
    payload.write_text("x")
    with tarfile.open(bad, "w:gz") as tar:
        tar.add(payload, arcname="../escape.txt")
    with pytest.raises(DataError, match="escapes the archive"):
        open_project(bad, cache_dir=tmp_path / "cache")


@pytest.fixture
def index(tmp_path: Path, tinycalc: Path) -> Iterator[tuple[str, Path]]:
    """A real PEP 503 simple index over HTTP (http.server on localhost) holding tinycalc 1.0's sdist."""
    root = tmp_path / "index"
    (root / "tinycalc").mkdir(parents=True)
    archive = _sdist(root / "tinycalc", tinycalc, "tinycalc-1.0")
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    (root / "tinycalc" / "index.html").write_text(
        f'<html><body><a href="tinycalc-1.0.tar.gz#sha256={digest}">tinycalc-1.0.tar.gz</a>'
        f'<a href="tinycalc-0.9.tar.gz">tinycalc-0.9.tar.gz</a></body></html>')

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            super().__init__(*args, directory=str(root), **kwargs)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", archive
    finally:
        server.shutdown()
        server.server_close()


def test_a_pinned_package_is_fetched_from_the_index_and_checked(tmp_path: Path, index: tuple[str, Path]) -> None:
    url, archive = index
    got = fetch_sdist("TinyCalc==1.0", tmp_path / "sdists", index=url)
    assert got.read_bytes() == archive.read_bytes()
    assert fetch_sdist("tinycalc==1.0", tmp_path / "sdists", index=url) == got  # reused from the cache
    with pytest.raises(DataError, match="lists no sdist of that version"):
        fetch_sdist("tinycalc==2.0", tmp_path / "sdists", index=url)
    with pytest.raises(DataError, match="NAME==VERSION"):
        fetch_sdist("tinycalc", tmp_path / "sdists", index=url)
    archive.write_bytes(b"tampered")  # the index's sha256 no longer matches the file it serves
    with pytest.raises(DataError, match="sha256"):
        fetch_sdist("tinycalc==1.0", tmp_path / "other", index=url)
    with pytest.raises(DataError, match="cannot read the package index"):
        fetch_sdist("tinycalc==1.0", tmp_path / "x", index="http://127.0.0.1:9/simple")


def test_an_installed_copy_visible_to_the_sandbox_is_found(tmp_path: Path) -> None:
    from rlvr.sandbox.isolation import sandbox_python

    python = sandbox_python(None)
    visible = _write(tmp_path / "p", {"pyproject.toml": "", "email/__init__.py": "", "test_x.py": ""})
    with pytest.raises(ProjectError, match="standard-library"):
        read_project(visible)
    unique = read_project(_write(tmp_path / "q", {"pyproject.toml": "", "rlvr_no_such_module_x/__init__.py": "",
                                                  "test_x.py": ""}))
    assert host_copies(unique, python, ()) == []
    site = tmp_path / "site"
    (site / "rlvr_no_such_module_x").mkdir(parents=True)
    assert host_copies(unique, python, (str(site),)) == [
        f"rlvr_no_such_module_x at {site / 'rlvr_no_such_module_x'} (the grader's site)"]


def test_the_issue_writer_rewrites_the_report_and_falls_back_on_failure() -> None:
    from rlvr.environments.forge.statement import write_issue
    from rlvr.verifiers.judge.testing import JudgeServer, Reply

    report = "# Failing tests in tinycalc 1.0\n\n- `tests/test_core.py::test_mean`\n  AssertionError: assert 2.5 == 3\n"
    with JudgeServer() as server:
        server.reply = lambda body: Reply("# mean() is wrong\n\n`mean([1, 2, 3, 6])` gives 2.5, expected 3.")
        issue, why = write_issue(report, ["tests/test_core.py::test_mean"], base_url=server.url, model="m")
        assert why == "" and issue is not None and issue.startswith("# mean() is wrong")
        assert "- `tests/test_core.py::test_mean`" in issue  # the failing tests stay listed under the issue
        sent = server.requests[-1]["messages"]
        assert sent[1]["content"] == report and "Do not propose" in sent[0]["content"]  # the model sees the report only
        for reply, reason in [(Reply(""), "no issue"), (Reply(None, refusal="no"), "no issue"),
                              (Reply("x" * 7000), "longer than"), (Reply("busy", status=500), "failed")]:
            server.reply = lambda body, r=reply: r
            issue, why = write_issue(report, [], base_url=server.url, model="m")
            assert issue is None and reason in why
