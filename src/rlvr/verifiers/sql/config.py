"""Configuration of the SQL verifier: equivalence rules, limits, rewards, and the reference model.

The default equivalence follows the execution-accuracy evaluators text-to-SQL results are
reported with:

- Spider test-suite evaluation (taoyds/test-suite-sql-eval, `exec_eval.py: result_eq`): row order
  matters only when the gold query orders its result, rows are compared as multisets (duplicates
  counted), and the prediction's columns may be a permutation of the gold's. Three deliberate
  departures: test-suite decides order with `'order by' in g_str.lower()` (any ORDER BY, even in a
  subquery or a window), rlvr with sqlglot from the gold's top-level ORDER BY only (the one that
  orders the result); test-suite strips DISTINCT from both queries unless `--keep_distinct`,
  rlvr runs both as written; and rlvr rounds floats to `float_digits` significant digits (both
  evaluators compare them exactly).
- BIRD (`evaluation.py: execute_sql`, `set(predicted_res) == set(ground_truth_res)`): set
  semantics and strict column order; select it with `duplicates="set", columns="strict"`.

In both, values are compared with Python equality, which is what `coerce="numeric"` keeps:
`1 == 1.0`, `None == None`, `'1' != 1`.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from rlvr.verifiers.base import VerifierConfig

__all__ = ["EquivalenceRules", "SQLConfig", "SQLReference"]

_FROZEN = ConfigDict(frozen=True, extra="forbid")
_SCHEMES = {"sqlite", "postgresql", "postgres", "duckdb"}


class EquivalenceRules(BaseModel):
    """When two query results are equivalent. Frozen; unknown fields are rejected.

    Each rule is named by its field; the defaults are those of the Spider test-suite evaluation
    (see the module docstring for sources).
    """

    model_config = _FROZEN

    order: Literal["gold", "always", "never"] = Field(
        default="gold",
        description="'gold': row order is significant only when the gold's top-level query has ORDER BY "
        "(test-suite-sql-eval looks for 'order by' anywhere in the gold text; an ORDER BY inside a subquery or "
        "window does not order the result, so rlvr reads the top level with sqlglot); 'always': always "
        "significant; 'never': never (BIRD).",
    )
    duplicates: Literal["multiset", "set"] = Field(
        default="multiset",
        description="'multiset': duplicate rows are counted (test-suite-sql-eval); 'set': only distinct rows "
        "matter (BIRD's set equality). With order significant, 'set' removes repeats, keeping first occurrences.",
    )
    columns: Literal["permute", "strict"] = Field(
        default="permute",
        description="'permute': the prediction's columns may come in any order (test-suite-sql-eval tries "
        "column permutations); 'strict': the same order as the gold (BIRD). Column names never matter.",
    )
    float_digits: int | None = Field(
        default=9,
        ge=1,
        le=17,
        description="Floats are rounded to this many significant digits before comparing, so 3.3333333333333335 "
        "== 3.333333333333333 (aggregation order), but never coarser than units, so an integral float equals its "
        "int (123456789012.0 == 123456789012) and integers are never rounded; None compares floats exactly. A "
        "project choice (both evaluators compare floats exactly).",
    )
    nulls: Literal["match", "never_match"] = Field(
        default="match",
        description="'match': NULL equals NULL (Python None == None, as in both evaluators); 'never_match': a "
        "row holding NULL equals no row (SQL three-valued logic).",
    )
    coerce: Literal["numeric", "strict", "loose"] = Field(
        default="numeric",
        description="'numeric': numbers compare by value across int/float/decimal (1 == 1.0) but text never "
        "equals a number ('1' != 1), as Python equality in both evaluators; 'strict': the type must match too "
        "(1 != 1.0); 'loose': text that reads as a number compares as that number ('1' == 1 == 1.0).",
    )


class SQLConfig(EquivalenceRules, VerifierConfig):
    """Configuration of `SQLVerifier`: equivalence rules, per-query limits and rewards.

    `timeout_s` (the hard per-item watchdog of the worker pool) must exceed twice
    `query_timeout_s`, so that a slow gold plus a slow prediction end as a `timeout` verdict
    from the query interrupt rather than a killed worker.
    """

    timeout_s: float = Field(
        default=15.0, gt=0, description="Hard wall-clock limit per item (gold + prediction), seconds."
    )
    # -- per-query limits ---------------------------------------------------------------
    query_timeout_s: float = Field(
        default=5.0,
        gt=0,
        description="Limit of each query (gold and prediction separately), seconds. Enforced inside the database: "
        "SQLite progress handler, PostgreSQL statement_timeout, DuckDB interrupt().",
    )
    max_rows: int = Field(default=100_000, ge=1, description="A result with more rows than this is not compared.")
    max_bytes: int = Field(
        default=64 * 1024 * 1024,
        ge=1024,
        description="A result larger than this (sum of value sizes, bytes) is not compared. For SQLite it is also "
        "SQLite's SQLITE_LIMIT_LENGTH, so a huge string fails inside SQLite instead of being built.",
    )
    # -- empty gold -------------------------------------------------------------------
    empty_gold: Literal["score", "incorrect", "error"] = Field(
        default="score",
        description="When the gold returns no rows: 'score' (as any gold: an empty prediction is correct, as "
        "in test-suite-sql-eval and BIRD; flagged in `detail`); 'incorrect' (no prediction can be correct: "
        "an always-empty query earns nothing); 'error' (reward None: the sample is masked).",
    )
    # -- perturbed databases (test-suite accuracy) ---------------------------------------
    test_suite: bool = Field(
        default=True,
        description="A prediction whose rows equal the gold's must also equal them on perturbed copies of the "
        "database (half of the rows deleted, the values of the gold's output columns shifted) wherever the gold's "
        "result is determined: test-suite accuracy (Zhong, Yu and Klein 2020), which rejects answers copied as "
        "constants. SQLite and DuckDB; see rlvr.verifiers.sql.suite for outcomes and limits. False: the task's "
        "database alone decides.",
    )
    suite_max_bytes: int = Field(
        default=64 * 1024 * 1024,
        ge=0,
        description="A database file larger than this is not copied: its predictions are checked on the task's "
        "database alone (said in the verdict's detail). The copies are built once per file, inside the first "
        "item's `timeout_s` (17 s for a 58 MiB file under a load average of 13 on 2 cores); for larger files raise "
        "this and build them ahead with `rlvr.verifiers.sql.perturb.row_variants(db, dialect)` (no deadline).",
    )
    # -- extraction -------------------------------------------------------------------
    max_response_chars: int = Field(
        default=100_000, ge=1, description="Responses longer than this are read on their last N characters."
    )
    # -- reward -----------------------------------------------------------------------
    correct_reward: float = Field(default=1.0, description="Reward of a correct query.")
    incorrect_reward: float = Field(default=0.0, description="Reward of a wrong, failing or rejected query.")
    no_answer_reward: float = Field(default=0.0, description="Reward when no SQL query could be extracted.")
    timeout_reward: float = Field(default=0.0, description="Reward when the prediction ran past query_timeout_s.")

    @model_validator(mode="after")
    def _timeouts_fit(self) -> SQLConfig:
        if self.timeout_s <= 2 * self.query_timeout_s:
            raise ValueError(
                f"timeout_s ({self.timeout_s}) must exceed 2 * query_timeout_s ({self.query_timeout_s}): the gold "
                "and the prediction each may take query_timeout_s; raise timeout_s or lower query_timeout_s"
            )
        return self

    def rules(self, overrides: dict[str, Any] | None = None) -> EquivalenceRules:
        """The equivalence rules of this config, with a reference's `rules` overrides applied."""
        base = {name: getattr(self, name) for name in EquivalenceRules.model_fields}
        return EquivalenceRules.model_validate({**base, **(overrides or {})})


