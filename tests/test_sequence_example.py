"""recordType SequenceExample: context features and feature lists, both ways with TensorFlow."""

from __future__ import annotations

from pathlib import Path

import spark_tfrecord
from support import tfrecord_files

SCHEMA = (
    "id long, label string, tokens array<long>, frames array<array<float>>, "
    "words array<array<string>>"
)
ROWS = [
    (0, "a", [1, 2], [[0.5, 1.5], [], [2.5]], [["x"], ["y", "z"]]),
    (1, None, [], [], [[]]),
    (2, "c", None, None, None),
]


def test_round_trip(spark, out: Path) -> None:
    df = spark.createDataFrame(ROWS, SCHEMA)
    spark_tfrecord.write(df, str(out), record_type="SequenceExample")
    back = spark_tfrecord.read(spark, str(out), record_type="SequenceExample", schema=SCHEMA)
    assert sorted(tuple(r) for r in back.collect()) == ROWS
    inferred = spark_tfrecord.read(spark, str(out), record_type="SequenceExample")
    assert inferred.schema.simpleString() == (
        "struct<id:bigint,label:string,tokens:array<bigint>,"
        "frames:array<array<float>>,words:array<array<string>>>"
    )
    got = {r.id: r for r in inferred.collect()}
    assert got[0].frames == [[0.5, 1.5], [], [2.5]] and got[1].words == [[]]


def test_tensorflow_parses_what_we_write(spark, tf, out: Path) -> None:
    df = spark.createDataFrame(ROWS, SCHEMA)
    spark_tfrecord.write(df.coalesce(1), str(out), record_type="SequenceExample")
    context_spec, sequence_spec = spark_tfrecord.feature_spec(
        df.schema, record_type="SequenceExample"
    )
    (path,) = tfrecord_files(out)
    by_id = {}
    for raw in tf.data.TFRecordDataset(str(path)):
        ctx, seq = tf.io.parse_single_sequence_example(raw, context_spec, sequence_spec)
        by_id[int(tf.sparse.to_dense(ctx["id"]).numpy()[0])] = (ctx, seq)
    ctx, seq = by_id[0]
    assert seq["frames"].to_list() == [[0.5, 1.5], [], [2.5]]
    assert seq["words"].to_list() == [[b"x"], [b"y", b"z"]]
    assert ctx["tokens"].numpy().tolist() == [1, 2]
    assert tf.sparse.to_dense(ctx["label"]).numpy().tolist() == [b"a"]
    ctx, seq = by_id[1]
    assert seq["frames"].to_list() == [] and seq["words"].to_list() == [[]]
    # The raw protobuf: feature lists present even when empty; null columns absent.
    raw = next(iter(tf.data.TFRecordDataset(str(path)).skip(1))).numpy()
    message = tf.train.SequenceExample.FromString(raw)
    assert sorted(message.feature_lists.feature_list) == ["frames", "words"]
    assert len(message.feature_lists.feature_list["frames"].feature) == 0
    assert sorted(message.context.feature) == ["id", "tokens"]


def test_we_read_what_tensorflow_writes(spark, tf, tmp_path: Path) -> None:
    F = tf.train.Feature
    se = tf.train.SequenceExample(
        context=tf.train.Features(feature={"id": F(int64_list=tf.train.Int64List(value=[7]))}),
        feature_lists=tf.train.FeatureLists(
            feature_list={
                "ragged": tf.train.FeatureList(
                    feature=[
                        F(int64_list=tf.train.Int64List(value=[1, 2, 3])),
                        F(int64_list=tf.train.Int64List(value=[])),
                        F(),
                        F(int64_list=tf.train.Int64List(value=[-(2**63)])),
                    ]
                ),
                "empty": tf.train.FeatureList(),
                "text": tf.train.FeatureList(
                    feature=[F(bytes_list=tf.train.BytesList(value=[b"\xff", "é".encode()]))]
                ),
            }
        ),
    )
    path = tmp_path / "se.tfrecord"
    with tf.io.TFRecordWriter(str(path)) as w:
        w.write(se.SerializeToString())
        w.write(tf.train.SequenceExample().SerializeToString())
    schema = (
        "id long, ragged array<array<long>>, empty array<array<float>>, "
        "text array<array<binary>>, missing array<array<long>>"
    )
    rows = spark_tfrecord.read(
        spark, str(path), record_type="SequenceExample", schema=schema
    ).collect()
    assert rows[0].id == 7 and rows[0].ragged == [[1, 2, 3], [], [], [-(2**63)]]
    assert rows[0].empty == [] and rows[0].missing is None
    assert [[bytes(b) for b in step] for step in rows[0].text] == [[b"\xff", "é".encode()]]
    assert tuple(rows[1]) == (None, None, None, None, None)
    inferred = spark_tfrecord.read(spark, str(path), record_type="SequenceExample")
    # Context first, then feature lists, each in the order protobuf serialized the map.
    types = [(f.name, f.dataType.simpleString()) for f in inferred.schema.fields]
    assert types[0] == ("id", "bigint")
    assert sorted(types[1:]) == [
        ("empty", "array<array<string>>"),
        ("ragged", "array<array<bigint>>"),
        ("text", "array<array<binary>>"),  # a step holds b"\xff": not UTF-8, so binary
    ]
    (first,) = [r for r in inferred.collect() if r.id == 7]
    assert [[bytes(b) for b in step] for step in first.text] == [[b"\xff", "é".encode()]]
