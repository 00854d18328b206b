"""Spark ML vectors, wide decimals, feature_spec with TensorFlow, and Spark 4's newer types:
collated strings and TIME written and read, variants and intervals refused with the
alternative."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyspark
import pytest
from pyspark.sql import functions as F

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


#: Spark's version, for the types it has: a type this pyspark lacks is in no parameter list.
SPARK = tuple(int(x) for x in pyspark.__version__.split(".")[:2])
#: Each newer type written and read as its own Spark value: (DDL type, Python values, what the
#: feature holds). Collated strings from Spark 4.0, TIME from 4.1.
NEWER: dict[str, tuple[str, list[Any], str, list[Any]]] = {}
if SPARK >= (4, 0):
    NEWER["collated string"] = (
        "string collate UTF8_LCASE",
        ["Abc", "é€", ""],
        "bytes_list",
        [b"Abc", "é€".encode(), b""],
    )
if SPARK >= (4, 1):
    NEWER["time"] = (
        "time(6)",
        [dt.time(0, 0), dt.time(12, 34, 56, 789012), dt.time(23, 59, 59, 999999)],
        "int64_list",
        [0, 45_296_789_012_000, 86_399_999_999_000],
    )


# Spark 3.5 has none of these types: there, the test is not defined (rather than skipped).
if NEWER:

    @pytest.mark.parametrize("case", list(NEWER))
    def test_newer_types_round_trip_and_tensorflow_reads_them(
        spark: Any, tf: Any, out: Path, case: str
    ) -> None:
        """A collated string is written as a string and read back with the given schema's
        collation (inference: a plain string); a TIME is its nanoseconds since midnight."""
        ddl, values, kind, stored = NEWER[case]
        if case == "time":  # Spark's file sources write and read TIME only when asked to
            df = spark.createDataFrame([(0, values[0])], f"id bigint, v {ddl}")
            with pytest.raises(Exception, match=r"\[UNSUPPORTED_TIME_TYPE\]"):
                spark_tfrecord.write(df, str(out / "refused"))
            spark.conf.set("spark.sql.timeType.enabled", "true")
        try:
            _newer_round_trip(spark, tf, out, case, ddl, values, kind, stored)
        finally:
            spark.conf.unset("spark.sql.timeType.enabled")

    def _newer_round_trip(
        spark: Any,
        tf: Any,
        out: Path,
        case: str,
        ddl: str,
        values: list[Any],
        kind: str,
        stored: list[Any],
    ) -> None:
        schema = f"id bigint, v {ddl}, vs array<{ddl}>"
        rows = [(i, v, [v, v]) for i, v in enumerate(values)] + [(len(values), None, None)]
        df = spark.createDataFrame(rows, schema)
        spark_tfrecord.write(df.coalesce(1), str(out))
        (path,) = tfrecord_files(out)
        features = [
            tf.train.Example.FromString(r.numpy()).features.feature
            for r in tf.data.TFRecordDataset(str(path))
        ]
        assert [list(getattr(f["v"], kind).value) for f in features[:-1]] == [[s] for s in stored]
        assert [list(getattr(f["vs"], kind).value) for f in features[:-1]] == [
            [s, s] for s in stored
        ]
        assert "v" not in features[-1] and "vs" not in features[-1]
        spec = spark_tfrecord.feature_spec(df.schema)
        batch = next(iter(tf.data.TFRecordDataset(str(path)).batch(8)))
        assert tf.io.parse_example(batch, spec)["vs"].to_list() == [[s, s] for s in stored] + [[]]
        back = spark_tfrecord.read(spark, str(out), schema=schema)
        assert back.schema == df.schema
        assert sorted(back.collect()) == sorted(df.collect())
        inferred = spark_tfrecord.read(spark, str(out)).schema
        assert inferred["v"].dataType.simpleString() == (
            "string" if kind == "bytes_list" else "bigint"
        )
        if case == "collated string":  # the collation compares: 'ABC' is 'Abc'
            assert [r.id for r in back.where("v = 'ABC'").collect()] == [0]


#: Types refused with the one line to use instead: (the rows' SQL, the alternative named).
REFUSED = {
    "interval day to second": ("interval '1 02:03:04.5' day to second", "cast(d AS string)"),
    "interval year to month": ("interval '2-3' year to month", "cast(d AS string)"),
}
if SPARK >= (4, 0):
    REFUSED["variant"] = ("parse_json('{\"a\": [1, 2]}')", "to_json(d)")


@pytest.mark.parametrize("case", list(REFUSED))
def test_variants_and_intervals_are_refused_with_the_alternative(
    spark: Any, out: Path, case: str
) -> None:
    sql, alternative = REFUSED[case]
    df = spark.sql(f"SELECT 1L AS id, {sql} AS d")
    with pytest.raises(Exception, match="TFRECORD_UNSUPPORTED_TYPE") as failure:
        spark_tfrecord.write(df, str(out))
    assert f"Column 'd' has type {case}, which TFRecord cannot hold" in str(failure.value)
    assert alternative in str(failure.value)
    assert not out.exists()
    spark_tfrecord.write(df.select("id", F.expr(alternative).alias("d")), str(out))
    with pytest.raises(Exception, match="TFRECORD_UNSUPPORTED_TYPE"):
        spark_tfrecord.read(spark, str(out), schema=df.schema).collect()
    back = spark_tfrecord.read(spark, str(out), schema="id bigint, d string")
    undo = "parse_json(d)" if case == "variant" else f"cast(d AS {case})"
    got = back.select(F.expr(undo).alias("d"))
    assert got.schema["d"].dataType == df.schema["d"].dataType
    as_text = F.expr(alternative).alias("d")
    assert got.select(as_text).collect() == df.select(as_text).collect()
