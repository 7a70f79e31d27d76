"""`mcp/git-v1`: repository tasks played through the reference MCP git server (`mcp-server-git` from PyPI).

Each task builds a small Git repository (fixed authors and dates, so its commit hashes are the same
on every machine), starts `python -m mcp_server_git --repository /work/repo` on a fresh copy of it
inside rlvr's sandbox for every episode, and poses one job: commit a new file, commit one of two
changed files, create a branch (from the current branch or another one), switch branches, unstage
everything, or answer a question about the history (the subject of the commit that added a file,
the hash of a branch's latest commit). Offline: the server and its requirements are the `mcp` extra.

Scoring (`StateVerifier`): after the episode, `git_state` reads the repository through the server's
own read-only tools (`git_branch`, `git_show`, `git_diff_staged`) and writes the facts the task
names -- the current branch, the local branches, a ref's commit, the subjects of HEAD and its
parent, a file's content at HEAD, the staged files, the final answer (its last line, without
quotes, backticks or a final period; hashes lower-cased) -- which must all equal the expected ones.
Each fact is read from a part of the tool's answer that the model's own text (commit messages,
file contents) cannot forge: a subject is the first message line of `git_show`, staged files are
the `diff --git` headers (content lines carry a `+`, `-` or space prefix).

Every task has reference actions (the oracle: the tool calls that solve it, then a final answer)
and no task's expected facts hold in its starting state (the no-op policy scores 0).
"""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlvr.core.errors import ConfigError
from rlvr.core.types import Message, Task
from rlvr.environments.mcp.connection import StdioServer
from rlvr.environments.mcp.env import MCPToolEnv, StateCheckError, ToolCaller
from rlvr.environments.multi_turn import tool_call_message
from rlvr.sandbox.config import SandboxConfig
from rlvr.verifiers.state import StateVerifier

__all__ = ["make_mcp_git"]

REPO = "/work/repo"
"""Where the task's repository is inside the sandbox (the `repo_path` of every tool call)."""

SYSTEM_PROMPT = (
    "You work on a Git repository through tools. The repository is at {repo}: pass repo_path=\"{repo}\" to every "
    "tool. Use the tools to inspect the repository and to make changes. When the job is done, reply without a "
    "tool call; if the job asks a question, that reply is your answer, on its own."
)

_DATE = "2026-01-{day:02d}T{hour:02d}:00:00+00:00"
_IDENTITY = {"GIT_AUTHOR_NAME": "Ada Lovelace", "GIT_AUTHOR_EMAIL": "ada@example.com",
             "GIT_COMMITTER_NAME": "Ada Lovelace", "GIT_COMMITTER_EMAIL": "ada@example.com"}


@dataclass(frozen=True)
class GitStep:
    """One step of building a task's repository.

    Attributes:
        kind: 'commit' (write `files`, stage them, commit with `message`), 'branch' (create `name` at
            HEAD), 'checkout' (switch to `name`), 'write' (write `files`, unstaged), 'stage' (`git add`
            the paths in `files`).
        files: path -> content (for 'stage', the contents are ignored).
        message: the commit message.
        name: the branch.
    """

    kind: str
    files: tuple[tuple[str, str], ...] = ()
    message: str = ""
    name: str = ""


def _commit(message: str, files: dict[str, str]) -> GitStep:
    return GitStep("commit", tuple(files.items()), message=message)


@dataclass(frozen=True)
class _Spec:
    """A task before its repository is built: steps, the job, the expected facts, the oracle's calls."""

    id: str
    steps: tuple[GitStep, ...]
    job: str
    expect: dict[str, Any]
    calls: tuple[tuple[str, dict[str, Any]], ...]
    answer: str = "Done."
    refs: dict[str, str] = field(default_factory=dict)
    """Expected facts whose value is a ref's hash once built: fact -> ref name."""


def _git(cwd: str, *args: str, env: dict[str, str]) -> str:
    result = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        raise ConfigError(f"building a git task repository failed: git {' '.join(args)}: {result.stderr.strip()}")
    return result.stdout.strip()


