"""Peers' own labelled math test cases through rlvr: agreement, rlvr-stricter and rlvr-looser per suite.

Run: `python benchmarks/peer_suites.py [--show] [--offline] [--out benchmarks/results/peer_suites.md]` (a minute).

The suites are fetched at run time from PyPI sdists with pip (`pip download --no-deps --no-binary :all:
NAME==VERSION`) into `.cache/peer-suites/` (git-ignored, never committed; `--offline` uses what is there):

- Math-Verify (`math-verify`, the version installed here, else 0.9.0): every `tests/*.py` case.
- lighteval 0.13.0: its extractive-match tests live in the repository's `tests/metrics/`, which no sdist ships
  (0.7.0 to 0.13.0 ship only top-level `tests/*.py`, none of them math): the row says so, with 0 cases.
- PrimeIntellect `verifiers` 0.3.1: `tests/test_math_rubric.py` (the last sdist with it; 0.4.0 ships no
  math tests). Labels come from the test's name (`test_score_valid_answers` = equal).
- `mathverify_cases.jsonl` of the shared data (`RLVR_SHARED_DATA` names the `data` folder, default
  `../shared/data` beside the checkout; skipped when absent): Math-Verify cases extracted the same way.

Cases are read with `ast` (the peers' test code is never imported or run): every `pytest.mark.parametrize`
row and every `assert helper(...) == label` with literal values (an f-string of `math` constants is
evaluated by a whitelist, see `_value`), where the helper is Math-Verify's `compare_strings` or
`verify(parse(gold), parse(pred))`. Gold is the reference, pred the response:
`MathVerifier(config).verify_batch([(pred, gold)])`. rlvr runs with its default `MathConfig` except
`float_rounding=N` where the peer's case sets a non-default precision N (Math-Verify's default 6 is a
rounding tolerance rlvr deliberately does not apply by default). A case that needs a peer option rlvr has
no equivalent of (Math-Verify `strict=False`: free renaming of variables) is skipped and counted.

Columns: agree; rlvr-stricter = the peer's label is equal and rlvr says not correct; rlvr-looser = the
label is different and rlvr says correct (a potential false pass; each is listed); errors = rlvr's
`error`/`timeout`. "peer = label" re-runs the installed Math-Verify the way the test does (extraction
targets, precision, strict, allow_set_relation_comp) to check that the extraction read the labels right.
"""

from __future__ import annotations

import argparse
import ast
import importlib.metadata
import importlib.util
import itertools
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlvr.verifiers.math import MathConfig, MathVerifier

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / ".cache" / "peer-suites"
DATA = Path(os.environ.get("RLVR_SHARED_DATA") or REPO.parent / "shared" / "data") / "math"
MV_DEFAULT_PRECISION = 6  # Math-Verify's `compare_strings(precision=6)` and `verify(float_rounding=6)`


