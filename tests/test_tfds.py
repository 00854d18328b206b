"""TensorFlow Datasets folders, with the real tensorflow-datasets: written by us and loaded by
TFDS (``builder_from_directory``, ``tfds.load`` with split slicing), written by TFDS and read by
us, value for value; splits, overwrite, failed jobs, empty shards, refusals, and TensorFlow's
``-of-`` shard names for plain output."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import spark_tfrecord

SCHEMA = (
    "id long, image binary, label long, text string, vec array<float>, mat array<long>, "
    "score double, flag boolean, blob binary, "
    "objects array<struct<bbox: array<float>, label: long>>, "
    "meta struct<source: string, size: long>, frames array<binary>, audio array<long>, "
    "wav binary, steps array<long>"
)


@pytest.fixture(scope="module")
def tfds() -> Any:
    import tensorflow_datasets

    return tensorflow_datasets


def png(tf: Any, value: int, channels: int = 3) -> bytes:
    pixels = (np.arange(2 * 3 * channels).reshape(2, 3, channels) * 7 + value) % 256
    return bytes(tf.io.encode_png(pixels.astype(np.uint8)).numpy())


def jpeg(tf: Any, value: int) -> bytes:
    pixels = (np.arange(8 * 8 * 3).reshape(8, 8, 3) * 3 + value) % 256
    return bytes(tf.io.encode_jpeg(pixels.astype(np.uint8)).numpy())


def common_connectors(tfds: Any) -> dict[str, Any]:
    """The connectors both datasets of this module have (ours, and the one TFDS writes)."""
    f = tfds.features
    return {
        "id": np.int64,
        "image": f.Image(shape=(None, None, 3)),
        "label": f.ClassLabel(names=["cat", "dog", "bird"]),
        "text": f.Text(),
        "vec": f.Tensor(shape=(None,), dtype=np.float32),
        "mat": f.Tensor(shape=(2, 3), dtype=np.int64),
    }


def every_connector(tfds: Any) -> Any:
    f = tfds.features
    return f.FeaturesDict(
        {
            **common_connectors(tfds),
            "score": f.Scalar(dtype=np.float32),
            "flag": f.Tensor(shape=(), dtype=np.bool_),
            "blob": f.Tensor(shape=(), dtype=np.str_),
            "objects": f.Sequence(
                {"bbox": f.BBoxFeature(), "label": f.ClassLabel(names=["car", "bike"])}
            ),
            "meta": {"source": f.Text(), "size": np.int64},
            "frames": f.Video(shape=(None, None, None, 3)),
            "audio": f.Audio(),
            "wav": f.Audio(file_format="wav", lazy_decode=True),
            "steps": f.Sequence(np.int64),
        }
    )


def rows(tf: Any, n: int) -> list[tuple[Any, ...]]:
    out = []
    for i in range(n):
        image = png(tf, i) if i % 2 == 0 else jpeg(tf, i)
        boxes = [([0.1 * k, 0.2, 0.5, 0.75 + 0.01 * k], k % 2) for k in range(i % 3)]
        out.append(
            (
                i,
                image,
                i % 3,
                f"text {i} é",
                [float(i), -0.0, float("inf")][: i % 4],
                [i * 6 + k for k in range(6)],
                i / 3,
                i % 2 == 0,
                bytes([i, 0, 255]),
                [{"bbox": b, "label": label} for b, label in boxes],
                {"source": f"cam{i}", "size": 2**40 + i},
                [png(tf, i + k) for k in range(i % 2 + 1)],
                [i, -i, 2**62],
                b"RIFF" + bytes([i]),
                list(range(i % 4)),
            )
        )
    return out


def f32(x: float) -> float:
    return float(np.float32(x))


def bits(x: Any) -> int:
    return int(np.float32(x).view(np.uint32))


def check_tfds_example(tf: Any, example: dict[str, Any], row: tuple[Any, ...]) -> None:
    """One example as TFDS decoded it, against the row the DataFrame held."""
    (
        i,
        image,
        label,
        text,
        vec,
        mat,
        score,
        flag,
        blob,
        objects,
        meta,
        frames,
        audio,
        wav,
        steps,
    ) = row
    assert example["id"] == i
    np.testing.assert_array_equal(example["image"], tf.io.decode_image(image).numpy())
    assert example["label"] == label
    assert example["text"] == text.encode()
    assert [float(v) for v in example["vec"]] == [f32(v) for v in vec]
    assert example["vec"].dtype == np.float32
    np.testing.assert_array_equal(example["mat"], np.array(mat).reshape(2, 3))
    assert example["score"] == pytest.approx(f32(score))
    assert bool(example["flag"]) is flag
    assert example["blob"] == blob
    np.testing.assert_array_equal(
        example["objects"]["bbox"],
        np.array([o["bbox"] for o in objects], np.float32).reshape(-1, 4),
    )
    np.testing.assert_array_equal(example["objects"]["label"], [o["label"] for o in objects])
    assert example["meta"]["source"] == meta["source"].encode()
    assert example["meta"]["size"] == meta["size"]
    assert len(example["frames"]) == len(frames)
    for got, frame in zip(example["frames"], frames):
        np.testing.assert_array_equal(got, tf.io.decode_image(frame).numpy())
    np.testing.assert_array_equal(example["audio"], audio)
    assert example["wav"] == wav
    np.testing.assert_array_equal(example["steps"], steps)


def load(tfds: Any, folder: str, split: str) -> list[dict[str, Any]]:
    builder = tfds.builder_from_directory(folder)
    # An Audio feature stored encoded (lazy_decode) is decoded by pydub, which decodes real
    # audio files: the test's bytes are not one, and are compared undecoded.
    lazy = {"wav": tfds.decode.SkipDecoding()} if "wav" in builder.info.features else None
    ds = builder.as_dataset(split=split, shuffle_files=False, decoders=lazy)
    return list(tfds.as_numpy(ds))


def info(folder: str) -> dict[str, Any]:
    with open(os.path.join(folder, "dataset_info.json")) as f:
        result: dict[str, Any] = json.load(f)
    return result


def shard_lengths(folder: str) -> dict[str, list[int]]:
    return {s["name"]: [int(n) for n in s["shardLengths"]] for s in info(folder)["splits"]}


def shards(folder: str) -> list[str]:
    return sorted(f for f in os.listdir(folder) if ".tfrecord-" in f and not f.startswith("."))


def test_every_connector_written_by_spark_is_loaded_by_tfds(
    spark: Any, tf: Any, tfds: Any, tmp_path: Path
) -> None:
    data = rows(tf, 12)
    df = spark.createDataFrame(data, SCHEMA)
    features = every_connector(tfds)
    folder = spark_tfrecord.write_tfds(
        df, str(tmp_path), "spark_every", "train", features=features, num_shards=3
    )
    assert folder == f"{tmp_path}/spark_every/1.0.0"
    assert shards(folder) == [f"spark_every-train.tfrecord-0000{i}-of-00003" for i in range(3)]
    lengths = shard_lengths(folder)["train"]
    assert sum(lengths) == 12 and len(lengths) == 3
    # Each shard holds exactly its count, which came from the write.
    for name, n in zip(shards(folder), lengths):
        assert sum(1 for _ in tf.data.TFRecordDataset(os.path.join(folder, name))) == n
    record_bytes = sum(
        len(r.numpy()) for s in shards(folder) for r in tf.data.TFRecordDataset(f"{folder}/{s}")
    )
    assert int(info(folder)["splits"][0]["numBytes"]) == record_bytes
    assert (tmp_path / "spark_every/1.0.0/label.labels.txt").read_text() == "cat\ndog\nbird\n"
    assert (tmp_path / "spark_every/1.0.0/objects-label.labels.txt").read_text() == "car\nbike\n"

    builder = tfds.builder_from_directory(folder)
    assert builder.info.splits["train"].num_examples == 12
    assert builder.info.features["label"].names == ["cat", "dog", "bird"]
    assert builder.info.features["objects"]["label"].names == ["car", "bike"]
    examples = load(tfds, folder, "train")
    assert sorted(int(e["id"]) for e in examples) == list(range(12))
    by_id = {r[0]: r for r in data}
    for example in examples:
        check_tfds_example(tf, example, by_id[int(example["id"])])

    # And read back by us, with the schema of its features.json, as the DataFrame held it.
    back = spark_tfrecord.read_tfds(spark, folder, "train")
    assert back.count() == 12
    got = {r.id: r for r in back.collect()}
    for row in data:
        r = got[row[0]]
        assert bytes(r.image) == row[1] and r.label == row[2] and r.text == row[3]
        assert r.mat == row[5] and [o.label for o in r.objects] == [o["label"] for o in row[9]]
        assert [[f32(x) for x in o["bbox"]] for o in row[9]] == [o.bbox for o in r.objects]
        assert r.meta.size == row[10]["size"] and [bytes(f) for f in r.frames] == row[11]


def test_tfds_load_by_name_with_split_slicing(spark: Any, tfds: Any, tmp_path: Path) -> None:
    df = spark.range(50).selectExpr("id", "cast(id * 2 as float) as x", "concat('t', id) as t")
    spark_tfrecord.write_tfds(df, str(tmp_path), "sliced", "train", num_shards=4)
    spark_tfrecord.write_tfds(df.where("id < 10"), str(tmp_path), "sliced", "test")
    order = [
        int(e["id"]) for e in load(tfds, str(tmp_path / "sliced" / "1.0.0"), "train")
    ]  # shard order
    ds = tfds.load("sliced:1.0.0", data_dir=str(tmp_path), split="train[:10%]", shuffle_files=False)
    assert [int(e["id"]) for e in tfds.as_numpy(ds)] == order[:5]
    ds = tfds.load("sliced", data_dir=str(tmp_path), split="train[80%:]", shuffle_files=False)
    assert [int(e["id"]) for e in tfds.as_numpy(ds)] == order[40:]
    test = tfds.load("sliced", data_dir=str(tmp_path), split="test")
    assert len(test) == 10
    assert sorted((int(e["id"]), float(e["x"]), e["t"]) for e in tfds.as_numpy(test)) == [
        (i, i * 2.0, f"t{i}".encode()) for i in range(10)
    ]


def test_the_counts_come_from_the_write_itself(spark: Any, tmp_path: Path) -> None:
    """write_tfds runs the jobs a plain write of the same DataFrame runs, and no other: no pass
    to count the records, none to choose the shards (an aggregate's shuffle included)."""
    df = spark.range(0, 3000, 1, 3).selectExpr("id % 100 as k", "id").groupBy("k").count()
    tracker = spark.sparkContext.statusTracker()

    def jobs(group: str, write: Any) -> int:
        spark.sparkContext.setJobGroup(group, group)
        try:
            write()
        finally:
            spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)
        return len(tracker.getJobIdsForGroup(group))

    plain = jobs("plain", lambda: df.write.format("tfrecord").save(str(tmp_path / "plain")))
    tfds = jobs("tfds", lambda: spark_tfrecord.write_tfds(df, str(tmp_path), "counted", "train"))
    assert plain >= 1 and tfds == plain
    assert sum(shard_lengths(str(tmp_path / "counted" / "1.0.0"))["train"]) == 100


