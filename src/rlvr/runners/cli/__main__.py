"""`python -m rlvr.runners.cli`: the `rlvr` command line (as the `rlvr` console script)."""

from rlvr.runners.cli import main

main()
