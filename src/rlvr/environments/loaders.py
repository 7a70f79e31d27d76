"""Dataset loading for environments: local JSONL / JSON / Parquet files or a Hugging Face id.

`load_rows` returns `Rows`, a plain `list[dict]` that also remembers where each row came from,
so every error can name the file and line (`gsm8k.jsonl:17: missing field 'answer'`).
`TaskList` turns any indexable source (rows, a reasoning-gym dataset) into a lazy
`Sequence[Task]`: a row is converted to a `Task` the first time it is read.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, overload
from urllib.parse import urlsplit

from rlvr.core.errors import DataError
from rlvr.core.types import Task

__all__: list[str] = []

HUB_CHECK_TIMEOUT_S = 3.0
"""Timeout of the quick reachability check done before loading from the Hugging Face Hub."""

_PATH_HINT = "download the data elsewhere and pass path=FILE (.jsonl/.json/.parquet; CLI: --env-arg path=FILE)"


class Rows(list[dict[str, Any]]):
    """A list of row dicts that knows where each row came from.

    Attributes:
        source: the file path or `hf:<id>[<split>]` the rows were read from.
        locations: one label per row, e.g. `"data.jsonl:17"` (file and 1-based line).
    """

    def __init__(self, rows: list[dict[str, Any]], source: str, locations: list[str]) -> None:
        super().__init__(rows)
        self.source = source
        self.locations = locations

    def where(self, index: int) -> str:
        """The location label of row `index` (e.g. `"data.jsonl:17"`)."""
        if 0 <= index < len(self.locations):
            return self.locations[index]
        return f"{self.source} row {index}"


def require_field(row: dict[str, Any], field: str, where: str, kind: type | tuple[type, ...] = str) -> Any:
    """Return `row[field]`, checking that it is present and of type `kind`.

    Raises:
        DataError: naming `where` (file:line), the field, and the keys the row does have.
    """
    if field not in row or row[field] is None:
        raise DataError(f"{where}: missing field {field!r} (row has keys: {', '.join(sorted(row)) or 'none'})")
    value = row[field]
    if not isinstance(value, kind):
        raise DataError(f"{where}: field {field!r} should be {_kind_name(kind)}, got {type(value).__name__}")
    return value


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(k.__name__ for k in kinds)


def load_rows(
    path: str | Path | None = None,
    hf_id: str | None = None,
    split: str = "train",
    hf_config: str | None = None,
) -> Rows:
    """Load dataset rows from a local file (preferred when given) or from the Hugging Face Hub.

    Args:
        path: a `.jsonl`, `.json` or `.parquet` file. A `.json` file holds a list of objects, or
            an object mapping split names to such lists (then `split` picks one).
        hf_id: a Hugging Face datasets id, used when `path` is None (needs the network or cache).
        split: the split to read (`test`, `train`, ...); ignored for `.jsonl`/`.parquet` files.
        hf_config: the dataset config name for `hf_id` (e.g. `"main"` for `openai/gsm8k`).

    Returns:
        `Rows`: the row dicts, in file order, with their locations.

    Raises:
        DataError: the file is missing, has an unknown suffix, or holds a row that is not a JSON
            object (the message names file and line); or the Hub could not be reached.
    """
    if path is not None:
        return _load_file(Path(path), split)
    if hf_id is None:
        raise DataError("no dataset given: pass path= (a .jsonl/.json/.parquet file) or hf_id=")
    return _load_hf(hf_id, split, hf_config)


def _load_file(path: Path, split: str) -> Rows:
    if not path.is_file():
        raise DataError(f"dataset file {str(path)!r} does not exist")
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        return _load_jsonl(path)
    if suffix == ".json":
        return _load_json(path, split)
    if suffix == ".parquet":
        return _load_parquet(path)
    raise DataError(f"dataset file {str(path)!r}: unsupported suffix {suffix!r}; use .jsonl, .json or .parquet")


def _load_jsonl(path: Path) -> Rows:
    rows: list[dict[str, Any]] = []
    where: list[str] = []
    with path.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, start=1):
            if not line.strip():
                continue
            loc = f"{path}:{lineno}"
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise DataError(f"{loc}: not valid JSON ({exc})") from exc
            if not isinstance(row, dict):
                raise DataError(f"{loc}: expected a JSON object per line, got {type(row).__name__}")
            rows.append(row)
            where.append(loc)
    return Rows(rows, str(path), where)


def _load_json(path: Path, split: str) -> Rows:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise DataError(f"{path}: not valid JSON ({exc})") from exc
    if isinstance(data, dict):
        if split not in data:
            raise DataError(f"{path}: a JSON object must map split names to row lists; no split {split!r} "
                            f"(has: {', '.join(sorted(data))})")
        data = data[split]
    if not isinstance(data, list):
        raise DataError(f"{path}: expected a list of row objects, got {type(data).__name__}")
    for i, row in enumerate(data):
        if not isinstance(row, dict):
            raise DataError(f"{path} item {i}: expected a JSON object, got {type(row).__name__}")
    return Rows(data, str(path), [f"{path} item {i}" for i in range(len(data))])


def _load_parquet(path: Path) -> Rows:
    try:
        import pyarrow.parquet as pq  # type: ignore[import-untyped,unused-ignore]
    except ImportError as exc:  # pragma: no cover - pyarrow ships with `datasets`
        raise DataError("reading .parquet needs pyarrow: pip install pyarrow") from exc
    try:
        table = pq.read_table(path)
    except Exception as exc:  # pyarrow raises several unrelated types for a broken file
        raise DataError(f"{path}: not a readable parquet file ({type(exc).__name__}: {exc})") from exc
    rows: list[dict[str, Any]] = table.to_pylist()
    return Rows(rows, str(path), [f"{path} row {i}" for i in range(len(rows))])


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().upper() in ("1", "ON", "YES", "TRUE")


def hub_unreachable(timeout_s: float = HUB_CHECK_TIMEOUT_S) -> str | None:
    """Why the Hugging Face Hub cannot be reached (a TCP connect to it), or None when it can.

    Skipped (None) in offline mode (`HF_HUB_OFFLINE`/`HF_DATASETS_OFFLINE`, where `datasets`
    reads its cache without the network) and behind an HTTP(S) proxy (a direct connect proves
    nothing there). The endpoint is `HF_ENDPOINT` when set, else https://huggingface.co.
    """
    if _env_flag("HF_HUB_OFFLINE") or _env_flag("HF_DATASETS_OFFLINE"):
        return None
    if any(os.environ.get(v) for v in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")):
        return None
    url = urlsplit(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    host = url.hostname or "huggingface.co"
    port = url.port or (80 if url.scheme == "http" else 443)
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return None
    except OSError as exc:
        return f"{host}:{port} is unreachable ({type(exc).__name__}: {exc or 'timed out'})"


def _load_hf(hf_id: str, split: str, hf_config: str | None) -> Rows:
    try:
        import datasets
    except ImportError as exc:  # pragma: no cover - a core dependency
        raise DataError(f"loading {hf_id!r} needs the `datasets` package; or pass path= to a local file") from exc
    problem = hub_unreachable()
    if problem is not None:  # fail now rather than after `datasets`' retries (~20 s)
        raise DataError(
            f"could not load {hf_id!r} (config {hf_config!r}, split {split!r}): the Hugging Face Hub {problem}. "
            f"To work offline, {_PATH_HINT}; or, if the dataset is in your local HF cache, set "
            "HF_DATASETS_OFFLINE=1 to read it from there."
        )
    try:
        ds = datasets.load_dataset(hf_id, hf_config, split=split)
    except Exception as exc:  # network, auth and missing-split errors all end the same way
        raise DataError(
            f"could not load {hf_id!r} (config {hf_config!r}, split {split!r}) from the Hugging Face Hub: "
            f"{type(exc).__name__}: {str(exc)[:300]}. If the Hub is unreachable from here, {_PATH_HINT}."
        ) from exc
    rows = [dict(r) for r in ds]
    source = f"hf:{hf_id}[{split}]"
    return Rows(rows, source, [f"{source} row {i}" for i in range(len(rows))])


class TaskList(Sequence[Task]):
    """A lazy, cached `Sequence[Task]` over an indexable source.

    Args:
        source: anything with `__len__` and `__getitem__(int)` (a row list, a reasoning-gym dataset).
        convert: `(index, item) -> Task`; called once per index, on first access.

    Example:
        >>> def convert(i, x):
        ...     return Task(id=str(i), prompt=[{"role": "user", "content": x}], reference=x)
        >>> tl = TaskList(["1", "2"], convert)
        >>> tl[1].reference
        '2'
    """

    def __init__(self, source: Any, convert: Callable[[int, Any], Task]) -> None:
        self._source = source
        self._convert = convert
        self._cache: dict[int, Task] = {}

    def __len__(self) -> int:
        return len(self._source)

    @overload
    def __getitem__(self, index: int) -> Task: ...

    @overload
    def __getitem__(self, index: slice) -> list[Task]: ...

    def __getitem__(self, index: int | slice) -> Task | list[Task]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError(f"task index {index} out of range for {n} tasks")
        task = self._cache.get(index)
        if task is None:
            task = self._convert(index, self._source[index])
            self._cache[index] = task
        return task

    def __iter__(self) -> Iterator[Task]:
        for i in range(len(self)):
            yield self[i]

    def __repr__(self) -> str:
        return f"<TaskList {len(self)} tasks, {len(self._cache)} built>"


def spread_tasks(tasks: list[Task], n: int) -> list[Task]:
    """`n` tasks spread evenly over `tasks` (all of them when there are fewer), in dataset order.

    The tasks `rlvr check` and its adversarial audit look at.
    """
    count = min(n, len(tasks))
    return [tasks[i * len(tasks) // count] for i in range(count)] if count else []