def test_features_derived_from_the_schema(spark: Any, tfds: Any, tmp_path: Path) -> None:
    schema = (
        "b byte, s short, i int, l long, f float, d double, flag boolean, t string, raw binary, "
        "xs array<double>, names array<string>, st struct<a: long, inner: struct<z: string>>, "
        "objs array<struct<w: float, tag: string>>"
    )
    data = [
        (1, 2, 3, 2**40, 0.5, 1 / 3, True, "é", b"\x00\xff", [0.25, 1e-3], ["a", ""], (7, ("z",)),
         [(0.5, "x"), (1.5, "y")]),
        (-1, -2, -3, -(2**63), -0.0, 1e300, False, "", b"", [], [], (8, ("",)), []),
    ]  # fmt: skip
    folder = spark_tfrecord.write_tfds(spark.createDataFrame(data, schema), str(tmp_path), "d", "a")
    features = json.loads((tmp_path / "d/1.0.0/features.json").read_text())["featuresDict"]
    kinds = {
        k: (v["pythonClassName"].rsplit(".", 1)[1], v.get("tensor", {}).get("dtype"))
        for k, v in features["features"].items()
    }
    assert kinds == {
        **{k: ("Tensor", "int64") for k in ("b", "s", "i", "l")},
        "f": ("Tensor", "float32"),
        "d": ("Tensor", "float32"),
        "flag": ("Tensor", "bool"),
        "t": ("Text", None),
        "raw": ("Tensor", "string"),
        "xs": ("Tensor", "float32"),
        "names": ("Tensor", "string"),
        "st": ("FeaturesDict", None),
        "objs": ("Sequence", None),
    }
    assert features["features"]["xs"]["tensor"]["shape"] == {"dimensions": ["-1"]}
    examples = sorted(load(tfds, folder, "a"), key=lambda e: int(e["i"]))
    first, second = examples[1], examples[0]
    assert (first["b"], first["l"], first["f"], first["t"]) == (1, 2**40, 0.5, "é".encode())
    assert first["d"] == pytest.approx(1 / 3, rel=1e-7)  # double is stored as float32
    assert bool(first["flag"]) and first["raw"] == b"\x00\xff"
    assert list(first["names"]) == [b"a", b""] and list(first["xs"]) == [0.25, f32(1e-3)]
    assert first["st"]["a"] == 7 and first["st"]["inner"]["z"] == b"z"
    assert list(first["objs"]["w"]) == [0.5, 1.5] and list(first["objs"]["tag"]) == [b"x", b"y"]
    assert second["l"] == -(2**63) and str(second["f"]) == "-0.0" and second["d"] == np.inf
    assert len(second["objs"]["w"]) == 0 and len(second["xs"]) == 0


