"""Row sources and sinks for `rlvr verify`: JSONL, Parquet, Hugging Face datasets.

Every source yields `(row_id, row as JSON text)` lazily, row ids being 1-based input positions
(the line number for JSONL, so blank lines keep their numbers; the row number otherwise). Rows
of Parquet files and datasets are converted to JSON with `json.dumps(..., default=str)`, so
values JSON has no type for (dates, bytes) become their string form.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from rlvr.core.errors import ConfigError, DataError
from rlvr.runners.rows import VerifyStats

__all__: list[str] = []

_CHUNK = 1024


def count_rows(path: Path) -> int:
    """Number of non-blank lines in `path` (the progress-bar total)."""
    with path.open("rb") as f:
        return sum(1 for line in f if line.strip())


def is_parquet(path: Path) -> bool:
    """True when `path` names a Parquet file (by its `.parquet` suffix)."""
    return path.suffix.lower() in (".parquet", ".pq")


class RowSource(ABC):
    """A stream of input rows.

    Attributes:
        description: what the run configuration records as the input (a resolved path or a dataset id).
        path: the input file, when there is one (checked against the output path).
    """

    description: str
    path: Path | None = None

    @abstractmethod
    def total(self) -> int:
        """Rows to verify (the progress-bar total)."""

    @abstractmethod
    def max_id(self) -> int:
        """The largest row id the source can yield."""

    @abstractmethod
    def rows(self, stats: VerifyStats) -> Iterator[tuple[int, str]]:
        """Yield `(row_id, JSON text)` in input order; blank JSONL lines are counted in `stats`, not yielded."""


class JsonlSource(RowSource):
    """A JSONL file, one object per line."""

    def __init__(self, path: Path) -> None:
        self.path = self._file = path
        self.description = str(path.resolve())

    def total(self) -> int:
        """Non-blank lines."""
        return count_rows(self._file)

    def max_id(self) -> int:
        """Lines in the file."""
        with self._file.open("rb") as f:
            return sum(1 for _ in f)

    def rows(self, stats: VerifyStats) -> Iterator[tuple[int, str]]:
        """Non-blank lines, undecoded bytes replaced (as the local `rlvr verify` reads them)."""
        with self._file.open(encoding="utf-8", errors="replace") as f:
            for lineno, text in enumerate(f, start=1):
                if text.strip():
                    yield lineno, text
                else:
                    stats.blank_lines += 1


def _dump(row: dict[str, Any]) -> str:
    return json.dumps(row, ensure_ascii=False, default=str)


class ParquetSource(RowSource):
    """A Parquet file, read one record batch at a time (pyarrow)."""

    def __init__(self, path: Path) -> None:
        import pyarrow.parquet as pq

        self.path = path
        self.description = str(path.resolve())
        try:
            self._file = pq.ParquetFile(path)
        except Exception as exc:  # pyarrow raises ArrowInvalid/OSError for a bad file
            raise DataError(f"{path}: not a readable Parquet file ({exc})") from exc

    def total(self) -> int:
        """Rows in the file (from its metadata)."""
        return int(self._file.metadata.num_rows)

    def max_id(self) -> int:
        """Rows in the file."""
        return self.total()

    def rows(self, stats: VerifyStats) -> Iterator[tuple[int, str]]:
        """Rows in file order."""
        row_id = 0
        for record_batch in self._file.iter_batches(batch_size=_CHUNK):
            for row in record_batch.to_pylist():
                row_id += 1
                yield row_id, _dump(row)


class DatasetSource(RowSource):
    """One split of a Hugging Face dataset (memory-mapped Arrow, read in chunks)."""

    def __init__(self, dataset: Any, description: str) -> None:
        self.dataset = dataset
        self.description = description

    def total(self) -> int:
        """Rows in the split."""
        return len(self.dataset)

    def max_id(self) -> int:
        """Rows in the split."""
        return len(self.dataset)

    def rows(self, stats: VerifyStats) -> Iterator[tuple[int, str]]:
        """Rows in dataset order."""
        row_id = 0
        for table in self.dataset.with_format("arrow").iter(batch_size=_CHUNK):
            for row in table.to_pylist():
                row_id += 1
                yield row_id, _dump(row)


def _pick_split(dataset: Any, where: str, split: str | None) -> Any:
    """The split `split` of a DatasetDict (or its only split); a Dataset as is."""
    if not hasattr(dataset, "keys"):
        if split is not None:
            raise ConfigError(f"{where} has a single split; drop ':{split}'")
        return dataset
    names = sorted(dataset.keys())
    if split is None and len(names) == 1:
        return dataset[names[0]]
    if split not in names:
        raise ConfigError(f"{where} has splits {', '.join(names)}; pick one with INPUT:SPLIT, e.g. {where}:{names[0]}")
    return dataset[split]


def open_source(spec: str) -> RowSource:
    """Open the input named `spec`.

    Args:
        spec: a `.jsonl` file (any other file is read as JSONL), a `.parquet` file, a directory
            written by `datasets.Dataset.save_to_disk` (`DIR` or `DIR:SPLIT`), or a Hugging Face
            dataset id in the local cache or on the Hub (`ID`, `ID:SPLIT` or `ID:CONFIG:SPLIT`).

    Raises:
        ConfigError: nothing of that name exists, or the split is ambiguous or unknown.
        DataError: the file cannot be read.
    """
    path = Path(spec)
    if path.is_file():
        return ParquetSource(path) if is_parquet(path) else JsonlSource(path)
    base, _, split = spec.partition(":")
    if Path(base).is_dir():
        import datasets

        try:
            loaded = datasets.load_from_disk(base)
        except (FileNotFoundError, ValueError) as exc:
            raise ConfigError(f"{base}: not a dataset directory written by save_to_disk ({exc})") from exc
        return DatasetSource(_pick_split(loaded, base, split or None), f"{Path(base).resolve()}:{split}".rstrip(":"))
    if path.suffix or spec.startswith((".", "/")) or spec.count("/") != 1:
        raise ConfigError(f"input {spec!r} does not exist (give a JSONL or Parquet file, a dataset directory, "
                          "or a Hugging Face dataset id such as openai/gsm8k:main:test)")
    return _hub_source(spec)


def _hub_source(spec: str) -> DatasetSource:
    import datasets

    parts = spec.split(":")
    name, config, split = parts[0], (parts[1] if len(parts) == 3 else None), (parts[-1] if len(parts) > 1 else None)
    try:
        loaded = datasets.load_dataset(name, config, split=split)
    except Exception as exc:  # offline, unknown id, unknown config: the library's message says which
        raise ConfigError(f"could not load the Hugging Face dataset {spec!r}: {exc}") from exc
    return DatasetSource(_pick_split(loaded, name, None), spec)


def write_parquet(path: Path, chunks: Iterable[list[dict[str, Any]]], schema: Any) -> None:
    """Write row chunks (lists of dicts) as one Parquet file with `schema`, one row group per chunk.

    Raises:
        DataError: a value does not fit the column type (e.g. a column that mixes numbers and text).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    with pq.ParquetWriter(path, schema) as writer:
        for rows in chunks:
            try:
                writer.write_table(pa.Table.from_pylist(rows, schema=schema))
            except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
                raise DataError(f"cannot write {path} as Parquet ({exc}); columns must keep one type across rows. "
                                "Write JSONL instead (-o OUTPUT.jsonl)") from exc


