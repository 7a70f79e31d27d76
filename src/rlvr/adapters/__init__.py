"""Adapters: thin translations of rlvr environments into trainers' native hooks.

One package per trainer, the same module names in each where they apply:

```
trl/       data (dataset rows), reward (reward_funcs), agent (environment_factory, multi-turn rewards)
verl/      data (parquet rows, reward.py, agent_loop.yaml, export_verl), reward (compute_score), agent
           (RlvrAgentLoop), group_reward (group judges), launch (hydra overrides, command line)
openrlhf/  data (jsonl rows, reward_func.py, agent_func.py, export_openrlhf), reward (reward_func), agent
           (AgentExecutor), group_reward (group judges), launch (train_ppo_ray arguments, command line)
```

Shared once: `export` (export folder and manifest, reference encoding, the verifier spec, per-process
verifier and env caches, `is_multi_turn`), `group_reward` (`GroupBatcher`), `cpu` (rlvr's CPU mode for
veRL and OpenRLHF) and `tokens` (re-exports `rlvr.rollout.tokens`). `verl_agent`, `openrlhf_agent`,
`trl_multiturn`, `verl_group_reward` and `openrlhf_group_reward` are aliases of the old flat paths,
which exports written by earlier versions name.

Each adapter module imports its framework lazily, inside the functions that need it (except
`verl.agent`, which veRL itself imports and which subclasses veRL's agent loop; the `verl` package
loads it on first use), so `import rlvr.adapters` and every trainer package work with no trainer installed.
"""

__all__: list[str] = []
