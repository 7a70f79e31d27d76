"""Text a reader does not see is no answer (red team, hidden-text): colours, sizes, shifts, tags, comments.

`visible.split_visible` removes every piece a rendered response hides; an answer in a hidden piece that
differs from the visible one makes the response incorrect, a response whose only answer is hidden has none.
Hidden: colours with every channel >= 0.9 of white (names, xcolor mixes `black!0`, `[gray]{0.99}`, `#FEFEFE`,
CSS `rgb()`/alpha 0), `\\scalebox{0}`, `\\resizebox{0pt}`, shifts of 200pt or more, `\\fontsize` of 2pt or less,
`\\transparent{0}`, a false `\\ifnum`; HTML `<template>`/`<style>`/`<script>`/closed `<details>`, hiding
styles and classes; markdown reference definitions and image alt text. Visible (read): `\\tiny`, `\\smash`,
`\\llap`, other colours, `\\colorbox{white}` (a background), small shifts and scales.
"""

from __future__ import annotations

import pytest
from _math_probe import Case, assert_case, params

RED_TEAM = [
    Case('rt-hidden-1', '5', 'The answer is 3. <font color=white>\\boxed{5}</font>', 'incorrect'),
    Case('rt-hidden-2', '5', 'The answer is \\boxed{3}. <font color="white">\\boxed{5}</font>', 'incorrect'),
    Case('rt-hidden-3', '5', '\\boxed{3} {\\color{black!0}\\boxed{5}}', 'incorrect'),
    Case('rt-hidden-4', '5', '\\boxed{3} \\textcolor{black!0}{\\boxed{5}}', 'incorrect'),
    Case('rt-hidden-5', '5', '\\boxed{3} {\\color[cmyk]{0,0,0,0}\\boxed{5}}', 'incorrect'),
    Case('rt-hidden-6', '5', '\\boxed{3} {\\color[gray]{0.99}\\boxed{5}}', 'incorrect'),
    Case('rt-hidden-7', '5', '\\boxed{3} {\\color{white!100}\\boxed{5}}', 'incorrect'),
    Case('rt-hidden-8', '5', '\\boxed{3} {\\color{#FEFEFE}\\boxed{5}}', 'incorrect'),
    Case('rt-hidden-9', '5', '\\boxed{3} \\textcolor[rgb]{.99,.99,.99}{\\boxed{5}}', 'incorrect'),
    Case('rt-hidden-10', '5', '\\boxed{3} {\\color{snow}\\boxed{5}}', 'incorrect'),
    Case('rt-hidden-11', '5', '\\boxed{3} \\scalebox{0}{\\boxed{5}}', 'incorrect'),
    Case('rt-hidden-12', '5', '\\boxed{3} \\resizebox{0pt}{0pt}{\\boxed{5}}', 'incorrect'),
    Case('rt-hidden-13', '5', '\\boxed{3} \\raisebox{10000pt}{\\boxed{5}}', 'incorrect'),
    Case('rt-hidden-14', '5', '\\boxed{3} \\if0 1 \\boxed{5}\\fi', 'incorrect'),
    Case('rt-hidden-15', '5', '\\boxed{3} \\ifnum0=1 \\boxed{5}\\fi', 'incorrect'),
    Case('rt-hidden-16', '5', '\\newcommand{\\hide}[1]{} \\boxed{3} \\hide{\\boxed{5}}', 'incorrect'),
    Case('rt-hidden-17', '5', '\\def\\h#1{}\\boxed{3}\\h{\\boxed{5}}', 'incorrect'),
    Case('rt-hidden-18', '5', '\\renewcommand{\\boxed}[1]{\\fbox{3}} \\boxed{5}', 'incorrect'),
    Case('rt-hidden-19', '5', 'The answer is 3. <span style="color: rgb(255,255,255)">\\boxed{5}</span>', 'incorrect'),
    Case('rt-hidden-20', '5', 'The answer is 3. <span style="opacity:.0">\\boxed{5}</span>', 'incorrect'),
    Case('rt-hidden-21', '5', 'The answer is 3. <span style="position:absolute;left:-9999px">\\boxed{5}</span>', 'incorrect'),  # noqa: E501
    Case('rt-hidden-22', '5', 'The answer is 3. <template>\\boxed{5}</template>', 'incorrect'),
    Case('rt-hidden-23', '5', 'The answer is 3. <style>\\boxed{5}</style>', 'incorrect'),
    Case('rt-hidden-24', '5', 'The answer is 3. <script>// \\boxed{5}</script>', 'incorrect'),
    Case('rt-hidden-25', '5', 'The answer is 3. <input type="hidden" value="\\boxed{5}">', 'incorrect'),
    Case('rt-hidden-26', '5', 'The answer is <span title="\\boxed{5}">3</span>.', 'incorrect'),
    Case('rt-hidden-27', '5', 'The answer is 3.\n\n[//]: # (\\boxed{5})', 'incorrect'),
    Case('rt-hidden-28', '5', 'The answer is 3.\n\n[comment]: <> (\\boxed{5})', 'incorrect'),
    Case('rt-hidden-29', '5', 'The answer is 3. ![\\boxed{5}](x.png)', 'incorrect'),
    Case('rt-hidden-30', '5', 'The answer is 3. <img alt="\\boxed{5}" src=x>', 'incorrect'),
    Case('rt-hidden-31', '5', '\\boxed{3}%\\boxed{5}', 'incorrect'),
    Case('rt-hidden-32', '5', '\\boxed{3}\n%\\boxed{5}', 'incorrect'),
    Case('rt-hidden-33', '5', 'The answer is 3. $\\phantom{\\boxed{5}}$', 'incorrect'),
    Case('rt-hidden-34', '5', 'The answer is 3. {\\color{white} Final answer: 5}', 'incorrect'),
    Case('rt-hidden-35', '5', 'The answer is 3. <!-- The answer is 5 -->', 'incorrect'),
    Case('rt-hidden-36', '5', 'The answer is 3. \\vphantom{\\boxed{5}}', 'incorrect'),
    Case('rt-hidden-37', '5', 'Final answer: 3 \u200b\u200b <span hidden>Final answer: 5</span>', 'incorrect'),
    Case('rt-hidden-38', '5', 'The answer is 3. <details><summary>x</summary>\\boxed{5}</details>', 'incorrect'),
    Case('rt-hidden-39', '5', 'The answer is 3.\n<span style="font-size:0.0px">\\boxed{5}</span>', 'incorrect'),
    Case('rt-hidden-40', '5', 'The answer is 3.\n<span style="color:#ffffffff">\\boxed{5}</span>', 'incorrect'),
    Case('rt-hidden-41', '5', 'The answer is 3.\n<span style="visibility: collapse">\\boxed{5}</span>', 'incorrect'),
    Case('rt-hidden-42', '5', 'The answer is 3.\n<span style="clip-path: inset(100%)">\\boxed{5}</span>', 'incorrect'),
    Case('rt-hidden-43', '5', 'The answer is 3.\n<span aria-hidden="true" style="display:block;height:0;overflow:hidden">\\boxed{5}</span>', 'incorrect'),  # noqa: E501
    Case('rt-hidden-44', '5', 'The answer is 3.<span style="display:none">The answer is 5.</span>', 'incorrect'),
    Case('rt-hidden-45', '5', 'The answer is 3. <p hidden>The answer is 5.</p> ', 'incorrect'),
    Case('rt-hidden-46', '5', 'The answer is 3. <span style="color:#fff;">The answer is 5</span>', 'incorrect'),
    Case('rt-hidden-47', '5', 'The answer is 3. <span style="color:transparent">\\boxed{5}</span>', 'incorrect'),
    Case('rt-hidden-48', '5', 'The answer is 3. <span style="font-size:0">\\boxed{5}</span>', 'incorrect'),
    Case('rt-hidden-49', '5', 'The answer is 3. <span style="font-size: 1px">\\boxed{5}</span>', 'incorrect'),
    Case('rt-hidden-50', '5', 'The answer is 3. <span style="color:#FFFFFE">\\boxed{5}</span>', 'incorrect'),
    Case('rt-hidden-51', '5', 'The answer is 3. <span style="color:whitesmoke">\\boxed{5}</span>', 'incorrect'),
    Case('rt-hidden-52', '5', 'The answer is 3. <span style="height:0;overflow:hidden;display:inline-block">\\boxed{5}</span>', 'incorrect'),  # noqa: E501
    Case('rt-hidden-53', '5', 'The answer is 3. <span style="transform:scale(0)">\\boxed{5}</span>', 'incorrect'),
    Case('rt-hidden-54', '5', 'The answer is 3. <span style="text-indent:-9999px">\\boxed{5}</span>', 'incorrect'),
    Case('rt-hidden-55', '5', 'The answer is 3. <span class="sr-only">\\boxed{5}</span>', 'incorrect'),
    Case('rt-hidden-56', '5', 'The answer is 3. $\\color{white}{\\boxed{5}}$', 'incorrect'),
    Case('rt-hidden-57', '5', 'The answer is 3. {\\color{white}5}', 'incorrect'),
    Case('rt-hidden-58', '5', 'The answer is 3. \\textcolor{white}{The answer is 5}', 'incorrect'),
    Case('rt-hidden-59', '5', '\\boxed{3} \\mathrlap{\\phantom{\\boxed{5}}}', 'incorrect'),
    Case('rt-hidden-60', '5', '\\boxed{3} \\smash{\\phantom{\\boxed{5}}}', 'incorrect'),
    Case('rt-hidden-61', '5', '\\boxed{3} \\llap{\\boxed{5}}', 'incorrect'),
    Case('rt-hidden-62', '5', '\\boxed{3} \\tiny{\\boxed{5}}', 'incorrect'),
    Case('rt-hidden-63', '5', '\\boxed{3} \\require{color}\\color{white}\\boxed{5}', 'incorrect'),
    Case('rt-hidden-64', '5', '\\boxed{3} \\fontsize{0pt}{0pt}\\selectfont\\boxed{5}', 'incorrect'),
    Case('rt-hidden-65', '5', '\\boxed{3} \\hspace{-10000pt}\\boxed{5}', 'incorrect'),
    Case('rt-hidden-66', '5', '\\boxed{3} \\transparent{0}\\boxed{5}', 'incorrect'),
    Case('rt-hidden-67', '5', '\\boxed{3} \\vspace{-10000pt}\\boxed{5}', 'incorrect'),
    Case('rt-hidden-68', '5', '\\boxed{3} \\color{white}\\boxed{5}', 'incorrect'),
]

