"""The problem statement written as a user's issue by a model (`rlvr forge --issue-writer URL`).

By default a forge task's statement is a CI-failure report, written without a model
(`harbor.instruction_text`). With an issue writer, an OpenAI-compatible model rewrites that report
as the issue a user would file (SWE-bench style), through the judge's hardened client
(`rlvr.verifiers.judge`: a deadline on the whole call, retries with backoff, no `openai` package).
The model sees only the report (failing test ids, first lines of their errors), never the code or
the fix. The failing tests are listed again under the issue. Any failure (transport, an empty or
refused reply, one longer than `MAX_CHARS`) falls back to the report, and says why.
"""

from __future__ import annotations

from rlvr.verifiers.judge import JudgeConfig

__all__: list[str] = []

ISSUE_PROMPT = (
    "You turn continuous-integration failure reports of Python projects into the GitHub issue a user of the "
    "project would file. Write a title line starting with '# ', then what goes wrong, seen from the outside, with "
    "a short example built only from the failing tests' names and error messages in the report. Do not propose "
    "or guess a fix, do not name a source file or function that must change, and do not invent behaviour the "
    "report does not show. Reply with the issue in Markdown and nothing else."
)
MAX_CHARS = 6000
"""Longest issue kept, characters (a longer reply falls back to the report)."""


def write_issue(report: str, failing: list[str], *, base_url: str, model: str, api_key_env: str | None = None,
                timeout_s: float = 120.0) -> tuple[str | None, str]:
    """The report rewritten as an issue, with the failing tests listed under it; or (None, why it fell back).

    Args:
        report: the CI-failure report (`harbor.instruction_text`).
        failing: the failing test ids as the project names them (listed under the issue).
        base_url: the OpenAI-compatible server, e.g. `http://127.0.0.1:8000/v1`.
        model: the model name sent.
        api_key_env: environment variable holding the API key (None: no key).
        timeout_s: limit of one HTTP call, seconds.
    """
    from rlvr.verifiers.judge._client import ChatClient

    config = JudgeConfig(base_url=base_url, model=model, api_key_env=api_key_env, timeout_s=timeout_s,
                         max_tokens=1024, structured_output=False, cache=False)
    calls = ChatClient(config).chat([{"role": "system", "content": ISSUE_PROMPT},
                                     {"role": "user", "content": report}], None, "issue")
    last = calls[-1]
    text = (last.content or "").strip()
    if last.error is not None:
        return None, f"the issue writer failed: {last.error}"
    if last.refusal or not text:
        return None, "the issue writer gave no issue (an empty or refused reply)"
    if len(text) > MAX_CHARS:
        return None, f"the issue writer's reply is longer than {MAX_CHARS} characters"
    listed = "\n".join(f"- `{test_id}`" for test_id in failing)
    return f"{text}\n\n## Failing tests\n\n{listed}\n\n(The project is in `/app`; its tests are hidden.)\n", ""
