r"""What a reader of a response sees: text hidden from the reader is no answer (red team M12).

A rendered response hides some of its text: ``\phantom{\boxed{5}}`` (also ``\hphantom``,
``\vphantom``) takes space but shows nothing; text in a colour a reader cannot tell from a white
page (`is_light`: white-like names, xcolor mixes ``black!0``, ``[gray]{0.99}``, ``#FEFEFE``,
``rgb(255,255,255)``, alpha 0) is invisible; ``\scalebox{0}``, ``\resizebox{0pt}{0pt}``,
``\fontsize{0pt}``, ``\transparent{0}`` and shifts of 200pt or more (``\raisebox``, ``\hspace``,
``\vspace``, ``\kern``) put it out of sight; a LaTeX ``%`` comment, ``\iffalse..\fi``, a false
``\ifnum``, ``\begin{comment}``, an HTML comment ``<!-- -->``, an HTML element hidden by its
``hidden`` attribute, a hiding class (``sr-only``) or style (``display:none``, ``opacity:0``,
``font-size:1px``, ``clip-path:inset(100%)``, off-page positions, ``transform:scale(0)``),
``<template>``/``<style>``/``<script>``/a closed ``<details>``, a markdown reference definition
(``[//]: # (..)``) and an image's alt text are not shown at all; a ``\boxed{}`` inside ``\text{}``,
a fenced code block, ``\verb`` or a verbatim environment is shown as literal characters, not as a
box. Struck-out text (``\sout``, ``\st``, ``\cancel``, ``\xcancel``, markdown ``~~..~~``, ``<del>``, ``<s>``,
``<strike>``) is shown but withdrawn, and is read as hidden too. ``\tiny``, ``\smash``, ``\llap`` and
``\colorbox{white}`` (a background) stay visible.
`split_visible` removes those pieces before extraction and returns them, so that an
answer in them can be compared with the visible one: one that differs makes the response a hedge
(`score_math`), since a grader must never be steered to the gold by text its reader cannot see.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable

__all__: list[str] = []

# Colours a reader cannot tell from a white page: each RGB channel >= 0.9 (#e6e6e6), or fully transparent.
_NEAR_WHITE = 0.9
_NAMED_LIGHT = frozenset({
    "white", "snow", "ivory", "ghostwhite", "whitesmoke", "floralwhite", "mintcream", "azure", "aliceblue",
    "seashell", "lavenderblush", "honeydew", "linen", "oldlace", "cornsilk", "transparent", "none",
})
_NAMED_RGB = {"black": (0.0, 0.0, 0.0), "white": (1.0, 1.0, 1.0), "red": (1.0, 0.0, 0.0), "green": (0.0, 1.0, 0.0),
              "blue": (0.0, 0.0, 1.0), "gray": (0.5, 0.5, 0.5), "grey": (0.5, 0.5, 0.5), "yellow": (1.0, 1.0, 0.0),
              "cyan": (0.0, 1.0, 1.0), "magenta": (1.0, 0.0, 1.0)}
_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)"


def _hex_light(h: str) -> bool:
    h = h.lower()
    if len(h) in (4, 8) and int(h[-1 if len(h) == 4 else -2 :], 16) == 0:
        return True  # alpha 0
    if len(h) in (3, 4):
        h = "".join(c * 2 for c in h[:3])
    elif len(h) in (6, 8):
        h = h[:6]
    else:
        return False
    return all(int(h[i : i + 2], 16) / 255 >= _NEAR_WHITE for i in (0, 2, 4))


def _floats(text: str) -> list[float]:
    return [float(x) for x in re.findall(_NUM, text)]


def _model_light(model: str, v: str) -> bool:
    """`is_light` for an xcolor model's value (`[gray]{0.99}`, `[rgb]{1,1,1}`, `[RGB]`, `[HTML]`, `[cmyk]`)."""
    m, nums = model.lower(), _floats(v)
    if m == "gray":
        return len(nums) == 1 and nums[0] >= _NEAR_WHITE
    if m == "rgb":
        scale = 255.0 if model == "RGB" or any(n > 1 for n in nums) else 1.0
        return len(nums) == 3 and all(n / scale >= _NEAR_WHITE for n in nums)
    if m == "html":
        return _hex_light(v)
    if m == "cmyk":
        return len(nums) == 4 and all(n <= 1 - _NEAR_WHITE for n in nums)
    return False