def _build(steps: Sequence[GitStep], root: str) -> None:
    """Run `steps` into a new repository at `root` (host git, no user or system configuration, fixed dates)."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": root, "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_CONFIG_GLOBAL": os.devnull, "LANG": "C", **_IDENTITY}
    _git(root, "init", "-q", "-b", "main", "--template=", ".", env=env)
    for i, step in enumerate(steps):
        if step.kind in ("commit", "write"):
            for path, content in step.files:
                target = Path(root, path)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(content)
        if step.kind == "commit":
            date = _DATE.format(day=1 + i // 24, hour=i % 24)
            _git(root, "add", "--", *(p for p, _ in step.files), env=env)
            _git(root, "commit", "-q", "-m", step.message, env={**env, "GIT_AUTHOR_DATE": date,
                                                                  "GIT_COMMITTER_DATE": date})
        elif step.kind == "branch":
            _git(root, "branch", step.name, env=env)
        elif step.kind == "checkout":
            _git(root, "checkout", "-q", step.name, env=env)
        elif step.kind == "stage":
            _git(root, "add", "--", *(p for p, _ in step.files), env=env)
        elif step.kind != "write":
            raise ConfigError(f"unknown git step kind {step.kind!r}")


@functools.lru_cache(maxsize=256)
def _built(steps: tuple[GitStep, ...]) -> tuple[tuple[tuple[str, bytes], ...], tuple[tuple[str, str], ...]]:
    """(files of the built repository relative to /work, {ref: hash}) for `steps` (built once per process)."""
    with tempfile.TemporaryDirectory(prefix="rlvr-git-task-") as tmp:
        root = os.path.join(tmp, "repo")
        os.mkdir(root)
        _build(steps, root)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GIT_CONFIG_NOSYSTEM": "1",
               "GIT_CONFIG_GLOBAL": os.devnull}
        refs = _git(root, "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads", env=env)
        files = tuple(sorted((os.path.relpath(os.path.join(d, n), tmp), Path(d, n).read_bytes())
                             for d, _, names in os.walk(root) for n in names))
        return files, tuple(tuple(line.split(" ", 1)) for line in refs.splitlines())  # type: ignore[misc]


def repository_files(task: Task) -> tuple[tuple[str, bytes], ...]:
    """The files of `task`'s starting repository, relative to the sandbox's work directory.

    Looked up by the task's id (trainers rebuild a task from its dataset row: id, prompt, reference).

    Raises:
        ConfigError: the id is not a `mcp/git-v1` task.
    """
    steps = _steps_by_id().get(task.id)
    if steps is None:
        raise ConfigError(f"task {task.id!r} is not a mcp/git-v1 task (known: {', '.join(_steps_by_id())})")
    return _built(steps)[0]


@functools.lru_cache(maxsize=1)
def _steps_by_id() -> dict[str, tuple[GitStep, ...]]:
    return {spec.id: spec.steps for spec in _specs()}


# -- the tasks ------------------------------------------------------------------------------
_BASE = (
    _commit("Initial commit", {"README.md": "# Inventory\n\nTracks stock levels.\n"}),
    _commit("Add stock module", {"stock.py": "def level(item):\n    return 0\n"}),
    _commit("Add config.yaml", {"config.yaml": "warehouse: north\nunits: metric\n"}),
)


def _specs() -> list[_Spec]:
    specs: list[_Spec] = []
    for i, (path, content, message) in enumerate([
            ("notes/todo.md", "- count the shelves\n", "Add todo list"),
            ("docs/usage.md", "Run `python stock.py`.\n", "Document usage"),
            ("CHANGELOG.md", "## 0.1\n- first release\n", "Start the changelog")]):
        specs.append(_Spec(
            id=f"commit-new-file-{i}", steps=(*_BASE, GitStep("write", ((path, content),))),
            job=f"The file `{path}` is new and not tracked yet. Stage it and commit it with the message `{message}`.",
            expect={"head_subject": message, "parent_subject": "Add config.yaml", f"file:{path}": content,
                    "staged_files": []},
            calls=(("git_add", {"files": [path]}), ("git_commit", {"message": message}))))
    for i, (keep, message) in enumerate([("stock.py", "Count real stock"), ("config.yaml", "Switch to imperial")]):
        new = {"stock.py": "def level(item):\n    return len(item)\n",
               "config.yaml": "warehouse: north\nunits: imperial\n"}
        old = {"stock.py": "def level(item):\n    return 0\n", "config.yaml": "warehouse: north\nunits: metric\n"}
        other = "config.yaml" if keep == "stock.py" else "stock.py"
        specs.append(_Spec(
            id=f"commit-one-of-two-{i}", steps=(*_BASE, GitStep("write", tuple(new.items()))),
            job=f"Both `stock.py` and `config.yaml` have uncommitted changes. Commit only the change to `{keep}`, with "
                f"the message `{message}`; leave the change to `{other}` uncommitted.",
            expect={"head_subject": message, f"file:{keep}": new[keep], f"file:{other}": old[other],
                    "staged_files": []},
            calls=(("git_add", {"files": [keep]}), ("git_commit", {"message": message}))))
    for i, name in enumerate(["feature/login", "feature/export", "bugfix/rounding"]):
        specs.append(_Spec(
            id=f"create-and-switch-{i}", steps=_BASE,
            job=f"Create a branch named `{name}` from the current branch and switch to it.",
            expect={"branch": name, "branches": sorted(["main", name]), f"ref:{name}": "main"},
            calls=(("git_create_branch", {"branch_name": name}), ("git_checkout", {"branch_name": name})),
            refs={f"ref:{name}": "main"}))
    release = (*_BASE, GitStep("branch", name="release"),
               _commit("Add forecast module", {"forecast.py": "def forecast():\n    return []\n"}),
               GitStep("branch", name="develop"), GitStep("checkout", name="develop"))
    for i, name in enumerate(["hotfix/urgent", "hotfix/typo"]):
        specs.append(_Spec(
            id=f"branch-from-base-{i}", steps=release,
            job=f"Create a branch named `{name}` that starts from the branch `release` (not from the current branch). "
                "Stay on the current branch.",
            expect={"branch": "develop", "branches": sorted(["develop", "main", "release", name]),
                    f"ref:{name}": "release"},
            calls=(("git_create_branch", {"branch_name": name, "base_branch": "release"}),),
            refs={f"ref:{name}": "release"}))
    for i, target in enumerate(["release", "main"]):
        specs.append(_Spec(
            id=f"switch-branch-{i}", steps=release, job=f"Switch to the existing branch `{target}`.",
            expect={"branch": target}, calls=(("git_checkout", {"branch_name": target}),)))
    for i, paths in enumerate([("stock.py",), ("stock.py", "config.yaml")]):
        changed = {"stock.py": "def level(item):\n    return 1\n", "config.yaml": "warehouse: south\nunits: metric\n"}
        specs.append(_Spec(
            id=f"unstage-all-{i}", steps=(*_BASE, GitStep("write", tuple((p, changed[p]) for p in paths)),
                                          GitStep("stage", tuple((p, "") for p in paths))),
            job="Some changes are staged for commit. Unstage all of them without committing anything.",
            expect={"staged_files": [], "head_subject": "Add config.yaml"}, calls=(("git_reset", {}),)))
    for i, (path, subject) in enumerate([("config.yaml", "Add config.yaml"), ("stock.py", "Add stock module")]):
        specs.append(_Spec(
            id=f"ask-subject-{i}", steps=_BASE,
            job=f"What is the subject line of the commit that added `{path}`? Reply with the subject line only.",
            expect={"answer": subject}, calls=(("git_log", {"max_count": 10}),), answer=subject))
    for i, branch in enumerate(["release", "main"]):
        specs.append(_Spec(
            id=f"ask-hash-{i}", steps=release,
            job=f"What is the full hash of the latest commit on the branch `{branch}`? Reply with the hash only.",
            expect={"answer": branch}, calls=(("git_show", {"revision": branch}),), answer=f"{{ref:{branch}}}",
            refs={"answer": branch}))
    return specs


def _with_refs(text: str, refs: dict[str, str]) -> str:
    """`text` with each `{ref:NAME}` replaced by the hash of branch NAME."""
    return re.sub(r"\{ref:([^}]+)\}", lambda m: refs[m.group(1)], text)


def git_tasks() -> list[Task]:
    """The `mcp/git-v1` tasks (repositories built on first use; hashes filled in from them)."""
    tasks = []
    for spec in _specs():
        refs = dict(_built(spec.steps)[1])
        expect = {k: (refs[spec.refs[k]] if k in spec.refs else v) for k, v in spec.expect.items()}
        answer = _with_refs(spec.answer, refs)
        actions = [tool_call_message(name, {"repo_path": REPO, **args}, call_id=f"call_{n}")
                   for n, (name, args) in enumerate(spec.calls)]
        actions.append(Message(role="assistant", content=answer))
        prompt = (Message(role="system", content=SYSTEM_PROMPT.format(repo=REPO)),
                  Message(role="user", content=spec.job))
        tasks.append(Task(id=spec.id, prompt=prompt, reference=expect,
                          metadata={"reference_actions": [m.model_dump(exclude_none=True) for m in actions]}))
    return tasks


# -- the state check ------------------------------------------------------------------------
def normalize_answer(text: str) -> str:
    """A final answer as compared: its last non-empty line without surrounding quotes, backticks, `*` or a final period.

    A 7-40 character hexadecimal answer (a commit hash) is lower-cased.
    """
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    answer = lines[-1] if lines else ""
    previous = None
    while previous != answer:
        previous = answer
        answer = answer.strip().strip("`*\"'").rstrip(".").strip()
    return answer.lower() if re.fullmatch(r"[0-9a-fA-F]{7,40}", answer) else answer


def _subject(show: str) -> str:
    """The subject of a `git_show` answer: the first line of the commit message (indented by four spaces)."""
    header, sep, rest = show.partition("\n\n")
    if not sep or not header.startswith("commit "):
        raise StateCheckError(f"git_show answered in an unexpected format: {show[:200]!r}")
    return rest.split("\n", 1)[0].removeprefix("    ")


async def _fact(tools: ToolCaller, name: str, answer: str) -> Any:
    """The observed value of one named fact (see the module docstring)."""
    repo = {"repo_path": REPO}
    if name in ("branch", "branches"):
        listing = await tools.call("git_branch", {**repo, "branch_type": "local"})
        lines = [line for line in listing.splitlines() if line.strip()]
        if name == "branch":
            return next((line[2:].strip() for line in lines if line.startswith("* ")), None)
        return sorted(line[2:].strip() for line in lines)
    if name in ("head_subject", "parent_subject"):
        revision = "HEAD" if name == "head_subject" else "HEAD~1"
        return _subject(await tools.call("git_show", {**repo, "revision": revision}))
    if name.startswith("file:"):
        try:
            return await tools.call("git_show", {**repo, "revision": f"HEAD:{name[5:]}"})
        except StateCheckError:
            return None  # not in HEAD
    if name.startswith("ref:"):
        try:
            show = await tools.call("git_show", {**repo, "revision": name[4:]})
        except StateCheckError:
            return None  # no such ref
        return show.split("\n", 1)[0].removeprefix("commit ").strip()
    if name == "staged_files":
        diff = await tools.call("git_diff_staged", {**repo, "context_lines": 0})
        return sorted(line.rsplit(" b/", 1)[-1] for line in diff.splitlines() if line.startswith("diff --git a/"))
    if name == "answer":
        return normalize_answer(answer)
    raise StateCheckError(f"unknown git fact {name!r}")


async def git_state(tools: ToolCaller, task: Task, answer: str) -> str:
    """The state check of `mcp/git-v1`: the facts `task.reference` names, as observed, in JSON (`StateCheck`)."""
    names = sorted(task.reference) if isinstance(task.reference, dict) else []
    return json.dumps({name: await _fact(tools, name, answer) for name in names}, sort_keys=True)


_EPISODE_DATE = "1769904000 +0000"  # 2026-02-01T00:00:00Z in git's internal format (GitPython reads it)
_SERVER_ENV = tuple(sorted({**_IDENTITY, "GIT_AUTHOR_DATE": _EPISODE_DATE,
                            "GIT_COMMITTER_DATE": _EPISODE_DATE}.items()))
"""The server's git identity and a fixed date for the commits a policy makes: the same calls give the same
commit hashes in every episode (so recorded episodes replay identically on every trainer path)."""


def _server(task: Task) -> StdioServer:
    return StdioServer(command=("{python}", "-m", "mcp_server_git", "--repository", REPO),
                       files=repository_files(task), packages=("mcp-server-git",), env=_SERVER_ENV,
                       sandbox=SandboxConfig(pool_size=0, memory_mb=2048, processes=128), lifetime_s=600.0)


def make_mcp_git(size: int | None = None, **options: Any) -> MCPToolEnv:
    """`rlvr.make("mcp/git-v1")`: the git task family on the reference MCP git server (module docstring).

    Args:
        size: use only the first `size` tasks.
        **options: `MCPToolEnv` options (`max_turns`, `call_timeout_s`, `hermes`, ...).

    Raises:
        MissingExtraError: the MCP SDK or `mcp-server-git` is not installed (`pip install 'rlvr[mcp]'`).
    """
    from rlvr.core.errors import MissingExtraError
    from rlvr.environments.mcp.connection import require_mcp

    require_mcp()
    try:
        import mcp_server_git  # noqa: F401
    except ImportError as exc:
        raise MissingExtraError("mcp-server-git", "mcp") from exc
    tasks = git_tasks()[:size] if size is not None else git_tasks()
    options.setdefault("max_turns", 8)
    return MCPToolEnv(tasks, StateVerifier(), _server, env_id="mcp/git-v1",
                      description="Git repository jobs and questions through the reference MCP git server "
                                  "(mcp-server-git), scored on the repository's end state",
                      state_check=git_state, **options)
