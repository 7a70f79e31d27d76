"""TRL's `environment_factory` on `mcp/git-v1`: the MCP server's tools, known only by their schemas, as methods.

The remote-tool path of `openenv/remote-v1`: one method per listed tool (transformers' `get_json_schema`
reads it back), each call one episode step answered by the real server, the final answer scored by
`EpisodeReward` from the state the tools left.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.trl

pytest.importorskip("trl")


def test_environment_factory_plays_the_git_servers_tools_and_scores_the_state() -> None:
    from transformers.utils import get_json_schema

    from rlvr.adapters.trl.agent import EpisodeReward, environment_factory, environment_tools
    from rlvr.adapters.trl.data import to_dataset

    cls = environment_factory("mcp/git-v1", size=1)
    proto = cls._rlvr_prototype
    try:
        assert environment_tools(cls) == list(proto.spec.tools)
        log = get_json_schema(cls.git_log)["function"]["parameters"]  # Optional[str] parameters: anyOf [str, null]
        assert set(log["properties"]) == {"repo_path", "max_count", "start_timestamp", "end_timestamp"}
        assert log["required"] == ["repo_path"]
        row = next(iter(to_dataset(proto, limit=1)))
        assert row["task_id"] == "commit-new-file-0"
        instance = cls()
        instance.reset(**row)
        bad = instance.git_add(repo_path="/work/repo", files="notes/todo.md")
        assert bad == "Error: invalid arguments for tool 'git_add': files: 'notes/todo.md' is not of type 'array'"
        assert instance.git_add(repo_path="/work/repo", files=["notes/todo.md"]) == "Files staged successfully"
        assert instance.git_commit(repo_path="/work/repo", message="Add todo list").startswith("Changes committed")
        reward = EpisodeReward("mcp_git")
        assert reward(prompts=[None], completions=[[{"role": "assistant", "content": "Done."}]],
                      environments=[instance]) == [1.0]
        assert reward.last_verdicts[0].status == "correct"
    finally:
        proto.close()
