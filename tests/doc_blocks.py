"""The code blocks of the README and of every page under docs/, with the suite each one runs in.

A block's tag is the HTML comment on the line before its opening fence: `<!-- readme-test: core -->`
runs it in the core suite, `trl` in the TRL suite, `extras` in the extras suite, `ray` against the
test Ray cluster (`tests/runners/test_ray_engine.py`); `<!-- readme-test: skip: REASON -->` never,
and says why (and, where one does, which test runs the same thing). Every `python`, `bash` and
`console` block carries a tag; other blocks (`json`, plain) show data, not code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = [README, *sorted(DOCS.rglob("*.md"))]
TAGS = ("core", "trl", "extras", "ray", "skip")
CODE_LANGS = ("python", "bash", "console")

_BLOCK = re.compile(
    r"(?:^<!--\s*readme-test:\s*(?P<tag>\w+)(?::\s*(?P<reason>.*?))?\s*-->\n)?^```(?P<lang>\w*)\n(?P<code>.*?)^```$",
    re.S | re.M,
)


@dataclass(frozen=True)
class Block:
    """One fenced block: the page it is on (path relative to the repository), its first line, tag, reason, code."""

    page: str
    line: int
    lang: str
    tag: str | None
    reason: str | None
    code: str

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def page_blocks(page: Path) -> list[Block]:
    text = page.read_text()
    return [
        Block(page=str(page.relative_to(ROOT)), line=text.count("\n", 0, m.start("code")), lang=m["lang"],
              tag=m["tag"], reason=m["reason"], code=m["code"])
        for m in _BLOCK.finditer(text)
    ]


def blocks(tag: str, lang: str, pages: list[Path] | None = None) -> list[Block]:
    """The `lang` blocks tagged `tag`, in page order (README first, then docs/ sorted by path)."""
    return [b for page in (PAGES if pages is None else pages) for b in page_blocks(page)
            if b.tag == tag and b.lang == lang]


def pages_with(tag: str, lang: str) -> list[str]:
    """The pages (relative paths) holding at least one `lang` block tagged `tag`: one test per page."""
    return sorted({b.page for b in blocks(tag, lang)}, key=lambda p: (p != "README.md", p))
