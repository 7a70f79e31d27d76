"""docs/architecture.md points at the tree as it is: every path it names exists, every layer has its row."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "architecture.md"


def test_every_path_the_map_names_exists() -> None:
    paths = set(re.findall(r"`(rlvr/[\w/]+(?:\.py|/))", PAGE.read_text(encoding="utf-8")))
    assert len(paths) > 30
    assert sorted(p for p in paths if not (ROOT / "src" / p).exists()) == []


def test_every_layer_of_the_tree_has_a_row() -> None:
    text = PAGE.read_text(encoding="utf-8")
    layers = sorted(p.name for p in (ROOT / "src" / "rlvr").iterdir() if (p / "__init__.py").exists())
    assert layers == ["adapters", "core", "environments", "rollout", "runners", "sandbox", "verifiers"]
    assert [layer for layer in layers if f"| `rlvr.{layer}` |" not in text] == []
