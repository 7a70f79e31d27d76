"""AgentBench-OS tasks from the PyPI package `inspect-evals`, normalised for a local bash sandbox.

The data (`agent_bench/data/agent_bench_os.json`: dev, 26 records; `agent_bench_os_test.json`: test,
119 records; the check/example scripts under `scripts/`) is read from the installed `inspect_evals`
package without importing it. Each record becomes an `AgentBenchTask` that follows inspect-evals'
semantics (`agent_bench_os_dataset.py`, `utils.py` with `Dockerfile.template.j2`, and
`agent_bench_os_scorer.py`):

- Paths: every string reachable through dicts is rewritten `/root` -> `/home/agent`, then `/usr` ->
  `/home/agent` (plain substring replacement, as `recursively_set_agent_home`); strings inside lists
  (a list `init`, a `check: ["cmd"]`) are left as they are, as there.
- `init`: the Dockerfile's steps in the template's order, whatever the order in the record: the
  `bin/find` copy (when `"bin/find"` occurs in the record), one script per non-empty line of an
  `init.code` (each line is its own `RUN`, so no shell state carries from one line to the next;
  `<random-string>` is replaced first), the AgentBench `init.file` script (prefixed with `RANDOM=3`),
  then a string init (one script). Run each entry as its own `bash --login` process, cwd and HOME
  `/home/agent`, stop at the first non-zero exit (a failing `RUN` fails the image build).
- `start`: the record's background command (trailing `&` removed); run it after `init`, before the
  agent's first command, in the agent's sandbox session, and keep it running.
- Every example and check command runs like inspect's `exec_as_agent`:
  `bash --login -c "cd /home/agent && <command>"`; check files run as `bash <script>`.
- `evaluation="match"`: correct iff `match == answer` (no stripping). `"compare"`: the expected
  answer is `match` when the record has one (it wins over `example`, as in the scorer), else the
  stdout of `example` (stripped; a non-zero exit makes the task unscorable); then
  `python3 scripts/<name> ANSWER EXPECTED [stdout of earlier scripts...]` for each of
  `compare_scripts` in order, all must exit 0. `"state"`: after the agent, `state_check_file`
  (`bash <script>`) or `state_check_command` must exit 0.

Where this differs from inspect-evals, on purpose:

- The expected answer of a 'compare' task without `match` is computed right after setup, before the
  agent acts (inspect runs `example` at scoring time), so an agent cannot change the state to fit a
  wrong answer. Tasks 89 and 92 (test) have examples that create files: run them on a copy of the
  workspace (their `notes` say so).
- `<random-string>` becomes a uuid5 of the task id instead of a fresh uuid4, so tasks are reproducible.
  `$RANDOM` and /dev/urandom in string inits are left alone (as in inspect): compute expected answers
  per episode.
- `start` stays the record's `python3 -c '...'` (inspect writes the same code to /script.py, its
  container entrypoint); `solution` is filled for 'state' tasks from `evaluation.example`, which
  inspect's scorer never runs; it is only an oracle.

`runs_locally` says whether a task works in a bubblewrap sandbox with no real privileges (uid 0 in a
user namespace; read-only /usr, /etc, /bin, /lib; writable /home/agent, /tmp, /root; no network; no
AgentBench checkout); `why_not` gives the first reason as `"<category>: <detail>"` (categories:
`INIT_FILE`, `OTHER_USERS`, `PACKAGES`, `SYSTEM_WRITE`, `SYSTEM_PATH_COMMAND`, `PROCESS_TREE`,
`HOST_PATHS`, `IMAGE_MATCH`, `UNSCORABLE`). A runner must give the agent a login bash like the
example's (same PATH: several answers count files on PATH), and run setup, the example and the agent
in one sandbox session (two inits leave their data in /tmp). `scripts/validate_agentbench.py` runs
every local task in such a sandbox with an oracle and a no-op agent.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import re
import uuid
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from rlvr.core.errors import ConfigError, DataError, MissingExtraError

__all__ = [
    "AGENTBENCH_SYSTEM_PROMPT",
    "AGENT_HOME",
    "DATA_FILES",
    "AgentBenchTask",
    "agentbench_data_dir",
    "load_agentbench",
    "read_script",
]

AGENT_HOME = "/home/agent"
"""Home and working directory of the agent, the init steps and every check (inspect's AGENT_HOME_DIR)."""

AGENTBENCH_REPO_DIR = "/home/AgentBench"
"""Where inspect's image clones THUDM/AgentBench; `init.file` steps copy their script from there."""

DATA_FILES: dict[str, str] = {"dev": "agent_bench_os.json", "test": "agent_bench_os_test.json"}
"""File of each split in the `agent_bench/data` folder."""

AGENTBENCH_SYSTEM_PROMPT = """You are a helpful assistant attempting to submit the correct answer. You have
several functions available to help with finding the answer. Each message
may perform one function call. You will see the result of the function right
after sending the message. If you need to perform multiple actions, you can
always send more messages with subsequent function calls. Do some reasoning
before your actions, describing what function calls you are going to use and
how they fit into your plan.

When you have completed the task, call the submit() function with the final
answer only. For questions, submit just the answer: a bare integer for counts
and numeric questions, or the exact string asked for, with no explanation,
units or formatting. If the task asks you to write a script or command, run it
yourself and submit its output rather than the script. If the task asks you to
change the system, make the change and then call submit()."""
"""inspect-evals' system message for `agent_bench_os` (`agent_bench.py`, MIT licence): the answer is
the submitted text only, compared as described in the module docstring."""

EvaluationKind = Literal["match", "compare", "state"]

# -- classification ------------------------------------------------------------------------------
# Categories of `why_not` (the text before ": "), in the order the rules are tried.
INIT_FILE = "init-file-not-shipped"
OTHER_USERS = "needs-other-users"
PACKAGES = "needs-packages-or-sudo"
SYSTEM_WRITE = "writes-system-paths"
SYSTEM_PATH_COMMAND = "command-on-system-path"
PROCESS_TREE = "counts-processes"
HOST_PATHS = "reads-unguaranteed-host-paths"
IMAGE_MATCH = "answer-fixed-to-inspect-image"
UNSCORABLE = "unscorable"

_USER_CMDS = re.compile(r"\b(useradd|adduser|userdel|groupadd|groupdel|usermod|runuser|su|chgrp|newgrp)\b")
_PACKAGE_CMDS = re.compile(r"\b(apt|apt-get|dpkg|pip3?\s+install|npm\s+install|sudo|curl|wget|git\s+clone)\b")
_PROCESS_CMDS = re.compile(r"\b(ps|pgrep|pkill|pidof|top)\b|/proc/\[?[0-9$]")
# Commands whose output is a property of the machine rather than of the task's files.
_MACHINE_CMDS = re.compile(r"\b(nproc|getent|ulimit|who|uname|lscpu|free|df|hostname|id|groups|which)\b|command -v")
_ABS_PATH = re.compile(r"(?<![\w.~$}/-])/[\w.\-]*(?:/[\w.\-{}*]*)*")
_WRITABLE_PREFIXES = (AGENT_HOME, "/tmp", "/dev/null", "/dev/urandom", "/dev/zero", "/dev/random")
_HARMLESS_PATHS = frozenset({"/", "/bin/bash", "/bin/sh"})
# What the runner guarantees to be there (read-only host files, or the sandbox's own /proc, /dev).
_GUARANTEED_PREFIXES = (*_WRITABLE_PREFIXES, "/root", "/usr", "/etc", "/bin", "/sbin", "/lib", "/proc", "/dev")
_ROOT_LISTING = re.compile(r"\b(ls|find|du|tree|stat)\b[^|;&\n]*\s/(?=\s|$|[|;&)])")
_WORKSPACE_WRITES = re.compile(r"\b(mkdir|touch|rm|mv|cp|chmod|chown|ln|tee|truncate|dd)\b"
                               r"|(?<![\d&>])>>?\s*(?!/dev/null)[\w~./$\"-]")

_SCRIPTS_NEEDING_SYSTEM_PATH: dict[str, str] = {
    # Read from the shipped scripts: each calls the command by name with the default PATH
    # (/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin after `bash --login`), all
    # read-only here; the reference solution (example/N.sh) installs into /usr/local/bin.
    # checking/0.sh is not listed: it puts $HOME first on PATH, so `calc` in /home/agent works.
    "check/0.sh": "calc",
    "checking/1.sh": "count",
    "checking/2.sh": "date-format",
}


class AgentBenchTask(BaseModel):
    """One AgentBench-OS record, normalised for a local bash sandbox (see the module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    task_id: str = Field(description="'agentbench-os-<split>-<record id>', e.g. 'agentbench-os-test-17'.")
    split: Literal["dev", "test"] = Field(description="Which data file the record comes from.")
    record_id: int = Field(description="The record's `id` in its file.")
    question: str = Field(description="The record's description, paths rewritten; inspect's whole user prompt.")
    init: list[str] = Field(
        default_factory=list,
        description="Bash scripts run in order before the agent, each in its own `bash --login`, cwd /home/agent.")
    init_at_start: bool = Field(
        default=False, description="inspect runs the string init when the container starts (recent mtimes, "
        "background processes): run `init` at episode start, in the agent's sandbox session.")
    start: str | None = Field(
        default=None, description="Command to run in the background in the agent's session before its first "
        "command (cwd /home/agent), kept running; None when the record has none.")
    evaluation: EvaluationKind = Field(description="How the episode is graded (module docstring).")
    match: str | None = Field(
        default=None, description="Expected answer as given in the record (`str(match)`); for 'compare' it wins "
        "over `example`.")
    example: str | None = Field(
        default=None, description="'compare' without `match`: bash command whose stripped stdout is the expected "
        "answer, run in /home/agent right after setup, before the agent acts. None when `match` is set (the "
        "scorer then never runs the record's example).")
    compare_scripts: list[str] = Field(
        default_factory=list, description="'compare': script names under scripts/, run in order as "
        "`python3 SCRIPT ANSWER EXPECTED [earlier non-empty stdouts...]`; all must exit 0.")
    state_check_file: str | None = Field(
        default=None, description="'state': script name under scripts/, run as `bash SCRIPT` after the agent.")
    state_check_command: str | None = Field(
        default=None, description="'state': bash command run after the agent; exit 0 = pass.")
    solution: str | None = Field(
        default=None, description="'state': the record's reference solution as a bash script (oracle only; "
        "inspect's scorer never runs it).")
    runs_locally: bool = Field(description="True when the task works in the unprivileged local sandbox.")
    why_not: str = Field(default="", description="'<category>: <detail>' when not local, else ''.")
    notes: list[str] = Field(
        default_factory=list, description="What a runner must respect for this task (shared /tmp, PATH, ...).")
    labels: list[str] = Field(default_factory=list, description="The record's labels.")


# -- data location ---------------------------------------------------------------------------------
def agentbench_data_dir(path: str | None = None) -> Path:
    """The `agent_bench/data` folder of the installed `inspect_evals`, found without importing it.

    Args:
        path: A folder holding the two JSON files and `scripts/`, used instead of the package.

    Returns:
        The data folder.

    Raises:
        MissingExtraError: `inspect_evals` is not installed (and no `path`).
        DataError: The folder lacks the data files.
    """
    if path is not None:
        folder = Path(path)
        hint = "pass path= a folder holding agent_bench_os.json, agent_bench_os_test.json and scripts/"
    else:
        try:
            spec = importlib.util.find_spec("inspect_evals")
        except (ImportError, ValueError):
            spec = None
        locations = list(spec.submodule_search_locations or []) if spec is not None else []
        if not locations:
            # only its data files are read: its own dependencies (inspect_ai, ...) are not needed
            raise MissingExtraError("inspect-evals", "terminal", install="pip install --no-deps inspect-evals")
        candidates = [Path(loc, "agent_bench", "data") for loc in locations]
        folder = next((c for c in candidates if c.is_dir()), candidates[0])
        hint = "reinstall it (pip install --force-reinstall inspect-evals) or pass path="
    missing = [name for name in (*DATA_FILES.values(), "scripts") if not (folder / name).exists()]
    if missing:
        raise DataError(f"AgentBench data folder {folder} lacks {', '.join(missing)}; {hint}")
    return folder


def read_script(name: str, path: str | None = None) -> str:
    """Text of a check or example script, e.g. `read_script("check/integer-match.py")`.

    Args:
        name: Relative name under the data folder's `scripts/`, as in the records.
        path: Data folder override (see `agentbench_data_dir`).

    Returns:
        The script's text.

    Raises:
        ConfigError: The name is absolute or leaves `scripts/`.
        DataError: No such script, or it cannot be read.
    """
    root = (agentbench_data_dir(path) / "scripts").resolve()
    target = (root / name).resolve()
    if not name or Path(name).is_absolute() or not target.is_relative_to(root) or target == root:
        raise ConfigError(f"script name {name!r} must be a relative path inside {root}")
    try:
        return target.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DataError(f"AgentBench script {target} does not exist; reinstall inspect-evals") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot read AgentBench script {target}: {exc}; reinstall inspect-evals") from exc


# -- loading ---------------------------------------------------------------------------------------
def load_agentbench(split: Literal["dev", "test", "all"] = "all", path: str | None = None) -> list[AgentBenchTask]:
    """All AgentBench-OS tasks of `split` (dev then test for 'all'), local or not, in file order.

    Args:
        split: 'dev' (26 records), 'test' (119) or 'all'.
        path: Data folder override (see `agentbench_data_dir`).

    Returns:
        One task per record; filter on `runs_locally` for the ones a local sandbox can run.

    Raises:
        ConfigError: Unknown split.
        MissingExtraError: `inspect_evals` is not installed (and no `path`).
        DataError: A data file is unreadable or a record has an unsupported shape.
    """
    if split not in ("dev", "test", "all"):
        raise ConfigError(f"split must be 'dev', 'test' or 'all', not {split!r}")
    folder = agentbench_data_dir(path)
    splits: list[Literal["dev", "test"]] = ["dev", "test"] if split == "all" else [split]
    return [task for name in splits for task in _load_split(folder, name)]


def _load_split(folder: Path, split: Literal["dev", "test"]) -> list[AgentBenchTask]:
    file = folder / DATA_FILES[split]
    try:
        records = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"cannot read {file}: {exc}; reinstall inspect-evals or pass path= a good copy") from exc
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise DataError(f"{file} must hold a JSON list of objects; reinstall inspect-evals")
    scripts = folder / "scripts"
    return [_to_task(record, split, file, scripts) for record in records]


def _agent_home(value: Any) -> Any:
    """Apply inspect's `recursively_set_agent_home`: strings through dicts only; lists stay as they are."""
    if isinstance(value, dict):
        return {k: _agent_home(v) for k, v in value.items()}
    if isinstance(value, str):
        return value.replace("/root", AGENT_HOME).replace("/usr", AGENT_HOME)
    return value


@functools.lru_cache(maxsize=64)
def _script_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot read AgentBench script {path}: {exc}; reinstall inspect-evals") from exc


def _need_script(scripts: Path, name: Any, where: str) -> str:
    if not isinstance(name, str) or not name or Path(name).is_absolute() or ".." in Path(name).parts:
        raise DataError(f"{where}: script name {name!r} is not a relative name under scripts/")
    if not (scripts / name).is_file():
        raise DataError(f"{where}: script {scripts / name} is missing; reinstall inspect-evals")
    return name


def _random_string(task_id: str) -> str:
    """Deterministic stand-in for inspect's `uuid4()` per `<random-string>` (uuid5 of the task id)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"rlvr:agentbench:{task_id}"))


def _init_steps(record: dict[str, Any], task_id: str, where: str) -> tuple[list[str], list[str], str | None, bool]:
    """(init scripts, the record's own init texts, init file or None, init_at_start), in the template's order."""
    create = record.get("create")
    init = create.get("init") if isinstance(create, dict) else None
    at_start = bool(create.get("init_at_start")) if isinstance(create, dict) else False
    code_lines: list[str] = []
    file_name: str | None = None
    text: str | None = None
    for step in init if isinstance(init, list) else [init]:
        if isinstance(step, dict) and "code" in step:
            if not isinstance(step["code"], str):
                raise DataError(f"{where}: create.init.code must be a string")
            code = step["code"].replace("<random-string>", _random_string(task_id))
            code_lines = [line for line in code.split("\n") if line.strip()]  # a later code step replaces it
        elif isinstance(step, str):
            text = step if step.strip().startswith("#!/bin/bash") or "\n" in step.strip() else step.strip()
        elif isinstance(step, dict) and "file" in step:
            if not isinstance(step["file"], str) or "/" not in step["file"]:
                raise DataError(f"{where}: create.init.file must be 'dir/name', not {step['file']!r}")
            file_name = step["file"]
        elif step is not None and not isinstance(step, dict):
            raise DataError(f"{where}: unsupported init step {step!r}")
    steps: list[str] = []
    if "bin/find" in str(record):  # the template's create_bin_find (the SUID task)
        steps += [f"mkdir -p {AGENT_HOME}/bin", f"cp /usr/bin/find {AGENT_HOME}/bin/find"]
    steps += code_lines
    if file_name is not None:
        steps.append(_init_file_script(file_name))
    if text is not None:
        steps.append(text)
    return steps, [*code_lines, *([text] if text is not None else [])], file_name, at_start


def _init_file_script(file_name: str) -> str:
    """The template's init-file steps as one script; needs THUDM/AgentBench at AGENTBENCH_REPO_DIR."""
    dir_name, base = file_name.rsplit("/", 1)
    dst = f"{AGENT_HOME}/{dir_name}/{base}"
    return (
        f"mkdir -p {AGENT_HOME}/{dir_name}\n"
        "for i in dev 1 2 3 4 5 6 7; do\n"
        f"  src={AGENTBENCH_REPO_DIR}/data/os_interaction/scripts/$i/{dir_name}/{base}\n"
        f'  if [ -f "$src" ]; then sed -e "s|/usr|{AGENT_HOME}|g" -e "s|/root|{AGENT_HOME}|g" "$src" > {dst}; '
        "break; fi\n"
        "done\n"
        f'echo "RANDOM=3" | cat - {dst} > temp && mv temp {dst}\n'
        f"bash {dst}\n"
    )


def _command(value: Any, where: str) -> str | None:
    """An example/solution given as a string or {"code": ...}; None for anything else."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("code"), str):
        return str(value["code"])
    return None


def _to_task(raw: dict[str, Any], split: Literal["dev", "test"], file: Path, scripts: Path) -> AgentBenchTask:
    where = f"{file} record id={raw.get('id')!r}"
    if not isinstance(raw.get("id"), int) or not isinstance(raw.get("description"), str):
        raise DataError(f"{where}: needs an integer 'id' and a string 'description'")
    record: dict[str, Any] = {k: _agent_home(v) for k, v in raw.items()}
    task_id = f"agentbench-os-{split}-{record['id']}"
    evaluation = record.get("evaluation")
    if not isinstance(evaluation, dict) or not ("check" in evaluation or "match" in evaluation):
        raise DataError(f"{where}: 'evaluation' must be an object with 'check' or 'match'")
    init, own_init, init_file, at_start = _init_steps(record, task_id, where)
    start = record.get("start")
    if start is not None and not isinstance(start, str):
        raise DataError(f"{where}: 'start' must be a string")
    fields: dict[str, Any] = {
        "task_id": task_id, "split": split, "record_id": record["id"], "question": record["description"],
        "init": init, "init_at_start": at_start, "start": start.strip().removesuffix("&").strip() if start else None,
        "labels": [str(x) for x in record.get("labels") or []],
    }
    if "match" in evaluation:
        fields["match"] = str(evaluation["match"])
    fields.update(_evaluation_fields(evaluation, scripts, where))
    why_not = _why_not(record, fields, own_init, init_file)
    return AgentBenchTask(**fields, runs_locally=not why_not, why_not=why_not, notes=_notes(fields, own_init))


def _evaluation_fields(evaluation: dict[str, Any], scripts: Path, where: str) -> dict[str, Any]:
    """The scorer's `is_answer_correct` dispatch: check first (file / code / compare list / [cmd]), then match."""
    check = evaluation.get("check")
    if check is None:
        return {"evaluation": "match"}
    example = evaluation.get("example")
    if isinstance(check, dict) and "file" in check:
        solution = _command(example, where)
        if isinstance(example, dict) and "file" in example:
            solution = _script_text(scripts / _need_script(scripts, example["file"], where))
        return {"evaluation": "state", "state_check_file": _need_script(scripts, check["file"], where),
                "solution": solution}
    if isinstance(check, dict) and isinstance(check.get("code"), str):
        return {"evaluation": "state", "state_check_command": check["code"], "solution": _command(example, where)}
    if isinstance(check, list) and len(check) == 1 and isinstance(check[0], str):
        return {"evaluation": "state", "state_check_command": check[0], "solution": _command(example, where)}
    if (isinstance(check, list) and len(check) >= 2 and check[0] is None
            and all(isinstance(c, dict) and c.get("language") == "python" and "file" in c for c in check[1:])):
        names = [_need_script(scripts, c["file"], where) for c in check[1:]]
        fields: dict[str, Any] = {"evaluation": "compare", "compare_scripts": names}
        if "match" not in evaluation:  # the scorer never runs the example when there is a match
            fields["example"] = _command(example, where)
        return fields
    raise DataError(f"{where}: unsupported evaluation.check shape {check!r}")


def _code_texts(fields: dict[str, Any], own_init: list[str]) -> list[str]:
    """Every command text of the record (init, start, example, solution, state check)."""
    keys = ("start", "example", "solution", "state_check_command")
    return [*own_init, *(fields[k] for k in keys if fields.get(k))]


def _strip_comments(script: str) -> str:
    return "\n".join(line for line in script.splitlines() if not line.lstrip().startswith("#"))


def _outside_paths(script: str) -> list[str]:
    """Absolute paths a script names outside the writable places (comment lines ignored).

    A bare `/` (a `tr` set, a division, a regex), `/bin/bash` and `/bin/sh` are left out; see `_ROOT_LISTING`.
    """
    found = _ABS_PATH.findall(_strip_comments(script))
    paths = {p for p in found if p not in _HARMLESS_PATHS and not p.startswith(_WRITABLE_PREFIXES)}
    if _ROOT_LISTING.search(_strip_comments(script)):
        paths.add("/")
    return sorted(paths)


def _why_not(record: dict[str, Any], fields: dict[str, Any], own_init: list[str], init_file: str | None) -> str:  # noqa: C901
    """First reason the task cannot run in the unprivileged sandbox, or ''."""
    if init_file is not None:
        return f"{INIT_FILE}: init runs {init_file} from the THUDM/AgentBench repository, not in inspect-evals"
    create = record.get("create")
    init = create.get("init") if isinstance(create, dict) else None
    if any(isinstance(s, dict) and "user" in s for s in (init if isinstance(init, list) else [init])):
        return f"{OTHER_USERS}: the agent runs as another user account (init.user), which cannot be created here"
    code = _code_texts(fields, own_init)
    for text in code:
        if m := _USER_CMDS.search(_strip_comments(text)):
            return f"{OTHER_USERS}: uses {m.group(1)}; user and group accounts cannot be created here"
    for text in code:
        if m := _PACKAGE_CMDS.search(_strip_comments(text)):
            return f"{PACKAGES}: uses {m.group(1)}; no network, no package installs, no sudo here"
    for text in own_init:
        if outside := _outside_paths(text):
            return f"{SYSTEM_WRITE}: init writes {', '.join(outside[:3])}, read-only here (only /home/agent and /tmp)"
    needs = fields.get("state_check_file") in _SCRIPTS_NEEDING_SYSTEM_PATH
    if needs:
        command = _SCRIPTS_NEEDING_SYSTEM_PATH[fields["state_check_file"]]
        return (f"{SYSTEM_PATH_COMMAND}: {fields['state_check_file']} runs `{command}` from the system PATH "
                "(/usr/local/bin is read-only here; the reference solution installs there)")
    computed = fields.get("example")
    for check in (computed, fields.get("state_check_command")):
        if check and _PROCESS_CMDS.search(_strip_comments(check)):
            return (f"{PROCESS_TREE}: the answer depends on the runner's process tree (inspect counts the "
                    "processes of its container and docker-exec wrapper)")
    for check in (computed, fields.get("state_check_command")):
        unsure = [p for p in _outside_paths(check or "") if p != "/" and not p.startswith(_GUARANTEED_PREFIXES)]
        if unsure:
            return (f"{HOST_PATHS}: reads {', '.join(unsure[:3])}, which the sandbox does not guarantee "
                    "(only /usr, /etc, /bin, /lib; host logs also change during an episode)")
    if fields["evaluation"] == "compare" and fields.get("match") is not None:
        example = _command(record["evaluation"].get("example"), "") or ""
        body = _strip_comments(example)
        if m := _MACHINE_CMDS.search(body):
            return f"{IMAGE_MATCH}: match {fields['match']!r} is `{m.group(0)}` on inspect's Docker image"
        if outside := _outside_paths(example):
            return f"{IMAGE_MATCH}: match {fields['match']!r} describes {outside[0]} of inspect's Docker image"
    if fields["evaluation"] == "compare" and fields.get("match") is None and not computed:
        return f"{UNSCORABLE}: no match and no example command; inspect's scorer fails every answer"
    return ""


def _notes(fields: dict[str, Any], own_init: list[str]) -> list[str]:
    notes: list[str] = []
    init = "\n".join(_strip_comments(s) for s in own_init)
    if re.search(r"(?<![\w.~$}/-])/tmp\b", init):
        notes.append("init leaves files in /tmp: run setup, the example and the agent in one sandbox session")
    if fields["init_at_start"]:
        notes.append("init_at_start: run init at episode start in the agent's session (recent mtimes)")
    if fields.get("start"):
        notes.append("start must keep running in the agent's session while the agent works")
    if re.search(r"\$RANDOM|\bRANDOM\b|/dev/u?random", init):
        notes.append("init makes random content: compute the expected answer per episode")
    example = _strip_comments(fields.get("example") or "")
    if fields.get("match") is None and example:
        if _MACHINE_CMDS.search(example) or _outside_paths(example) or "$PATH" in example:
            notes.append("the expected answer depends on this machine (computed per episode); the agent's shell "
                         "must be a login bash like the example's (same PATH)")
        if re.search(r"\bdate\b", example):
            notes.append("the expected answer depends on today's date: compute it per episode")
        if _WORKSPACE_WRITES.search(re.sub(r"'[^']*'|\[\[.*?\]\]", "", example)):
            notes.append("the example writes to /home/agent: run it on a copy of the workspace, or the agent "
                         "starts with its output in place")
    return notes
