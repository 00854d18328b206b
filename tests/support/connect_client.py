"""A Spark Connect client of test_connect's server, in a process of its own.

``python -m support.connect_client URL OUT MALFORMED TRUNCATED`` goes through reads, writes,
inference, partitions, gzip, SequenceExample, nested columns and their pruning, a TFDS dataset, the
corrupt-record column, the errors for bad options, damaged files and bad values (with their
conditions) and `add_jar` on a second session, and
prints what it saw as one JSON line (``RESULT {...}``) for the tests to assert on.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Callable

# TFDS's feature classes, as its features.json names them.
TFDS = "tensorflow_datasets.core.features."
TFDS_FEATURES = {
    "pythonClassName": TFDS + "features_dict.FeaturesDict",
    "featuresDict": {"features": {
        "id": {"pythonClassName": TFDS + "tensor_feature.Tensor",
               "tensor": {"dtype": "int64", "shape": {}, "encoding": "none"}},
        "text": {"pythonClassName": TFDS + "text_feature.Text", "text": {}},
        "objects": {"pythonClassName": TFDS + "sequence_feature.Sequence", "sequence": {
            "length": "-1", "feature": {
                "pythonClassName": TFDS + "features_dict.FeaturesDict",
                "featuresDict": {"features": {
                    "bbox": {"pythonClassName": TFDS + "bounding_boxes.BBoxFeature",
                             "boundingBox": {"shape": {"dimensions": ["4"]},
                                             "dtype": "float32"}},
                    "label": {"pythonClassName": TFDS + "class_label_feature.ClassLabel",
                              "classLabel": {"numClasses": "3"}}}}}}}}},
}  # fmt: skip


#: The rows whose TFDV statistics a client computes through the server (test_connect compares
#: them with a classic session's of the same rows): numbers, a list, strings, nulls.
STATS_EXPRS = [
    "id",
    "cast(id % 7 as double) / 4 as x",
    "if(id % 5 = 0, null, concat('s', id % 3)) as s",
    "transform(sequence(0, cast(id % 4 as int)), i -> cast(i as float) / 2) as v",
]


def error(action: Callable[[], Any]) -> list[Any] | None:
    """The exception's class name, first line, Spark's condition, and ours (found by
    spark_tfrecord.errors) with its parameters; None when `action` succeeds."""
    from spark_tfrecord import errors

    try:
        action()
    except Exception as e:
        spark_condition = (getattr(e, "getCondition", None) or e.getErrorClass)()
        return [
            type(e).__name__,
            str(e).splitlines()[0],
            spark_condition,
            errors.condition(e),
            errors.parameters(e),
        ]
    return None


def main(url: str, out: str, malformed: str, truncated: str) -> dict[str, Any]:
    from pyspark.sql import SparkSession

    import spark_tfrecord

    spark = SparkSession.builder.remote(url).getOrCreate()
    result: dict[str, Any] = {
        "session": f"{type(spark).__module__}.{type(spark).__name__}",
        "version": spark.version,
    }

    schema = "id long, name string, x array<float>, raw binary, part int"
    rows = [(i, f"name-{i}", [i / 2, -1.25], bytes([i, 255 - i]), i % 3) for i in range(9)]
    df = spark.createDataFrame(rows, schema)
    result["dataframe"] = type(df).__module__
    df.write.format("tfrecord").save(out + "/plain")
    # decoder=generated: the fast path, on the server.
    plain = (
        spark.read.format("tfrecord")
        .schema(schema)
        .option("decoder", "generated")
        .load(out + "/plain")
    )
    result["plain"] = [
        [r.id, r.name, r.x, r.raw.hex(), r.part] for r in plain.orderBy("id").collect()
    ]

    typed = df.drop("raw")
    spark_tfrecord.write(typed, out + "/typed", partition_by="part", compression="gzip")
    back = spark_tfrecord.read(spark, out + "/typed")
    result["inferred"] = back.schema.simpleString()
    result["typed"] = [[r.id, r.name, r.x, r.part] for r in back.orderBy("id").collect()]
    result["part_1"] = sorted(r.id for r in back.where("part = 1").collect())
    result["schema"] = [  # feature_spec is called on it in the test
        f"{type(back.schema).__module__}.{type(back.schema).__name__}",
        back.schema.json(),
    ]

    steps = spark.createDataFrame(
        [(1, [[1, 2], [3]], "a"), (2, [[4]], "b")], "id long, steps array<array<long>>, tag string"
    )
    spark_tfrecord.write(steps, out + "/seq", record_type="SequenceExample")
    seq = spark_tfrecord.read(spark, out + "/seq", record_type="SequenceExample")
    result["seq_schema"] = seq.schema.simpleString()
    result["seq"] = [[r.id, r.steps, r.tag] for r in seq.orderBy("id").collect()]
    result["seq_schema_json"] = seq.schema.json()

    nested_schema = (
        "id long, image struct<encoded binary, height long>, "
        "boxes array<struct<x float, label long>>"
    )
    nested = spark.createDataFrame(
        [(1, (b"\xff", 480), [(0.5, 7), (0.25, 3)]), (2, None, [])], nested_schema
    )
    spark_tfrecord.write(nested, out + "/nested")
    result["nested"] = [
        [
            r.id,
            None if r.image is None else [r.image.encoded.hex(), r.image.height],
            [[b.x, b.label] for b in r.boxes],
        ]
        for r in spark_tfrecord.read(spark, out + "/nested", schema=nested_schema)
        .orderBy("id")
        .collect()
    ]
    # image/encoded read as bigint fails when decoded: the server's extension prunes it away.
    wrong = "id long, image struct<encoded long, height long>"
    pruned = spark_tfrecord.read(spark, out + "/nested", schema=wrong)
    result["pruned"] = [
        [r.id, r.height] for r in pruned.select("id", "image.height").orderBy("id").collect()
    ]

    # A TFDS dataset written and read through the server (write_tfds only sets options).
    def objects(i: int) -> list[dict[str, Any]]:
        return [{"bbox": [0.1, 0.2, 0.3, 0.4 + k / 10], "label": k} for k in range(i % 3)]

    boxes = spark.createDataFrame(
        [(i, f"t{i}", objects(i)) for i in range(7)],
        "id long, text string, objects array<struct<bbox: array<float>, label: long>>",
    )
    result["tfds_folder"] = spark_tfrecord.write_tfds(
        boxes, out + "/tfds", "connect_ds", "train", num_shards=2, features=TFDS_FEATURES
    )
    tfds_back = spark_tfrecord.read_tfds(spark, result["tfds_folder"], "train")
    result["tfds_schema"] = tfds_back.schema.simpleString()
    result["tfds_rows"] = [
        [r.id, r.text, [[o.bbox, o.label] for o in r.objects]]
        for r in tfds_back.orderBy("id").collect()
    ]

    # TFDV's statistics of a Connect DataFrame, with both engines (mapInArrow on the server's
    # Python workers), and SchemaGen's schema from them.
    stats = spark.range(0, 60, 1, 1).selectExpr(*STATS_EXPRS)
    result["statistics"] = {
        engine: spark_tfrecord.statistics(stats, engine=engine).hex() for engine in ("sql", "arrow")
    }
    result["stats_schema"] = spark_tfrecord.infer_schema(bytes.fromhex(result["statistics"]["sql"]))
    # The jar engine aggregates in the server's JVM, which a client cannot call: refused.
    try:
        spark_tfrecord.statistics(stats, engine="jar")
        result["stats_jar"] = None
    except ValueError as e:
        result["stats_jar"] = str(e)
    # ... and written beside a TFX Examples artifact's split by the write itself.
    spark_tfrecord.write(stats, out + "/tfx", tfx_split="train", statistics=out + "/tfx-stats")
    with open(out + "/tfx-stats/Split-train/FeatureStats.pb", "rb") as f:
        result["written_statistics"] = f.read().hex()

    bad = spark_tfrecord.read(
        spark, malformed, schema="x long, bad binary", mode="PERMISSIVE",
        columnNameOfCorruptRecord="bad",
    )  # fmt: skip
    result["permissive"] = [[r.x, None if r.bad is None else r.bad.hex()] for r in bad.collect()]

    result["bad_record_type"] = error(
        lambda: (
            spark.read.format("tfrecord")
            .option("recordType", "Bogus")
            .load(out + "/plain")
            .collect()
        )
    )
    result["exists"] = error(lambda: spark_tfrecord.write(typed, out + "/typed"))  # errorifexists
    result["bad_codec"] = error(
        lambda: spark_tfrecord.write(df, out + "/snappy", compression="snappy")
    )
    result["bad_mode"] = error(
        lambda: spark_tfrecord.read(
            spark, out + "/plain", schema=schema, mode="SOMETIMES"
        ).collect()
    )

    result["truncated"] = error(
        lambda: spark.read.format("tfrecord").schema("x long").load(truncated).collect()
    )
    result["null_element"] = error(
        lambda: (
            spark.createDataFrame([([1, None],)], "a array<long>")
            .write.format("tfrecord")
            .save(out + "/null")
        )
    )

    # A second session of the same server, given the jar again by upload.
    other = SparkSession.builder.remote(url).create()
    result["other_is_new"] = other is not spark
    result["add_jar"] = spark_tfrecord.add_jar(other)
    pairs = other.range(40).selectExpr("id", "cast(id * 2 as string) as s")
    spark_tfrecord.write(pairs, out + "/added", compression="gzip")
    # The jar of this session is the uploaded one: the fast path's classes are its.
    added = spark_tfrecord.read(other, out + "/added", decoder="generated").collect()
    result["added"] = sorted([r.id, r.s] for r in added)
    other.stop()  # without stop(), closing the two sessions' channels at exit can hang on 4.3
    spark.stop()
    return result


if __name__ == "__main__":
    print("RESULT " + json.dumps(main(*sys.argv[1:5])))
