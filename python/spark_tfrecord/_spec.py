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


def _depth(data_type: DataType) -> int:
    """How many arrays ``data_type`` is nested in (2 for ``array<array<T>>``)."""
    from pyspark.sql.types import ArrayType

    depth = 0
    while isinstance(data_type, ArrayType):
        data_type, depth = data_type.elementType, depth + 1
    return depth


def _innermost(data_type: DataType) -> DataType:
    from pyspark.sql.types import ArrayType

    while isinstance(data_type, ArrayType):
        data_type = data_type.elementType
    return data_type


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
    import tensorflow as tf  # type: ignore[import-untyped,import-not-found,unused-ignore]
    from pyspark.sql.types import ArrayType, StructType

    sequence_type = record_type == "SequenceExample"
    known_sizes: Mapping[str, int] = sizes or {}
    context: dict[str, Any] = {}
    sequence: dict[str, Any] = {}

    ragged_size = tf.io.RaggedFeature(tf.int64, row_splits_dtype=tf.int64)

    def ragged(data_type: DataType, column: str) -> Any:
        return tf.io.RaggedFeature(_dtype(tf, data_type, column), row_splits_dtype=tf.int64)

    def ragged_layout(data_type: DataType, name: str, column: str) -> Any:
        """The list of lists ``data_type`` (depth >= 2) written ragged as feature ``name``."""
        return tf.io.RaggedFeature(
            _dtype(tf, _innermost(data_type), column),
            value_key=name + separator + "ragged_flat_values",
            partitions=[
                tf.io.RaggedFeature.RowLengths(name + separator + f"ragged_row_lengths_{k}")
                for k in range(_depth(data_type) - 1)
            ],
            row_splits_dtype=tf.int64,
        )

    def element_leaves(struct: StructType, name: str, column: str) -> None:
        for field in struct.fields:
            leaf, path = name + separator + field.name, column + "." + field.name
            data_type = field.dataType
            if isinstance(data_type, StructType):
                element_leaves(data_type, leaf, path)
            elif isinstance(data_type, ArrayType) and isinstance(data_type.elementType, StructType):
                raise ValueError(
                    f"Column {path!r}: an array of structs cannot hold arrays of structs."
                )
            elif sequence_type and _depth(data_type) > 1:
                raise ValueError(
                    f"Column {path!r}: an array of structs in a SequenceExample cannot hold "
                    "arrays of arrays; record_type='Example' writes them ragged."
                )
            elif type(data_type).__name__ == "VectorUDT":
                raise ValueError(
                    f"Column {path!r}: a vector inside an array of structs is not supported."
                )
            elif not sequence_type:
                length = int(field.metadata.get("tfrecord.listLength", 0))
                if isinstance(data_type, ArrayType) and length > 0 and _depth(data_type) == 1:
                    # A list of fixed length per element, stored concatenated.
                    context[leaf] = tf.io.RaggedFeature(
                        _dtype(tf, data_type.elementType, path),
                        value_key=leaf,
                        partitions=[tf.io.RaggedFeature.UniformRowLength(length)],
                        row_splits_dtype=tf.int64,
                    )
                elif isinstance(data_type, ArrayType):
                    # One list per element: a list of lists, written ragged.
                    context[leaf] = ragged_layout(ArrayType(data_type), leaf, path)
                else:
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
                    context[name] = ragged_layout(data_type, name, column)
                elif _depth(data_type) > 2:
                    raise ValueError(
                        f"Column {column!r} is an array of arrays of arrays: a SequenceExample's "
                        "feature list holds lists only; record_type='Example' writes it ragged."
                    )
                else:
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
