"""The forge bug families (`rlvr.environments.forge.mutators`): one site per candidate, seeded, text kept."""

from __future__ import annotations

import ast
import difflib
import inspect
import textwrap
from collections import Counter

import pytest

from rlvr.core.errors import ConfigError
from rlvr.environments.forge.mutators import (
    MUTATORS,
    candidates,
    functions_of,
    mutator_names,
    project_candidates,
    resolve_mutators,
)

SOURCE = textwrap.dedent('''\
    import os


    def pick(items, limit, strict=True):
        """Docstring: 1 < 2 stays."""
        # a comment that stays
        out = []
        for i in range(0, len(items)):
            if i >= limit and strict:
                break
            elif not items[i]:
                continue
            else:
                out.append(items[i] * 2 - 1)
        total = sum(out) % 7
        total += 3
        if total == 0:
            raise ValueError("empty")
        del items[:1]
        return total > 1 or os.sep in "/"


    class Box:
        def area(self, w, h):
            return max(w, h) ** 2 // (w - h) << 1

        def label(self, name):
            return f"{name}: {1 + 1}" if name is not None else None
    ''')


def _mutants(families=None, seed=0):
    return list(candidates("pkg/mod.py", SOURCE, functions_of("pkg/mod.py", SOURCE), families or mutator_names(), seed))


def test_there_are_at_least_eight_named_families_and_each_finds_its_sites() -> None:
    assert len(MUTATORS) >= 8 and all(m.name and m.summary for m in MUTATORS.values())
    found = Counter(m.mutator for m in _mutants())
    assert set(found) == set(MUTATORS), set(MUTATORS) - set(found)


@pytest.mark.parametrize("family,before,after", [
    ("comparison-flip", "if total == 0:", "if total != 0:"),
    ("comparison-flip", 'os.sep in "/"', 'os.sep not in "/"'),
    ("off-by-one", "if i >= limit and strict:", "if i > limit and strict:"),
    ("off-by-one", "del items[:1]", "del items[:2]"),
    ("arithmetic-swap", "out.append(items[i] * 2 - 1)", "out.append(items[i] * 2 + 1)"),
    ("arithmetic-swap", "total += 3", "total -= 3"),
    ("boolean-swap", "return total > 1 or os.sep", "return total > 1 and os.sep"),
    ("negated-condition", "elif not items[i]:", "elif items[i]:"),
    ("removed-statement", "    total += 3\n", ""),
    ("swapped-arguments", "range(0, len(items))", "range(len(items), 0)"),
    ("changed-constant", "if total == 0:", "if total == 1:"),
    ("wrong-return", 'return total > 1 or os.sep in "/"', 'return not (total > 1 or os.sep in "/")'),
    ("dropped-raise", '        raise ValueError("empty")\n', "        pass\n"),
    ("swapped-operands", "sum(out) % 7", "7 % sum(out)"),
    ("swapped-operands", "(w - h)", "(h - w)"),
])
def test_a_family_changes_one_site_and_keeps_the_rest_of_the_text(family: str, before: str, after: str) -> None:
    expected = SOURCE.replace(before, after, 1)
    assert expected != SOURCE
    assert any(m.source == expected for m in _mutants([family])), [m.note for m in _mutants([family])]


def test_if_else_invert_and_removed_branch_move_whole_blocks() -> None:
    inverted = [m for m in _mutants(["if-else-invert"])]
    assert inverted and all(ast.parse(m.source) for m in inverted)
    removed = {m.note for m in _mutants(["removed-branch"])}
    assert {"`if` block removed", "`else` branch removed"} <= removed


def test_every_mutant_parses_differs_and_touches_one_function_only() -> None:
    original = ast.dump(ast.parse(SOURCE))
    mutants = _mutants()
    assert len({m.key for m in mutants}) == len({ast.dump(ast.parse(m.source)) for m in mutants})
    for m in mutants:
        assert ast.dump(ast.parse(m.source)) != original
        changed = [line for line in difflib.unified_diff(SOURCE.splitlines(), m.source.splitlines(), n=0, lineterm="")
                   if line.startswith(("-", "+")) and not line.startswith(("---", "+++"))]
        assert changed, m
        assert "Docstring: 1 < 2 stays." in m.source and "# a comment that stays" in m.source
        assert "import os" in m.source  # module level is never touched


