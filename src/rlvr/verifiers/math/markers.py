r"""Explicit final-answer markers of a response: boxes, GSM8K's ``####``, "final answer", "the answer is".

``####`` follows openai/grade-school-math (``dataset.py``); "final answer is" / "Final Answer:" /
"最终答案是" follows Minerva (lm-evaluation-harness ``minerva_math``); "the answer is" / "Answer:" /
"答案是" / "答案：" the lm-evaluation-harness ``gsm8k`` chain-of-thought and MMLU-style prompts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rlvr.verifiers.math.boxes import all_boxes, scan_cache, trailing_group
from rlvr.verifiers.math.spans import line_after, line_end, refine_span

__all__: list[str] = []


@dataclass(frozen=True)
class Extraction:
    """An extracted answer: `text` (raw answer string) and `source` (which stage found it)."""

    text: str
    source: str
    rivals: tuple[str, ...] = ()  # other final-answer markers just before this one (a hedge if they differ)
    hidden: tuple[str, ...] = ()  # answers in text the reader does not see (`\phantom`, white, comments)
    outside: str = ""  # an operator glued outside the answer's box (`-\boxed{5}`): it is not the value shown


GSM8K_RE = re.compile(r"####\s*([^\n]*)")
FINAL_RE = re.compile(r"(?:final\s+answer\s*(?:is|:|=)?|最终答案\s*(?:是|为)?)\s*(?:\*\*)?\s*[:：]?", re.IGNORECASE)
# The leading lookahead names the first letter of every branch: the same matches, scanned about 3x faster.
ANSWER_RE = re.compile(
    # "the correct/true/real answer is" too (red team, second pass: a correction after the box is a second answer)
    r"(?=[tmoa答])"
    r"(?:\b(?:the|my|our)\s+(?:(?:correct|true|real|right|actual|revised|corrected)\s+)?answer\s+(?:is|=)"
    r"|\banswer\s*:|\bAnswer\b(?=\s*[$\\(])|答案\s*(?:是|为|:|：))\s*(?:\*\*)?\s*[:：]?",
    re.IGNORECASE,
)


def _mentions_answer(text: str) -> bool:
    """False when no match of `ANSWER_RE` or `FINAL_RE` can be in `text`, which is then not scanned.

    Every match holds "answer" in some case (U+017F, the long s, is the one character that matches a letter
    of it under IGNORECASE without lowering to it) or "答案"; two responses in three have neither.
    """
    return "答案" in text or "answer" in text.lower() or "\u017f" in text


@scan_cache
def answer_phrases(text: str) -> tuple[re.Match[str], ...]:
    """`ANSWER_RE.finditer(text)` as a tuple (cached: several stages read it)."""
    return tuple(ANSWER_RE.finditer(text)) if _mentions_answer(text) else ()


@scan_cache
def final_phrases(text: str) -> tuple[re.Match[str], ...]:
    """`FINAL_RE.finditer(text)` as a tuple (cached: several stages read it)."""
    return tuple(FINAL_RE.finditer(text)) if _mentions_answer(text) else ()


TAG_RE = re.compile(r"<answer>(.*?)</answer>", re.IGNORECASE | re.DOTALL)
BOLD_RE = re.compile(r"\*\*([^*\n]{1,200}?)\*\*")


def last_marker(pattern: re.Pattern[str], text: str) -> str | None:
    """The refined span after the last match of `pattern`, or None."""
    matches = list(pattern.finditer(text))
    for m in reversed(matches):
        span = refine_span(line_after(text, m.end()))
        if span:
            return span
    return None


@scan_cache
def markers(text: str) -> tuple[tuple[int, int, Extraction], ...]:
    """Every explicit final-answer marker as (start, end, extraction), in text order.

    Each box, each GSM8K '####' line and each 'final answer' line.
    """
    found = [(a, b, Extraction(c, "boxed")) for a, b, c in all_boxes(text) if c.strip()]
    for m in GSM8K_RE.finditer(text):
        span = m.group(1)
        if span.strip():
            found.append((m.start(), m.end(), Extraction(refine_span(span) or span.strip(), "gsm8k")))
    for m in final_phrases(text):
        span = refine_span(line_after(text, m.end()))
        if span:
            found.append((m.start(), line_end(text, m.end()), Extraction(span, "final_answer")))
    return tuple(sorted(found, key=lambda f: (f[0], f[1])))


def strong_candidates(text: str) -> list[tuple[int, int, Extraction]]:
    """The latest answer of each explicit marker kind as (position, start, extraction).

    The trailing group of boxes (joined; position: its last box, start: its first), the last GSM8K
    '####', the last 'final answer'.
    """
    found: list[tuple[int, int, Extraction]] = []
    group, _ = trailing_group(text)
    boxed = ",".join(b[2] for b in group)
    if group and boxed.strip():
        found.append((group[-1][0], group[0][0], Extraction(boxed, "boxed")))
    gsm = list(GSM8K_RE.finditer(text))
    if gsm and gsm[-1].group(1).strip():
        span = gsm[-1].group(1)
        found.append((gsm[-1].start(), gsm[-1].start(), Extraction(refine_span(span) or span.strip(), "gsm8k")))
    for m in reversed(final_phrases(text)):
        span = refine_span(line_after(text, m.end()))
        if span:
            found.append((m.start(), m.start(), Extraction(span, "final_answer")))
            break
    return found
