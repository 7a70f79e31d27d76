"""Process isolation for untrusted code (bubblewrap / namespaces / rlimits). Filled by the code issue."""

__all__: list[str] = []
