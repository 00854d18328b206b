"""TensorFlow parsing specs for a Spark schema, to read our files with `tf.io.parse_example`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, overload

if TYPE_CHECKING:
    from pyspark.sql.types import DataType, StructType

_INT64 = (
    "BooleanType",
    "ByteType",
    "ShortType",
    "IntegerType",
    "LongType",
    "DateType",
    "TimestampType",
    "TimestampNTZType",
)
_FLOAT = ("FloatType", "DoubleType", "DecimalType", "VectorUDT")
_BYTES = ("StringType", "BinaryType")


def _dtype(tf: Any, data_type: DataType, column: str) -> Any:
    name = type(data_type).__name__
    if name in _INT64:
        return tf.int64
    if name in _FLOAT:
        return tf.float32
    if name in _BYTES:
        return tf.string
    raise ValueError(
        f"Column {column!r} has type {data_type.simpleString()}, which has no "
        "TFRecord feature kind."
    )


def _vector_size(field: Any, column: str, sizes: Mapping[str, int]) -> int:
    """The size of vector column ``column``: ``sizes`` gives it, else its Spark ML metadata
    (``ml_attr.num_attrs``, which HashingTF, OneHotEncoder and VectorAssembler set)."""
    if column in sizes:
        return int(sizes[column])
    attrs = field.metadata.get("ml_attr", {})
    if isinstance(attrs, dict) and "num_attrs" in attrs:
        return int(attrs["num_attrs"])
    raise ValueError(
        f"Column {column!r} is a vector written sparse, and tf.io.SparseFeature needs its size: "
        f"its metadata has no ml_attr.num_attrs. Give it as sizes={{{column!r}: N}}."
    )


@overload
def feature_spec(
    schema: StructType,
    *,
    record_type: Literal["Example"] = ...,
    separator: str = ...,
    vector_layout: Literal["dense", "sparse"] = ...,
    sizes: Mapping[str, int] | None = ...,
) -> dict[str, Any]: ...


@overload
def feature_spec(
    schema: StructType,
    *,
    record_type: Literal["SequenceExample"],
    separator: str = ...,
    vector_layout: Literal["dense", "sparse"] = ...,
    sizes: Mapping[str, int] | None = ...,
) -> tuple[dict[str, Any], dict[str, Any]]: ...


def feature_spec(
    schema: StructType,
    *,
    record_type: Literal["Example", "SequenceExample"] = "Example",
    separator: str = "/",
    vector_layout: Literal["dense", "sparse"] = "dense",
    sizes: Mapping[str, int] | None = None,
) -> dict[str, Any] | tuple[dict[str, Any], dict[str, Any]]:
    """Return the ``tf.io`` parsing spec for the records written from a DataFrame of ``schema``.

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
    - with ``record_type="SequenceExample"``, ``array<array<T>>`` columns are feature lists, read
      as ``tf.io.RaggedFeature(dtype)`` sequence features; the result is then the pair
      ``(context_features, sequence_features)`` for ``tf.io.parse_sequence_example``.
    - a struct column: one entry per leaf, named by its path joined with ``separator`` (the
      ``pathSeparator`` option the files were written with), ``image/height``; a leaf is
      nullable when it or a struct above it is.
    - an array of structs: one entry per leaf of the element. In an Example, a
      ``tf.io.RaggedFeature(dtype)`` (its lists hold one value per element); in a
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
    """
    import tensorflow as tf  # type: ignore[import-untyped,import-not-found,unused-ignore]
    from pyspark.sql.types import ArrayType, StructType

    sequence_type = record_type == "SequenceExample"
    known_sizes: Mapping[str, int] = sizes or {}
    context: dict[str, Any] = {}
    sequence: dict[str, Any] = {}

    ragged_size = tf.io.RaggedFeature(tf.int64, row_splits_dtype=tf.int64)

    def ragged(data_type: DataType, column: str) -> Any:
        return tf.io.RaggedFeature(_dtype(tf, data_type, column), row_splits_dtype=tf.int64)

    def element_leaves(struct: StructType, name: str, column: str) -> None:
        for field in struct.fields:
            leaf, path = name + separator + field.name, column + "." + field.name
            data_type = field.dataType
            if isinstance(data_type, StructType):
                element_leaves(data_type, leaf, path)
            elif isinstance(data_type, ArrayType) and isinstance(
                data_type.elementType, (ArrayType, StructType)
            ):
                raise ValueError(
                    f"Column {path!r}: an array of structs cannot hold arrays of those."
                )
            elif not sequence_type:
                if isinstance(data_type, ArrayType):
                    raise ValueError(
                        f"Column {path!r} is a list inside an array of structs, which an Example "
                        "cannot hold (each field is one list of one value per element); "
                        "record_type='SequenceExample' can."
                    )
                context[leaf] = ragged(data_type, path)
            elif isinstance(data_type, ArrayType):
                sequence[leaf] = ragged(data_type.elementType, path)
            else:
                sequence[leaf] = tf.io.FixedLenSequenceFeature(
                    [], _dtype(tf, data_type, path), allow_missing=True
                )

    def leaves(struct: StructType, prefix: str, column_prefix: str, nullable: bool) -> None:
        for field in struct.fields:
            name, column = prefix + field.name, column_prefix + field.name
            data_type = field.dataType
            if isinstance(data_type, StructType):
                leaves(data_type, name + separator, column + ".", nullable or field.nullable)
            elif isinstance(data_type, ArrayType) and isinstance(data_type.elementType, StructType):
                element_leaves(data_type.elementType, name, column)
            elif isinstance(data_type, ArrayType) and isinstance(data_type.elementType, ArrayType):
                if not sequence_type:
                    raise ValueError(
                        f"Column {column!r} is an array of arrays: a feature list, "
                        "which only record_type='SequenceExample' has."
                    )
                sequence[name] = ragged(data_type.elementType.elementType, column)
            elif vector_layout == "sparse" and type(data_type).__name__ == "VectorUDT":
                if sequence_type:  # parse_sequence_example takes no SparseFeature in the context
                    for part, dtype in (("indices", tf.int64), ("values", tf.float32)):
                        context[name + separator + part] = tf.io.RaggedFeature(
                            dtype, row_splits_dtype=tf.int64
                        )
                    context[name + separator + "size"] = ragged_size
                    continue
                context[name] = tf.io.SparseFeature(
                    index_key=name + separator + "indices",
                    value_key=name + separator + "values",
                    dtype=tf.float32,
                    size=_vector_size(field, column, known_sizes),
                )
            elif isinstance(data_type, ArrayType) or type(data_type).__name__ == "VectorUDT":
                element = data_type.elementType if isinstance(data_type, ArrayType) else data_type
                context[name] = ragged(element, column)
            elif nullable or field.nullable:
                context[name] = tf.io.VarLenFeature(_dtype(tf, data_type, column))
            else:
                context[name] = tf.io.FixedLenFeature([], _dtype(tf, data_type, column))

    leaves(schema, "", "", False)
    if sequence_type:
        return context, sequence
    return context
