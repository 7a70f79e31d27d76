"""AgentBench-OS in rlvr's local sandbox: where the agent lives, which records can run, what a runner respects.

`why_not` says whether a task works in a bubblewrap sandbox with no real privileges (uid 0 in a user
namespace; read-only /usr, /etc, /bin, /lib; writable /home/agent, /tmp, /root; no network; no
AgentBench checkout): its first reason as `"<category>: <detail>"` (categories: `INIT_FILE`,
`OTHER_USERS`, `PACKAGES`, `SYSTEM_WRITE`, `SYSTEM_PATH_COMMAND`, `PROCESS_TREE`, `HOST_PATHS`,
`IMAGE_MATCH`, `UNSCORABLE`), '' when it runs. `runner_notes` says what a runner must respect: a
login bash like the example's (same PATH: several answers count files on PATH), setup, the example
and the agent in one sandbox session (two inits leave their data in /tmp).
`scripts/validate_agentbench.py` runs every local task in such a sandbox with an oracle and a no-op agent.

Randomness is made reproducible (`seeded`, `seed_dir`): bash's RANDOM is seeded from the task id and
/dev/urandom is a fixed pseudo-random byte file, so every episode of a task sees the same files.
Internal to `rlvr.verifiers.terminal` (no names for users).
"""

from __future__ import annotations

import functools
import hashlib
import re
from pathlib import Path
from typing import Any

AGENT_HOME = "/home/agent"
"""Home and working directory of the agent, the init steps and every check (inspect's AGENT_HOME_DIR)."""

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

_ON_A_COPY = "run it on a copy of the workspace"
"""The note of a record whose example writes files (`expected_needs_copy` looks for it)."""

SEED_DIR = "/run/rlvr/seed"
"""Where a task's sandbox sees `seed_dir()` (its `urandom` replaces /dev/urandom in the scripts)."""
SEED_BYTES = 16 << 20


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


def why_not(record: dict[str, Any], fields: dict[str, Any], own_init: list[str], init_file: str | None,  # noqa: C901
            record_example: str) -> str:
    """First reason a record cannot run in the unprivileged sandbox, as `'<category>: <detail>'`, or ''.

    Args:
        record: the record, paths rewritten to AGENT_HOME.
        fields: the `AgentBenchTask` fields read from it so far (evaluation, example, checks, start).
        own_init: the record's own init texts.
        init_file: the `init.file` it names, or None.
        record_example: the record's `evaluation.example` command ('' when none).
    """
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
        example = record_example
        body = _strip_comments(example)
        if m := _MACHINE_CMDS.search(body):
            return f"{IMAGE_MATCH}: match {fields['match']!r} is `{m.group(0)}` on inspect's Docker image"
        if outside := _outside_paths(example):
            return f"{IMAGE_MATCH}: match {fields['match']!r} describes {outside[0]} of inspect's Docker image"
    if fields["evaluation"] == "compare" and fields.get("match") is None and not computed:
        return f"{UNSCORABLE}: no match and no example command; inspect's scorer fails every answer"
    return ""


def runner_notes(fields: dict[str, Any], own_init: list[str]) -> list[str]:
    """What a runner must respect for a record (`AgentBenchTask.notes`): shared /tmp, PATH, per-episode answers."""
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
            notes.append(f"the example writes to /home/agent: {_ON_A_COPY}, or the agent starts with its output in "
                         "place")
    return notes


def expected_needs_copy(record: Any) -> bool:
    """True when the record's example writes into /home/agent (run it in a throwaway sandbox)."""
    return any(_ON_A_COPY in note for note in getattr(record, "notes", []))


def seeded(script: str, task_id: str) -> str:
    """`script` with its randomness made reproducible.

    bash's RANDOM is seeded from the task id and /dev/urandom is read from a fixed pseudo-random
    byte file (`seed_dir`), so every episode of a task (and the oracle computing its answer) sees
    the same files; inspect-evals leaves them random. (A `$RANDOM` inside a subshell is reseeded
    by bash itself and stays random.)
    """
    if "RANDOM" in script:
        seed = int(hashlib.sha256(task_id.encode()).hexdigest()[:4], 16)
        script = f"RANDOM={seed}\n{script}"
    return script.replace("/dev/urandom", f"{SEED_DIR}/urandom")


@functools.lru_cache(maxsize=1)
def seed_dir() -> str:
    """A host directory holding `urandom`: SEED_BYTES of SHAKE-256 output, readable by the sandbox.

    Staged once per machine and user (`rlvr.sandbox.site_packages.stage_files`: read-only, reused).
    """
    import tempfile

    from rlvr.sandbox.site_packages import stage_files

    with tempfile.TemporaryDirectory(prefix="rlvr-seed-") as tmp:
        source = Path(tmp, "urandom")
        source.write_bytes(hashlib.shake_256(b"rlvr agentbench-os").digest(SEED_BYTES))
        return stage_files([("urandom", source)], key=f"agentbench-seed shake256 {SEED_BYTES}")
