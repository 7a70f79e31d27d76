"""`Probe`: one response the audit scores, with what it must score.

A probe is either *wrong* (a mutation or an exploit: it must never score `correct`; when it does,
that is a false pass) or a *control* (a mutation that keeps the answer right: it must score
`correct`; when it does not, the control failed -- a false fail, reported apart).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__: list[str] = []


@dataclass(frozen=True)
class Probe:
    """One response to score against one task's reference.

    Attributes:
        family: the family it belongs to, e.g. 'value', 'hedge', 'exploit' (a report row).
        name: the mutation inside the family, e.g. 'plus-one', 'always-equal'.
        response: the full response text to score.
        control: True when the response is right and must score `correct`; False when it is
            wrong and must not.
    """

    family: str
    name: str
    response: str
    control: bool = False