def _installed(dist: str, fallback: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return fallback


@dataclass(frozen=True)
class Source:
    """One peer's sdist: where its labelled math cases are."""

    suite: str
    dist: str
    version: str
    note: str = ""


SOURCES = (
    Source("Math-Verify", "math-verify", _installed("math-verify", "0.9.0")),
    Source("lighteval", "lighteval", "0.13.0",
           "the sdist ships no extractive-match / math-normalisation tests (they are in the repository's "
           "tests/metrics/, which no sdist from 0.7.0 to 0.13.0 includes)"),
    Source("verifiers", "verifiers", "0.3.1",
           "tests/test_math_rubric.py (MathRubric: Math-Verify on `\\boxed{answer}` and `\\boxed{response}`); "
           "0.4.0 ships no math tests"),
)


@dataclass
class Case:
    suite: str
    where: str  # file::test
    gold: str
    pred: str
    equal: bool  # the peer's label
    float_rounding: int | None = None  # rlvr's MathConfig.float_rounding for this case
    peer: dict[str, Any] = field(default_factory=dict)  # how the peer's test calls its library


# Why rlvr's verdict differs from a peer's label: kind -> (rlvr's stance, what happens). "deliberate" is one of
# rlvr's documented choices (docs/verifiers/math.md; tests/verifiers/math/test_math_golden.py lists the same cases).
KINDS: dict[str, tuple[str, str]] = {
    "decimal comma": ("deliberate", "',' separates list items unless it groups thousands: `1,22` is the list 1, 22 "
                      "and `1000,99` the list 1000, 99 (MATH answers list roots with commas)"),
    "false equation (M6)": ("deliberate", "a prediction that states a false equation is incorrect even when its "
                            "last side is the gold: `x = 5+5+1 = 7 = 11`, `z = 3+3 = 2`, `x = 5+5+1 = 1/3`; "
                            r"`\frac{1}{2} \$ = \frac{10}{9}` reads as 1/2 = 10/9"),
    "labels bind values (M5)": ("deliberate", "labelled gold values never match a bare list by position "
                                "(`AB=4,CD=5` against `4, 5`): the question's order is unknown to the verifier"),
    "';' groups of labels": ("limit", "`p=5,q=2;p=7,q=2` (';'-separated groups of labelled values) is not read as "
                             "the tuples (5,2),(7,2): unsupported, a false fail"),
    "peer label wrong": ("peer bug", "`1 - 1/e` and `1 + 1/e` are different numbers; the peer's test labels them "
                         "equal (rlvr is right)"),
    "inline $ over lines": ("deliberate", "the label tests the peer's LaTeX-only extraction (an inline `$...$` may "
                            "not span lines); rlvr reads the answer 9 wherever it stands (last number): no false pass"),
    r"inline \( over lines": ("deliberate", r"rlvr reads an inline `\( ... \)` block that runs over lines as it "
                              r"reads a display `\[ ... \]` one (the peer labels the display block over lines "
                              "equal, this one different): the response's answer is 9, no false pass"),
    "interval = inequality": ("deliberate", "the label holds only under the peer's allow_set_relation_comp=False; "
                              r"rlvr reads `x \in [-2,7]` and `-2 \le x \le 7` as the same set, both ways: "
                              "no false pass"),
}
CASE_KINDS: dict[tuple[str, str], str] = {  # (gold, pred) -> kind
    ("1000.99", "1000,99"): "decimal comma",
    ("1,22", "1.22"): "decimal comma",
    ("2.74", "Soucis : 2,74 $ a.."): "decimal comma",
    ("0,111", "0.111"): "decimal comma",
    ("$10/9$", r"Answer $ \frac{1}{2} \$ = \frac{10}{9} $"): "false equation (M6)",
    ("$x = 11$", "$x = 5+5+1 = 7 =11$"): "false equation (M6)",
    ("$x = 1/3$", r"$x = 5+5+1 = 1/3 \approx 11$"): "false equation (M6)",
    ("$z = 1 + 1 = 2$", "$z = 3+3 = 2$"): "false equation (M6)",
    ("$AB=4,CD=5$", r"$\boxed{4, 5}$"): "labels bind values (M5)",
    (r"\boxed{x = -5,\ p = \frac{14}{3}} ", r"$\boxed{-5, \frac{14}{3}}$"): "labels bind values (M5)",
    ("$p=5,q=2;p=7,q=2$", "$(5,2),(7,2)$"): "';' groups of labels",
    (r"$1 - \frac{1}{\mathrm{e}}$", r"$1 + \frac{1}{\mathrm{e}}$"): "peer label wrong",
    ("$9$", "Answer $ \n 9 \n $"): "inline $ over lines",
    ("$9$", "Answer \\( \n 9 \n \\)"): r"inline \( over lines",
    (r"$x \in [-2,7]$", r"$-2 \\le x \\le 7$"): "interval = inequality",
}

# Found while looking at the cases (rlvr agrees with the label, but not for the label's reason); fixed ones stay listed.
NOTES = (
    r"Fixed 2026-12-07: `Answer \( \n 9 \n \)` agreed with its label (different) for a wrong reason: the answer "
    r"phrase's span was the rest of its line, `\(` (`spans.line_after` carried only `\[` and `$$` blocks to their "
    r"close), so `The answer is \(\n9\n\)` against gold 9 was a false fail (tests/verifiers/math/"
    r"test_multiline_blocks.py).",
)


@dataclass
class Extracted:
    cases: list[Case] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)  # reason -> count

    def skip(self, reason: str, n: int = 1) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + n


# -- fetching ---------------------------------------------------------------------------------------------------