def _css_function_light(name: str, args: str) -> bool:
    """`is_light` for `rgb(..)`, `rgba(..)`, `hsl(..)`, `hsla(..)`."""
    nums, parts = _floats(args), args.split(",")
    if len(nums) == 4 and nums[3] == 0:
        return True  # alpha 0
    if len(nums) < 3:
        return False
    if name.startswith("rgb"):
        return all((n / 100 if "%" in p else n / 255) >= _NEAR_WHITE for n, p in zip(nums[:3], parts, strict=False))
    return nums[2] >= 100 * (0.5 + _NEAR_WHITE / 2)  # hsl lightness


def _mix_light(a_name: str, pct: str, b_name: str | None) -> bool:
    """`is_light` for an xcolor mix `a!pct!b` (`b` defaults to white)."""
    a, b = _NAMED_RGB.get(a_name), _NAMED_RGB.get(b_name or "white")
    if a is None or b is None:
        return False
    p = float(pct) / 100
    return all(p * x + (1 - p) * y >= _NEAR_WHITE for x, y in zip(a, b, strict=True))


def is_light(model: str, value: str) -> bool:
    r"""True when a colour is (nearly) invisible on a white page.

    Args:
        model: the xcolor model in `\color[model]{value}` ("gray", "rgb", "RGB", "HTML", "cmyk"), or "" for a
            colour name, an xcolor mix (`black!0`, `white!100`: xcolor's "c!p" is p % of c, the rest white),
            a `#hex` or a CSS function (`rgb(255,255,255)`, `rgba(0,0,0,0)`, `hsl(0,0%,100%)`).
        value: the colour text.

    Returns:
        True for white-like colours (every RGB channel >= 0.9) and fully transparent ones.
    """
    v = value.strip().strip("\"'").strip()
    if model.strip():
        return _model_light(model.strip(), v)
    low = v.lower().replace(" ", "")
    if low in _NAMED_LIGHT:
        return True
    if low.startswith("#"):
        return re.fullmatch(r"#[0-9a-f]+", low) is not None and _hex_light(low[1:])
    fn = re.fullmatch(r"(rgba?|hsla?)\((.*)\)", low)
    if fn:
        return _css_function_light(fn.group(1), fn.group(2))
    mix = re.fullmatch(r"([a-z]+)!(\d+(?:\.\d+)?)(?:!([a-z]+))?", low)
    return mix is not None and _mix_light(mix.group(1), mix.group(2), mix.group(3))


# `\color[model]{value}` / `\textcolor[model]{value}`: the colour argument, judged by `is_light`.
_COLOR_ARG = r"(?:\[\s*([A-Za-z]+)\s*\])?\s*\{([^{}]*)\}"
_PHANTOM_RE = re.compile(r"\\[hv]?phantom\s*(?=\{)")
# Struck-out text is withdrawn (red team): `\sout{5}`, `\cancel{5}`, `~~5~~`, `<del>5</del>`, `<s>`, `<strike>`.
_STRUCK_CMD_RE = re.compile(r"\\(?:sout|st|cancel|bcancel|xcancel|xout)\s*(?=\{)")
_STRUCK_RE = re.compile(r"(?<!~)~~(?!~)(?=\S)[^\n~]*?(?<=\S)~~(?!~)|<(del|s|strike)\b[^<>]*>.*?</\1\s*>",
                        re.IGNORECASE | re.DOTALL)
_TEXTCOLOR_RE = re.compile(rf"\\textcolor\s*{_COLOR_ARG}\s*(?=\{{)")
_COLOR_SWITCH_RE = re.compile(rf"\\color\s*{_COLOR_ARG}")
# Size, place and opacity that hide: `\scalebox{0}{..}`, `\resizebox{0pt}{0pt}{..}`, `\raisebox{10000pt}{..}`,
# `\texttransparent{0}{..}`; switches that hide the rest of their group: `\hspace{-10000pt}`, `\vspace`,
# `\kern`, `\fontsize{0pt}{0pt}\selectfont`, `\transparent{0}`.
_SCALEBOX_RE = re.compile(rf"\\scalebox\s*\{{\s*({_NUM})\s*\}}(?:\s*\[\s*({_NUM})\s*\])?\s*(?=\{{)")
_RESIZEBOX_RE = re.compile(r"\\resizebox\*?\s*\{([^{}]*)\}\s*\{([^{}]*)\}\s*(?=\{)")
_RAISEBOX_RE = re.compile(r"\\raisebox\s*\{([^{}]*)\}\s*(?:\[[^\]]*\]\s*){0,2}(?=\{)")
_TEXTTRANSPARENT_RE = re.compile(rf"\\texttransparent\s*\{{\s*({_NUM})\s*\}}\s*(?=\{{)")
_SHIFT_RE = re.compile(r"\\(?:hspace|vspace|hskip|vskip|kern|mkern|moveleft|moveright|lower|raise)\*?\s*\{?\s*"
                       rf"({_NUM})\s*(pt|bp|mm|cm|in|em|ex|px|pc|mu|sp)\s*\}}?")
