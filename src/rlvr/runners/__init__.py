"""Runners: the `rlvr` command line and the work behind each command.

Where things live:

```
cli/             the `rlvr` app: one module per command (options, printing), registered in cli/__init__.py;
                 cli/app.py holds the typer app, the consoles and the options commands share
verify.py        rlvr verify, JSONL in input order (local engine); sharded.py + shards.py: any input format,
                 Parquet output or --engine ray, through order-independent shards; rowio.py: the row
                 sources (JSONL, Parquet, datasets) and the Parquet writer
rows.py          one row of rlvr verify: keys, parsing, batching, scoring a batch, the counts
engine/          where rows are scored: local.py (this machine's verifier processes), ray_engine.py
                 (Ray actors across a cluster), loopback.py (a real multi-node Ray cluster on one machine)
eval.py          rlvr eval: roll a policy through an environment, write trajectories, pass@k
synth.py         rlvr synth: SFT rows and pass-rate-banded RL tasks; synth_report.py: its report
train/           rlvr train: TrainConfig, TRL in this process (trl.py), veRL / OpenRLHF in their own
                 interpreter (external.py), the reward curve every backend writes (curve.py)
compare/         rlvr compare: several backends on one environment, summary.json and report.html
export.py        rlvr export: the files a veRL or OpenRLHF run needs
resumable.py     the resumable output every incremental command writes (run record, torn tail, fsync)
report.py        what the HTML reports share (figures without pyplot, PNGs, style)
config.py        CommandConfig: the frozen, validated options of one run (Eval, Synth, TrainConfig)
args.py          KEY=VALUE options; models.py: the embedded SmolLM2 and tiny test models;
                 task_filter.py: --tasks FILE
```

Reports are written into the command's output folder: `rlvr compare` writes `OUTPUT/report.html` and
`summary.json` (`compare/report.py`, `compare/summary.py`); `rlvr synth` writes `OUTPUT/report.json`,
`report.html` and `pass_rate.png` (`synth_report.py`); `rlvr train` writes `OUTPUT/reward_curve.csv`
and `.png` (`train/curve.py`); `rlvr verify` and `rlvr eval` print their tables and record their
configuration in `OUTPUT.meta.json` (`resumable.py`).

Episodes are played by the episode engine (`rlvr.rollout`); this package runs commands on top of it.
"""

__all__: list[str] = []
