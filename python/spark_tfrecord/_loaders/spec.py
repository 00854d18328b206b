"""TensorFlow parsing specs for a Spark schema, to read our files with `tf.io.parse_example`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Literal, Protocol, Union, overload, runtime_checkable

from spark_tfrecord._format.columns.schema import Column, columns


@runtime_checkable
class StructTypeLike(Protocol):
    """A pyspark ``StructType`` as ``feature_spec`` reads it: its JSON."""

    def jsonValue(self) -> Any: ...


class DataFrameLike(Protocol):
    """A pyspark DataFrame (classic or Spark Connect): ``feature_spec`` reads its schema."""

    @property
    def schema(self) -> StructTypeLike: ...


#: What ``feature_spec`` takes: a StructType or DataFrame, its JSON, DDL, or a TFRecord path.
Schema = Union[StructTypeLike, DataFrameLike, Mapping[str, Any], str, "os.PathLike[str]"]


def _vector_size(c: Column, sizes: Mapping[str, int]) -> int:
    """The size of vector column ``c``: from ``sizes``, else its ``ml_attr.num_attrs`` metadata."""
    if c.path in sizes:
        return int(sizes[c.path])
    if c.has_size:
        return c.size
    raise ValueError(
        f"Column {c.path!r} is a vector written sparse, and tf.io.SparseFeature needs its size: "
        f"its metadata has no ml_attr.num_attrs. Give it as sizes={{{c.path!r}: N}}."
    )


def _is_path(schema: str) -> bool:
    """Whether ``schema`` is a path or URL rather than DDL: ``://``, ``file:``, or it exists."""
    return "://" in schema or schema.startswith("file:") or os.path.exists(schema)


@overload
def feature_spec(
    schema: Schema,
    *,
    record_type: Literal["Example"] = ...,
    separator: str = ...,
    vector_layout: Literal["dense", "sparse"] | None = ...,
    sizes: Mapping[str, int] | None = ...,
    storage_options: Mapping[str, Any] | None = ...,
    options: Mapping[str, str] | None = ...,
) -> dict[str, Any]: ...


@overload
def feature_spec(
    schema: Schema,
    *,
    record_type: Literal["SequenceExample"],
    separator: str = ...,
    vector_layout: Literal["dense", "sparse"] | None = ...,
    sizes: Mapping[str, int] | None = ...,
    storage_options: Mapping[str, Any] | None = ...,
    options: Mapping[str, str] | None = ...,
) -> tuple[dict[str, Any], dict[str, Any]]: ...


def feature_spec(
    schema: Schema,
    *,
    record_type: Literal["Example", "SequenceExample"] = "Example",
    separator: str = "/",
    vector_layout: Literal["dense", "sparse"] | None = None,
    sizes: Mapping[str, int] | None = None,
    storage_options: Mapping[str, Any] | None = None,
    options: Mapping[str, str] | None = None,
) -> dict[str, Any] | tuple[dict[str, Any], dict[str, Any]]:
    """Return the ``tf.io`` parsing spec for the records written from a DataFrame of ``schema``.

    ``schema``: a pyspark ``StructType`` or DataFrame, its JSON, a DDL string, or a path (a
    ``PathLike``, or a string with ``://`` or naming an existing file), local or fsspec
    (``storage_options``): its manifest gives schema, value counts and record type (``record_type``
    must match), else the schema is inferred with ``options``. Per column (struct leaves joined with
    ``separator``): ``FixedLenFeature`` for non-nullable scalars and where the manifest counts k
    values in every record; ``VarLenFeature`` for other scalars; ``RaggedFeature`` for arrays and
    vectors; with ``vector_layout="sparse"``, a ``SparseFeature`` of size ``sizes[c]`` or its
    ``ml_attr.num_attrs`` (else ValueError). ``record_type="SequenceExample"`` returns
    ``(context, sequence)`` for ``parse_sequence_example``. dtype: ``tf.int64`` for integers,
    booleans, dates, timestamps; ``tf.float32`` for other numbers, vectors; else ``tf.string``.
    Lists of lists, structs and arrays of structs: the table in docs/tensorflow.md.

    >>> import glob, tempfile
    >>> import tensorflow as tf
    >>> from spark_tfrecord import write
    >>> df = spark.createDataFrame([(1, [0.5, 1.5])], "id long not null, x array<float>")
    >>> spec = feature_spec(df.schema)
    >>> spec["id"]
    FixedLenFeature(shape=[], dtype=tf.int64, default_value=None)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     write(df, tmp + "/train")
    ...     files = glob.glob(tmp + "/train/part-*")
    ...     ds = tf.data.TFRecordDataset(files).batch(32)
    ...     batch = next(iter(ds.map(lambda records: tf.io.parse_example(records, spec))))
    >>> batch["id"].numpy().tolist(), batch["x"].to_list()
    ([1], [[0.5, 1.5]])
    >>> nested = spark.createDataFrame([], "image struct<height long, box struct<x float>>")
    >>> sorted(feature_spec(nested.schema))
    ['image/box/x', 'image/height']
    >>> lists = spark.createDataFrame([], "tokens array<array<string>>")
    >>> feature_spec(lists.schema)["tokens"].partitions
    (RowLengths(key='tokens/ragged_row_lengths_0'),)
    """
    counts: Mapping[str, tuple[int, int]] = {}
    if isinstance(schema, os.PathLike) or (isinstance(schema, str) and _is_path(schema)):
        struct, counts = _from_folder(os.fspath(schema), record_type, storage_options, options)
    elif isinstance(schema, str):
        from spark_tfrecord._format.columns.ddl import parse_ddl

        try:
            struct = parse_ddl(schema)
        except ValueError as e:
            if "/" not in schema and os.sep not in schema:
                raise
            raise ValueError(
                f"No such file or folder: {schema!r}; and as a DDL schema (what a string that "
                f"names no existing path is taken for): {e}"
            ) from None
    elif isinstance(schema, Mapping):
        struct = schema
    elif isinstance(schema, StructTypeLike):  # a pyspark StructType
        struct = schema.jsonValue()
    else:  # a DataFrame
        struct = schema.schema.jsonValue()
    spec = spec_of(
        struct,
        counts,
        record_type=record_type,
        separator=separator,
        vector_layout=vector_layout,
        sizes=sizes,
    )
    return spec if record_type == "SequenceExample" else spec[0]


