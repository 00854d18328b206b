"""A TFX Examples artifact written by Spark (`tfx_split`): each split folder holds only its
GZIP data files, named as TFX's ExampleGen names them, so that TFX's components and
ImportExampleGen's `*` glob take it as it is (tensorflow/tfx#4121); the artifact's folder keeps
the manifest, which counts every split."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import spark_tfrecord


def test_an_examples_artifact_with_two_splits(spark, tf, out: Path) -> None:
    df = spark.range(0, 100, numPartitions=3).selectExpr("id", "id % 7 AS label")
    spark_tfrecord.write(df.filter("id < 80"), str(out), tfx_split="train")
    spark_tfrecord.write(df.filter("id >= 80").coalesce(1), str(out), tfx_split="eval",
                         mode="append", num_shards=2)  # fmt: skip
    train = sorted(p.name for p in (out / "Split-train").iterdir())
    assert train == [f"data_tfrecord-0000{i}-of-00003.gz" for i in range(3)]
    evals = sorted(p.name for p in (out / "Split-eval").iterdir())
    assert evals == ["data_tfrecord-00000-of-00002.gz", "data_tfrecord-00001-of-00002.gz"]
    # What TFX's components do: every file the split's folder globs, read as GZIP.
    for split, ids in (("train", range(0, 80)), ("eval", range(80, 100))):
        files = tf.io.gfile.glob(str(out / f"Split-{split}" / "*"))
        got = []
        for record in tf.data.TFRecordDataset(files, compression_type="GZIP"):
            feature = tf.train.Example.FromString(record.numpy()).features.feature
            got.append((feature["id"].int64_list.value[0], feature["label"].int64_list.value[0]))
        assert sorted(got) == [(i, i % 7) for i in ids]
    # The artifact's folder keeps the manifest of both splits; Spark reads a split as a folder.
    manifest = json.loads((out / "_tfrecord_manifest.json").read_text())
    assert manifest["num_records"] == 100
    assert {f["path"].split("/")[0] for f in manifest["files"]} == {"Split-train", "Split-eval"}
    assert spark_tfrecord.read(spark, str(out / "Split-eval")).count() == 20


def test_a_split_the_artifact_has_is_refused(spark, out: Path) -> None:
    spark_tfrecord.write(spark.range(5), str(out), tfx_split="train")
    before = sorted(p.name for p in (out / "Split-train").iterdir())
    with pytest.raises(Exception, match="already has the TFX split 'train'"):
        spark_tfrecord.write(spark.range(5), str(out), tfx_split="train", mode="append")
    assert sorted(p.name for p in (out / "Split-train").iterdir()) == before


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"compression": "deflate"}, "TFX's components read an Examples artifact as GZIP"),
        ({"shard_prefix": "x"}, "TFX names its files itself"),
        ({"tfx_split": "a/b"}, "a split name of letters, digits, _ and -"),
    ],
)
def test_what_a_tfx_split_cannot_take(
    spark, out: Path, options: dict[str, Any], message: str
) -> None:
    options = {"tfx_split": "train", **options}
    with pytest.raises(Exception, match=message):
        spark_tfrecord.write(spark.range(5), str(out), **options)