def _pip() -> list[str]:
    if importlib.util.find_spec("pip") is not None:
        return [sys.executable, "-m", "pip"]
    for name in ("pip3", "pip"):
        found = shutil.which(name)
        if found:
            return [found]
    raise SystemExit("peer_suites: no pip found to download the peers' sdists (install pip, or use --offline)")


def fetch(src: Source, offline: bool) -> Path | None:
    """The sdist's extracted `tests/` folder under .cache/peer-suites (downloaded once); None if unavailable."""
    root = CACHE / f"{src.dist}-{src.version}"
    tests = root / "tests"
    if tests.is_dir():
        return tests
    if offline:
        return None
    root.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([*_pip(), "download", "--no-deps", "--no-binary", ":all:", "--quiet", "--dest", str(root),
                           f"{src.dist}=={src.version}"], check=False)
    if done.returncode:
        return None
    archives = sorted(root.glob("*.tar.gz"))
    if not archives:
        raise SystemExit(f"peer_suites: pip gave no sdist for {src.dist}=={src.version} in {root}")
    with tarfile.open(archives[0]) as tar:
        members = [m for m in tar.getmembers()
                   if m.isfile() and len(Path(m.name).parts) > 2 and Path(m.name).parts[1] == "tests"
                   and m.name.endswith(".py")]
        for m in members:  # only the tests' Python files, flattened to root/tests/<path inside tests>
            m.name = str(Path(*Path(m.name).parts[1:]))
        tar.extractall(root, members=members, filter="data")
    tests.mkdir(exist_ok=True)  # a sdist without tests still counts as fetched
    return tests


# -- extraction (ast only: the peers' test code is never run) ---------------------------------------------------

_MATH_CONSTS = {"pi": math.pi, "e": math.e, "tau": math.tau}
_MATH_FUNCS = {"sqrt": math.sqrt, "exp": math.exp, "log": math.log, "sin": math.sin, "cos": math.cos,
               "tan": math.tan, "atan": math.atan}


def _math_value(node: ast.expr) -> float:
    """`math.pi`, `math.sqrt(17)`, ... with literal arguments: a whitelist, nothing else is evaluated."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "math":
        return _MATH_CONSTS[node.attr]
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "math" and not node.keywords):
        return float(_MATH_FUNCS[node.func.attr](*(ast.literal_eval(a) for a in node.args)))
    raise ValueError("not a math constant")


def _value(node: ast.expr) -> Any:
    """A literal, or an f-string whose fields are literals or `math` constants/functions of literals."""
    try:
        return ast.literal_eval(node)
    except ValueError:
        if isinstance(node, ast.Tuple | ast.List):
            return tuple(_value(e) for e in node.elts)
        if not isinstance(node, ast.JoinedStr):
            raise
    out = []
    for part in node.values:
        if isinstance(part, ast.Constant):
            out.append(str(part.value))
        elif isinstance(part, ast.FormattedValue) and part.conversion == -1:
            spec = "" if part.format_spec is None else _value(part.format_spec)
            try:
                value = ast.literal_eval(part.value)
            except ValueError:
                value = _math_value(part.value)
            out.append(format(value, spec))
        else:
            raise ValueError("unsupported f-string field")
    return "".join(out)


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _param_rows(func: ast.FunctionDef | ast.AsyncFunctionDef, out: Extracted, where: str) -> list[dict[str, Any]]:
    """The rows of the function's `parametrize` decorators (their product), as {argname: value}."""
    axes: list[list[dict[str, Any]]] = []
    for deco in func.decorator_list:
        if not (isinstance(deco, ast.Call) and _name(deco.func) == "parametrize"):
            continue
        names_node = deco.args[0] if deco.args else next(k.value for k in deco.keywords if k.arg == "argnames")
        values_node = deco.args[1] if len(deco.args) > 1 else next(k.value for k in deco.keywords
                                                                   if k.arg == "argvalues")
        names_value = ast.literal_eval(names_node)
        names = [n.strip() for n in (names_value.split(",") if isinstance(names_value, str) else names_value)]
        rows: list[dict[str, Any]] = []
        for elt in values_node.elts if isinstance(values_node, ast.List | ast.Tuple) else ():
            if isinstance(elt, ast.Call) and _name(elt.func) == "param":  # pytest.param(values..., marks=...)
                elt = ast.Tuple(elts=list(elt.args), ctx=ast.Load())
            try:
                value = _value(elt)
            except (ValueError, KeyError, TypeError, SyntaxError):
                out.skip(f"{where}: a parametrize row that is not a literal")
                continue
            rows.append({names[0]: value} if len(names) == 1 else dict(zip(names, value, strict=True)))
        axes.append(rows)
    return [dict(itertools.chain.from_iterable(r.items() for r in combo)) for combo in itertools.product(*axes)]


