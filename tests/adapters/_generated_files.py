"""Import a file rlvr generated (a reward or agent file) the way OpenRLHF does.

Shared by the adapter tests in this folder (`from _generated_files import import_by_path`: pytest
prepends the test file's folder to `sys.path`).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any


def import_by_path(path: Path, name: str) -> Any:
    """Import a generated file the way OpenRLHF does (`spec_from_file_location` + `exec_module`)."""
    spec = importlib.util.spec_from_file_location(name, str(path))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
