"""Struct columns and arrays of structs, as path-named features (`image/object/bbox/xmin`)."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest
from pyspark.sql import Row

import spark_tfrecord
from support import tfrecord_files, write_with_tensorflow
from test_roundtrip import f32

SCHEMA = (
    "id long not null, "
    "image struct<encoded binary, height bigint, "
    "object struct<xmin array<float>, label array<bigint>>>, "
    "boxes array<struct<x float, label bigint, name string, inner struct<a int, b double>>>"
)
ROWS = [
    (
        1,
        (b"\xff\xd8\x00", 480, ([0.5, 0.25], [1, 2])),
        [(0.125, 3, "a", (1, 2.0)), (0.25, 4, "é", (2, -0.0))],
    ),
    (2, None, []),
    (3, (None, 5, None), None),
    (4, (b"", None, ([], [])), [(float("inf"), -(2**63), "", (-(2**31), 1.5))]),
    (5, (None, None, None), [(0.0, 0, "z", (0, 0.0))]),
]
# Row 5's struct has every leaf null: no feature is written, so it reads back null.
EXPECTED = [r if r[0] != 5 else (5, None, r[2]) for r in ROWS]

SEQ_SCHEMA = (
    "id long, user struct<name string, age int>, "
    "events array<struct<kind string, at bigint, scores array<float>, where struct<x float>>>"
)
SEQ_ROWS = [
    (1, ("ann", 30), [("click", 10, [0.5, 1.5], (1.0,)), ("view", 11, [], (2.5,))]),
    (2, None, []),
    (3, ("bob", None), None),
]


def as_tuples(rows: list[Row]) -> list[object]:
    def plain(v: object) -> object:
        if isinstance(v, Row):
            return tuple(plain(x) for x in v)
        if isinstance(v, list):
            return [plain(x) for x in v]
        if isinstance(v, bytearray):
            return bytes(v)
        return v

    return sorted((plain(r) for r in rows), key=lambda r: r[0])  # type: ignore[index]


def test_round_trip_structs_and_arrays_of_structs(spark, out: Path) -> None:
    df = spark.createDataFrame(ROWS, SCHEMA)
    spark_tfrecord.write(df, str(out))
    back = spark_tfrecord.read(spark, str(out), schema=df.schema)
    assert as_tuples(back.collect()) == EXPECTED
    # Without a schema: one column per feature, as before nesting existed.
    flat = spark_tfrecord.read(spark, str(out))
    assert flat.schema.simpleString() == (
        "struct<id:bigint,image/encoded:binary,image/height:bigint,image/object/xmin:array<float>,"
        "image/object/label:array<bigint>,boxes/x:array<float>,boxes/label:array<bigint>,"
        "boxes/name:array<string>,boxes/inner/a:array<bigint>,boxes/inner/b:array<float>>"
    )
    got = {r.id: r for r in flat.collect()}
    assert got[1]["boxes/inner/a"] == [1, 2] and got[2]["boxes/x"] == []
    assert got[3]["boxes/x"] is None and got[4]["image/object/label"] == []
    assert back.count() == flat.count() == len(ROWS)


def test_the_features_tensorflow_sees(spark, tf, out: Path) -> None:
    df = spark.createDataFrame(ROWS, SCHEMA)
    spark_tfrecord.write(df.coalesce(1), str(out))
    (path,) = tfrecord_files(out)
    by_id = {}
    for raw in tf.data.TFRecordDataset(str(path)):
        example = tf.train.Example.FromString(raw.numpy())
        by_id[example.features.feature["id"].int64_list.value[0]] = example.features.feature
    assert sorted(by_id[1]) == [
        "boxes/inner/a", "boxes/inner/b", "boxes/label", "boxes/name", "boxes/x",
        "id", "image/encoded", "image/height", "image/object/label", "image/object/xmin",
    ]  # fmt: skip
    assert list(by_id[1]["boxes/name"].bytes_list.value) == [b"a", "é".encode()]
    assert [struct.pack("<f", v) for v in by_id[1]["boxes/inner/b"].float_list.value] == [
        struct.pack("<f", 2.0),
        struct.pack("<f", -0.0),
    ]
    # A null struct, a null leaf, a null array of structs: nothing written for them.
    assert sorted(by_id[2]) == [
        "boxes/inner/a", "boxes/inner/b", "boxes/label", "boxes/name", "boxes/x", "id",
    ]  # fmt: skip
    assert all(len(by_id[2][k].float_list.value) == 0 for k in ("boxes/x", "boxes/inner/b"))
    assert sorted(by_id[3]) == ["id", "image/height"]
    assert sorted(by_id[5]) == [
        "boxes/inner/a", "boxes/inner/b", "boxes/label", "boxes/name", "boxes/x", "id",
    ]  # fmt: skip


def test_tensorflow_parses_nested_data_with_feature_spec(spark, tf, out: Path) -> None:
    df = spark.createDataFrame(ROWS, SCHEMA)
    spark_tfrecord.write(df.coalesce(1), str(out))
    spec = spark_tfrecord.feature_spec(df.schema)
    assert sorted(spec) == [
        "boxes/inner/a", "boxes/inner/b", "boxes/label", "boxes/name", "boxes/x",
        "id", "image/encoded", "image/height", "image/object/label", "image/object/xmin",
    ]  # fmt: skip
    (path,) = tfrecord_files(out)
    batch = next(
        iter(
            tf.data.TFRecordDataset(str(path)).batch(10).map(lambda r: tf.io.parse_example(r, spec))
        )
    )
    ids = batch["id"].numpy().tolist()
    row = {i: n for n, i in enumerate(ids)}
    xs = batch["boxes/x"].to_list()
    assert [struct.pack("<f", v) for v in xs[row[1]]] == [
        struct.pack("<f", f32(0.125)),
        struct.pack("<f", 0.25),
    ]
    assert xs[row[4]] == [float("inf")] and xs[row[2]] == []
    assert batch["boxes/label"].to_list()[row[4]] == [-(2**63)]
    assert batch["boxes/name"].to_list()[row[1]] == [b"a", "é".encode()]
    heights = tf.sparse.to_dense(batch["image/height"]).numpy().tolist()
    assert heights[row[1]] == [480] and heights[row[3]] == [5] and heights[row[2]] == [0]
    assert batch["image/object/xmin"].to_list()[row[1]] == [0.5, 0.25]
    encoded = tf.sparse.to_dense(batch["image/encoded"]).numpy().tolist()
    assert encoded[row[1]] == [b"\xff\xd8\x00"] and encoded[row[4]] == [b""]


def test_sequence_example_arrays_of_structs_are_steps(spark, tf, out: Path) -> None:
    df = spark.createDataFrame(SEQ_ROWS, SEQ_SCHEMA)
    spark_tfrecord.write(df.coalesce(1), str(out), record_type="SequenceExample")
    back = spark_tfrecord.read(spark, str(out), record_type="SequenceExample", schema=df.schema)
    assert as_tuples(back.collect()) == [
        (1, ("ann", 30), [("click", 10, [0.5, 1.5], (1.0,)), ("view", 11, [], (2.5,))]),
        (2, None, []),
        (3, ("bob", None), None),
    ]
    context_spec, sequence_spec = spark_tfrecord.feature_spec(
        df.schema, record_type="SequenceExample"
    )
    assert sorted(context_spec) == ["id", "user/age", "user/name"]
    assert sorted(sequence_spec) == [
        "events/at", "events/kind", "events/scores", "events/where/x",
    ]  # fmt: skip
    (path,) = tfrecord_files(out)
    parsed = {}
    for raw in tf.data.TFRecordDataset(str(path)):
        ctx, seq = tf.io.parse_single_sequence_example(raw, context_spec, sequence_spec)
        parsed[int(tf.sparse.to_dense(ctx["id"]).numpy()[0])] = (ctx, seq, raw.numpy())
    ctx, seq, raw = parsed[1]
    assert seq["events/kind"].numpy().tolist() == [b"click", b"view"]
    assert seq["events/at"].numpy().tolist() == [10, 11]
    assert seq["events/scores"].to_list() == [[0.5, 1.5], []]
    assert seq["events/where/x"].numpy().tolist() == [1.0, 2.5]
    assert tf.sparse.to_dense(ctx["user/name"]).numpy().tolist() == [b"ann"]
    message = tf.train.SequenceExample.FromString(raw)
    steps = message.feature_lists.feature_list["events/kind"].feature
    assert [list(s.bytes_list.value) for s in steps] == [[b"click"], [b"view"]]
    ctx, seq, raw = parsed[2]
    assert seq["events/kind"].numpy().tolist() == []
    message = tf.train.SequenceExample.FromString(raw)
    assert len(message.feature_lists.feature_list["events/at"].feature) == 0
    ctx, seq, raw = parsed[3]
    message = tf.train.SequenceExample.FromString(raw)
    assert sorted(message.feature_lists.feature_list) == []
    assert sorted(message.context.feature) == ["id", "user/name"]


def object_detection_examples(tf) -> list[tuple[bytes, object]]:
    """tf.train.Examples in the layout of TensorFlow's Object Detection API."""

    def b(*v: bytes) -> object:
        return tf.train.Feature(bytes_list=tf.train.BytesList(value=list(v)))

    def i(*v: int) -> object:
        return tf.train.Feature(int64_list=tf.train.Int64List(value=list(v)))

    def f(*v: float) -> object:
        return tf.train.Feature(float_list=tf.train.FloatList(value=list(v)))

    objects = [
        [(0.1, 0.2, 0.5, 0.6, b"cat", 1), (0.3, 0.1, 0.9, 0.45, b"dog", 2)],
        [(0.0, 0.0, 1.0, 1.0, b"person", 3)] * 3,
        [],
    ]
    out = []
    for n, objs in enumerate(objects):
        encoded = b"\xff\xd8\xff\xe0" + os.urandom(64)
        feature = {
            "image/encoded": b(encoded),
            "image/format": b(b"jpeg"),
            "image/height": i(480 + n),
            "image/width": i(640),
            "image/source_id": b(str(n).encode()),
            "image/object/bbox/xmin": f(*[o[0] for o in objs]),
            "image/object/bbox/ymin": f(*[o[1] for o in objs]),
            "image/object/bbox/xmax": f(*[o[2] for o in objs]),
            "image/object/bbox/ymax": f(*[o[3] for o in objs]),
            "image/object/class/text": b(*[o[4] for o in objs]),
            "image/object/class/label": i(*[o[5] for o in objs]),
        }
        example = tf.train.Example(features=tf.train.Features(feature=feature))
        out.append((encoded, example))
    return out