def _helper_call(node: ast.expr) -> ast.Call | None:
    """The `compare_strings(...)` or `verify(...)` call inside an assert's left side."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and _name(sub.func) in ("compare_strings", "verify"):
            return sub
    return None


def _resolve(node: ast.expr, row: dict[str, Any]) -> Any:
    if isinstance(node, ast.Name) and node.id in row:
        return row[node.id]
    if isinstance(node, ast.Call) and _name(node.func) == "parse" and node.args:  # verify(parse(g), parse(p))
        return _resolve(node.args[0], row)
    return _value(node)


def _asserts(func: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[tuple[ast.Call, ast.expr | bool]]:
    """(helper call, label node or literal label) for each `assert` on Math-Verify's helpers."""
    for node in ast.walk(func):
        if not isinstance(node, ast.Assert):
            continue
        test = node.test
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
            call = _helper_call(test.left)
            if call is not None:
                yield call, test.comparators[0]
        elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            call = _helper_call(test.operand)
            if call is not None:
                yield call, False
        elif isinstance(test, ast.Call) and _name(test.func) in ("compare_strings", "verify"):
            yield test, True


def math_verify_cases(suite: str, tests: Path) -> Extracted:
    """Math-Verify's (gold, pred, label) cases from `tests/*.py`, with how each test calls the library."""
    out = Extracted()
    for path in sorted(tests.glob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for func in ast.walk(tree):
            if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef) or not func.name.startswith("test"):
                continue
            where = f"{path.name}::{func.name}"
            checks = list(_asserts(func))
            rows = (_param_rows(func, out, where) or [{}]) if checks else []  # pair tests only
            for call, label in checks:
                helper = _name(call.func)
                for row in rows:
                    try:
                        gold, pred = (_resolve(a, row) for a in call.args[:2])
                        equal = label if isinstance(label, bool) else bool(_resolve(label, row))
                        kwargs = {k.arg: _resolve(k.value, row) for k in call.keywords if k.arg}
                    except (ValueError, KeyError, TypeError, SyntaxError):
                        continue  # a call on computed objects (mocks, sympy values): no labelled string pair
                    if not (isinstance(gold, str) and isinstance(pred, str)):
                        continue
                    peer = {"helper": helper, **kwargs}
                    if helper == "compare_strings" and kwargs.get("strict", True) is False:
                        out.skip(f"{where}: strict=False (renaming variables freely; rlvr has no such option)")
                        continue
                    precision = kwargs.get("precision", MV_DEFAULT_PRECISION)
                    rounding = precision if helper == "compare_strings" and precision != MV_DEFAULT_PRECISION else None
                    out.cases.append(Case(suite, where, gold, pred, equal, rounding, peer))
    return out


def verifiers_cases(suite: str, tests: Path) -> Extracted:
    """verifiers' MathRubric cases: parametrize dicts {completion, answer}; label from the test's name."""
    out = Extracted()
    path = tests / "test_math_rubric.py"
    if not path.is_file():
        return out
    for func in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        equal = {"test_score_valid_answers": True, "test_score_invalid_answers": False}.get(func.name)
        where = f"{path.name}::{func.name}"
        for row in _param_rows(func, out, where):
            case = row.get("test_case")
            if equal is None:
                if row:
                    out.skip(f"{where}: label depends on a rubric option (timeout), not on the answers")
            elif isinstance(case, dict) and {"completion", "answer"} <= case.keys():
                out.cases.append(Case(suite, where, str(case["answer"]), str(case["completion"]), equal,
                                      peer={"helper": "math_rubric"}))
    return out


