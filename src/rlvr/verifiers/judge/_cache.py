"""Score cache of the judges: key → JSON value, in memory and optionally appended to a JSONL file.

Keys are SHA-256 digests of everything a score depends on (endpoint model, rubric, question,
reference, response texts and the judge kind), so GRPO re-scores and resumed runs reuse a score
without another call. Only validated scores are stored; failures are never cached.
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import Any

__all__: list[str] = []


def cache_key(*parts: Any) -> str:
    """SHA-256 hex digest of `parts` as canonical JSON."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


class ScoreCache:
    """Thread-safe key → value store; with `path`, loaded at start and appended to on each `put`.

    A torn or unreadable line of the file (a killed run) is skipped, never fatal.
    """

    def __init__(self, path: str | None = None) -> None:
        self._data: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._path = Path(path) if path else None
        self.hits = 0
        self.misses = 0
        if self._path is not None and self._path.is_file():
            with self._path.open(encoding="utf-8", errors="replace") as f:
                for line in f:
                    try:
                        row = json.loads(line)
                        self._data[str(row["key"])] = row["value"]
                    except (ValueError, KeyError, TypeError):
                        continue

    def get(self, key: str) -> Any | None:
        """The stored value, or None (counted as a hit or a miss)."""
        with self._lock:
            value = self._data.get(key)
            if value is None:
                self.misses += 1
            else:
                self.hits += 1
            return value

    def put(self, key: str, value: Any) -> None:
        """Store `value` (JSON-serialisable) under `key`."""
        with self._lock:
            self._data[key] = value
            if self._path is not None:
                self._path.parent.mkdir(parents=True, exist_ok=True)
                with self._path.open("a", encoding="utf-8") as f:
                    f.write(json.dumps({"key": key, "value": value}, ensure_ascii=False) + "\n")

    def __len__(self) -> int:
        return len(self._data)