_FONTSIZE_RE = re.compile(rf"\\fontsize\s*\{{\s*({_NUM})\s*(pt|bp|mm|cm|in|em|ex|px|pc|sp)?\s*\}}")
_TRANSPARENT_RE = re.compile(rf"\\transparent\s*\{{\s*({_NUM})\s*\}}")
_IFNUM_RE = re.compile(r"\\ifnum\s*([-+]?\d+)\s*([<=>])\s*([-+]?\d+)")
_FI_RE = re.compile(r"\\(?:else|fi)\b")
_PT = {"pt": 1.0, "bp": 1.0, "mm": 2.85, "cm": 28.5, "in": 72.3, "em": 10.0, "ex": 4.3, "px": 0.75, "pc": 12.0,
       "mu": 0.55, "sp": 1 / 65536}
_FAR_PT = 200.0  # a shift this far (about 7 cm) moves text off the page
_TINY_PT = 2.0  # a font size or box dimension this small is unreadable


def _pt(value: str, unit: str | None = None) -> float | None:
    r"""A TeX dimension in points ("0pt", "-10000pt", "2cm", `\height` -> None)."""
    m = re.fullmatch(rf"\s*({_NUM})\s*([a-z]{{2}})?\s*", value if unit is None else value + unit)
    if not m or (m.group(2) and m.group(2) not in _PT):
        return None
    return float(m.group(1)) * _PT.get(m.group(2) or "pt", 1.0)


_TEXT_BOX_RE = re.compile(r"\\(?:text|textrm|textbf|textit|texttt|textsf|textnormal|mbox)\s*(?=\{)")
_IFFALSE_RE = re.compile(r"\\iffalse\b.*?(?:\\fi\b|$)", re.DOTALL)
_COMMENT_ENV_RE = re.compile(r"\\begin\{comment\}.*?(?:\\end\{comment\}|$)", re.DOTALL)
_HTML_COMMENT_RE = re.compile(r"<!--.*?(?:-->|$)", re.DOTALL)
_HTML_TAG_RE = re.compile(r"<([a-zA-Z][a-zA-Z0-9-]*)\b([^<>]*)>")
# Elements never rendered as text; `<details>` without `open` shows only its summary.
_UNRENDERED_TAGS = frozenset({"template", "style", "script", "noscript", "head", "title", "details"})
_HIDING_CLASS_RE = re.compile(r"\b(?:sr-only|visually-hidden|screen-reader-text|d-none|invisible|hidden)\b", re.I)
_ATTR_RE = re.compile(r"""([a-zA-Z-]+)\s*=\s*("[^"]*"|'[^']*'|[^\s"'>]+)""")
_CSS_RE = re.compile(r"([a-zA-Z-]+)\s*:\s*([^;]+)")
# Quoted literally, not rendered as math: fenced code blocks, `\verb|..|`, verbatim environments.
_LITERAL_RE = re.compile(
    r"^[ \t]*(```|~~~)[^\n]*\n.*?^[ \t]*\1[^\n]*$|\\verb\*?([^\sa-zA-Z*]).*?(?:\2|$)"
    r"|\\begin\{(verbatim|lstlisting|minted|Verbatim)\*?\}.*?(?:\\end\{\3\*?\}|\Z)",
    re.DOTALL | re.MULTILINE,
)
# Markdown that is not shown: a reference definition line (`[//]: # (..)`, `[comment]: <> (..)`), an image's
# alt text and a link's target.
_MD_REFDEF_RE = re.compile(r"^[ \t]{0,3}\[[^\]\n]+\]:[ \t]*\S[^\n]*$", re.MULTILINE)
_MD_IMAGE_RE = re.compile(r"!\[[^\]\n]*\]\([^)\n]*\)")
_MD_LINK_TARGET_RE = re.compile(r"(?<=\])\([^)\n]*\)")


