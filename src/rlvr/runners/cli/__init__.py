"""The `rlvr` command line: one module per command, each registered here, in `rlvr --help` order.

```
verify.py    rlvr verify    score a file of responses (JSONL, Parquet, datasets; local or Ray engine)
check.py     rlvr check     an environment's conformance checks, or --adversarial: its verifier's audit
envs.py      rlvr envs      the registered environment ids
sample.py    rlvr sample    a verify input from an environment, with the status each row should get
train.py     rlvr train     train with TRL, veRL or OpenRLHF
eval.py      rlvr eval      roll a policy through an environment, pass@k
export.py    rlvr export    the files a veRL or OpenRLHF run needs
compare.py   rlvr compare   several backends on one environment, one report
serve.py     rlvr serve     an environment behind OpenEnv's server
synth.py     rlvr synth     verified SFT rows and pass-rate-banded RL tasks
sft.py       rlvr sft       warm-start a model on synth's verified demonstrations (TRL SFTTrainer)
forge.py     rlvr forge     repository bug-fix tasks with hidden tests from real Python projects
init.py      rlvr init      a pip-installable environment package to fill in (single, tool or multi-turn)
app.py       the typer app, consoles, shared options, error and progress printing
```

A command module holds the typer function (its parameters are the options), its printing, and a
`COMMAND`; the work is in the runners module the command is named after. A new command is one
module and one entry in `COMMANDS`. Every command imports its heavy parts inside the function, so
`import rlvr.runners.cli` (and `rlvr --help`) loads no trainer, torch or transformers.

Exit codes: 0 success; 1 a check failed (`check`) or bad rows with `--strict` (`verify`);
2 the command itself could not run (bad option, missing file, unreadable data).

Example:
    $ rlvr sample --env math/reasoning-gym-v1 -n 20 -o sample.jsonl   # 20 tasks, 3-4 rows each
    $ rlvr verify --verifier math sample.jsonl -o verdicts.jsonl
    $ rlvr --version
"""

from __future__ import annotations

from rlvr.runners.cli import check, compare, envs, eval, export, forge, init, sample, serve, sft, synth, train, verify
from rlvr.runners.cli.app import Command, app

__all__ = ["COMMANDS", "app", "main"]

COMMANDS: tuple[Command, ...] = (
    verify.COMMAND,
    check.COMMAND,
    envs.COMMAND,
    sample.COMMAND,
    train.COMMAND,
    eval.COMMAND,
    export.COMMAND,
    compare.COMMAND,
    serve.COMMAND,
    synth.COMMAND,
    sft.COMMAND,
    forge.COMMAND,
    init.COMMAND,
)
"""Every `rlvr` command, in the order `rlvr --help` lists them."""

for _command in COMMANDS:
    app.command(name=_command.name, help=_command.help)(_command.function)


def main() -> None:
    """Console-script entry point (`rlvr`)."""
    app()