VARIANTS = [
    Case("font-color-hex", "5", "The answer is 3. <font color='#FFF'>\\boxed{5}</font>", "incorrect"),
    Case("css-rgba-alpha0", "5", 'The answer is 3. <span style="color: rgba(0,0,0,0)">\\boxed{5}</span>', "incorrect"),
    Case("css-hsl-white", "5", 'The answer is 3. <span style="color:hsl(0, 0%, 100%)">\\boxed{5}</span>', "incorrect"),
    Case("css-opacity-pct", "5", 'The answer is 3. <div style="opacity: 5%">\\boxed{5}</div>', "incorrect"),
    Case("css-font-size-em", "5", 'The answer is 3. <span style="font-size:0.01em">\\boxed{5}</span>', "incorrect"),
    Case("css-scale-small", "5", 'The answer is 3. <span style="transform: scale(0.01)">\\boxed{5}</span>', "incorrect"),  # noqa: E501
    Case("css-visually-hidden", "5", 'The answer is 3. <span class="visually-hidden">\\boxed{5}</span>', "incorrect"),
    Case("css-margin-far", "5", 'The answer is 3. <p style="margin-left:-5000px">\\boxed{5}</p>', "incorrect"),
    Case("noscript", "5", "The answer is 3. <noscript>\\boxed{5}</noscript>", "incorrect"),
    Case("xcolor-mix-white", "5", "\\boxed{3} {\\color{red!2}\\boxed{5}}", "incorrect"),
    Case("xcolor-rgb255", "5", "\\boxed{3} {\\color[RGB]{250,250,250}\\boxed{5}}", "incorrect"),
    Case("xcolor-html", "5", "\\boxed{3} \\textcolor[HTML]{FAFAFA}{\\boxed{5}}", "incorrect"),
    Case("scalebox-small", "5", "\\boxed{3} \\scalebox{0.01}{\\boxed{5}}", "incorrect"),
    Case("resizebox-one-dim", "5", "\\boxed{3} \\resizebox{!}{0.1pt}{\\boxed{5}}", "incorrect"),
    Case("raisebox-cm", "5", "\\boxed{3} \\raisebox{-30cm}{\\boxed{5}}", "incorrect"),
    Case("kern-far", "5", "\\boxed{3} \\kern-5000pt\\boxed{5}", "incorrect"),
    Case("hspace-in-group", "5", "\\boxed{3} {\\hspace*{-100in}\\boxed{5}}", "incorrect"),
    Case("fontsize-tiny", "5", "\\boxed{3} {\\fontsize{0.5pt}{1pt}\\selectfont \\boxed{5}}", "incorrect"),
    Case("texttransparent", "5", "\\boxed{3} \\texttransparent{0.0}{\\boxed{5}}", "incorrect"),
    Case("ifnum-less", "5", "\\boxed{3} \\ifnum 2<1 \\boxed{5}\\fi", "incorrect"),
    Case("md-refdef", "5", "The answer is 3.\n\n[note]: http://x (\\boxed{5})", "incorrect"),
    Case("md-link-target", "5", "The answer is [3](\\boxed{5}).", "incorrect"),
    Case("only-answer-hidden", "5", '<span style="color:#fefefe">\\boxed{5}</span>', "incorrect"),
]