def shared_cases(suite: str) -> Extracted | None:
    """`mathverify_cases.jsonl` of the shared data (None when absent), rlvr config as in test_math_golden.py."""
    path = DATA / "mathverify_cases.jsonl"
    if not path.is_file():
        return None
    out = Extracted()
    for line in path.read_text().splitlines():
        row = json.loads(line)
        m = re.search(r"float_rounding=(\d+) \(non-default", row.get("config_note", ""))
        out.cases.append(Case(suite, f"{row['source_file']}::{row['test_function']}", row["gold"], row["pred"],
                              bool(row["expected"]), int(m.group(1)) if m else None))
    return out


# -- running ----------------------------------------------------------------------------------------------------

def run_rlvr(cases: list[Case]) -> list[str]:
    """rlvr's verdict status for each case (one worker; grouped by the config each case needs)."""
    out = [""] * len(cases)
    groups: dict[int | None, list[int]] = {}
    for i, case in enumerate(cases):
        groups.setdefault(case.float_rounding, []).append(i)
    for rounding, idx in groups.items():
        with MathVerifier(MathConfig(timeout_s=10.0, float_rounding=rounding)) as verifier:
            verdicts = verifier.verify_batch([(cases[i].pred, cases[i].gold) for i in idx], workers=1)
        for i, v in zip(idx, verdicts, strict=True):
            out[i] = v.status
    return out


def run_peer(case: Case) -> bool | None:
    """The installed Math-Verify, called the way the peer's test calls it; None when it cannot be."""
    try:
        from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse, verify
    except ImportError:
        return None
    p = case.peer
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if p.get("helper") == "compare_strings":
                targets = [LatexExtractionConfig(boxed_match_priority=0) if t == "latex" else ExprExtractionConfig()
                           for t in p.get("match_types", ["latex", "expr"])]
                return bool(verify(parse(case.gold, targets), parse(case.pred, targets),
                                   float_rounding=p.get("precision", MV_DEFAULT_PRECISION),
                                   strict=p.get("strict", True),
                                   allow_set_relation_comp=p.get("allow_set_relation_comp", False)))
            if p.get("helper") == "verify":
                return bool(verify(parse(case.gold), parse(case.pred)))
            if p.get("helper") == "math_rubric":
                return bool(verify(parse(f"\\boxed{{{case.gold}}}"), parse(f"\\boxed{{{case.pred}}}")))
        except Exception:  # a crash of the peer reads as "not equal", as in its own wrappers
            return False
    return None


@dataclass
class Row:
    suite: str
    version: str
    cases: int = 0
    agree: int = 0
    stricter: list[Case] = field(default_factory=list)
    looser: list[Case] = field(default_factory=list)
    errors: list[tuple[Case, str]] = field(default_factory=list)
    peer_ok: int = 0
    peer_n: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    note: str = ""


def score(row: Row, extracted: Extracted) -> Row:
    start = time.perf_counter()
    cases = extracted.cases
    row.cases, row.skipped = len(cases), extracted.skipped
    for case, status in zip(cases, run_rlvr(cases), strict=True):
        if status in ("error", "timeout"):
            row.errors.append((case, status))
        elif (status == "correct") == case.equal:
            row.agree += 1
        elif case.equal:
            row.stricter.append(case)
        else:
            row.looser.append(case)
    row.seconds = time.perf_counter() - start
    for case in cases:
        peer = run_peer(case) if case.peer else None
        if peer is not None:
            row.peer_n += 1
            row.peer_ok += peer == case.equal
    return row


def run(offline: bool) -> list[Row]:
    rows = []
    for src in SOURCES:
        row = Row(src.suite, src.version, note=src.note)
        tests = fetch(src, offline)
        if tests is None:
            row.note = ("not in .cache/peer-suites (run without --offline once)" if offline
                        else "pip could not download the sdist: skipped")
            rows.append(row)
            continue
        if src.dist == "math-verify":
            extracted = math_verify_cases(src.suite, tests)
        elif src.dist == "verifiers":
            extracted = verifiers_cases(src.suite, tests)
        else:
            extracted = Extracted()
        rows.append(score(row, extracted))
    shared = shared_cases("shared mathverify_cases.jsonl")
    row = Row("shared mathverify_cases.jsonl", "-")
    if shared is None:
        row.note = f"absent ({DATA / 'mathverify_cases.jsonl'}): skipped"
        rows.append(row)
    else:
        rows.append(score(row, shared))
    return rows


# -- report -----------------------------------------------------------------------------------------------------