def _css_hides(prop: str, value: str, style: dict[str, str]) -> bool:
    """True when one CSS declaration hides its element's text from a reader."""
    v = value.strip().lower()
    num = re.match(rf"\s*({_NUM})\s*([a-z%]*)", v)
    n = float(num.group(1)) if num else None
    if prop == "display":
        return v.startswith("none")
    if prop in ("visibility", "content-visibility"):
        return v.startswith(("hidden", "collapse"))
    if prop == "opacity":
        return n is not None and (n / 100 if num and num.group(2) == "%" else n) <= 0.1
    if prop in ("color", "-webkit-text-fill-color"):
        return is_light("", v)
    if prop == "font-size":
        if n is None:
            return False
        unit = num.group(2) if num else ""
        return n <= (0.2 if unit in ("em", "rem", "ex", "ch") else 20 if unit == "%" else _TINY_PT)
    if prop == "transform":
        return any(abs(float(f)) <= 0.1 for f in re.findall(rf"scale[xy3d]*\(\s*({_NUM})", v))
    if prop in ("text-indent", "left", "top", "right", "margin-left", "margin-top", "bottom"):
        far = n is not None and n <= -_FAR_PT
        return far and (prop == "text-indent" or "position" in style or prop.startswith("margin"))
    if prop == "clip-path":
        return re.search(r"inset\(\s*(?:[5-9]\d|100)\s*%", v) is not None or "circle(0" in v
    if prop == "clip":
        return re.fullmatch(r"rect\(\s*0(?:px)?[\s,]+0(?:px)?[\s,]+0(?:px)?[\s,]+0(?:px)?\s*\)", v) is not None
    if prop in ("height", "width", "max-height", "max-width"):
        return n == 0 and ("hidden" in style.get("overflow", "") or prop.startswith("max"))
    return False


def _html_hides(tag: str, attrs: str) -> bool:
    """True when an HTML element with these attributes shows its content to no reader."""
    tag = tag.lower()
    if tag in _UNRENDERED_TAGS:
        return not (tag == "details" and re.search(r"\bopen\b", attrs, re.I))
    if re.search(r"\bhidden\b", attrs, re.I):  # the `hidden` attribute (also `aria-hidden`: read as hidden)
        return True
    values = {k.lower(): v.strip("\"'") for k, v in _ATTR_RE.findall(attrs)}
    if "class" in values and _HIDING_CLASS_RE.search(values["class"]):
        return True
    if tag == "font" and "color" in values and is_light("", values["color"]):
        return True
    if tag == "font" and "size" in values and re.fullmatch(r"\s*[-+]?0\s*", values["size"]):
        return True
    style = {k.lower().strip(): v.strip() for k, v in _CSS_RE.findall(values.get("style", ""))}
    return any(_css_hides(k, v, style) for k, v in style.items())


def _html_spans(text: str) -> list[tuple[int, int]]:
    """Hidden HTML elements, from the opening tag to its first closing tag (the text's end when unclosed)."""
    spans: list[tuple[int, int]] = []
    closes: dict[str, list[int]] = {}
    for m in _HTML_TAG_RE.finditer(text):
        if not _html_hides(m.group(1), m.group(2)):
            continue
        name = m.group(1).lower()
        if name not in closes:
            closes[name] = [c.end() for c in re.finditer(rf"</{re.escape(name)}\s*>", text, re.IGNORECASE)]
        i = bisect.bisect_left(closes[name], m.end())
        end = closes[name][i] if i < len(closes[name]) else len(text)
        if spans and spans[-1][1] >= end:
            continue  # inside a piece already hidden
        spans.append((m.start(), end))
    return spans


def _scaled(m: re.Match[str]) -> bool:
    return any(abs(float(g)) <= 0.1 for g in m.groups() if g is not None)


def _tiny_box(m: re.Match[str]) -> bool:
    return any(d is not None and abs(d) <= _TINY_PT for d in (_pt(g) for g in m.groups()))


def _far(m: re.Match[str]) -> bool:
    d = _pt(m.group(1), m.group(2) if m.re.groups > 1 else None)
    return d is not None and abs(d) >= _FAR_PT


def _tiny_font(m: re.Match[str]) -> bool:
    d = _pt(m.group(1), m.group(2) or "pt")
    return d is not None and d <= _TINY_PT


def _false_ifnum(m: re.Match[str]) -> bool:
    a, op, b = int(m.group(1)), m.group(2), int(m.group(3))
    return not (a < b if op == "<" else a > b if op == ">" else a == b)


