"""TensorFlow parsing specs for a Spark schema, to read our files with `tf.io.parse_example`.

The schema is handled in Spark's JSON form (``StructType.jsonValue()``, the manifest's
``schema_json``; a DDL string is parsed into it by :mod:`spark_tfrecord._format.columns.ddl`) and
walked by :func:`spark_tfrecord._format.columns.schema.columns`, the walk the loaders use too, so
that neither pyspark nor a Spark session is needed: a trainer needs only this package and
TensorFlow. A pyspark ``StructType`` (or a DataFrame) is read through its ``jsonValue()``
(``schema``), without importing pyspark.
"""

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
    """A pyspark DataFrame (classic or Spark Connect) as ``feature_spec`` reads it: its
    schema."""

    @property
    def schema(self) -> StructTypeLike: ...


#: What ``feature_spec`` takes: a pyspark StructType (or a DataFrame, for its schema), Spark's
#: JSON of one (a dict), a DDL string, or the path of TFRecord data (its manifest's schema, or
#: inferred).
Schema = Union[StructTypeLike, DataFrameLike, Mapping[str, Any], str, "os.PathLike[str]"]


def _dtype(tf: Any, value: str) -> Any:
    """The ``tf.io`` dtype of a column's kind of value."""
    return {"int": tf.int64, "float": tf.float32}.get(value, tf.string)


def _vector_size(c: Column, sizes: Mapping[str, int]) -> int:
    """The size of vector column ``c``: ``sizes`` gives it, else its Spark ML metadata
    (``ml_attr.num_attrs``, which HashingTF, OneHotEncoder and VectorAssembler set)."""
    if c.path in sizes:
        return int(sizes[c.path])
    if c.has_size:
        return c.size
    raise ValueError(
        f"Column {c.path!r} is a vector written sparse, and tf.io.SparseFeature needs its size: "
        f"its metadata has no ml_attr.num_attrs. Give it as sizes={{{c.path!r}: N}}."
    )


