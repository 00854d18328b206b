"""Spark ML vectors, wide decimals, and feature_spec with TensorFlow."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import spark_tfrecord
from support import tfrecord_files


def test_ml_vectors_become_dense_float_lists(spark, tf, out: Path) -> None:
    from pyspark.ml.linalg import DenseVector, SparseVector, VectorUDT
    from pyspark.sql.types import LongType, StructField, StructType

    schema = StructType([StructField("id", LongType()), StructField("v", VectorUDT())])
    rows = [
        (0, DenseVector([0.5, -1.0, 2.0])),
        (1, SparseVector(4, [1, 3], [7.0, -0.25])),
        (2, None),
        (3, SparseVector(2, [], [])),
    ]
    df = spark.createDataFrame(rows, schema)
    spark_tfrecord.write(df.coalesce(1), str(out))
    (path,) = tfrecord_files(out)
    tf_values = {}
    for raw in tf.data.TFRecordDataset(str(path)):
        f = tf.train.Example.FromString(raw.numpy()).features.feature
        tf_values[f["id"].int64_list.value[0]] = list(f["v"].float_list.value) if "v" in f else None
    assert tf_values == {0: [0.5, -1.0, 2.0], 1: [0.0, 7.0, 0.0, -0.25], 2: None, 3: [0.0, 0.0]}

    back = {r.id: r.v for r in spark_tfrecord.read(spark, str(out), schema=schema).collect()}
    assert back[0] == DenseVector([0.5, -1.0, 2.0]) and back[1] == DenseVector([0, 7, 0, -0.25])
    assert back[2] is None and back[3] == DenseVector([0.0, 0.0])
    assert isinstance(back[1], DenseVector)


def test_decimals_of_any_precision_and_scale(spark, out: Path) -> None:
    schema = "a decimal(38,18), b decimal(38,0), c decimal(5,5), d decimal(19,2)"
    rows = [(Decimal("1.5"), Decimal("12345678"), Decimal("0.12345"), Decimal("-1234567.5"))]
    spark_tfrecord.write(spark.createDataFrame(rows, schema), str(out))
    (row,) = spark_tfrecord.read(spark, str(out), schema=schema).collect()
    assert row.a == Decimal("1.500000000000000000") and row.b == Decimal("12345678")
    assert row.c == Decimal("0.12345") and row.d == Decimal("-1234567.50")


def test_feature_spec_reads_our_files(spark, tf, out: Path) -> None:
    ddl = "id long not null, score double, name string, tags array<string>, emb array<float>"
    schema = spark.createDataFrame([], ddl).schema
    rows = [(1, 0.5, "a", ["x", "y"], [1.0, 2.0]), (2, None, None, [], [3.0])]
    df = spark.createDataFrame(rows, schema)
    spark_tfrecord.write(df.coalesce(1), str(out))
    spec = spark_tfrecord.feature_spec(df.schema)
    assert isinstance(spec["id"], tf.io.FixedLenFeature)
    assert isinstance(spec["score"], tf.io.VarLenFeature)
    assert isinstance(spec["tags"], tf.io.RaggedFeature)
    batch = next(iter(tf.data.TFRecordDataset([str(p) for p in tfrecord_files(out)]).batch(8)))
    parsed = tf.io.parse_example(batch, spec)
    order = parsed["id"].numpy().tolist()
    assert sorted(order) == [1, 2]
    first = order.index(1)
    assert parsed["tags"].to_list()[first] == [b"x", b"y"]
    assert parsed["emb"].to_list()[1 - first] == [3.0]
    assert tf.sparse.to_dense(parsed["score"]).numpy().tolist()[first] == [0.5]
