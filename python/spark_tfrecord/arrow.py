"""TFRecord files as Arrow record batches, with no Spark: :func:`read_arrow`."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

#: What to install when pyarrow is missing.
INSTALL = "pip install pyarrow (or pip install 'spark-tfrecord[arrow]')"


def read_arrow(
    path: str | os.PathLike[str],
    columns: Sequence[str] | str | None = None,
    *,
    options: Mapping[str, str] | None = None,
    storage_options: Mapping[str, Any] | None = None,
) -> pa.RecordBatchReader:
    """A ``pyarrow.RecordBatchReader`` over the records of a TFRecord folder, file or glob.

    ``path``: local, ``file://`` or fsspec URL (``storage_options``), read as
    ``spark.read.format("tfrecord").load(path)`` reads it, without a JVM. ``columns``: all (None),
    some by name in that order, or a DDL string used as schema. ``options``: the data source's read
    options (docs/options.md). Raises ``errors.ArgumentError`` for a bad option,
    ``errors.CorruptFileError`` for a damaged record. Needs pyarrow.

    >>> import tempfile
    >>> from spark_tfrecord import read_arrow
    >>> rows = [(1, [0.5, 1.5], "a"), (2, [], "b")]
    >>> df = spark.createDataFrame(rows, "id long, x array<float>, s string")
    >>> folder = tempfile.mkdtemp() + "/train"
    >>> df.coalesce(1).write.format("tfrecord").save(folder)
    >>> reader = read_arrow(folder)
    >>> reader.schema.names
    ['id', 'x', 's']
    >>> reader.read_all().sort_by("id").to_pylist()
    [{'id': 1, 'x': [0.5, 1.5], 's': 'a'}, {'id': 2, 'x': [], 's': 'b'}]
    >>> read_arrow(folder, ["s", "id"]).read_all().sort_by("id").to_pydict()
    {'s': ['a', 'b'], 'id': [1, 2]}
    >>> read_arrow(folder, "id int").read_all().sort_by("id").column("id").type
    DataType(int32)
    """
    try:
        import pyarrow  # noqa: F401
    except ModuleNotFoundError as e:
        if (e.name or "").split(".")[0] != "pyarrow":
            raise
        raise ModuleNotFoundError(
            f"spark_tfrecord.read_arrow needs pyarrow: {INSTALL}", name="pyarrow"
        ) from e
    from spark_tfrecord._source.arrow_read import record_batches

    return record_batches(os.fspath(path), columns, dict(options or {}), storage_options)