def spec_of(
    struct: Mapping[str, Any],
    counts: Mapping[str, tuple[int, int]],
    *,
    record_type: Literal["Example", "SequenceExample"] = "Example",
    separator: str = "/",
    vector_layout: Literal["dense", "sparse"] | None = None,
    sizes: Mapping[str, int] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """:func:`feature_spec` of schema JSON ``struct`` with a manifest's value ``counts`` (or {}):
    the context (or Example) spec and the sequence spec (empty but for SequenceExample)."""
    import tensorflow as tf  # type: ignore[import-untyped,import-not-found,unused-ignore]

    dtypes = {"int": tf.int64, "float": tf.float32}
    context: dict[str, Any] = {}
    sequence: dict[str, Any] = {}
    found = columns(
        struct, counts, separator=separator, record_type=record_type, vector_layout=vector_layout
    )
    for c in found:
        dtype = dtypes.get(c.value, tf.string)
        if c.sequence:
            sequence[c.key] = (
                tf.io.FixedLenSequenceFeature([], dtype, allow_missing=True)
                if c.shape == "scalar"
                else tf.io.RaggedFeature(dtype, row_splits_dtype=tf.int64)
            )
        elif c.shape == "ragged":
            context[c.key] = tf.io.RaggedFeature(
                dtype,
                value_key=c.features[0],
                partitions=[tf.io.RaggedFeature.RowLengths(key) for key in c.features[1:]],
                row_splits_dtype=tf.int64,
            )
        elif c.shape == "uniform":
            context[c.key] = tf.io.RaggedFeature(
                dtype,
                value_key=c.key,
                partitions=[tf.io.RaggedFeature.UniformRowLength(c.length)],
                row_splits_dtype=tf.int64,
            )
        elif c.shape == "vector" and c.sparse:
            _, indices, values, size = c.features
            if (
                record_type == "SequenceExample"
            ):  # parse_sequence_example takes no SparseFeature in the context
                for key, part in ((indices, tf.int64), (values, tf.float32), (size, tf.int64)):
                    context[key] = tf.io.RaggedFeature(part, row_splits_dtype=tf.int64)
                continue
            context[c.key] = tf.io.SparseFeature(
                index_key=indices,
                value_key=values,
                dtype=tf.float32,
                size=_vector_size(c, sizes or {}),
            )
        elif c.shape in ("list", "vector"):
            if c.fixed is not None and not c.in_array:  # the manifest: k values in every record
                context[c.key] = tf.io.FixedLenFeature([c.fixed], dtype)
            else:
                context[c.key] = tf.io.RaggedFeature(dtype, row_splits_dtype=tf.int64)
        elif c.fixed == 1:  # a scalar every record holds
            context[c.key] = tf.io.FixedLenFeature([], dtype)
        else:
            context[c.key] = tf.io.VarLenFeature(dtype)
    return context, sequence


def _from_folder(
    path: str,
    record_type: str,
    storage_options: Mapping[str, Any] | None,
    options: Mapping[str, str] | None,
) -> tuple[Mapping[str, Any], Mapping[str, tuple[int, int]]]:
    """The schema JSON and value counts at ``path``: the manifest's, else inferred (no counts)."""
    from spark_tfrecord._format.datasets.datasets import folder_schema
    from spark_tfrecord._format.files.files import file_system
    from spark_tfrecord._format.frames.manifest import read_manifest

    files, folder = file_system(path, storage_options)
    info = read_manifest(folder, files) if files.isdir(folder) else None
    if info is not None and info.record_type == "ByteArray":
        raise ValueError(
            f"{path} holds {info.record_type} records: raw bytes, with no features to parse."
        )
    if info is not None and info.record_type != record_type:
        raise ValueError(
            f"{path} holds {info.record_type} records, but feature_spec was called with "
            f"record_type={record_type!r}: pass record_type={info.record_type!r}."
        )
    had = folder_schema(files, folder, {**(options or {}), "recordType": record_type})
    return had.json, had.counts