def tree(data_type: object) -> object:
    from pyspark.sql.types import StructType

    if isinstance(data_type, StructType):
        return {f.name: tree(f.dataType) for f in data_type.fields}
    return data_type.simpleString()  # type: ignore[attr-defined]


def test_object_detection_files_read_with_inferred_nesting(spark, tf, tmp_path: Path) -> None:
    made = object_detection_examples(tf)
    write_with_tensorflow(tf, tmp_path / "od", [e for _, e in made])
    df = spark_tfrecord.read(spark, str(tmp_path / "od"), inferNesting=True)
    # Fields come in the order TensorFlow wrote the features (its map order): compare by name.
    floats = "array<float>"
    assert tree(df.schema) == {
        "image": {
            "encoded": "binary",
            "format": "string",
            "height": "bigint",
            "width": "bigint",
            "source_id": "string",
            "object": {
                "bbox": {"xmin": floats, "ymin": floats, "xmax": floats, "ymax": floats},
                "class": {"text": "array<string>", "label": "array<bigint>"},
            },
        }
    }
    again = spark_tfrecord.read(spark, str(tmp_path / "od"), inferNesting=True)
    assert again.schema == df.schema  # deterministic
    rows = sorted(df.collect(), key=lambda r: r.image.height)
    for (encoded, example), row in zip(made, rows):
        feature = example.features.feature
        assert bytes(row.image.encoded) == encoded
        assert row.image.height == feature["image/height"].int64_list.value[0]
        for side in ("xmin", "ymin", "xmax", "ymax"):
            want = list(feature[f"image/object/bbox/{side}"].float_list.value)
            assert row.image.object.bbox[side] == want  # float32 both sides: exact
        assert row.image.object["class"].label == list(
            feature["image/object/class/label"].int64_list.value
        )
        assert [t.encode() for t in row.image.object["class"].text] == list(
            feature["image/object/class/text"].bytes_list.value
        )
    # Pruned: the query of two fields reads those features only.
    heights = df.select("image.height", "image.object.class.label").collect()
    assert sorted((r.height, r.label) for r in heights) == [
        (480, [1, 2]),
        (481, [3, 3, 3]),
        (482, []),
    ]
    plan = df.select("image.height")._jdf.queryExecution().executedPlan().toString()
    assert "ReadSchema: struct<image:struct<height:bigint>>" in plan


