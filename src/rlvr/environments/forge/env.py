"""`swe/forge-v1`: fix a bug in a real Python project, graded by the project's own hidden tests.

The tasks are `rlvr forge` Harbor task directories. An episode is a `TerminalEnv` episode: a
persistent sandboxed shell over the workspace (`/app`, one fresh git commit of the buggy tree),
the `run` and `submit` tools, plus `edit_file` (replace one exact piece of text in a file: how
SWE agents usually edit). When the episode ends every process is stopped, the workspace is
exported, and the terminal grader copies the task's hidden tests from the trusted task directory
into a fresh sandbox over it and runs the FAIL_TO_PASS and PASS_TO_PASS tests by id (each named
test must run and pass): reward 1 only if all pass; `error` (masked) when the grader itself broke.
"""

from __future__ import annotations

import base64
import json
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rlvr.core.errors import DataError
from rlvr.environments.terminal import MAX_OUTPUT_CHARS, TerminalEnv
from rlvr.verifiers.terminal import TerminalReference, TerminalVerifier

__all__ = ["make_forge"]

FORGE_SYSTEM_PROMPT = (
    "You are a software engineer fixing a bug in a Python project, working in a bash terminal inside a sandbox. "
    "The project is in /app (a git repository). Investigate with the `run` tool (bash commands: read files, grep, "
    "run Python), change files with `edit_file` (or with shell commands), and check your fix by running Python. "
    "Commands may also be written in one ```bash code block per turn. There is no network and nothing can be "
    "installed. The project's own tests are hidden: they will be run on your final workspace. Do not write or "
    "change tests. When the bug is fixed, call `submit` or reply without a command."
)

_EDIT = r"""
import base64, json, os, sys
a = json.loads(base64.b64decode(sys.argv[1]).decode())
path, old, new = a["path"], a["old"], a["new"]
path = path if os.path.isabs(path) else os.path.join(os.getcwd(), path)
if old == "":
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(new)
    print("wrote %s (%d characters)" % (path, len(new)))
    sys.exit(0)
try:
    with open(path, encoding="utf-8", newline="") as f:
        text = f.read()
except (OSError, UnicodeDecodeError) as exc:
    print("cannot read %s: %s" % (path, exc))
    sys.exit(1)
n = text.count(old)
if n != 1:
    print("old_text occurs %d times in %s; it must occur exactly once (include more lines around it)" % (n, path))
    sys.exit(1)
with open(path, "w", encoding="utf-8", newline="") as f:
    f.write(text.replace(old, new, 1))
print("edited %s" % path)
"""


class ForgeEnv(TerminalEnv):
    """A terminal episode over a forge task, with `edit_file` beside `run` and `submit` (module docstring).

    Args:
        *args: as `TerminalEnv`.
        edit_tool: offer `edit_file`.
        **kwargs: as `TerminalEnv`.
    """

    def __init__(self, *args: Any, edit_tool: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, extra_tools=[self.edit_file] if edit_tool else [], **kwargs)

    async def edit_file(self, path: str, old_text: str, new_text: str) -> str:
        """Replace text in a file: `old_text` must occur exactly once in it; an empty `old_text` writes the whole file.

        Args:
            path: the file (relative to the working directory /app, or absolute).
            old_text: the exact text to replace, with enough surrounding lines to be unique ('' to write the file).
            new_text: the text to put in its place (the whole file's content when old_text is '').
        """
        payload = base64.b64encode(json.dumps({"path": path, "old": old_text, "new": new_text}).encode()).decode()
        return await self.run(f"python3 -I -S -c {shlex.quote(_EDIT)} {payload}")


def _is_forge(task_dir: Path) -> bool:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        meta = tomllib.loads((task_dir / "task.toml").read_text(encoding="utf-8")).get("metadata") or {}
    except (OSError, ValueError):
        return False
    return bool(meta.get("forge_project"))


def forge_task_dirs(tasks_dir: str | Path) -> list[Path]:
    """The forge task directories in `tasks_dir` (Harbor tasks whose task.toml names a `forge_project`), sorted.

    Raises:
        DataError: the folder holds no forge task.
    """
    from rlvr.verifiers.terminal import find_task_dirs

    found = [p for p in find_task_dirs(tasks_dir, "harbor") if _is_forge(p)]
    if not found:
        raise DataError(f"no rlvr forge tasks in {str(tasks_dir)!r}: make some with `rlvr forge -o {tasks_dir}`")
    return found


def make_forge(tasks_dir: str | Path, limit: int | None = None, task_ids: Sequence[str] | str | None = None,
               max_turns: int = 30, command_timeout_s: float = 60.0, max_output_chars: int = MAX_OUTPUT_CHARS,
               system_prompt: str | None = FORGE_SYSTEM_PROMPT, edit_tool: bool = True,
               verifier: TerminalVerifier | None = None, **verifier_overrides: Any) -> ForgeEnv:
    """`swe/forge-v1`: the forge tasks of `tasks_dir` (module docstring).

    Args:
        tasks_dir: an `rlvr forge` output folder (or one task directory).
        limit: first N tasks (sorted by id).
        task_ids: only these task ids (a list, or one comma-separated string).
        max_turns: assistant messages per episode.
        command_timeout_s: limit of one command, seconds.
        max_output_chars: cap of one command's observation.
        system_prompt: system message ('' or None for none).
        edit_tool: offer the `edit_file` tool.
        verifier: a `TerminalVerifier` to use as is.
        **verifier_overrides: `TerminalConfig` options.

    Raises:
        DataError: the folder holds no forge task.
    """
    from rlvr.environments.terminal_data import _build

    refs = [TerminalReference(format="harbor", task_dir=str(p)) for p in forge_task_dirs(tasks_dir)]
    built = _build("swe/forge-v1", "Bug-fix tasks from real Python projects (rlvr forge): a persistent bubblewrap "
                   "shell over the workspace, the project's hidden tests graded in a fresh sandbox.", refs,
                   str(tasks_dir), system_prompt=system_prompt, limit=limit, task_ids=task_ids, max_turns=max_turns,
                   command_timeout_s=command_timeout_s, max_output_chars=max_output_chars, verifier=verifier,
                   overrides=verifier_overrides, provider="local", env_class=ForgeEnv, edit_tool=edit_tool)
    assert isinstance(built, ForgeEnv)
    return built
