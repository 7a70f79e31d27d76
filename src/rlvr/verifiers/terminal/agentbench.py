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

`runs_locally` and `why_not` follow `rlvr.verifiers.terminal.agentbench_rules`.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import uuid
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from rlvr.core.errors import ConfigError, DataError, MissingExtraError
from rlvr.verifiers.terminal.agentbench_rules import AGENT_HOME, runner_notes, why_not

__all__ = ["load_agentbench"]

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
    record_example = _command(evaluation.get("example"), where) or ""
    problem = why_not(record, fields, own_init, init_file, record_example)
    return AgentBenchTask(**fields, runs_locally=not problem, why_not=problem, notes=runner_notes(fields, own_init))


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
