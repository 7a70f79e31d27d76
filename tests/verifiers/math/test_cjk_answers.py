"""Answers with no Latin letters: Chinese sentences, measure words and magnitudes (issue 31 item 6; `cjk`).

A Chinese sentence is prose, not one formula, so its last number is read (`水池中水将在300分钟内被放完。`);
a number followed by a measure word is that number (`300分钟`, `**3页**`, `3个苹果`); 万/亿 multiply
(`300万` is 3,000,000). Words that deny (`不是300`), bound (`超过300`, `300以上`, `至少300人`), hedge
(`300或者更多`) or retract (`300不对`) a number keep it from being the answer.
"""

from __future__ import annotations

import pytest
from _math_probe import Case, assert_case, params

CASES = [
    Case("sentence-last-number", "300", "水池中水将在300分钟内被放完。", "correct"),
    Case("measure-word-minutes", "300", "300分钟", "correct"),
    Case("bold-page-count", "3", "**3页**", "correct"),
    Case("answer-phrase-with-unit", "300", "答案是300分钟。", "correct"),
    Case("final-answer-colon", "300", "最终答案：300分钟", "correct"),
    Case("boxed-with-unit", "300", "\\boxed{300分钟}", "correct"),
    Case("boxed-with-text-unit", "300", "\\boxed{300\\text{分钟}}", "correct"),
    Case("math-then-unit", "300", "答案：$300$ 分钟", "correct"),
    Case("counted-noun-sentence", "3", "共有3个苹果。", "correct"),
    Case("counted-noun", "3", "3个苹果", "correct"),
    Case("full-width-digits", "300", "３００分钟", "correct"),
    Case("approximately", "300", "约300", "correct"),
    Case("approximately-sentence", "300", "大约300分钟", "correct"),
    Case("ten-thousands", "3000000", "300万", "correct"),
    Case("hundred-millions", "150000000", "1.5亿", "correct"),
    Case("thousands-of-yuan", "3000", "3千元", "correct"),
    Case("kilometres-keep-their-number", "5", "5千米", "correct"),
    Case("yen", "500", "500円", "correct"),
    Case("korean-counter-sentence", "5", "답은 5개입니다", "correct"),
    Case("correction-names-last", "400", "答案是300，不对，应该是400。", "correct"),
    Case("words-then-ratio", "13/28", "计划的比例为13/28", "correct"),  # lighteval's extractive-match case
    Case("lighteval-sentence", "4000", " 地块面积 = 72000 / 18 = 4000千克", "correct"),
    Case("same-unit", "300\\text{ minutes}", "300分钟", "correct"),
    # wrong: a negation, a bound, a hedge, a retraction, an operand, a magnitude, another unit
    Case("not", "300", "不是300", "incorrect"),
    Case("answer-is-not", "300", "答案不是300", "incorrect"),
    Case("retracted", "300", "300不对", "incorrect"),
    Case("retracted-then-another", "300", "答案是300，不对，应该是400。", "incorrect"),
    Case("over", "300", "超过300", "incorrect"),
    Case("and-above", "300", "300以上", "incorrect"),
    Case("at-least", "300", "至少300人", "incorrect"),
    Case("odd", "300", "300多人", "incorrect"),
    Case("or-more", "300", "300或者更多", "incorrect"),
    Case("less-than-in-sentence", "300", "水池中的水不到300分钟就放完了。", "incorrect"),
    Case("half-of", "150", "300的一半", "incorrect"),
    Case("more-than-base", "300", "比300多5", "incorrect"),
    Case("unit-then-denial", "300", "300分钟不是答案吧", "incorrect"),
    Case("ten-thousands-not-the-digits", "300", "300万", "incorrect"),
    Case("kilometres-not-metres", "5000", "5千米", "incorrect"),
    Case("seconds-not-minutes", "300\\text{ minutes}", "300秒", "incorrect"),
    Case("numeral-words-not-read", "3", "三个", "incorrect"),
    Case("words-then-denied-ratio", "13/28", "计划的比例不是13/28", "incorrect"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_cjk_answers(case: Case) -> None:
    assert_case(case)
