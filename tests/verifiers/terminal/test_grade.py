"""Grading a terminal task's exported working directory (`rlvr.verifiers.terminal.grade`).

`verdict_from_tests` turns test outcomes into a verdict; `grade_workspace` restores a workspace tar in a
fresh sandbox and runs the task's own tests there (Harbor's word-count task from tests/data, real
bubblewrap sandbox and the grader's pytest).
"""

from __future__ import annotations

import io
import shutil
import tarfile
from pathlib import Path

import pytest

from rlvr.verifiers.terminal import load_harbor
from rlvr.verifiers.terminal.grade import grade_workspace, verdict_from_tests
from rlvr.verifiers.terminal.verifier import TerminalConfig, grader_site
from rlvr.verifiers.terminal.workspace import SYSTEM_DIRS, link_roots

HARBOR = Path(__file__).resolve().parents[2] / "data" / "terminal" / "harbor"
needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap missing (apt install bubblewrap)")


def _verdict(outcomes: dict[str, str] | str, exact: list[str], prefixes: list[str] = (), selective: bool = False,
             reward: str = "binary"):  # type: ignore[no-untyped-def]
    return verdict_from_tests(outcomes, exact, list(prefixes), selective, reward=reward, notes=["a note"],
                              elapsed_s=0.5, messages={"test_b": "assert 1 == 2"})


def test_correct_only_when_every_expected_test_passed() -> None:
    passed = _verdict({"test_a": "pass", "test_b": "pass"}, ["test_a", "test_b"])
    assert (passed.status, passed.reward, passed.components) == ("correct", 1.0, {"tests_passed": 2.0,
                                                                                 "tests_total": 2.0})
    assert passed.detail.splitlines() == ["2/2 tests passed", "PASS test_a", "PASS test_b", "a note"]
    failed = _verdict({"test_a": "pass", "test_b": "fail"}, ["test_a", "test_b"])
    assert (failed.status, failed.reward) == ("incorrect", 0.0) and "FAIL test_b: assert 1 == 2" in failed.detail
    assert _verdict({"test_a": "pass", "test_b": "fail"}, ["test_a", "test_b"], reward="fraction").reward == 0.5


def test_an_expected_test_that_did_not_run_is_a_failure() -> None:
    verdict = _verdict({"test_a": "pass"}, ["test_a", "test_b"])
    assert verdict.status == "incorrect" and "FAIL test_b (not run)" in verdict.detail
    # a parametrized test passes only when it ran and every case passed
    cases = {"test_a": "pass", "test_p[1]": "pass", "test_p[2]": "fail"}
    assert "FAIL test_p[*] (1 of 2 cases passed)" in _verdict(cases, ["test_a"], ["test_p"]).detail
    assert _verdict({"test_a": "pass", "test_p[1]": "pass"}, ["test_a"], ["test_p"]).status == "correct"
    # a selective run (-k, ::name) counts what ran; tests outside the expected ones still count
    assert _verdict({"test_a": "pass"}, ["test_a", "test_b"], selective=True).status == "correct"
    assert _verdict({"test_a": "pass", "test_x": "fail"}, ["test_a"]).status == "incorrect"


def test_no_tests_or_no_report_is_incorrect_never_an_error() -> None:
    none = _verdict({}, [])
    assert (none.status, none.reward) == ("incorrect", 0.0) and "no tests ran (zero tests is a failure)" in none.detail
    unreadable = _verdict("the report is not XML", ["test_a"])
    assert (unreadable.status, unreadable.reward) == ("incorrect", 0.0)
    assert unreadable.detail.splitlines() == ["no usable test report: the report is not XML", "a note"]


def test_links_may_point_into_the_workdir_and_the_system_only() -> None:
    task = load_harbor(HARBOR / "word-count")
    roots = link_roots(task)
    assert roots == [task.workdir, *SYSTEM_DIRS] and task.workdir == "/app"
    assert not {"/tests", "/logs", "/tmp", "/run", "/proc", "/root"} & set(roots)


def _workspace(tmp_path: Path, files: dict[str, str], links: dict[str, str] | None = None) -> Path:
    """A workspace tar as the export writes it: the working directory's contents, relative names."""
    path = tmp_path / "workspace.tar"
    with tarfile.open(path, "w") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
    return path


# word-count's working directory after the Dockerfile (docs/ and the hidden file it writes), solved
DOCS = {name: (HARBOR / "word-count" / "environment" / "docs" / name).read_text()
        for name in ("a.txt", "notes.md", "sub/b.txt")} | {".hidden.txt": "hidden words here\n"}
COUNTS = "".join(f"{n}\t{len(DOCS[n].split())}\n" for n in sorted(n for n in DOCS if n.endswith(".txt")))
TOTAL = str(sum(len(DOCS[n].split()) for n in DOCS if n.endswith(".txt")))


@needs_bwrap
def test_the_tasks_own_tests_grade_the_restored_workspace(tmp_path: Path) -> None:
    task = load_harbor(HARBOR / "word-count")
    config = TerminalConfig()
    site = grader_site(config)
    docs = {f"docs/{n}": text for n, text in DOCS.items()}
    solved = grade_workspace(task, _workspace(tmp_path, {**docs, "counts.tsv": COUNTS, "total.txt": TOTAL}),
                             config=config.sandbox, site=site)
    assert (solved.status, solved.reward) == ("correct", 1.0), solved.detail
    half = _workspace(tmp_path, {**docs, "counts.tsv": COUNTS, "total.txt": "999"})
    assert grade_workspace(task, half, config=config.sandbox, site=site).status == "incorrect"
    fraction = grade_workspace(task, half, config=config.sandbox, site=site, reward="fraction")
    assert (fraction.status, fraction.reward, fraction.components["tests_total"]) == ("incorrect", 0.5, 2.0)


@needs_bwrap
def test_a_link_out_of_the_workdir_is_dropped_and_noted(tmp_path: Path) -> None:
    task = load_harbor(HARBOR / "word-count")
    config = TerminalConfig()
    docs = {f"docs/{n}": text for n, text in DOCS.items()}
    tar = _workspace(tmp_path, {**docs, "counts.tsv": COUNTS}, links={"total.txt": "/tests/total.txt"})
    verdict = grade_workspace(task, tar, config=config.sandbox, site=grader_site(config))
    assert verdict.status == "incorrect" and "symbolic link(s) pointing outside the working directory" in verdict.detail


def test_a_task_without_tests_is_an_error(tmp_path: Path) -> None:
    task = load_harbor(HARBOR / "word-count").model_copy(update={"tests": None})
    verdict = grade_workspace(task, _workspace(tmp_path, {"x": "y"}))
    assert verdict.status == "error" and verdict.reward is None and "has no tests to grade with" in verdict.detail