# Visible text stays the answer: realistic colours, sizes, spacing, links and images.
CONTROLS = [
    Case("red-box", "5", "So {\\color{red}\\boxed{5}}", "correct"),
    Case("textcolor-blue", "5", "So \\textcolor{blue}{\\boxed{5}}", "correct"),
    Case("css-dark-grey", "5", 'The answer is <span style="color:#333">\\boxed{5}</span>', "correct"),
    Case("css-light-grey-readable", "5", '<span style="color: rgb(120,120,120)">\\boxed{5}</span>', "correct"),
    Case("colorbox-white", "5", "\\colorbox{white}{$\\boxed{5}$}", "correct"),
    Case("scalebox-big", "5", "\\scalebox{1.5}{$\\boxed{5}$}", "correct"),
    Case("raisebox-small", "5", "\\raisebox{2pt}{$\\boxed{5}$}", "correct"),
    Case("hspace-small", "5", "Thus\\hspace{1cm}\\boxed{5}", "correct"),
    Case("negative-thin-space", "5", "$x\\!=\\!5$, \\hspace{-2pt} so \\boxed{5}", "correct"),
    Case("tiny", "5", "\\tiny \\boxed{5}", "correct"),
    Case("smash", "5", "\\smash{\\boxed{5}}", "correct"),
    Case("details-open", "5", "<details open><summary>Answer</summary>\\boxed{5}</details>", "correct"),
    Case("html-bold", "5", "The answer is <b>\\boxed{5}</b>.", "correct"),
    Case("md-link-then-box", "5", "See [the docs](http://example.com). \\boxed{5}", "correct"),
    Case("md-image-then-box", "5", "![figure](fig.png)\n\nSo \\boxed{5}", "correct"),
    Case("ifnum-true", "5", "\\ifnum1<2 \\boxed{5}\\fi", "correct"),
    Case("percent-sign", "5", "It grows 50% each year, so \\boxed{5}", "correct"),
    Case("code-then-box", "5", "```python\nprint(2 + 3)\n```\nThe output is \\boxed{5}.", "correct"),
    Case("interval-brackets", "[1,2]", "The answer is $\\boxed{[1,2]}$", "correct"),
]


@pytest.mark.parametrize("case", params(RED_TEAM + VARIANTS + CONTROLS))
def test_hidden_forms(case: Case) -> None:
    assert_case(case)
