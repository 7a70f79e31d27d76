"""Adapters: thin translations of rlvr environments into trainers' native hooks.

Each adapter module imports its framework lazily, inside the functions that need it, so
`import rlvr.adapters` works with no trainer installed.
"""

__all__: list[str] = []