def _is_path(schema: str) -> bool:
    """A path (or URL) rather than a DDL string: a string with ``://``, or one naming something
    that exists."""
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

    ``schema`` is a pyspark ``StructType`` (or a DataFrame: its schema), its JSON
    (``StructType.jsonValue()``), a DDL string (``"id long not null, x array<float>"``), or the
    path of TFRecord data (a ``PathLike``, or a string that names an existing file or folder or
    holds ``://``: any other string is taken for DDL), local or an fsspec URL
    (``gs://bucket/train``, ``s3://...``, with fsspec's ``storage_options``, as
    :func:`dataset_info` takes them). Neither a Spark session nor pyspark is needed. From a
    folder a spark-tfrecord write left a manifest in, the schema and the record type come from
    its ``_tfrecord_manifest.json`` (``record_type`` must match it), and its per-feature value
    counts make these entries dense:

    - a list or vector column with exactly k values in every record:
      ``tf.io.FixedLenFeature([k], dtype)``;
    - a scalar column (or struct leaf) that every record holds, nullable or not:
      ``tf.io.FixedLenFeature([], dtype)``;
    - a vector column written with ``vectorLayout=sparse`` is found so without
      ``vector_layout``.

    Other data (files TensorFlow, TFX or TFDS wrote) has its schema inferred from its records
    as the data source infers it, with ``record_type`` and the read ``options`` its inference
    takes (``inferSchemaMaxFiles``, ``inferSchemaMaxRecords``, ``inferNesting``...), and no
    value counts: its entries are those of a nullable schema, below. The rest is as for a
    schema:

    - a non-nullable scalar column: ``tf.io.FixedLenFeature([], dtype)``
    - a nullable scalar column: ``tf.io.VarLenFeature(dtype)`` (absent → an empty sparse row)
    - an array or vector column: ``tf.io.RaggedFeature(dtype)``
    - with ``vector_layout="sparse"`` (files written with it), a vector column ``c``:
      ``tf.io.SparseFeature(index_key="c/indices", value_key="c/values", dtype=tf.float32,
      size=N)``, N from ``sizes={"c": N}`` or else the column's Spark ML metadata
      (``ml_attr.num_attrs``, which HashingTF, OneHotEncoder and VectorAssembler set); without
      either, a ValueError naming the column. ``tf.io.parse_example`` gives a ``SparseTensor``.
      ``parse_sequence_example`` takes no ``SparseFeature`` among the context features, so with
      ``record_type="SequenceExample"`` the parts are ``tf.io.RaggedFeature`` entries of their
      own, ``c/indices``, ``c/values`` and ``c/size`` (no size needed).
    - in an Example, a list of lists ``c`` (``array<array<…<T>>>``, depth d), written ragged:
      ``tf.io.RaggedFeature(dtype, value_key="c/ragged_flat_values",
      partitions=[tf.io.RaggedFeature.RowLengths("c/ragged_row_lengths_0"), …, "…_{d-2}"],
      row_splits_dtype=tf.int64)``; ``tf.io.parse_example`` gives a ``RaggedTensor`` of the
      column's lists.
    - with ``record_type="SequenceExample"``, ``array<array<T>>`` columns are feature lists, read
      as ``tf.io.RaggedFeature(dtype)`` sequence features; the result is then the pair
      ``(context_features, sequence_features)`` for ``tf.io.parse_sequence_example``.
    - a struct column: one entry per leaf, named by its path joined with ``separator`` (the
      ``pathSeparator`` option the files were written with), ``image/height``; a leaf is
      nullable when it or a struct above it is.
    - an array of structs: one entry per leaf of the element. In an Example, a
      ``tf.io.RaggedFeature(dtype)`` (its lists hold one value per element); a leaf that is a
      list, the ragged entry above with one list per element (a list of fixed length, field
      metadata ``tfrecord.listLength``, stored concatenated: ``UniformRowLength``); in a
      SequenceExample, a sequence feature with one step per element:
      ``tf.io.FixedLenSequenceFeature([], dtype, allow_missing=True)`` for a single value,
      ``tf.io.RaggedFeature(dtype)`` for a list.

    dtype is ``tf.int64`` for integers, booleans, dates and timestamps, ``tf.float32`` for
    float, double, decimal and vectors, ``tf.string`` for string and binary. TensorFlow is
    imported only when this is called.

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
    return spec_of(
        struct,
        counts,
        record_type=record_type,
        separator=separator,
        vector_layout=vector_layout,
        sizes=sizes,
    )


@overload
def spec_of(
    struct: Mapping[str, Any],
    counts: Mapping[str, tuple[int, int]],
    *,
    record_type: Literal["Example"] = ...,
    separator: str = ...,
    vector_layout: Literal["dense", "sparse"] | None = ...,
    sizes: Mapping[str, int] | None = ...,
) -> dict[str, Any]: ...


@overload
def spec_of(
    struct: Mapping[str, Any],
    counts: Mapping[str, tuple[int, int]],
    *,
    record_type: Literal["SequenceExample"],
    separator: str = ...,
    vector_layout: Literal["dense", "sparse"] | None = ...,
    sizes: Mapping[str, int] | None = ...,
) -> tuple[dict[str, Any], dict[str, Any]]: ...


def spec_of(
    struct: Mapping[str, Any],
    counts: Mapping[str, tuple[int, int]],
    *,
    record_type: Literal["Example", "SequenceExample"] = "Example",
    separator: str = "/",
    vector_layout: Literal["dense", "sparse"] | None = None,
    sizes: Mapping[str, int] | None = None,
) -> dict[str, Any] | tuple[dict[str, Any], dict[str, Any]]:
    """:func:`feature_spec` of the schema JSON ``struct`` with the per-feature value ``counts``
    of a manifest (empty: none)."""
    import tensorflow as tf  # type: ignore[import-untyped,import-not-found,unused-ignore]

    sequence_type = record_type == "SequenceExample"
    known_sizes: Mapping[str, int] = sizes or {}
    context: dict[str, Any] = {}
    sequence: dict[str, Any] = {}
    found = columns(
        struct, counts, separator=separator, record_type=record_type, vector_layout=vector_layout
    )
    for c in found:
        dtype = _dtype(tf, c.value)
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
            if sequence_type:  # parse_sequence_example takes no SparseFeature in the context
                for key, part in ((indices, tf.int64), (values, tf.float32), (size, tf.int64)):
                    context[key] = tf.io.RaggedFeature(part, row_splits_dtype=tf.int64)
                continue
            context[c.key] = tf.io.SparseFeature(
                index_key=indices,
                value_key=values,
                dtype=tf.float32,
                size=_vector_size(c, known_sizes),
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
    if sequence_type:
        return context, sequence
    return context


def _from_folder(
    path: str,
    record_type: str,
    storage_options: Mapping[str, Any] | None,
    options: Mapping[str, str] | None,
) -> tuple[Mapping[str, Any], Mapping[str, tuple[int, int]]]:
    """The schema JSON and the per-feature value counts of the data at ``path``: its manifest's,
    else its schema inferred from its records (and no counts)."""
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
