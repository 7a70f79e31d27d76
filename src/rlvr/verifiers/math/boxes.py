r"""``\boxed{}`` answers: where each box is, which trailing boxes form one answer, what stands around them.

A box is ``\boxed{...}`` or ``\fbox{...}`` with balanced braces (``\boxed 5``: one token). Boxes
quoted in `code` or "quotes" are talk about an answer, not one. The trailing group (the last box and
its near neighbours joined by a short connective) is the boxed answer (`find_boxed`).
"""

from __future__ import annotations

import functools
import re

from rlvr.verifiers.math.words import negated_at

__all__ = ["match_brace"]

_BOX_RE = re.compile(r"\\(?:boxed|fbox)\b\s*")
_SEPARATOR_RE = re.compile(r"\b(?:and|or)\b|,|;")
_ALTERNATIVE_RE = re.compile(r"(?:or|equivalently|i\.\s*e|that is|alternatively)", re.IGNORECASE)


def match_brace(text: str, open_pos: int) -> int | None:
    """Index of the `}` closing the `{` at `open_pos`, or None when unbalanced."""
    depth = 0
    for i in range(open_pos, len(text)):
        ch = text[i]
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i
    return None


_QUOTED_RE = re.compile(r"`[^`\n]*`|\"[^\"\n]*\"|“[^”\n]*”")


def _quoted_spans(text: str) -> list[tuple[int, int]]:
    if "`" not in text and '"' not in text and "“" not in text:
        return []
    return [(m.start(), m.end()) for m in _QUOTED_RE.finditer(text) if "\\boxed" in m.group(0)]


# The scans of one response that several stages read (the chosen answer, its rivals, every statement) are
# cached for the last few texts: pure functions of the text, returning tuples nobody mutates.
scan_cache = functools.lru_cache(maxsize=32)


@scan_cache
def all_boxes(text: str) -> tuple[tuple[int, int, str], ...]:
    r"""All `\boxed`/`\fbox` contents as (start, end, content), in text order."""
    out: list[tuple[int, int, str]] = []
    quoted = _quoted_spans(text)
    for m in _BOX_RE.finditer(text):
        if any(a <= m.start() < b for a, b in quoted):
            continue  # a box quoted in `code` or "quotes" is talk about an answer, not the answer
        pos = m.end()
        if pos < len(text) and text[pos] == "{":
            close = match_brace(text, pos)
            if close is None:
                out.append((m.start(), len(text), text[pos + 1 :].strip()))
                continue
            out.append((m.start(), close + 1, text[pos + 1 : close].strip()))
        elif pos < len(text):  # `\boxed 5`: one token
            tok = re.match(r"[^\s$.,]+", text[pos:])
            if tok:
                out.append((m.start(), pos + tok.end(), tok.group(0)))
    return tuple(out)


@scan_cache
def trailing_group(text: str) -> tuple[tuple[tuple[int, int, str], ...], tuple[str, ...]]:
    """The trailing group of boxes (see `find_boxed`) as (start, end, content), and the texts between them."""
    boxes = [b for b in all_boxes(text) if not negated_at(text, b[0])]  # "\boxed{5}, not \boxed{3}": 3 is talk
    if not boxes:
        return (), ()
    chosen, betweens = [boxes[-1]], list[str]()
    for prev in reversed(boxes[:-1]):
        between = text[prev[1] : chosen[0][0]]
        near = len(between) < 10 or (len(between) < 70 and _SEPARATOR_RE.search(between) is not None)
        if not near:
            break
        if prev[2] != chosen[0][2]:
            chosen.insert(0, prev)
            betweens.insert(0, between)
    return tuple(chosen), tuple(betweens)


def box_group(text: str) -> tuple[list[str], list[str]]:
    """The contents of the trailing group of boxes and the texts between them (see `find_boxed`)."""
    chosen, betweens = trailing_group(text)
    return [b[2] for b in chosen], list(betweens)


def find_boxed(text: str) -> str | None:
    """Content of the last box; trailing boxes separated by a short connective are joined with ','.

    Joining follows Math-Verify's ``extract_boxed_content``: neighbours closer than 10 characters,
    or closer than 70 with a separator ("and", "or", ",", ";") and different content.
    """
    contents, _ = box_group(text)
    return ",".join(contents) if contents else None


def is_alternative(between: str) -> bool:
    r"""True when the text between two boxes offers another form of one answer (", or", "equivalently")."""
    words = re.sub(r"\\(?:text|mbox|mathrm|quad|qquad)\b|[{}$,;:()]|\\[()\[\]]", " ", between)
    return _ALTERNATIVE_RE.fullmatch(re.sub(r"\s+", " ", words).strip(" .")) is not None