def test_decorators_defaults_and_f_string_parts_are_left_alone() -> None:
    source = textwrap.dedent('''\
        import functools


        @functools.lru_cache(maxsize=2)
        def f(x=1 + 1):
            return f"{x + 1}"
        ''')
    mutants = list(candidates("m.py", source, functions_of("m.py", source), mutator_names(), 0))
    assert [m.mutator for m in mutants] == ["wrong-return"]  # the returned value as a whole; nothing inside it
    assert all("maxsize=2" in m.source and "x=1 + 1" in m.source for m in mutants)


def test_the_seed_orders_the_candidates_and_families_take_turns() -> None:
    assert [m.key for m in _mutants(seed=3)] == [m.key for m in _mutants(seed=3)]
    assert [m.key for m in _mutants(seed=3)] != [m.key for m in _mutants(seed=4)]
    first = [m.mutator for m in _mutants(seed=3)][:len(MUTATORS)]
    assert len(set(first)) == len(first)  # one of each family before any family's second


def test_functions_carry_qualified_names_and_decorator_first_lines() -> None:
    source = ("class A:\n    @staticmethod\n    def m():\n        def inner():\n            return 1\n"
              "        return inner\n")
    names = {(f.qualname, f.first_line) for f in functions_of("a.py", source)}
    assert names == {("A.m", 2), ("A.m.<locals>.inner", 4)}


def test_mutators_are_resolved_by_name() -> None:
    assert resolve_mutators(None) == mutator_names()
    assert resolve_mutators("off-by-one, wrong-return") == ["off-by-one", "wrong-return"]
    with pytest.raises(ConfigError, match=r"unknown mutator.*nope.*comparison-flip"):
        resolve_mutators(["nope"])


@pytest.mark.parametrize("module", ["textwrap", "shlex", "fnmatch", "ipaddress"])
def test_on_real_code_every_candidate_parses_and_changes_the_tree(module: str) -> None:
    """Property over real standard-library modules: no candidate is a syntax error or a no-op."""
    source = inspect.getsource(__import__(module))
    functions = functions_of(f"{module}.py", source)
    original = ast.dump(ast.parse(source))
    seen: Counter[str] = Counter()
    for mutant in candidates(f"{module}.py", source, functions, mutator_names(), 0):
        seen[mutant.mutator] += 1
        if sum(seen.values()) > 60:
            break
        assert ast.dump(ast.parse(mutant.source)) != original
        assert len(mutant.source.splitlines()) >= len(source.splitlines()) - 60
    assert len(seen) >= 8


def test_a_projects_first_candidates_cover_the_families_not_only_the_first() -> None:
    """One candidate of each file in turn, each file starting its rotation at another family: a run that stops
    after one round over 8 files has tried 8 families (before: every file's first candidate was comparison-flip)."""
    paths = [f"pkg/m{i}.py" for i in range(8)]
    files = [(path, SOURCE, functions_of(path, SOURCE)) for path in paths]
    mutants = list(project_candidates(files, mutator_names(), 0))
    first_round = mutants[:len(paths)]
    assert [m.path for m in first_round] == paths
    assert len({m.mutator for m in first_round}) == len(paths), [m.mutator for m in first_round]
    per_file = {path: [m.key for m in mutants if m.path == path] for path in paths}
    for i, path in enumerate(paths):  # every file still yields all of its mutants
        rotated = [*mutator_names()[i:], *mutator_names()[:i]]
        assert sorted(per_file[path]) == sorted(m.key for m in candidates(path, SOURCE, files[i][2], rotated, 0))
    assert [m.key for m in project_candidates(files, mutator_names(), 0)] == [m.key for m in mutants]