class SQLReference(BaseModel):
    """The ground truth of one text-to-SQL task: gold SQL, the database, optional rule overrides.

    A task's `reference` is this model's JSON form (`model_dump()`); `SQLVerifier` accepts either.

    Example:
        >>> SQLReference(gold="SELECT 1", db="data/chinook.sqlite").dialect
        'sqlite'
    """

    model_config = _FROZEN

    gold: str = Field(description="The gold SQL query (one read-only statement).")
    db: str = Field(
        description="The database: a SQLite file path (or sqlite:///PATH), a PostgreSQL URL "
        "(postgresql://user@host:port/db), or a DuckDB file (duckdb:///PATH or a path ending in .duckdb)."
    )
    rules: dict[str, Any] = Field(
        default_factory=dict,
        description="Per-task overrides of the verifier's equivalence rules (`EquivalenceRules` field names), "
        "e.g. {'order': 'always'}.",
    )

    @field_validator("gold", "db")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must be a non-empty string")
        return value

    @field_validator("db")
    @classmethod
    def _known_scheme(cls, value: str) -> str:
        scheme = re.match(r"([A-Za-z][A-Za-z0-9+.-]*):", value.strip())
        if scheme and len(scheme.group(1)) > 1 and scheme.group(1).lower() not in _SCHEMES:  # `C:` is a drive
            raise ValueError(f"unsupported database URL scheme {scheme.group(1)!r}; give a SQLite file path or "
                             "sqlite:///PATH, a postgresql://user@host:port/db URL, or duckdb:///PATH")
        return value

    @field_validator("rules")
    @classmethod
    def _known_rules(cls, value: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(value) - set(EquivalenceRules.model_fields))
        if unknown:
            raise ValueError(f"unknown equivalence rule(s) {', '.join(unknown)}; known: "
                             f"{', '.join(sorted(EquivalenceRules.model_fields))}")
        EquivalenceRules.model_validate(value)  # values checked now, not at scoring time
        return value

    @property
    def dialect(self) -> Literal["sqlite", "postgres", "duckdb"]:
        """The SQL dialect (and database) that runs the queries, read from the form of `db`; also sqlglot's name."""
        lowered = self.db.lower()
        if lowered.startswith(("postgresql://", "postgres://")):
            return "postgres"
        if lowered.startswith("duckdb:") or lowered.endswith((".duckdb", ".ddb")):
            return "duckdb"
        return "sqlite"
