"""TensorFlow parsing specs for a Spark schema, to read our files with `tf.io.parse_example`."""

from __future__ import annotations

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


@overload
def feature_spec(
    schema: StructType, *, record_type: Literal["Example"] = ...
) -> dict[str, Any]: ...


@overload
def feature_spec(
    schema: StructType, *, record_type: Literal["SequenceExample"]
) -> tuple[dict[str, Any], dict[str, Any]]: ...


def feature_spec(
    schema: StructType, *, record_type: Literal["Example", "SequenceExample"] = "Example"
) -> dict[str, Any] | tuple[dict[str, Any], dict[str, Any]]:
    """Return the ``tf.io`` parsing spec for the records written from a DataFrame of ``schema``.

    - a non-nullable scalar column: ``tf.io.FixedLenFeature([], dtype)``
    - a nullable scalar column: ``tf.io.VarLenFeature(dtype)`` (absent → an empty sparse row)
    - an array or vector column: ``tf.io.RaggedFeature(dtype)``
    - with ``record_type="SequenceExample"``, ``array<array<T>>`` columns are feature lists, read
      as ``tf.io.RaggedFeature(dtype)`` sequence features; the result is then the pair
      ``(context_features, sequence_features)`` for ``tf.io.parse_sequence_example``.

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
    """
    import tensorflow as tf  # type: ignore[import-untyped,import-not-found,unused-ignore]
    from pyspark.sql.types import ArrayType

    context: dict[str, Any] = {}
    sequence: dict[str, Any] = {}
    for field in schema.fields:
        data_type = field.dataType
        if isinstance(data_type, ArrayType) and isinstance(data_type.elementType, ArrayType):
            if record_type != "SequenceExample":
                raise ValueError(
                    f"Column {field.name!r} is an array of arrays: a feature list, "
                    "which only record_type='SequenceExample' has."
                )
            dtype = _dtype(tf, data_type.elementType.elementType, field.name)
            sequence[field.name] = tf.io.RaggedFeature(dtype, row_splits_dtype=tf.int64)
        elif isinstance(data_type, ArrayType) or type(data_type).__name__ == "VectorUDT":
            element = data_type.elementType if isinstance(data_type, ArrayType) else data_type
            dtype = _dtype(tf, element, field.name)
            context[field.name] = tf.io.RaggedFeature(dtype, row_splits_dtype=tf.int64)
        elif field.nullable:
            context[field.name] = tf.io.VarLenFeature(_dtype(tf, data_type, field.name))
        else:
            context[field.name] = tf.io.FixedLenFeature([], _dtype(tf, data_type, field.name))
    if record_type == "SequenceExample":
        return context, sequence
    return context
