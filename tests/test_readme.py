"""The README's and the docs pages' code blocks run, exactly as written; their links and install lines hold.

Tags and suites: `tests/doc_blocks.py`. Each page's python blocks run in order in one namespace of
their own, in a fresh folder; each shell block runs in bash -euo pipefail with this venv's `rlvr` on PATH.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from doc_blocks import CODE_LANGS, DOCS, PAGES, README, ROOT, TAGS, Block, blocks, page_blocks, pages_with


def _run_shell(block: Block, cwd: Path) -> None:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    proc = subprocess.run(["bash", "-euo", "pipefail", "-c", block.code], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, (
        f"{block.where} failed:\n{block.code}\n--- stdout\n{proc.stdout[-3000:]}\n--- stderr\n{proc.stderr[-3000:]}"
    )


def _run_python(page_blocks_: list[Block], cwd: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(cwd)
    namespace: dict[str, object] = {"__name__": "__readme__"}
    for block in page_blocks_:
        exec(compile("\n" * block.line + block.code, block.page, "exec"), namespace)


def _on(page: str, tag: str, lang: str) -> list[Block]:
    return [b for b in blocks(tag, lang) if b.page == page]


def test_every_code_block_says_where_it_runs() -> None:
    untagged = [b.where for page in PAGES for b in page_blocks(page) if b.lang in CODE_LANGS and b.tag is None]
    assert not untagged, f"code blocks without a `<!-- readme-test: TAG -->` line: {untagged}"
    unknown = [(b.where, b.tag) for page in PAGES for b in page_blocks(page) if b.tag not in (None, *TAGS)]
    assert not unknown, f"unknown tags (known: {TAGS}): {unknown}"
    no_reason = [b.where for page in PAGES for b in page_blocks(page) if b.tag == "skip" and not b.reason]
    assert not no_reason, f"skipped blocks must say why (`<!-- readme-test: skip: REASON -->`): {no_reason}"


def test_the_readme_shows_the_python_api_and_the_cli() -> None:
    assert blocks("core", "python", [README]), "the README must show the Python API"
    assert blocks("core", "bash", [README]), "the README must show the CLI quick start"


@pytest.mark.parametrize("page", pages_with("core", "python"))
def test_core_python(page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _run_python(_on(page, "core", "python"), tmp_path, monkeypatch)


@pytest.mark.parametrize("page", pages_with("core", "bash"))
def test_core_shell(page: str, tmp_path: Path) -> None:
    for block in _on(page, "core", "bash"):
        _run_shell(block, tmp_path)


@pytest.mark.trl
@pytest.mark.filterwarnings("ignore:`is_gradient_checkpointing` is deprecated:FutureWarning")  # TRL 1.16 reads it
@pytest.mark.parametrize("page", sorted(set(pages_with("trl", "bash") + pages_with("trl", "python"))))
def test_trl(page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("trl")
    for block in _on(page, "trl", "bash"):  # first: a page's python blocks may read what its commands wrote
        _run_shell(block, tmp_path)
    _run_python(_on(page, "trl", "python"), tmp_path, monkeypatch)


@pytest.mark.extras
@pytest.mark.parametrize("page", pages_with("extras", "python"))
def test_extras(page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("skyrl_gym")
    _run_python(_on(page, "extras", "python"), tmp_path, monkeypatch)


def _extras() -> set[str]:
    return set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])


def test_readme_install_lines_name_extras_that_exist() -> None:
    install = "\n".join(b.code for b in blocks("skip", "bash", [README]) if "pip install" in b.code)
    named = {e.strip() for group in re.findall(r"(?:\.|rlvr)\[([\w,\s-]+)\]", install) for e in group.split(",")}
    assert named and named <= _extras(), f"install lines name extras pyproject.toml lacks: {named - _extras()}"
    from_index = re.search(r"pip install\s+['\"]?rlvr(?:\[[^\]]*\])?(?!\s*@)['\"]?(?:\s|$)", install, re.M)
    assert not from_index, f"rlvr is not on the package index, install from a clone: {from_index and from_index[0]}"
    section = README.read_text().split("## Install", 1)[1].split("\n## ", 1)[0]
    table = set(re.findall(r"^\| `([\w-]+)` \|", section, re.M))
    assert table == _extras(), f"the README's extras table and pyproject.toml differ: {table ^ _extras()}"


def _slug(heading: str) -> str:
    """GitHub's and mkdocs' anchor for a heading: lower case, punctuation dropped, spaces as dashes."""
    return re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", heading.strip().lower()))


def _links(page: Path) -> list[tuple[Path, str]]:
    text = re.sub(r"^```.*?^```$", "", page.read_text(), flags=re.S | re.M)
    out = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        out.append(((page.parent / path).resolve() if path else page, anchor))
    return out


def test_links_resolve_and_every_docs_page_is_reachable_from_the_readme() -> None:
    broken = []
    for page in PAGES:
        for target, anchor in _links(page):
            if not target.exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
            elif anchor and target.suffix == ".md":
                headings = re.findall(r"^#+ (.*)$", re.sub(r"^```.*?^```$", "", target.read_text(), flags=re.S | re.M),
                                      re.M)
                if anchor not in {_slug(h) for h in headings}:
                    broken.append(f"{page.relative_to(ROOT)} -> {target.name}#{anchor}")
    assert not broken, f"broken links: {broken}"
    seen, todo = {README}, [README]
    while todo:
        for target, _ in _links(todo.pop()):
            if target.suffix == ".md" and target.exists() and target not in seen:
                seen.add(target)
                todo.append(target)
    unreachable = sorted(str(p.relative_to(ROOT)) for p in DOCS.rglob("*.md") if p not in seen)
    assert not unreachable, f"docs pages no link leads to from the README: {unreachable}"
