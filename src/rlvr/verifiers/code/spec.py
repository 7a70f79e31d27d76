"""Test specifications (`TestSpec`): the reference a `UnitTestVerifier` checks code against.

Four formats, told apart by `format`:

- `assert`: test code with `assert` statements (HumanEval `check(candidate)` + `entry_point`,
  MBPP `test_list`), optionally `setup` code run first.
- `call`: a function name and input/expected pairs (call-based, as in APPS/LiveCodeBench).
- `stdio`: stdin/expected-stdout pairs (competitive programming).
- `pytest`: pytest test files importing the candidate module (`module`, default `solution`).

A task's reference may be a `TestSpec` or its JSON form (a dict), so tasks stay JSON rows.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator

__all__ = ["as_test_spec"]

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class _Base(BaseModel):
    model_config = _FROZEN

    solution: str | None = Field(default=None, description="A reference solution (for `check`); never sent to the "
                                 "sandbox with a candidate.")
    timeout_s: float | None = Field(default=None, gt=0, description="Per-test time limit, seconds (None: the "
                                    "verifier's `test_timeout_s`).")


class AssertTests(_Base):
    """Assert-style tests (HumanEval, MBPP)."""

    format: Literal["assert"] = "assert"
    tests: str = Field(description="Python test code with assert statements.")
    entry_point: str | None = Field(default=None, description="HumanEval: call `check(<entry_point>)` after the tests.")
    setup: str = Field(default="", description="Code run after the candidate, before the tests (MBPP test_setup_code).")
    helpers: str = Field(default="", description="Trusted helper code from the task's prompt (HumanEval/38's "
                         "`encode_cyclic`), run in the tests' namespace after the candidate so the tests use it "
                         "whatever the candidate redefines; empty: taken from `solution` (see "
                         "`rewrite.prompt_helpers`).")

    functions: tuple[str, ...] = Field(default=(), description="Names the tests call from the candidate that are "
                                       "named like builtins (MBPP 126's `sum`); without an entry point they are "
                                       "also read from `solution`'s top-level definitions. Any other builtin the "
                                       "tests use is the real builtin, whatever the candidate defines.")

    @field_validator("tests")
    @classmethod
    def _has_tests(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("tests must hold Python code with at least one assert statement")
        return v


class CallCase(BaseModel):
    """One call-based case: `fn(*args, **kwargs)` must equal `expected`."""

    model_config = _FROZEN

    args: tuple[Any, ...] = Field(default=(), description="Positional arguments (JSON values).")
    kwargs: dict[str, Any] = Field(default_factory=dict, description="Keyword arguments.")
    expected: Any = Field(description="Expected return value (JSON; a Python literal string if `literal`).")


class CallTests(_Base):
    """Call-based input/expected pairs, compared in the parent (type-strict, float tolerance)."""

    format: Literal["call"] = "call"
    fn: str = Field(description="Function to call; 'Class.method' instantiates Class first (LeetCode style).")
    cases: tuple[CallCase, ...] = Field(min_length=1, description="The cases.")
    literal: bool = Field(default=False, description="Arguments and expected values are Python literal strings "
                          "(ast.literal_eval), so tuples, sets and bytes can be expressed.")


class StdioCase(BaseModel):
    """One stdin/stdout case."""

    model_config = _FROZEN

    input: str = Field(default="", description="Text fed to stdin.")
    output: str = Field(description="Expected stdout (compared after whitespace normalisation).")


class StdioTests(_Base):
    """Program reads stdin, writes stdout (competitive programming)."""

    format: Literal["stdio"] = "stdio"
    cases: tuple[StdioCase, ...] = Field(min_length=1, description="The cases.")


class PytestTests(_Base):
    """pytest test files run against the candidate saved as `<module>.py`."""

    format: Literal["pytest"] = "pytest"
    files: dict[str, str] = Field(min_length=1, description="Test file name -> source (names test_*.py).")
    module: str = Field(default="solution", description="Module name the candidate is saved as.")
    expected_tests: tuple[str, ...] | None = Field(
        default=None, description="Test ids that must pass ('test_x.py::test_a'); None: derived from the files "
        "(top-level test_* functions and Test* class methods; a parametrized test needs >= 1 case, all passing).")


TestSpec = Annotated[AssertTests | CallTests | StdioTests | PytestTests, Field(discriminator="format")]
"""One of the four test formats, selected by `format`."""

_ADAPTER: TypeAdapter[Any] = TypeAdapter(TestSpec)


def as_test_spec(reference: Any) -> AssertTests | CallTests | StdioTests | PytestTests:
    """Validate a reference (a TestSpec model, a dict or a JSON string) into a TestSpec.

    Raises:
        pydantic.ValidationError: (a ValueError) naming the field that is wrong.
    """
    if isinstance(reference, (AssertTests, CallTests, StdioTests, PytestTests)):
        return reference
    if isinstance(reference, str):
        return _ADAPTER.validate_json(reference)  # type: ignore[no-any-return]
    return _ADAPTER.validate_python(reference)  # type: ignore[no-any-return]
