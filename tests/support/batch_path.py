"""The tests' helpers for the batch path: a file read as ``read_arrow`` reads it (:func:`read`:
with its batches of ``batch_records`` records, with the batch path or with it switched off, and
the batches, by their first record's offset, that the record path decoded), records framed as
the batch decoder takes them (:func:`framed`), and its outputs compared bit for bit
(:func:`same`)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from spark_tfrecord._format.datasets.inference import as_nullable
from spark_tfrecord._format.files.files import file_system
from spark_tfrecord._source import arrow_read, batch_arrays
from spark_tfrecord._source.options import ReadOptions


def plan(path: str, schema: Mapping[str, Any], options: Mapping[str, str]) -> Any:
    """The read of the file with the schema ``schema`` (JSON) and the read's ``options``, as
    planned before any record is read (an ``ArrowRead``; its schema's errors raised)."""
    fs, where = file_system(path, None)
    return arrow_read.ArrowRead(as_nullable(dict(schema)), ReadOptions.parse(options), fs, where)


def table(path: str, schema: Mapping[str, Any], options: Mapping[str, str]) -> pa.Table:
    """The file read with the schema ``schema`` (JSON) and the read's ``options``."""
    read = plan(path, schema, options)
    return pa.Table.from_batches(list(read.read(read.in_order())), read.target)


def read(
    path: str,
    schema: Mapping[str, Any],
    options: Mapping[str, str],
    monkeypatch: pytest.MonkeyPatch,
    batch_records: int,
    batch_path: bool = True,
) -> tuple[pa.Table, list[int]]:
    """The file read (:func:`table`), and the batches the record path decoded."""
    decoded: list[int] = []
    record_path = arrow_read.ArrowRead._decoded

    def counted(self: Any, chunk: Any, *rest: Any) -> Iterator[pa.RecordBatch]:
        decoded.append(int(chunk[3][0]))
        yield from record_path(self, chunk, *rest)

    with monkeypatch.context() as m:
        m.setattr(arrow_read, "BATCH_RECORDS", batch_records)
        m.setattr(arrow_read.ArrowRead, "_decoded", counted)
        if not batch_path:
            m.setattr(batch_arrays.BatchArrays, "arrays", lambda *_: None)
        return table(path, schema, options), decoded


def framed(records: list[bytes]) -> tuple[bytes, Any, Any]:
    """The records' bytes, one after another, and their starts and stops."""
    sizes = np.array([len(r) for r in records], np.int64)
    stops = np.cumsum(sizes)
    return b"".join(records), stops - sizes, stops


def same(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` are equal and of the same types, arrays bit for bit (NaN too)."""
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, np.ndarray):
        return (
            isinstance(b, np.ndarray)
            and a.dtype == b.dtype
            and a.shape == b.shape
            and a.tobytes() == b.tobytes()
        )
    return type(a) is type(b) and bool(a == b)
