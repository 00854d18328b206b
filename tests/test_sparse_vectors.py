"""Spark ML vectors written with vector_layout="sparse": tf.io.SparseFeature's layout
(c/indices, c/values, c/size), read back by us, by TensorFlow, and by schema inference."""

from __future__ import annotations

import math
import struct
from pathlib import Path

import pytest

import spark_tfrecord
from support import tfrecord_files
from test_planning_warnings import driver_log


def _bits(x: float) -> bytes:
    return struct.pack("<d", x)


def _f32(x: float) -> float:
    """``x`` rounded to float32, as the values are written."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


@pytest.fixture(scope="module")
def features(spark):  # type: ignore[no-untyped-def]
    """HashingTF (2^20) and OneHotEncoder columns of a few rows, with their ML metadata."""
    from pyspark.ml.feature import HashingTF, OneHotEncoder

    words = [f"w{i}" for i in range(60)]
    rows = [(i, [words[(i * 7 + j) % 60] for j in range(50 + i)], float(i % 4)) for i in range(6)]
    df = spark.createDataFrame(rows, "id long, tokens array<string>, cat double")
    df = HashingTF(numFeatures=2**20, inputCol="tokens", outputCol="tf").transform(df)
    model = OneHotEncoder(inputCols=["cat"], outputCols=["onehot"]).fit(df)
    return model.transform(df).select("id", "tf", "onehot")


def test_hashing_tf_and_one_hot_round_trip_small(spark, features, out: Path) -> None:
    spark_tfrecord.write(features.coalesce(1), str(out), vector_layout="sparse")
    (path,) = tfrecord_files(out)
    rows = features.count()
    # A 2^20 vector with about 50 non-zeros: dense it is 4 MB a row; sparse, well under 2 KB.
    assert path.stat().st_size / rows < 2048

    expected = {r.id: r for r in features.collect()}
    back = spark_tfrecord.read(spark, str(out), schema=features.schema).collect()
    assert len(back) == rows
    for r in back:
        for column in ("tf", "onehot"):
            want, got = expected[r.id][column], r[column]
            assert got.size == want.size
            assert got.indices.tolist() == want.indices.tolist()
            # Counts and one-hot ones are exact in float32.
            assert got.values.tolist() == [_f32(v) for v in want.values.tolist()]
    assert {r.tf.size for r in back} == {2**20}
    assert {r.onehot.size for r in back} == {3}  # 4 categories, the last dropped


def test_parse_example_gives_a_sparse_tensor_equal_to_the_column(
    spark, tf, features, out: Path
) -> None:
    spark_tfrecord.write(features.coalesce(1), str(out), vector_layout="sparse")
    spec = spark_tfrecord.feature_spec(features.schema, vector_layout="sparse")
    assert spec["tf"] == tf.io.SparseFeature(
        index_key="tf/indices", value_key="tf/values", dtype=tf.float32, size=2**20
    )
    assert spec["onehot"].size == 3  # from OneHotEncoder's ml_attr
    files = [str(p) for p in tfrecord_files(out)]
    batch = next(iter(tf.data.TFRecordDataset(files).batch(64)))
    parsed = tf.io.parse_example(batch, spec)
    ids = parsed["id"].values.numpy().tolist()  # id is nullable: a VarLenFeature
    expected = {r.id: r for r in features.collect()}
    for column in ("tf", "onehot"):
        sparse = parsed[column]
        assert isinstance(sparse, tf.SparseTensor)
        size = expected[ids[0]][column].size
        assert sparse.dense_shape.numpy().tolist() == [len(ids), size]
        indices = sparse.indices.numpy().tolist()
        values = sparse.values.numpy().tolist()
        want_indices, want_values = [], []
        for row, i in enumerate(ids):
            v = expected[i][column]
            want_indices += [[row, j] for j in v.indices.tolist()]
            want_values += [_f32(x) for x in v.values.tolist()]
        assert indices == want_indices
        assert values == want_values


def test_inference_gives_the_vector_column_back(spark, features, out: Path) -> None:
    from pyspark.ml.linalg import VectorUDT

    spark_tfrecord.write(features.coalesce(1), str(out), vector_layout="sparse")
    df = spark_tfrecord.read(spark, str(out))
    assert [(f.name, type(f.dataType)) for f in df.schema.fields] == [
        ("id", type(df.schema["id"].dataType)),
        ("tf", VectorUDT),
        ("onehot", VectorUDT),
    ]
    expected = {r.id: r.tf for r in features.collect()}
    for r in df.collect():
        assert r.tf.size == 2**20
        assert r.tf.indices.tolist() == expected[r.id].indices.tolist()
        assert r.tf.values.tolist() == expected[r.id].values.tolist()


def test_nan_and_negative_zero_bits_round_trip_and_explicit_zeros_stay(
    spark, tf, out: Path
) -> None:
    from pyspark.ml.linalg import DenseVector, SparseVector, VectorUDT
    from pyspark.sql.types import LongType, StructField, StructType

    schema = StructType([StructField("id", LongType()), StructField("v", VectorUDT())])
    rows = [
        (0, DenseVector([0.0, -0.0, math.nan, 1.5, 0.0])),
        (1, SparseVector(6, [0, 2, 5], [0.0, 0.1, -0.0])),
        (2, None),
        (3, SparseVector(3, [], [])),
    ]
    spark_tfrecord.write(
        spark.createDataFrame(rows, schema).coalesce(1), str(out), vector_layout="sparse"
    )
    (path,) = tfrecord_files(out)
    features = {}
    for raw in tf.data.TFRecordDataset(str(path)):
        f = tf.train.Example.FromString(raw.numpy()).features.feature
        features[f["id"].int64_list.value[0]] = sorted(k for k in f if k != "id")
    assert features[2] == []  # a null vector writes no feature
    assert features[0] == ["v/indices", "v/size", "v/values"]

    back = {r.id: r.v for r in spark_tfrecord.read(spark, str(out), schema=schema).collect()}
    dense = back[0]
    assert isinstance(dense, SparseVector) and dense.size == 5
    assert dense.indices.tolist() == [1, 2, 3]  # -0.0 and NaN are not zero by bits
    assert [_bits(x) for x in dense.values.tolist()] == [
        _bits(-0.0),
        _bits(math.nan),
        _bits(1.5),
    ]
    kept = back[1]
    assert kept.size == 6 and kept.indices.tolist() == [0, 2, 5]  # explicit zeros kept
    assert [_bits(x) for x in kept.values.tolist()] == [_bits(0.0), _bits(_f32(0.1)), _bits(-0.0)]
    assert back[2] is None
    assert back[3] == SparseVector(3, [], [])


def test_feature_spec_needs_a_size(spark) -> None:
    from pyspark.ml.linalg import VectorUDT
    from pyspark.sql.types import StructField, StructType

    schema = StructType([StructField("v", VectorUDT())])
    with pytest.raises(ValueError, match=r"Column 'v' .*sizes=\{'v': N\}"):
        spark_tfrecord.feature_spec(schema, vector_layout="sparse")
    spec = spark_tfrecord.feature_spec(schema, vector_layout="sparse", sizes={"v": 7})
    assert (spec["v"].index_key, spec["v"].value_key, spec["v"].size) == (
        "v/indices",
        "v/values",
        7,
    )
    # The dense layout (the default) is unchanged: a ragged list of every value.
    assert type(spark_tfrecord.feature_spec(schema)["v"]).__name__ == "RaggedFeature"


def test_a_bad_vector_layout_fails_at_planning_listing_the_values(spark, out: Path) -> None:
    df = spark.createDataFrame([(1,)], "id long")
    with pytest.raises(Exception, match=r"vectorLayout.*dense, sparse"):
        spark_tfrecord.write(df, str(out), vectorLayout="csr")
    assert not out.exists()


def test_a_vector_written_sparse_is_held_no_absent_column_warning(spark, out: Path) -> None:
    from pyspark.ml.linalg import SparseVector, VectorUDT
    from pyspark.sql.types import StructField, StructType

    schema = StructType([StructField("v", VectorUDT())])
    df = spark.createDataFrame([(SparseVector(4, [1], [2.0]),)], schema)
    spark_tfrecord.write(df, str(out), vector_layout="sparse")
    with driver_log(spark) as log:
        rows = spark_tfrecord.read(spark, str(out), schema=schema).collect()
    assert [r.v for r in rows] == [SparseVector(4, [1], [2.0])]
    assert log == []  # the feature "v" is absent, but "v/indices" holds the column
    with driver_log(spark) as log:
        spark_tfrecord.read(spark, str(out), schema="w long").collect()
    assert len(log) == 1 and "column(s) 'w'" in log[0]


def test_vectors_in_a_struct_and_in_sequence_example_context(
    spark, tf, features, out: Path
) -> None:
    """A struct's vector leaf is written sparse under its path (`s/tf/indices`, ...), and a
    SequenceExample writes its vectors sparse among the context features; both read back
    equal, and TensorFlow parses both with feature_spec's SparseFeatures."""
    from pyspark.sql.types import StructType

    sizes = {"s.tf": 2**20, "s.onehot": 3}
    nested = features.selectExpr("id", "named_struct('tf', tf, 'onehot', onehot) as s")
    spark_tfrecord.write(nested.coalesce(1), str(out / "struct"), vector_layout="sparse")
    expected = {r.id: r for r in features.collect()}
    back = spark_tfrecord.read(spark, str(out / "struct"), schema=nested.schema).collect()
    assert sorted(r.id for r in back) == sorted(expected)
    for r in back:
        for column in ("tf", "onehot"):
            want, got = expected[r.id][column], r.s[column]
            assert (got.size, got.indices.tolist()) == (want.size, want.indices.tolist())
            assert got.values.tolist() == [_f32(v) for v in want.values.tolist()]

    spec = spark_tfrecord.feature_spec(nested.schema, vector_layout="sparse", sizes=sizes)
    assert (spec["s/tf"].index_key, spec["s/tf"].value_key) == ("s/tf/indices", "s/tf/values")
    files = [str(p) for p in tfrecord_files(out / "struct")]
    parsed = tf.io.parse_example(next(iter(tf.data.TFRecordDataset(files).batch(64))), spec)
    ids = parsed["id"].values.numpy().tolist()
    tensor = parsed["s/tf"]
    assert tensor.dense_shape.numpy().tolist() == [len(ids), 2**20]
    got = [(ids[row], int(i)) for row, i in tensor.indices.numpy().tolist()]
    assert sorted(got) == sorted((i, int(j)) for i in ids for j in expected[i].tf.indices)

    # SequenceExample: the vector is a context feature, sparse; the steps a feature list.
    steps = features.selectExpr("id", "tf", "array(array(id), array(id, id + 1)) as steps")
    spark_tfrecord.write(
        steps.coalesce(1),
        str(out / "sequence"),
        vector_layout="sparse",
        record_type="SequenceExample",
    )
    schema: StructType = steps.schema
    back = spark_tfrecord.read(
        spark, str(out / "sequence"), schema=schema, record_type="SequenceExample"
    ).collect()
    for r in back:
        want = expected[r.id].tf
        assert (r.tf.size, r.tf.indices.tolist()) == (want.size, want.indices.tolist())
        assert r.steps == [[r.id], [r.id, r.id + 1]]
    context, sequence = spark_tfrecord.feature_spec(
        schema, record_type="SequenceExample", vector_layout="sparse"
    )
    # parse_sequence_example takes no SparseFeature in the context: the parts come as lists.
    assert sorted(context) == ["id", "tf/indices", "tf/size", "tf/values"]
    files = [str(p) for p in tfrecord_files(out / "sequence")]
    seen = []
    for raw in tf.data.TFRecordDataset(files):
        ctx, seq = tf.io.parse_single_sequence_example(raw, context, sequence)
        i = int(ctx["id"].values.numpy()[0])
        vector = tf.SparseTensor(ctx["tf/indices"][:, None], ctx["tf/values"], ctx["tf/size"])
        assert vector.dense_shape.numpy().tolist() == [2**20]
        assert vector.indices.numpy().ravel().tolist() == expected[i].tf.indices.tolist()
        assert vector.values.numpy().tolist() == [_f32(v) for v in expected[i].tf.values]
        assert seq["steps"].to_list() == [[i], [i, i + 1]]
        seen.append(i)
    assert sorted(seen) == sorted(expected)
