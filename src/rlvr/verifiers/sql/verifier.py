"""`SQLVerifier`: execution-based text-to-SQL verification on read-only connections."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ClassVar

from rlvr.core.types import Verdict
from rlvr.verifiers.base import PooledVerifier
from rlvr.verifiers.sql.config import SQLConfig

__all__: list[str] = []


class SQLVerifier(PooledVerifier):
    r"""Execute the predicted and the gold query and compare their results.

    The reference is an `SQLReference` (or its dict/JSON form): gold SQL, the database (SQLite
    path, PostgreSQL URL or DuckDB file) and optional per-task equivalence rules. See
    `rlvr.verifiers.sql.score` for every outcome and `SQLConfig` for the rules and limits. Build from
    an `SQLConfig`, or its fields by keyword (`SQLVerifier(order="always")`).

    Example:
        >>> import sqlite3, tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "t.sqlite")
        >>> with sqlite3.connect(path) as c:
        ...     _ = c.execute("CREATE TABLE t(x INTEGER)"); _ = c.execute("INSERT INTO t VALUES (1), (2)")
        >>> v = SQLVerifier(scoring="inline")
        >>> v.verify("```sql\nSELECT x FROM t ORDER BY x\n```", {"gold": "SELECT x FROM t", "db": path}).status
        'correct'
    """

    name: ClassVar[str] = "sql"
    config_type: ClassVar[type[SQLConfig]] = SQLConfig
    config: SQLConfig

    def scorer(self) -> Callable[[str, Any], Verdict]:
        """Return `score_sql` bound to this config (picklable, run in worker processes)."""
        from rlvr.verifiers.sql.score import score_sql

        return functools.partial(score_sql, self.config)

    def reference_response(self, reference: Any) -> str:
        """A response that must be correct: the gold query in a ```sql block."""
        from rlvr.verifiers.sql.score import as_reference

        return f"```sql\n{as_reference(reference).gold}\n```"