# (pattern, whether a match hides, how far: "arg" its argument, "group" the rest of its group, "fi" to \\fi).
_SIZE_RULES: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], bool], str], ...] = (
    (_SCALEBOX_RE, _scaled, "arg"),
    (_RESIZEBOX_RE, _tiny_box, "arg"),
    (_RAISEBOX_RE, _far, "arg"),
    (_TEXTTRANSPARENT_RE, _scaled, "arg"),
    (_SHIFT_RE, _far, "group"),
    (_FONTSIZE_RE, _tiny_font, "group"),
    (_TRANSPARENT_RE, _scaled, "group"),
    (_IFNUM_RE, _false_ifnum, "fi"),
)


def _latex_size_spans(text: str) -> list[tuple[int, int]]:
    r"""Content shrunk, moved off the page, made transparent or skipped by a false `\ifnum`."""
    spans: list[tuple[int, int]] = []
    for pattern, hides, extent in _SIZE_RULES:
        last_end = -1
        for m in pattern.finditer(text):
            if m.start() < last_end or not hides(m):
                continue  # inside the piece the previous match hides, or hiding nothing
            if extent == "arg":
                end = _group_end(text, m.end())
            elif extent == "group":
                end = _enclosing_end(text, m.end())
            else:
                fi = _FI_RE.search(text, m.end())
                end = fi.end() if fi else len(text)
            spans.append((m.start(), end))
            last_end = end
    return spans


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


# Each pattern below with the substrings one of which every match holds: a text without them is not scanned
# (a scan costs about 0.1 ms per kilobyte for the line-anchored patterns).
_NEEDLES: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    (_IFFALSE_RE, ("\\iffalse",)), (_COMMENT_ENV_RE, ("\\begin{comment}",)), (_HTML_COMMENT_RE, ("<!--",)),
    (_LATEX_COMMENT_RE, ("%",)), (_LITERAL_RE, ("```", "~~~", "\\verb", "\\begin{")),
    (_MD_REFDEF_RE, ("]:",)), (_MD_IMAGE_RE, ("![",)), (_MD_LINK_TARGET_RE, ("](",)),
)


def _spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every hidden piece, possibly overlapping."""
    spans: list[tuple[int, int]] = []
    latex = "\\" in text
    if latex:
        for pattern in (_PHANTOM_RE, _STRUCK_CMD_RE):
            spans += [(m.start(), _group_end(text, m.end())) for m in pattern.finditer(text)]
    if "~~" in text or "<" in text:
        spans += [(m.start(), m.end()) for m in _STRUCK_RE.finditer(text)]
    if "\\color" in text or "\\textcolor" in text:
        spans += _colour_spans(text)
    if "\\boxed" in text or "\\fbox" in text:
        spans += _boxes_in_text(text)
    for pattern, needles in _NEEDLES:
        if any(map(text.__contains__, needles)):
            spans += [(m.start(), m.end()) for m in pattern.finditer(text)]
    if "<" in text:
        spans += _html_spans(text)
    return spans + _latex_size_spans(text) if latex else spans


def _boxes_in_text(text: str) -> list[tuple[int, int]]:
    r"""`\text{\boxed{5}}`: shows the characters, not a box."""
    spans: list[tuple[int, int]] = []
    for m in _TEXT_BOX_RE.finditer(text):
        end = _group_end(text, m.end())
        if _BOX_WORD_RE.search(text, m.end(), end):
            spans.append((m.start(), end))
    return spans


def _colour_spans(text: str) -> list[tuple[int, int]]:
    r"""Light `\textcolor{white}{..}` arguments and `\color{white}` switches (the rest of their group)."""
    spans = [(m.start(), _group_end(text, m.end())) for m in _TEXTCOLOR_RE.finditer(text)
             if is_light(m.group(1) or "", m.group(2))]
    switch_end = -1
    for m in _COLOR_SWITCH_RE.finditer(text):
        if m.start() >= switch_end and is_light(m.group(1) or "", m.group(2)):
            switch_end = _enclosing_end(text, m.end())
            spans.append((m.start(), switch_end))
    return spans


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


_MAY_HIDE_RE = re.compile(r"[\\<%`~\]]")


def split_visible(text: str) -> tuple[str, list[str]]:
    r"""Split a response into the text a reader sees and the hidden pieces.

    Args:
        text: a model response (after the reasoning block is cut).

    Returns:
        (visible, hidden): `visible` is `text` with each hidden piece replaced by one space;
        `hidden` lists the pieces themselves, in text order (empty for most responses).
    """
    if not _MAY_HIDE_RE.search(text):
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
