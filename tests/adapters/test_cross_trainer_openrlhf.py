"""The cross-trainer episodes (tests/data/parity/episodes.json) through OpenRLHF 0.11.2's agent executor.

Each record is replayed by `openrlhf_replay`: the `AgentExecutor` class rlvr generates (a subclass of
OpenRLHF's own `MultiTurnAgentExecutor`, with rlvr's `AgentInstanceBase` subclass) executes the
episode with an `llm_engine` replaying the record's ids. Its observation tokens and action ranges
(OpenRLHF's action mask), reward (NaN for an error verdict: None here) and status must be the
fixture's; the conversation is read from the episode's environment copy.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.openrlhf

with warnings.catch_warnings():
    warnings.simplefilter("ignore", FutureWarning)  # torch on the deprecated pynvml that openrlhf requires
    pytest.importorskip("torch")
pytest.importorskip("openrlhf.utils.agent")
transformers = pytest.importorskip("transformers")

from rlvr.adapters.export import close_cached_envs  # noqa: E402
from rlvr.adapters.openrlhf import openrlhf_replay  # noqa: E402
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
def tokenizer(smollm2_tokenizer: Any) -> Any:
    return smollm2_tokenizer


@pytest.mark.parametrize("record", [*RECORDS, *MCP_RECORDS], ids=lambda r: r["id"])
def test_openrlhf_agent_executor_gives_the_fixture(tokenizer: Any, record: dict[str, Any],
                                                   episode_copies: Any) -> None:
    copies = episode_copies(record["env_id"], record["env_args"])
    got = openrlhf_replay(record, record_tokenizer(record, tokenizer))
    assert compare_replay(record, got) == [] and got["status"] == record["expected"]["status"]
    assert [m.to_openai() for m in copies[-1].messages] == record["expected"]["messages"]


# Served: the same episodes against `rlvr serve` through `openenv/remote-v1` (the trainer process connects to
# the URL). error_reference is left out: a served task's reference stays on the server, a client cannot set one.
SERVED = [r for r in RECORDS if r["kind"] != "error_reference"]


@pytest.mark.parametrize("record", SERVED, ids=lambda r: r["kind"])
def test_openrlhf_agent_path_against_a_served_env_gives_the_fixture(tokenizer: Any, record: dict[str, Any],
                                                                    served_parity_url: str) -> None:
    """The OpenRLHF agent executor playing against `rlvr serve` gives the in-process ids, masks, rewards and status."""
    from openenv_serving import as_served

    got = openrlhf_replay(as_served(record, served_parity_url), record_tokenizer(record, tokenizer))
    assert compare_replay(record, got) == [] and got["status"] == record["expected"]["status"]
