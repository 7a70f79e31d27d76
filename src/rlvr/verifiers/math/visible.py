r"""What a reader of a response sees: text hidden from the reader is no answer (red team M12).

A rendered response hides some of its text: ``\phantom{\boxed{5}}`` (also ``\hphantom``,
``\vphantom``) takes space but shows nothing, ``\color{white}`` / ``\textcolor{white}{..}`` (also
``#fff``, ``transparent``, ``[rgb]{1,1,1}``) is invisible on a white page, a LaTeX ``%`` comment,
``\iffalse..\fi``, ``\begin{comment}``, an HTML comment ``<!-- -->`` and an HTML element hidden by
its ``hidden`` attribute or its style (``display:none``, ``visibility:hidden``, a white colour)
are not shown at all; a ``\boxed{}`` written inside ``\text{}`` is shown as the literal characters,
not as a box. `split_visible` removes those pieces before extraction and returns them, so that an
answer in them can be compared with the visible one: one that differs makes the response a hedge
(`score_math`), since a grader must never be steered to the gold by text its reader cannot see.
"""

from __future__ import annotations

import re

__all__ = ["split_visible"]

_LIGHT = (
    r"\{\s*(?:white|transparent|#?f{3}|#?f{6}|#?f{8})\s*\}"
    r"|\[\s*gray\s*\]\s*\{\s*1(?:\.0*)?\s*\}|\[\s*rgb\s*\]\s*\{\s*1(?:\.0*)?\s*,\s*1(?:\.0*)?\s*,\s*1(?:\.0*)?\s*\}"
    r"|\[\s*RGB\s*\]\s*\{\s*255\s*,\s*255\s*,\s*255\s*\}|\[\s*HTML\s*\]\s*\{\s*f{6}\s*\}"
)
_PHANTOM_RE = re.compile(r"\\[hv]?phantom\s*(?=\{)")
_TEXTCOLOR_RE = re.compile(rf"\\textcolor\s*(?:{_LIGHT})\s*(?=\{{)", re.IGNORECASE)
_COLOR_SWITCH_RE = re.compile(rf"\\color\s*(?:{_LIGHT})", re.IGNORECASE)
_TEXT_BOX_RE = re.compile(r"\\(?:text|textrm|textbf|textit|texttt|textsf|textnormal|mbox)\s*(?=\{)")
_IFFALSE_RE = re.compile(r"\\iffalse\b.*?(?:\\fi\b|$)", re.DOTALL)
_COMMENT_ENV_RE = re.compile(r"\\begin\{comment\}.*?(?:\\end\{comment\}|$)", re.DOTALL)
_HTML_COMMENT_RE = re.compile(r"<!--.*?(?:-->|$)", re.DOTALL)
_HIDDEN_STYLE = (
    r"\bhidden\b|display\s*:\s*none|visibility\s*:\s*hidden|opacity\s*:\s*0(?:\.0*)?\s*(?:;|\"|')"
    r"|(?<![-\w])color\s*:\s*(?:white|transparent|#f{3}\b|#f{6}\b)|font-size\s*:\s*0"
)
_HTML_HIDDEN_RE = re.compile(rf"<([a-zA-Z][a-zA-Z0-9]*)\b[^>]*(?:{_HIDDEN_STYLE})[^>]*>", re.IGNORECASE)
# A LaTeX comment: `%` after a space or at a line start, followed by a space or a command, that is
# not a percent sign (`50%`, `50 %`, `(%)`): it hides the rest of its line.
_LATEX_COMMENT_RE = re.compile(r"(?:^|(?<=[ \t]))(?<!\d[ \t])%(?=[ \t\\])[^\n]*", re.MULTILINE)
_BOX_WORD_RE = re.compile(r"\\(?:boxed|fbox)\b")


def _group_end(text: str, open_pos: int) -> int:
    """Index after the `}` closing the `{` at `open_pos` (the text's end when unbalanced)."""
    depth = 0
    for i in range(open_pos, len(text)):
        if text[i] == "{" and (i == 0 or text[i - 1] != "\\"):
            depth += 1
        elif text[i] == "}" and (i == 0 or text[i - 1] != "\\"):
            depth -= 1
            if depth == 0:
                return i + 1
    return len(text)


def _enclosing_end(text: str, pos: int) -> int:
    """Index of the `}` closing the group that holds `pos` (the text's end at top level)."""
    depth = 0
    for i in range(pos, len(text)):
        if text[i] == "{" and text[i - 1] != "\\":
            depth += 1
        elif text[i] == "}" and text[i - 1] != "\\":
            if depth == 0:
                return i
            depth -= 1
    return len(text)


def _spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every hidden piece, possibly overlapping."""
    spans: list[tuple[int, int]] = []
    for m in _PHANTOM_RE.finditer(text):
        spans.append((m.start(), _group_end(text, m.end())))
    for m in _TEXTCOLOR_RE.finditer(text):
        spans.append((m.start(), _group_end(text, m.end())))
    for m in _COLOR_SWITCH_RE.finditer(text):
        spans.append((m.start(), _enclosing_end(text, m.end())))
    for m in _TEXT_BOX_RE.finditer(text):
        end = _group_end(text, m.end())
        if _BOX_WORD_RE.search(text, m.end(), end):
            spans.append((m.start(), end))  # `\text{\boxed{5}}` shows the characters, not a box
    for pattern in (_IFFALSE_RE, _COMMENT_ENV_RE, _HTML_COMMENT_RE, _LATEX_COMMENT_RE):
        spans += [(m.start(), m.end()) for m in pattern.finditer(text)]
    for m in _HTML_HIDDEN_RE.finditer(text):
        close = re.search(rf"</{m.group(1)}\s*>", text[m.end() :], re.IGNORECASE)
        spans.append((m.start(), m.end() + close.end() if close else len(text)))
    return spans


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def split_visible(text: str) -> tuple[str, list[str]]:
    r"""Split a response into the text a reader sees and the hidden pieces.

    Args:
        text: a model response (after the reasoning block is cut).

    Returns:
        (visible, hidden): `visible` is `text` with each hidden piece replaced by one space;
        `hidden` lists the pieces themselves, in text order (empty for most responses).
    """
    if "\\" not in text and "<" not in text and "%" not in text:
        return text, []
    spans = _merged(_spans(text))
    if not spans:
        return text, []
    visible, hidden, last = [], [], 0
    for start, end in spans:
        visible.append(text[last:start])
        hidden.append(text[start:end])
        last = end
    visible.append(text[last:])
    return " ".join(visible), hidden