def test_object_detection_lists_zip_into_an_array_of_structs(spark, tf, tmp_path: Path) -> None:
    made = object_detection_examples(tf)
    write_with_tensorflow(tf, tmp_path / "od", [e for _, e in made])
    schema = (
        "image struct<height bigint, object array<struct<"
        "bbox struct<xmin float, ymin float, xmax float, ymax float>, "
        "class struct<text string, label int>>>>"
    )
    rows = sorted(
        spark_tfrecord.read(spark, str(tmp_path / "od"), schema=schema).collect(),
        key=lambda r: r.image.height,
    )
    first = rows[0].image.object
    assert [(o.bbox.xmin, o.bbox.ymax, o["class"].text, o["class"].label) for o in first] == [
        (f32(0.1), f32(0.6), "cat", 1),
        (f32(0.3), f32(0.45), "dog", 2),
    ]
    assert len(rows[1].image.object) == 3 and rows[2].image.object == []


def test_pruning_keeps_unselected_features_on_the_wire(spark, out: Path) -> None:
    df = spark.createDataFrame(ROWS, SCHEMA)
    spark_tfrecord.write(df, str(out))
    # image/encoded is a bytes feature: read as bigint it fails, unless it is never decoded.
    wrong = (
        "id long, image struct<encoded bigint, height bigint>, "
        "boxes array<struct<x bigint, label bigint>>"
    )

    def query() -> object:  # a new plan each time: a DataFrame keeps the plan it optimized
        return (
            spark_tfrecord.read(spark, str(out), schema=wrong)
            .where("image.height > 6")
            .select("id", "image.height", "boxes.label")
        )

    assert [tuple(r) for r in query().collect()] == [(1, 480, [3, 4])]
    with pytest.raises(Exception, match=r"Column 'image.encoded' \(bigint\) cannot be read"):
        spark_tfrecord.read(spark, str(out), schema=wrong).select("image").collect()
    # Spark's own switch turns it off: then the whole struct is read, and fails the same way.
    spark.conf.set("spark.sql.optimizer.nestedSchemaPruning.enabled", "false")
    try:
        with pytest.raises(Exception, match=r"Column 'image.encoded'"):
            query().collect()  # type: ignore[attr-defined]
        full = spark_tfrecord.read(spark, str(out), schema=SCHEMA).select("id", "image.height")
        assert sorted(tuple(r) for r in full.collect()) == [
            (1, 480), (2, None), (3, 5), (4, None), (5, None),
        ]  # fmt: skip
    finally:
        spark.conf.unset("spark.sql.optimizer.nestedSchemaPruning.enabled")


def test_partitioned_nested_write_and_count(spark, out: Path) -> None:
    df = spark.createDataFrame(ROWS, SCHEMA).selectExpr("*", "id % 2 as part")
    df.write.format("tfrecord").partitionBy("part").save(str(out))
    back = spark_tfrecord.read(spark, str(out), schema=SCHEMA)
    assert back.count() == len(ROWS)
    got = as_tuples(back.drop("part").collect())
    assert got == EXPECTED
    assert sorted(r.part for r in back.select("part", "image.height").collect()) == [0, 0, 1, 1, 1]
