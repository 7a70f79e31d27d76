"""Runners: the `rlvr` CLI (verify, train, check), rollout drivers and reports."""

__all__: list[str] = []
