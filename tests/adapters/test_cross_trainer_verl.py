"""The cross-trainer episodes (tests/data/parity/episodes.json) through veRL 0.9.1's agent-loop machinery.

Each record is replayed by `verl_replay`: veRL's composed config, rlvr's `RlvrAgentLoop` instantiated
from the exported agent_loop.yaml the way veRL's `AgentLoopWorker` does it, veRL's `TokenOutput`s
replaying the record's ids (`ReplayServerManager`). It must give the fixture's prompt ids, response ids,
response mask, reward and status; the conversation is read from the episode's environment copy.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.verl

with warnings.catch_warnings():  # ray (imported by verl) warns about its own deprecated state API on import
    warnings.simplefilter("ignore", DeprecationWarning)
    pytest.importorskip("verl")
    pytest.importorskip("torch")
    from rlvr.adapters.verl.agent import ReplayServerManager, _instantiate_loop, _record_row, _replay_config

from rlvr.adapters.export import close_cached_envs  # noqa: E402
from rlvr.adapters.verl import UnscorableSampleError, verl_replay  # noqa: E402
from rlvr.core.errors import BackendError  # noqa: E402
from rlvr.runners.parity.records import record_tokenizer  # noqa: E402
from rlvr.runners.parity.replay import compare_replay  # noqa: E402

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "parity" / "episodes.json"
RECORDS: list[dict[str, Any]] = json.loads(FIXTURE.read_text())["records"]
MCP_RECORDS: list[dict[str, Any]] = json.loads(FIXTURE.with_name("mcp_episodes.json").read_text())["records"]
"""The MCP task family's episodes (mcp/git-v1: tools on mcp-server-git in the sandbox, a state-check verdict)."""


@pytest.fixture(scope="module", autouse=True)
def _close_cached_envs() -> Any:
    yield
    close_cached_envs()


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    from transformers import AutoTokenizer

    from rlvr.runners.models import prepare_smollm2

    try:
        return AutoTokenizer.from_pretrained(str(prepare_smollm2()))
    except BackendError as exc:
        pytest.skip(f"SmolLM2 unavailable: {exc}")


@pytest.mark.parametrize("record", [*RECORDS, *MCP_RECORDS], ids=lambda r: r["id"])
def test_verl_agent_loop_gives_the_fixture(tokenizer: Any, record: dict[str, Any],
                                           episode_copies: Any) -> None:
    copies = episode_copies(record["env_id"], record["env_args"])
    got = verl_replay(record, record_tokenizer(record, tokenizer))  # on_error='nan': error verdicts keep tokens
    assert compare_replay(record, got) == [] and got["status"] == record["expected"]["status"]
    assert [m.to_openai() for m in copies[-1].messages] == record["expected"]["messages"]


@pytest.mark.parametrize("kind", ["error_reference", "rewrite_template"])
def test_verl_on_error_raise_fails_the_rollout_with_rlvr_s_reason(tokenizer: Any, kind: str) -> None:
    """With on_error='raise' (rlvr's default for veRL) an error verdict fails the rollout; the message says why."""
    import asyncio

    record = next(r for r in RECORDS if r["kind"] == kind)
    tok = record_tokenizer(record, tokenizer)
    config = _replay_config(record["env_id"], json.dumps(record["env_args"], sort_keys=True), tok.name_or_path)
    turns = [t["ids"] for t in record["turns"] if t["role"] == "assistant"]

    async def run() -> Any:
        loop = _instantiate_loop(config, "rlvr_agent", ReplayServerManager(turns), tok)
        assert loop.on_error == "nan"  # the replay export's agent_loop.yaml
        loop.on_error = "raise"
        return await loop.run({"temperature": 1.0}, **_record_row(record))

    with pytest.raises(UnscorableSampleError) as raised:
        asyncio.run(run())
    misaligned = record["expected"]["misaligned"]
    assert record["task_id"] in str(raised.value)
    assert misaligned is None or misaligned in str(raised.value)


# Served: the same episodes against `rlvr serve` through `openenv/remote-v1` (the trainer process connects to
# the URL). error_reference is left out: a served task's reference stays on the server, a client cannot set one.
SERVED = [r for r in RECORDS if r["kind"] != "error_reference"]


@pytest.mark.parametrize("record", SERVED, ids=lambda r: r["kind"])
def test_verl_agent_path_against_a_served_env_gives_the_fixture(tokenizer: Any, record: dict[str, Any],
                                                                served_parity_url: str) -> None:
    """The veRL agent loop playing against `rlvr serve` gives the in-process ids, masks, rewards and status."""
    from openenv_serving import as_served

    got = verl_replay(as_served(record, served_parity_url), record_tokenizer(record, tokenizer))
    assert compare_replay(record, got) == [] and got["status"] == record["expected"]["status"]