def _code(text: str, limit: int = 300) -> str:
    text = text if len(text) <= limit else text[:limit // 2] + " … " + text[-limit // 2:]
    return "`` " + text.replace("\n", "\\n").replace("|", "\\|").replace("`", "'") + " ``"


def _kind(case: Case) -> str:
    return CASE_KINDS.get((case.gold, case.pred), "unclassified")


def _case_line(case: Case) -> str:
    rounding = f" (rlvr float_rounding={case.float_rounding})" if case.float_rounding is not None else ""
    return f"- {case.where}: gold {_code(case.gold)}, pred {_code(case.pred)}{rounding}: *{_kind(case)}*"


def kinds_table(rows: list[Row]) -> list[str]:
    """Each kind of disagreement: rlvr's stance, the stricter/looser counts per suite, what happens."""
    scored = [r for r in rows if r.cases]
    lines = ["| kind | rlvr's stance | " + " | ".join(f"{r.suite} (stricter/looser)" for r in scored)
             + " | what happens |", "|---|---|" + "---|" * len(scored) + "---|"]
    for kind, (stance, text) in [*KINDS.items(), ("unclassified", ("?", "not yet looked at: look at it"))]:
        counts = [(sum(_kind(c) == kind for c in r.stricter), sum(_kind(c) == kind for c in r.looser)) for r in scored]
        if any(a or b for a, b in counts):
            lines.append(f"| {kind} | {stance} | " + " | ".join(f"{a}/{b}" for a, b in counts) + f" | {text} |")
    return lines


def markdown(rows: list[Row], show: bool = False) -> str:
    lines = ["# Peer suites: rlvr against the peers' own labelled math cases (`benchmarks/peer_suites.py`)", "",
             "Cases read with `ast` from the sdists' tests (fetched from PyPI into `.cache/peer-suites`); rlvr: "
             "`MathVerifier().verify_batch([(pred, gold)], workers=1)`, default `MathConfig` (`float_rounding=N` only "
             "where the peer's case sets a non-default precision N). rlvr-stricter: label equal, rlvr not correct; "
             "rlvr-looser: label different, rlvr correct. peer = label: the installed Math-Verify, called as the "
             "test calls it, reproduces the label. Reproduce: `python benchmarks/peer_suites.py --show --out "
             "benchmarks/results/peer_suites.md`.", "",
             "| suite | version | cases | agree | rlvr-stricter | rlvr-looser | errors | peer = label | skipped "
             "| rlvr s |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        peer = f"{r.peer_ok}/{r.peer_n}" if r.peer_n else "-"
        lines.append(f"| {r.suite} | {r.version} | {r.cases} | {r.agree} | {len(r.stricter)} | {len(r.looser)} "
                     f"| {len(r.errors)} | {peer} | {sum(r.skipped.values())} | {r.seconds:.1f} |")
    notes = [f"- {r.suite}: {r.note}" for r in rows if r.note]
    notes += [f"- {r.suite} skipped: {reason} ({n})" for r in rows for reason, n in r.skipped.items()]
    if notes:
        lines += ["", *notes]
    lines += ["", "### Why rlvr differs (rlvr-stricter and rlvr-looser cases by kind)", "", *kinds_table(rows)]
    lines += ["", "Notes:", "", *(f"- {n}" for n in NOTES)]
    for r in rows:
        if r.looser:
            lines += ["", f"### {r.suite}: rlvr-looser (peer label: different; rlvr: correct)", ""]
            lines += [_case_line(c) for c in r.looser]
        if r.errors:
            lines += ["", f"### {r.suite}: rlvr errors", ""]
            lines += [f"{_case_line(c)}: {status}" for c, status in r.errors]
        if show and r.stricter:
            lines += ["", f"### {r.suite}: rlvr-stricter (peer label: equal; rlvr: not correct)", ""]
            lines += [_case_line(c) for c in r.stricter]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--show", action="store_true", help="also list every rlvr-stricter case")
    ap.add_argument("--offline", action="store_true", help="use only the sdists already in .cache/peer-suites")
    ap.add_argument("--out", default="", help="write the table here (markdown), e.g. benchmarks/results/peer_suites.md")
    args = ap.parse_args()
    md = markdown(run(args.offline), show=args.show)
    print(md)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(md)


if __name__ == "__main__":
    main()
