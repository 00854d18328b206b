"""TFRecord files as Arrow record batches, with no Spark: :func:`read_arrow`.

The reading is the jar-less data source's (:mod:`spark_tfrecord._source.arrow_read`): the same
schema, values and errors as ``spark.read.format("tfrecord")``, in this process. Neither
pyspark, py4j nor JPype is imported; pyarrow is, when :func:`read_arrow` is called.
"""

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
    """A ``pyarrow.RecordBatchReader`` over the records of the TFRecord folder, file or glob
    ``path`` (a local path, a ``file://`` URL, or an fsspec URL such as ``s3://bucket/train``
    read with fsspec's ``storage_options``), as ``spark.read.format("tfrecord").load(path)``
    reads them, with no Spark and no JVM.

    - The schema is the one Spark gives (``reader.schema`` is its Arrow schema, as
      ``DataFrame.toArrow()`` gives it: timestamps in UTC, Spark ML vectors as their struct):
      inferred from the records as the jar infers it, partition columns (``name=value``
      folders) after the others.
    - ``columns``: all (None); some by name, in the order given (a ValueError names a column
      the schema has not, and lists those it has); or a DDL string (``"id long, x
      array<float>"``), which is then the schema: nothing is inferred, and only its columns
      are decoded.
    - ``options``: the read options of the data source, as strings, by the jar's names
      (``recordType``, ``compression``, ``mode``, ``pathSeparator``, ``inferNesting``,
      ``inferSchemaMaxFiles``, ``columnNameOfCorruptRecord``, ...; docs/options.md); a bad value
      raises :class:`~spark_tfrecord.errors.ArgumentError`, as Spark does.
    - The files are read in path order, records in file order, in batches of at most 4096
      rows, as the reader is consumed. A damaged or malformed record raises
      :class:`~spark_tfrecord.errors.CorruptFileError` with its file and offset (and column)
      in FAILFAST mode, the default.

    pyarrow is an extra (``pip install 'spark-tfrecord[arrow]'``); without it this raises
    ModuleNotFoundError saying so.

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
