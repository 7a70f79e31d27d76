"""`rlvr train`: one `TrainConfig`, trained by TRL in this process or by veRL / OpenRLHF in their own.

```
config.py        TrainConfig: the options of a run, whichever backend trains
trl.py           train_trl: GRPO with TRL in this process (its GRPOConfig: grpo.py)
external.py      run_backend: veRL / OpenRLHF: export, command, launch in the backend's interpreter
interpreter.py   which interpreter runs a backend, and probes of what it can do there
process.py       the trainer as a child process group: output streamed, stopped cleanly, time limit
curve.py         reward_curve.csv / .png, the one curve format of every backend
logs.py          veRL's and OpenRLHF's logs read back into the curve and model/
```

The CLI command is `rlvr.runners.cli.train`; `rlvr compare` (`rlvr.runners.compare`) runs
`rlvr train` once per backend.
"""

__all__: list[str] = []
