"""The audit driver: probes per task from the verifier's domain, scored in batch, tallied by family.

`audit(env)` picks `n` tasks spread over the dataset (as `rlvr check` does), builds each task's
probes -- the generic families every verifier gets (`rlvr.environments.audit.generic`: empty, prompt
echo, format-only, reference-free guesses) and, for a verifier of a known domain, its domain's
(`rlvr.environments.audit.math` / `sql` / `code` / `terminal` / `judge`, chosen from the verifier's type
as the verifier registry names it) -- scores them with the environment's own verifier
(`env.score_batch`, i.e. `verify_batch`), and counts:

- a *false pass*: a wrong probe that scored `correct`;
- a *failed control*: a control probe (a right answer written another way) that did not;
- an *error*: a wrong probe the grader masked (`status="error"`): not a pass, reported apart.

`openenv/remote-v1` is scored by its server, not by a verifier of a response: its audit (domain
`remote`, `rlvr.environments.audit.remote`) plays episodes against hostile servers speaking the
env's wire, with the env's limits, and tallies their verdicts the same way.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rlvr.core.errors import ConfigError, DataError
from rlvr.core.types import Task, Verdict
from rlvr.environments.audit.generic import generic_probes
from rlvr.environments.audit.probe import Probe
from rlvr.environments.loaders import spread_tasks

__all__: list[str] = []

DOMAINS: dict[str, str] = {
    "math": "rlvr.environments.audit.math:math_probes",
    "sql": "rlvr.environments.audit.sql:sql_probes",
    "code": "rlvr.environments.audit.code:code_probes",
    "terminal": "rlvr.environments.audit.terminal:terminal_probes",
    "judge": "rlvr.environments.audit.judge:judge_probes",
    "ruler": "rlvr.environments.audit.judge:judge_probes",
}
"""Verifier registry name → the probe builder `(reference, verifier) -> list[Probe]` of that domain."""

GENERIC = "generic"
"""The domain of a verifier of none of the `DOMAINS` types (a user's own): only the generic families."""

GENERIC_ONLY: dict[str, tuple[str, ...]] = {"terminal": ("empty",)}
"""Domains that get only some generic families. A terminal response is shell commands replayed in the
task's sandbox, each up to the verifier's command timeout: a guess such as `yes` is a command that
floods until then (minutes a probe), an echo runs the prompt's words as commands; the terminal
families already hold the no-op and the tampering, so there only the `empty` family runs."""

MAX_EXAMPLES = 5


def domain_generic_probes(task: Task, verifier: Any, others: list[Task], domain: str) -> list[Probe]:
    """The generic probes `domain` gets (`generic_probes`; no echo for math, `GENERIC_ONLY` families)."""
    probes = generic_probes(task, verifier, others, echo=domain != "math")
    return [p for p in probes if domain not in GENERIC_ONLY or p.family in GENERIC_ONLY[domain]]
"""Examples kept per family (false passes, or failed controls for the control row)."""


class FamilyResult(BaseModel):
    """The tally of one family (or of the controls)."""

    model_config = ConfigDict(extra="forbid")

    tried: int = Field(default=0, ge=0, description="Probes of this family scored.")
    false_passes: int = Field(default=0, ge=0, description="Wrong probes that scored correct (0 for controls).")
    failed: int = Field(default=0, ge=0, description="Control probes that did not score correct (0 for wrong ones).")
    errors: int = Field(default=0, ge=0, description="Probes the grader answered with status 'error'.")
    examples: list[dict[str, Any]] = Field(default_factory=list, description="The first false passes (or failed "
                                           "controls): task_id, probe, response, status, reward, detail.")


class AuditReport(BaseModel):
    """The outcome of one adversarial audit."""

    model_config = ConfigDict(extra="forbid")

    env_id: str = Field(description="The audited environment's spec id.")
    domain: str = Field(description="The verifier's domain: math, sql, code, terminal, judge, ruler; remote for "
                        "openenv/remote-v1; generic for a verifier of none of these types (the generic families only).")
    n: int = Field(ge=0, description="Tasks audited.")
    families: dict[str, FamilyResult] = Field(description="Wrong probes, by family.")
    controls: FamilyResult = Field(description="Control probes (right answers that must score correct).")
    skipped: list[str] = Field(default_factory=list, description="Tasks the domain's probes could not be built for, "
                               "with why (a reference they cannot read: no probe at all; none that applies: the "
                               "generic probes only).")
    elapsed_s: float = Field(ge=0, description="Wall-clock time of the audit, seconds.")

    @property
    def tried(self) -> int:
        """Wrong probes scored (controls not counted)."""
        return sum(f.tried for f in self.families.values())

    @property
    def false_passes(self) -> int:
        """Wrong probes that scored correct."""
        return sum(f.false_passes for f in self.families.values())

    @property
    def controls_failed(self) -> int:
        """Controls that did not score correct."""
        return self.controls.failed

    @property
    def passed(self) -> bool:
        """True when no false pass and no failed control."""
        return not self.false_passes and not self.controls_failed

    def to_json(self) -> dict[str, Any]:
        """The `--report` document (JSON-serialisable).

        Keys: `tried`, `false_passes`, `controls_failed`, `families` (`{NAME: {"tried", "false_passes",
        "errors", "examples"}}`), `controls` (`{"tried", "failed", "errors", "examples"}`), `env_id`,
        `domain`, `n`, `skipped`, `elapsed_s`.
        """
        return {
            "env_id": self.env_id, "domain": self.domain, "n": self.n,
            "tried": self.tried, "false_passes": self.false_passes, "controls_failed": self.controls_failed,
            "families": {name: {"tried": f.tried, "false_passes": f.false_passes, "errors": f.errors,
                                "examples": f.examples} for name, f in self.families.items()},
            "controls": {"tried": self.controls.tried, "failed": self.controls.failed, "errors": self.controls.errors,
                         "examples": self.controls.examples},
            "skipped": self.skipped, "elapsed_s": round(self.elapsed_s, 3),
        }


def verifier_domain(verifier: Any) -> str:
    """The audit domain of `verifier`: the registry name (math, sql, code, terminal) of its class, else 'generic'.

    Wrappers (`FormatReward`, anything with an `inner` verifier) are looked through; subclasses
    of a registered verifier (a third party's) count as its domain. Any other verifier (a user's
    own) is 'generic': the audit gives it the generic families only.
    """
    from rlvr.verifiers.registry import registry

    inner = verifier
    while hasattr(inner, "inner"):
        inner = inner.inner
    for name in DOMAINS:
        module, _, attr = str(registry.spec(name).entry_point).partition(":")
        if any(c.__name__ == attr and (c.__module__ == module or c.__module__.startswith(module + "."))
               for c in type(inner).__mro__):
            return name
    return GENERIC


def _chosen(tasks: list[Task], task_ids: Sequence[str]) -> list[Task]:
    by_id = {t.id: t for t in tasks}
    missing = [i for i in task_ids if i not in by_id]
    if missing:
        raise ConfigError(f"unknown task id(s) {', '.join(missing)}; the environment has e.g. "
                          f"{', '.join(list(by_id)[:5])}")
    return [by_id[i] for i in task_ids]


def _example(task_id: str, probe: Probe, verdict: Verdict) -> dict[str, Any]:
    return {"task_id": task_id, "family": probe.family, "probe": probe.name, "response": probe.response[:600],
            "status": verdict.status, "reward": verdict.reward, "detail": verdict.detail[:300]}


def _tally(task_id: str, probes: list[Probe], verdicts: list[Verdict], families: dict[str, FamilyResult],
           controls: FamilyResult) -> None:
    for probe, verdict in zip(probes, verdicts, strict=True):
        row = controls if probe.control else families.setdefault(probe.family, FamilyResult())
        row.tried += 1
        row.errors += verdict.status == "error"
        bad = not verdict.is_correct if probe.control else verdict.is_correct
        if bad:
            if probe.control:
                row.failed += 1
            else:
                row.false_passes += 1
            if len(row.examples) < MAX_EXAMPLES:
                row.examples.append(_example(task_id, probe, verdict))


def _audit_remote(env: Any, start: float) -> AuditReport:
    """The hostile-server audit of an `openenv/remote-v1` env (`rlvr.environments.audit.remote`)."""
    from rlvr.environments.audit.remote import remote_probes

    families: dict[str, FamilyResult] = {}
    controls = FamilyResult()
    played = remote_probes(env)
    _tally("hostile-server", [p for p, _ in played], [v for _, v in played], families, controls)
    return AuditReport(env_id=env.spec.id, domain="remote", n=1, families=families, controls=controls,
                       elapsed_s=time.monotonic() - start)


def audit(
    env_or_id: Any,
    n: int = 5,
    env_kwargs: dict[str, Any] | None = None,
    workers: int | None = None,
    on_task: Callable[[Task, int, int], None] | None = None,
    task_ids: Sequence[str] | None = None,
) -> AuditReport:
    """Score mutated and exploit responses of `n` tasks with the environment's own verifier.

    Args:
        env_or_id: an `Environment`, or a registered id built with `rlvr.make(id, **env_kwargs)` (closed after).
        n: tasks to audit, spread evenly over the dataset.
        env_kwargs: factory arguments when `env_or_id` is an id.
        workers: worker processes for `score_batch` (None: the verifier's own setting).
        on_task: called as `on_task(task, probes, false_passes_so_far)` after each task (progress).
        task_ids: audit exactly these tasks (by `Task.id`) instead of `n` spread ones.

    Returns:
        An `AuditReport`: `report.false_passes` wrong probes scored correct, `report.controls_failed`
        right ones did not.

    Raises:
        ConfigError: unknown id, bad factory arguments, or an unknown task id.
        DataError: the dataset cannot be read.
    """
    from rlvr.core.registry import load_attr
    from rlvr.environments.openenv_remote import RemoteOpenEnv
    from rlvr.environments.registry import make

    start = time.monotonic()
    env = make(env_or_id, **(env_kwargs or {})) if isinstance(env_or_id, str) else env_or_id
    try:
        if isinstance(env, RemoteOpenEnv):
            return _audit_remote(env, start)
        domain = verifier_domain(env.verifier)
        build: Callable[[Any, Any], list[Probe]] | None = load_attr(DOMAINS[domain]) if domain in DOMAINS else None
        families: dict[str, FamilyResult] = {}
        controls = FamilyResult()
        skipped: list[str] = []
        tasks = spread_tasks(list(env.tasks), n) if task_ids is None else _chosen(list(env.tasks), task_ids)
        for task in tasks:
            try:
                probes = build(task.reference, env.verifier) if build is not None else []
            except (ValueError, DataError) as exc:
                skipped.append(f"{task.id}: {str(exc)[:200]}")
                continue
            if build is not None and not probes:
                skipped.append(f"{task.id}: no probe of the {domain} families applies to this reference (the generic "
                               "ones ran)")
            probes += domain_generic_probes(task, env.verifier, tasks, domain)
            verdicts = env.score_batch([task] * len(probes), [p.response for p in probes], workers=workers)
            _tally(task.id, probes, verdicts, families, controls)
            if on_task is not None:
                on_task(task, len(probes), sum(f.false_passes for f in families.values()))
        return AuditReport(env_id=env.spec.id, domain=domain, n=len(tasks), families=families, controls=controls,
                           skipped=skipped, elapsed_s=time.monotonic() - start)
    finally:
        if isinstance(env_or_id, str):
            env.close()
