r"""Quantities written in Chinese (also Japanese and Korean counters): `300分钟`, `3页`, `300万`.

A number followed by a measure word or unit (量词: 个, 页, 分钟, 元, 米, 公斤, ...) is that number
with a unit (`quantity`, used under `units="strip"`); a measure word may be followed by the noun it
counts (`3个苹果`). Only listed measure words are units, and the counted noun must hold none of the
characters that deny, bound or hedge a value (`不是`, `以上`, `多`, `或`, `约`, ...): `300不对`
("300 is wrong"), `300以上` ("over 300") or `300或者更多` ("300 or more") are not 300.
Magnitude characters multiply whatever the unit setting (`magnitude`): 十, 百, 千, 万 (10^4),
亿 (10^8) and their compounds (`300万` = 3,000,000, `1.5亿` = 150,000,000), except where they start
a unit (千米 km, 千克 kg, 百分 percent). Full-width digits read as digits (`normalize_unicode`).
"""

from __future__ import annotations

import re
from fractions import Fraction

__all__: list[str] = []

# Measure words and units, longest first within a family so that the alternation takes the whole word.
_MEASURES = (
    "个月|星期|小时|钟头|分钟|秒钟|块钱|美元|欧元|英镑|日元|人民币|厘米|毫米|千米|公里|公分|千克|公斤|毫克|毫升|立方米|"
    "立方厘米|平方米|平方厘米|平方千米|平方公里|公顷|摄氏度|人次|"
    "个|只|条|张|本|页|块|件|辆|名|位|人|头|匹|棵|朵|支|枝|根|把|台|部|座|间|所|层|次|遍|趟|场|份|篇|首|句|道|题|颗|粒|滴|"
    "杯|瓶|碗|盒|箱|袋|包|双|对|副|套|组|排|行|列|批|群|堆|种|类|岁|倍|步|圈|户|家|口|株|片|节|段|集|回|届|枚|艘|架|封|幅|"
    "项|处|天|日|周|月|年|分|秒|刻|元|角|毛|米|里|尺|寸|克|斤|两|吨|升|亩|度|"
    "個|円|時間|"  # Japanese
    "개|명|원|분|초|시간|살|권|장|번"  # Korean
)
# Characters that deny, bound, compare or hedge a value: a counted noun holding one is no plain quantity.
_NOT_A_NOUN = frozenset("不没非无未否错误或还多余少约至最超过以上下左右前后近几些可能概估吧呢吗？?")
_CJK = r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]"
_QUANTITY_RE = re.compile(
    rf"^(-?\d+(?:\.\d+)?(?:/\d+)?)\s*(?:\\text\s*\{{\s*)?(({_MEASURES})({_CJK}{{0,6}}))\s*\}}?$"
)
_MAGNITUDES = {"十": 10, "百": 100, "千": 1000, "万": 10**4, "亿": 10**8}
_MAGNITUDE_RE = re.compile(r"^(-?\d+(?:\.\d+)?)\s*((?:十|百(?!分)|千(?![米克瓦卡焦帕])|万|亿)+)(.*)$")
# What a measurement unit measures, as `normalize.unit_key` names it (two answers in different units differ).
CJK_UNIT_KEYS = {
    "秒": "s", "秒钟": "s", "초": "s", "分钟": "min", "小时": "h", "钟头": "h", "時間": "h", "시간": "h", "天": "day",
    "日": "day", "周": "week", "星期": "week", "个月": "month", "月": "month", "年": "year", "米": "m", "厘米": "cm",
    "公分": "cm", "毫米": "mm", "千米": "km", "公里": "km", "克": "g", "千克": "kg", "公斤": "kg", "毫克": "mg",
    "吨": "ton", "升": "l", "毫升": "ml", "元": "yuan", "人民币": "yuan", "美元": "dollar", "欧元": "euro",
    "度": "degree", "平方米": "m^2", "平方厘米": "cm^2", "平方千米": "km^2", "平方公里": "km^2", "立方米": "m^3",
    "立方厘米": "cm^3",
}


def quantity(s: str) -> tuple[str, str] | None:
    r"""(number, unit) for `300分钟`, `3页`, `3个苹果`, `5\text{米}`; None when `s` is no number with a measure word."""
    m = _QUANTITY_RE.match(s)
    if m is None or _NOT_A_NOUN.intersection(m.group(4)):
        return None
    return m.group(1), m.group(3)


def magnitude(s: str) -> str:
    """`300万` -> `3000000`, `1.5亿元` -> `150000000元`: magnitude characters after a number multiply it."""
    m = _MAGNITUDE_RE.match(s)
    if m is None:
        return s
    factor = 1
    for ch in m.group(2):
        factor *= _MAGNITUDES[ch]
    value = Fraction(m.group(1)) * factor
    text = str(value.numerator) if value.denominator == 1 else f"\\frac{{{value.numerator}}}{{{value.denominator}}}"
    return text + m.group(3)