@pytest.fixture(scope="module")
def written_by_tfds(tf: Any, tfds: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A dataset that TFDS itself wrote (store_as_tfds_dataset), and what it holds."""
    root = tmp_path_factory.mktemp("by-tfds")
    f = tfds.features
    features = f.FeaturesDict(
        {
            **common_connectors(tfds),
            "objects": f.Sequence({"bbox": f.BBoxFeature(), "label": f.ClassLabel(num_classes=5)}),
            "words": f.Translation(languages=["en", "fr"]),
            "clip": f.Video(shape=(None, 2, 2, 3)),
            "sound": f.Audio(),
            "mask": f.LabeledImage(labels=["bg", "fg"], shape=(None, None, 1)),
        }
    )

    def example(i: int) -> dict[str, Any]:
        return {
            "id": i,
            "image": np.full((2, 3, 3), i, np.uint8),
            "label": i % 3,
            "text": f"hello {i}",
            "vec": np.array([i, -0.0, np.nan][: i % 4], np.float32),
            "mat": np.arange(6).reshape(2, 3) + i,
            "objects": {
                "bbox": [tfds.features.BBox(0.1, 0.2, 0.3 + 0.01 * k, 0.4) for k in range(i % 3)],
                "label": [k for k in range(i % 3)],
            },
            "words": {"en": f"one {i}", "fr": f"un {i}"},
            "clip": np.full((i % 2 + 1, 2, 2, 3), i, np.uint8),
            "sound": np.array([i, -i, 2**40], np.int64),
            "mask": np.full((2, 2, 1), i % 2, np.uint8),
        }

    splits = {"train": [(str(i), example(i)) for i in range(9)]}
    splits["test"] = [(str(i), example(i)) for i in range(100, 103)]
    tfds.dataset_builders.store_as_tfds_dataset(
        name="by_tfds", version="1.0.0", features=features, split_datasets=splits,
        data_dir=str(root),
    )  # fmt: skip
    folder = root / "by_tfds" / "1.0.0"
    return folder, {i: e for i, e in [(e["id"], e) for _, e in splits["train"] + splits["test"]]}


def test_a_dataset_written_by_tfds_is_read_value_for_value(
    spark: Any, tf: Any, tfds: Any, written_by_tfds: Any
) -> None:
    folder, originals = written_by_tfds
    df = spark.read.format("tfrecord").option("split", "train").load(str(folder))
    fields = {f.name: f for f in df.schema.fields}
    assert fields["objects"].dataType.simpleString() == (
        "array<struct<bbox:array<float>,label:bigint>>"
    )
    assert fields["image"].dataType.simpleString() == "binary"
    assert fields["text"].dataType.simpleString() == "string"
    assert fields["mat"].dataType.simpleString() == "array<bigint>"
    assert fields["label"].metadata["tfds.classNames"] == ["cat", "dog", "bird"]
    assert fields["label"].metadata["tfds.feature"] == "ClassLabel"
    assert fields["words"].dataType.simpleString() == "struct<en:string,fr:string>"
    assert fields["mask"].dataType.simpleString() == "binary"
    assert fields["clip"].dataType.simpleString() == "array<binary>"
    assert fields["sound"].dataType.simpleString() == "array<bigint>"
    assert df.count() == sum(shard_lengths(str(folder))["train"]) == 9
    decoded = {int(e["id"]): e for e in load(tfds, str(folder), "train")}
    assert sorted(decoded) == sorted(r.id for r in df.collect()) == list(range(9))
    for r in df.collect():
        given, e = originals[r.id], decoded[r.id]
        pixels = tf.io.decode_png(bytes(r.image)).numpy()
        np.testing.assert_array_equal(pixels, given["image"])
        np.testing.assert_array_equal(pixels, e["image"])
        assert r.label == given["label"] == e["label"]
        assert r.text == given["text"] and r.text.encode() == e["text"]
        vec = np.array(r.vec, np.float32)
        np.testing.assert_array_equal(vec, given["vec"])
        assert [bits(v) for v in vec] == [bits(v) for v in given["vec"]]  # -0.0, NaN bits
        np.testing.assert_array_equal(np.array(r.mat).reshape(2, 3), given["mat"])
        # N boxes of 4 floats, each with its label, as given to TFDS and as it decodes them.
        assert [o.label for o in r.objects] == given["objects"]["label"]
        assert [o.bbox for o in r.objects] == [
            [f32(v) for v in b] for b in given["objects"]["bbox"]
        ]
        for o, bbox, label in zip(r.objects, e["objects"]["bbox"], e["objects"]["label"]):
            assert o.bbox == [float(v) for v in bbox] and o.label == label
        assert (r.words.en, r.words.fr) == (f"one {r.id}", f"un {r.id}")
        frames = [tf.io.decode_png(bytes(frame)).numpy() for frame in r.clip]
        np.testing.assert_array_equal(np.stack(frames), given["clip"])
        assert r.sound == list(given["sound"])
        mask = tf.io.decode_png(bytes(r.mask)).numpy()
        np.testing.assert_array_equal(mask, given["mask"])
    test = spark_tfrecord.read_tfds(spark, str(folder), "test")
    assert sorted(r.id for r in test.collect()) == [100, 101, 102]
    assert test.select("objects.label").count() == 3
    pruned = test.select("objects.bbox").orderBy(test.id).collect()
    assert [len(r.bbox) for r in pruned] == [1, 2, 0]


def test_a_split_added_to_a_dataset_that_tfds_wrote(
    spark: Any, tfds: Any, written_by_tfds: Any, tmp_path: Path
) -> None:
    """TFDS → Spark → TFDS: a split made from one TFDS wrote decodes to the same values."""
    folder, _ = written_by_tfds
    copy = tmp_path / "by_tfds" / "1.0.0"
    shutil.copytree(folder, copy)
    before = info(str(copy))["splits"]
    train = spark_tfrecord.read_tfds(spark, str(copy), "train")
    spark_tfrecord.write_tfds(train.where("id < 5"), str(tmp_path), "by_tfds", "extra")
    after = info(str(copy))["splits"]
    assert after[: len(before)] == before  # TFDS's own entries, untouched
    assert [s["name"] for s in after[len(before) :]] == ["extra"]
    originals = {int(e["id"]): e for e in load(tfds, str(copy), "train")}
    extra = load(tfds, str(copy), "extra")
    assert sorted(int(e["id"]) for e in extra) == [0, 1, 2, 3, 4]
    for example in extra:
        np.testing.assert_equal(example, originals[int(example["id"])])


def test_reading_a_tfds_folder_needs_a_split(spark: Any, written_by_tfds: Any) -> None:
    folder, _ = written_by_tfds
    with pytest.raises(Exception) as error:
        spark.read.format("tfrecord").load(str(folder)).collect()
    assert "TensorFlow Datasets folder" in str(error.value)
    splits = str(error.value).split("its splits: ")[1].split(")")[0]
    assert sorted(splits.split(", ")) == ["test", "train"]
    with pytest.raises(Exception, match="has no split 'valid'"):
        spark_tfrecord.read_tfds(spark, str(folder), "valid").collect()
    # With a schema given, metadata files still never pass for data.
    with pytest.raises(Exception, match="choose a split with the option 'split'"):
        spark.read.format("tfrecord").schema("id long").load(str(folder)).collect()


def test_a_second_split_uses_the_features_already_in_the_folder(
    spark: Any, tf: Any, tfds: Any, tmp_path: Path
) -> None:
    features = every_connector(tfds)
    data = rows(tf, 6)
    spark_tfrecord.write_tfds(
        spark.createDataFrame(data[:4], SCHEMA), str(tmp_path), "two", "train", features=features
    )
    folder = str(tmp_path / "two" / "1.0.0")
    before = (tmp_path / "two/1.0.0/features.json").read_text()
    spark_tfrecord.write_tfds(spark.createDataFrame(data[4:], SCHEMA), str(tmp_path), "two", "test")
    assert (tmp_path / "two/1.0.0/features.json").read_text() == before
    assert {k: sum(v) for k, v in shard_lengths(folder).items()} == {"train": 4, "test": 2}
    for example in load(tfds, folder, "test"):
        check_tfds_example(tf, example, data[int(example["id"])])
    # The folder's features decide: other features are refused, naming the first that differs.
    other = tfds.features.FeaturesDict({"id": np.int64})
    with pytest.raises(
        Exception, match=r"differ from those of the dataset .*: '.+' is in the folder only"
    ):
        spark_tfrecord.write_tfds(
            spark.createDataFrame([(1,)], "id long"), str(tmp_path), "two", "valid", features=other
        )
    # A FeaturesDict is a protobuf map, whose JSON lists its keys in an order that changes from
    # one process to the next: the same features in another order are the same features.
    saved = json.loads(before)
    listed = saved["featuresDict"]["features"]
    saved["featuresDict"]["features"] = dict(reversed(list(listed.items())))
    assert list(saved["featuresDict"]["features"]) != list(listed)
    spark_tfrecord.write_tfds(
        spark.createDataFrame(data[4:], SCHEMA), str(tmp_path), "two", "reordered", features=saved
    )
    assert (tmp_path / "two/1.0.0/features.json").read_text() == before
    wrong = spark.createDataFrame(data[4:], SCHEMA).withColumn("image", spark_str("image"))
    with pytest.raises(Exception, match="Column 'image' has type string"):
        spark_tfrecord.write_tfds(wrong, str(tmp_path), "two", "valid")
    assert set(shard_lengths(folder)) == {"train", "test", "reordered"}


def spark_str(column: str) -> Any:
    from pyspark.sql.functions import col

    return col(column).cast("string")


def test_an_existing_split_is_refused_unless_overwritten(
    spark: Any, tfds: Any, tmp_path: Path
) -> None:
    df = spark.range(30).selectExpr("id", "id * 10 as y")
    spark_tfrecord.write_tfds(df, str(tmp_path), "ow", "train", num_shards=3)
    folder = str(tmp_path / "ow" / "1.0.0")
    with pytest.raises(Exception, match="already has the split 'train' \\(30 records\\)"):
        spark_tfrecord.write_tfds(df, str(tmp_path), "ow", "train")
    assert shard_lengths(folder) == {"train": [10, 10, 10]}
    spark_tfrecord.write_tfds(df.where("id < 8"), str(tmp_path), "ow", "train", mode="overwrite",
                              num_shards=2)  # fmt: skip
    assert shard_lengths(folder) == {"train": [4, 4]}
    assert shards(folder) == [f"ow-train.tfrecord-0000{i}-of-00002" for i in range(2)]
    assert sorted(int(e["y"]) for e in load(tfds, folder, "train")) == [i * 10 for i in range(8)]


def test_a_failed_job_leaves_the_dataset_as_it_was(spark: Any, tfds: Any, tmp_path: Path) -> None:
    df = spark.range(20).selectExpr("id", "cast(id as string) as s")
    folder = spark_tfrecord.write_tfds(df, str(tmp_path), "failing", "train", num_shards=2)
    info_before = Path(folder, "dataset_info.json").read_bytes()
    files_before = {f: Path(folder, f).read_bytes() for f in shards(folder)}
    # A null fails a task midway (TFDS features have no null): the job fails.
    bad = spark.range(100).selectExpr("id", "if(id = 77, null, cast(id as string)) as s")
    for split, mode in (("train", "overwrite"), ("test", "error")):
        with pytest.raises(Exception, match="Column 's' is null in a row"):
            spark_tfrecord.write_tfds(bad, str(tmp_path), "failing", split, num_shards=4, mode=mode)
        assert Path(folder, "dataset_info.json").read_bytes() == info_before
        assert {f: Path(folder, f).read_bytes() for f in shards(folder)} == files_before
        assert sorted(int(e["id"]) for e in load(tfds, folder, "train")) == list(range(20))
        assert spark_tfrecord.read_tfds(spark, folder, "train").count() == 20


def test_empty_shards_and_zero_rows(spark: Any, tf: Any, tfds: Any, tmp_path: Path) -> None:
    df = spark.createDataFrame([(1, "a"), (2, "b")], "id long, s string")
    folder = spark_tfrecord.write_tfds(df, str(tmp_path), "few", "train", num_shards=5)
    lengths = shard_lengths(folder)["train"]
    assert len(lengths) == 5 and sum(lengths) == 2 and lengths.count(0) >= 3
    assert len(shards(folder)) == 5
    assert sorted(int(e["id"]) for e in load(tfds, folder, "train")) == [1, 2]
    # An empty partition among others: one shard per partition that holds data (and partition 0).
    spread = spark.createDataFrame([(i, "x") for i in range(6)], "id long, s string").repartition(4)
    spark_tfrecord.write_tfds(spread.where("id = 3"), str(tmp_path), "few", "test")
    assert sum(shard_lengths(folder)["test"]) == 1
    assert [int(e["id"]) for e in load(tfds, folder, "test")] == [3]
    empty = spark.createDataFrame([], "id long, s string")
    zero = spark_tfrecord.write_tfds(empty, str(tmp_path), "none", "train")
    assert shard_lengths(zero) == {"train": [0]}
    assert spark_tfrecord.read_tfds(spark, zero, "train").count() == 0
    assert tfds.builder_from_directory(zero).info.splits["train"].num_examples == 0


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda w: w.partitionBy("s"), "cannot be partitioned"),
        (lambda w: w.option("compression", "gzip"), "cannot be compressed"),
        (lambda w: w.option("recordType", "SequenceExample"), "cannot take recordType"),
        (lambda w: w.option("writeIndex", "true"), "cannot write index files"),
        (lambda w: w.option("maxRecordsPerFile", "5"), "cannot take maxRecordsPerFile"),
        (lambda w: w.option("shardPrefix", "x"), "also take 'shardPrefix'"),
        (lambda w: w.option("tfds", "9lives"), "Invalid value '9lives' for TFRecord option 'tfds'"),
    ],
)
def test_what_makes_no_sense_for_tfds_is_refused(
    spark: Any, tmp_path: Path, change: Any, message: str
) -> None:
    df = spark.createDataFrame([(1, "a")], "id long, s string")
    writer = df.write.format("tfrecord").mode("append").option("tfds", "r").option("split", "x")
    with pytest.raises(Exception, match=message):
        change(writer).save(str(tmp_path / "r" / "1.0.0"))
    assert not (tmp_path / "r" / "1.0.0" / "dataset_info.json").exists()


def test_a_streaming_sink_is_refused(spark: Any, tmp_path: Path) -> None:
    src = tmp_path / "in"
    spark.range(5).write.format("tfrecord").save(str(src))
    query = (
        spark.readStream.format("tfrecord")
        .schema("id long")
        .load(str(src))
        .writeStream.format("tfrecord")
        .option("tfds", "streamed")
        .option("split", "train")
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start(str(tmp_path / "sink"))
    )
    try:
        with pytest.raises(Exception, match="cannot be a streaming sink"):
            query.awaitTermination()
    finally:
        query.stop()
    assert not (tmp_path / "sink" / "dataset_info.json").exists()


def test_the_dataframe_is_checked_against_the_features(
    spark: Any, tfds: Any, tmp_path: Path
) -> None:
    f = tfds.features
    features = f.FeaturesDict({"id": np.int64, "image": f.Image(), "box": f.BBoxFeature()})
    cases = [
        ("id long, box array<float>", "feature 'image' has no column"),
        ("id long, image binary, box array<float>, extra long", "Column 'extra' is not a feature"),
        ("id long, image string, box array<float>", "Column 'image' has type string"),
        ("id string, image binary, box array<float>", "Column 'id' has type string"),
        ("id long, image binary, box float", "Column 'box' has type float"),
    ]
    for schema, message in cases:
        df = spark.createDataFrame([], schema)
        with pytest.raises(Exception, match=message):
            spark_tfrecord.write_tfds(df, str(tmp_path), "checked", "train", features=features)
    assert not (tmp_path / "checked").exists()
    # A BBoxFeature holds exactly 4 values: a row with 3 fails the job, naming the column.
    df = spark.createDataFrame(
        [(1, b"\x89PNG", [0.1, 0.2, 0.3])], "id long, image binary, box array<float>"
    )
    with pytest.raises(Exception, match="Column 'box' holds an array of 3 values"):
        spark_tfrecord.write_tfds(df, str(tmp_path), "checked", "train", features=features)
    dates = spark.sql("select date'2024-01-01' as day")
    with pytest.raises(Exception, match="Column 'day' has type date, which has no TFDS feature"):
        spark_tfrecord.write_tfds(dates, str(tmp_path), "checked", "train")
    nested = spark.createDataFrame([], "o array<struct<xs: array<struct<x: float>>>>")
    with pytest.raises(Exception, match=r"Column 'o\.xs' holds arrays of structs inside an array"):
        spark_tfrecord.write_tfds(nested, str(tmp_path), "checked", "train")


def test_tensorflow_shard_names_without_tfds(spark: Any, tf: Any, tmp_path: Path) -> None:
    df = spark.range(10).selectExpr("id", "cast(id as float) as x")
    out = tmp_path / "plain"
    spark_tfrecord.write(df, str(out), shard_prefix="train", num_shards=16, compression="gzip")
    names = sorted(p.name for p in out.iterdir() if not p.name.startswith((".", "_")))
    assert names == [f"train-{i:05d}-of-00016.gz" for i in range(16)]
    files = tf.io.gfile.glob(str(out / "train-*-of-00016*"))
    ids = sorted(
        tf.train.Example.FromString(r.numpy()).features.feature["id"].int64_list.value[0]
        for r in tf.data.TFRecordDataset(files, compression_type="GZIP")
    )
    assert ids == list(range(10))
    assert sorted(r.id for r in spark_tfrecord.read(spark, str(out)).collect()) == list(range(10))
    # Without num_shards: one file per partition, numbered in the order of the partitions.
    spark_tfrecord.write(df.repartition(3), str(tmp_path / "three"), shard_prefix="part")
    three = sorted(p.name for p in (tmp_path / "three").iterdir() if p.name.startswith("part"))
    assert three == [f"part-{i:05d}-of-00003" for i in range(3)]
    # Appending more files of the prefix would renumber them: refused before the job runs.
    with pytest.raises(Exception, match="already has files named part-NNNNN-of-NNNNN"):
        spark_tfrecord.write(df, str(tmp_path / "three"), shard_prefix="part", mode="append")
    spark_tfrecord.write(df, str(tmp_path / "three"), shard_prefix="other", mode="append")
    assert len(list((tmp_path / "three").glob("other-*-of-*"))) == 2
    # Mode overwrite replaces the shards: on Spark 4.x it empties the folder after prepareWrite,
    # so the check for the prefix's files waits for the job's setup.
    spark_tfrecord.write(
        df.where("id >= 4"),
        str(tmp_path / "three"),
        shard_prefix="part",
        num_shards=2,
        mode="overwrite",
    )
    left = sorted(p.name for p in (tmp_path / "three").iterdir() if p.name[0] not in "._")
    assert left == ["part-00000-of-00002", "part-00001-of-00002"]
    again = spark_tfrecord.read(spark, str(tmp_path / "three")).collect()
    assert sorted(r.id for r in again) == list(range(4, 10))
    # Three partitions into two shards through the options: the session's extensions arrange
    # the rows, so that the shards differ by at most one record. (Without the extensions the
    # write fails at commit and leaves nothing behind: TFRecordShardsWithoutExtensionsSuite.)
    over = tmp_path / "over"
    df.repartition(3).write.format("tfrecord").option("shardPrefix", "x").option(
        "numShards", "2"
    ).save(str(over))
    shards = sorted(p.name for p in over.iterdir() if not p.name.startswith((".", "_")))
    assert shards == ["x-00000-of-00002", "x-00001-of-00002"]
    counts = [sum(1 for _ in tf.data.TFRecordDataset(str(over / name))) for name in shards]
    assert sorted(counts) == [5, 5]


def test_cli_converts_to_a_tfds_dataset(tfds: Any, tmp_path: Path) -> None:
    csv = tmp_path / "people.csv"
    csv.write_text("id,name,age\n1,ann,31\n2,bob,42\n3,cy,27\n")
    done = subprocess.run(
        [sys.executable, "-m", "spark_tfrecord", "convert", str(csv), str(tmp_path / "data"),
         "--tfds", "people_ds", "--split", "train", "--shards", "2", "--master", "local[1]"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "wrote split train of the TFDS dataset" in done.stdout
    ds = tfds.load("people_ds", data_dir=str(tmp_path / "data"), split="train")
    assert sorted((int(e["id"]), e["name"], int(e["age"])) for e in tfds.as_numpy(ds)) == [
        (1, b"ann", 31),
        (2, b"bob", 42),
        (3, b"cy", 27),
    ]
    usage = subprocess.run(
        [sys.executable, "-m", "spark_tfrecord", "convert", str(csv), str(tmp_path / "o"),
         "--tfds", "people_ds", "--split", "train", "--partition-by", "age"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert usage.returncode == 2 and "--tfds refuses --partition-by" in usage.stderr
    # The shards indexed for PyTorch and DALI afterwards, by a glob that leaves the metadata out.
    folder = tmp_path / "data" / "people_ds" / "1.0.0"
    index = subprocess.run(
        [sys.executable, "-m", "spark_tfrecord", "index", f"{folder}/*.tfrecord-*",
         "--master", "local[1]"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert index.returncode == 0, index.stderr[-3000:]
    assert sorted(p.name for p in folder.glob("_*.idx")) == [
        f"_people_ds-train.tfrecord-0000{i}-of-00002.idx" for i in range(2)
    ]