def infer_schema(chunks: Iterable[list[dict[str, Any]]]) -> Any:
    """The Arrow schema of rows (the `verdict` column given a fixed type), unified over all chunks.

    Raises:
        DataError: columns whose types cannot be unified.
    """
    import pyarrow as pa

    schemas = []
    for rows in chunks:
        try:
            schemas.append(pa.Table.from_pylist([{k: v for k, v in r.items() if k != "verdict"} for r in rows]).schema)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise DataError(f"cannot write Parquet: {exc}; write JSONL instead (-o OUTPUT.jsonl)") from exc
    try:
        unified = pa.unify_schemas(schemas, promote_options="permissive") if schemas else pa.schema([])
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise DataError(f"cannot write Parquet: columns change type across rows ({exc}); "
                        "write JSONL instead (-o OUTPUT.jsonl)") from exc
    fields = [f.with_type(pa.string()) if pa.types.is_null(f.type) else f for f in unified]
    return pa.schema([*fields, pa.field("verdict", verdict_type())])


def verdict_type() -> Any:
    """The Arrow type of the `verdict` column (`Verdict.model_dump`; components as a map)."""
    import pyarrow as pa

    return pa.struct([
        ("status", pa.string()), ("reward", pa.float64()), ("components", pa.map_(pa.string(), pa.float64())),
        ("extracted", pa.string()), ("detail", pa.string()), ("elapsed_s", pa.float64()),
    ])
