"""`python -m rlvr.adapters.cpu.driver MODULE ARGS...`: run a trainer's entry module with a watchdog.

The launcher (`rlvr.runners.train.external`) starts veRL's `verl.trainer.main_ppo` and OpenRLHF's
`openrlhf.cli.train_ppo_ray` through this module in rlvr's CPU mode. It runs `MODULE` as `__main__`
(as `python -m MODULE ARGS...` would) after installing a watchdog: when an exception ends the driver,
its traceback is printed at once and the process exits with code 1 after `WATCHDOG_GRACE_S` seconds
even if shutting Ray down hangs (observed with veRL after a failed step: the driver printed the
error and then waited forever). For OpenRLHF it first starts the private Ray node itself
(`rlvr.adapters.cpu.openrlhf_shims.init_ray`) so that every Ray worker applies the OpenRLHF shims.
"""

from __future__ import annotations

import os
import runpy
import sys
import threading
import traceback
from types import TracebackType

__all__: list[str] = []

WATCHDOG_GRACE_S = float(os.environ.get("RLVR_WATCHDOG_GRACE_S", "30"))
"""Seconds a failed driver may spend shutting down before it is ended with exit code 1."""


def _exit_later(code: int, grace_s: float) -> None:
    def end() -> None:
        print(f"rlvr watchdog: the driver did not exit {grace_s:g} s after its error; exiting with code {code}",
              file=sys.stderr, flush=True)
        os._exit(code)

    timer = threading.Timer(grace_s, end)
    timer.daemon = True
    timer.start()


def install_watchdog(grace_s: float = WATCHDOG_GRACE_S) -> None:
    """On an uncaught exception: print it, then end the process `grace_s` seconds later at the latest."""
    previous = sys.excepthook

    def hook(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
        traceback.print_exception(kind, value, tb)
        sys.stderr.flush()
        _exit_later(130 if issubclass(kind, KeyboardInterrupt) else 1, grace_s)
        if previous is not sys.__excepthook__:
            previous(kind, value, tb)

    sys.excepthook = hook


def main(argv: list[str] | None = None) -> None:
    """Run `argv[0]` as `__main__` with `argv` as its command line, under the watchdog."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        raise SystemExit("usage: python -m rlvr.adapters.cpu.driver MODULE [ARGS...]")
    install_watchdog()
    module = args[0]
    if module.startswith("openrlhf."):
        from rlvr.adapters.cpu.openrlhf_shims import init_ray

        init_ray()
    sys.argv = [module, *args[1:]]
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        if exc.code not in (None, 0):
            _exit_later(exc.code if isinstance(exc.code, int) else 1, WATCHDOG_GRACE_S)
        raise


if __name__ == "__main__":
    main()
