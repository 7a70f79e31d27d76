"""docs/python-api.md is generated from the `__all__`s and docstrings (scripts/api_page.py) and kept current."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "api_page.py"


def _api_page() -> ModuleType:
    spec = importlib.util.spec_from_file_location("api_page", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["api_page"] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


def test_python_api_page_matches_the_tree() -> None:
    page = (ROOT / "docs" / "python-api.md").read_text(encoding="utf-8")
    assert page == _api_page().render(), "docs/python-api.md is not current: run `python scripts/api_page.py`"


def test_every_public_name_is_listed_with_its_defining_module() -> None:
    api = _api_page()
    modules = api.read_tree()
    page = api.render()
    for name, module in modules.items():
        if module.all:
            assert f"### `{name}`" in page
        for public in module.all:
            entry = api.resolve(modules, name, public)
            assert entry.kind == "module" or public in modules[entry.home].defined
            assert f"| `{public}` |" in page


def test_a_name_defined_nowhere_stops_the_page(tmp_path: Path) -> None:
    api = _api_page()
    path = tmp_path / "broken.py"
    path.write_text('"""A module whose `__all__` names a ghost."""\n\n__all__ = ["ghost"]\n', encoding="utf-8")
    try:
        api.resolve({"rlvr.broken": api.Module("rlvr.broken", path)}, "rlvr.broken", "ghost")
    except SystemExit as exc:
        assert "rlvr.broken" in str(exc) and "`ghost`" in str(exc)
    else:
        raise AssertionError("a ghost name in __all__ was accepted")


def test_check_names_the_fix_when_the_page_is_stale(tmp_path: Path) -> None:
    api = _api_page()
    api.PAGE = tmp_path / "python-api.md"
    api.PAGE.write_text("stale\n", encoding="utf-8")
    api.ROOT = tmp_path
    assert api.main(["api_page.py", "--check"]) == 1
    assert api.main(["api_page.py"]) == 0
    assert api.main(["api_page.py", "--check"]) == 0
    proc = subprocess.run([sys.executable, str(SCRIPT), "--check"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
