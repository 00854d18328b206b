"""Interop with the real TensorFlow: what we write, TensorFlow parses; what it writes, we read."""

from __future__ import annotations

import math
import struct
from pathlib import Path

import numpy as np
import pytest

import spark_tfrecord
from support import tf_corpus, tfrecord_files

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def f32(x: float) -> float:
    return float(struct.unpack("<f", struct.pack("<f", x))[0])


def bits32(x: float) -> int:
    return int(struct.unpack("<I", struct.pack("<f", x))[0])


def parse_all(tf, path: Path) -> list[object]:
    examples = []
    for f in tfrecord_files(path):
        for raw in tf.data.TFRecordDataset(str(f)):
            examples.append(tf.train.Example.FromString(raw.numpy()))
    return examples


def values(example: object, name: str) -> list[object] | None:
    feats = example.features.feature
    if name not in feats:
        return None
    f = feats[name]
    kind = f.WhichOneof("kind")
    return None if kind is None else list(getattr(f, kind).value)


def test_tensorflow_reads_what_we_write(spark, tf, out: Path) -> None:
    rows = [
        (
            0,
            INT64_MIN,
            True,
            1.5,
            0.1,
            "héllo 🎉",
            b"\x00\xff\xc3\x28",
            [INT64_MAX, -1],
            [math.nan, -0.0, math.inf],
            ["a", ""],
            [],
        ),
        (1, INT64_MAX, False, -math.inf, 1e300, "", b"", [], [], [], [b"x", b""]),
        (2, None, None, None, None, None, None, None, None, None, None),
    ]
    df = spark.createDataFrame(
        rows,
        "id long, i long, b boolean, f float, d double, s string, "
        "bin binary, ai array<long>, af array<float>, as_ array<string>, "
        "abin array<binary>",
    )
    spark_tfrecord.write(df.coalesce(1), str(out))
    parsed = {values(e, "id")[0]: e for e in parse_all(tf, out)}
    assert sorted(parsed) == [0, 1, 2]

    e0, e1, e2 = parsed[0], parsed[1], parsed[2]
    assert values(e0, "i") == [INT64_MIN] and values(e1, "i") == [INT64_MAX]
    assert values(e0, "b") == [1] and values(e1, "b") == [0]
    assert values(e0, "f") == [1.5] and values(e1, "f") == [-math.inf]
    assert values(e0, "d") == [f32(0.1)] and values(e1, "d") == [math.inf]  # float32 overflow
    assert values(e0, "s") == ["héllo 🎉".encode()] and values(e1, "s") == [b""]
    assert values(e0, "bin") == [b"\x00\xff\xc3\x28"]
    assert values(e0, "ai") == [INT64_MAX, -1] and values(e1, "ai") == []
    af = values(e0, "af")
    assert (
        af is not None and math.isnan(af[0]) and bits32(af[1]) == bits32(-0.0) and af[2] == math.inf
    )
    assert values(e1, "af") == [] and values(e1, "as_") == []
    assert values(e0, "as_") == [b"a", b""] and values(e1, "abin") == [b"x", b""]
    # Null columns are absent features; every other one kept its kind even when empty.
    assert list(e2.features.feature) == ["id"]
    assert e1.features.feature["af"].WhichOneof("kind") == "float_list"

    # And tf.io.parse_example with a spec reads the same values.
    spec = {"id": tf.io.FixedLenFeature([], tf.int64), "ai": tf.io.VarLenFeature(tf.int64)}
    batch = next(iter(tf.data.TFRecordDataset([str(f) for f in tfrecord_files(out)]).batch(3)))
    parsed_batch = tf.io.parse_example(batch, spec)
    ids = parsed_batch["id"].numpy().tolist()
    ai = tf.sparse.to_dense(parsed_batch["ai"]).numpy().tolist()
    assert dict(zip(ids, ai))[0] == [INT64_MAX, -1]


@pytest.fixture(scope="module")
def tf_written(tf, tmp_path_factory) -> Path:
    """support/tf_corpus.py's interop records, which the differential tests read too."""
    path = tmp_path_factory.mktemp("tf") / "data.tfrecord"
    return tf_corpus.write(tf, path, tf_corpus.interop(tf))


def test_we_read_what_tensorflow_writes(spark, tf_written: Path) -> None:
    schema = (
        "id long, extremes array<long>, floats array<float>, text string, raw array<binary>, "
        "empty_ints array<long>, unset array<long>"
    )
    rows = spark_tfrecord.read(spark, str(tf_written), schema=schema).collect()
    assert len(rows) == 3
    r0, r1, r2 = rows
    assert r0.id == 0 and r0.extremes == [INT64_MIN, INT64_MAX, 0]
    assert math.isnan(r0.floats[0]) and r0.floats[1:3] == [math.inf, -math.inf]
    assert bits32(r0.floats[3]) == bits32(-0.0) and r0.floats[4] == f32(1e-45)
    assert r0.text == "日本語 é 🎉"
    assert [bytes(b) for b in r0.raw] == [b"\xff\xfe\x00", b"\xc3\x28"]  # invalid UTF-8, exact
    assert r0.empty_ints == [] and r0.unset == []
    assert (r1.id, r1.floats, r1.empty_ints, r1.text, r1.raw, r1.unset) == (
        1,
        [],
        [7, 8],
        None,
        None,
        None,
    )
    assert all(v is None for v in r2)


def test_inference_on_tensorflow_files(spark, tf_written: Path) -> None:
    df = spark_tfrecord.read(spark, str(tf_written))
    types = dict((f.name, f.dataType.simpleString()) for f in df.schema.fields)
    assert types == {
        "id": "bigint",
        "extremes": "array<bigint>",
        "floats": "array<float>",
        "text": "string",
        "raw": "array<binary>",  # not valid UTF-8: binary, so the bytes come back exact
        "empty_ints": "array<bigint>",
        "unset": "string",
    }
    got = {r.id: r for r in df.collect()}
    assert got[1].empty_ints == [7, 8] and got[0].text == "日本語 é 🎉"
    assert [bytes(b) for b in got[0].raw] == [b"\xff\xfe\x00", b"\xc3\x28"]


def test_inferred_images_come_back_byte_exact(spark, tf, tmp_path: Path) -> None:
    """JPEG and PNG bytes that TensorFlow encoded are inferred as binary; text stays string."""
    rng = np.random.default_rng(3)
    F = tf.train.Feature
    images = []
    path = tmp_path / "images.tfrecord"
    with tf.io.TFRecordWriter(str(path)) as w:
        for i in range(20):
            pixels = rng.integers(0, 256, size=(16 + i, 24, 3), dtype=np.uint8)
            jpeg = tf.io.encode_jpeg(pixels).numpy()
            png = tf.io.encode_png(pixels).numpy()
            images.append((jpeg, png))
            feature = {
                "image/encoded": F(bytes_list=tf.train.BytesList(value=[jpeg])),
                "image/png": F(bytes_list=tf.train.BytesList(value=[png])),
                "image/format": F(bytes_list=tf.train.BytesList(value=[b"jpeg"])),
                "image/text": F(bytes_list=tf.train.BytesList(value=["é €".encode(), b"ok"])),
                "label": F(int64_list=tf.train.Int64List(value=[i])),
            }
            example = tf.train.Example(features=tf.train.Features(feature=feature))
            w.write(example.SerializeToString())
    df = spark_tfrecord.read(spark, str(path))
    assert {f.name: f.dataType.simpleString() for f in df.schema.fields} == {
        "image/encoded": "binary",
        "image/png": "binary",
        "image/format": "string",
        "image/text": "array<string>",
        "label": "bigint",
    }
    rows = sorted(df.collect(), key=lambda r: r.label)
    assert [(bytes(r["image/encoded"]), bytes(r["image/png"])) for r in rows] == images
    assert {r["image/format"] for r in rows} == {"jpeg"}
    assert all(r["image/text"] == ["é €", "ok"] for r in rows)
    # TensorFlow decodes what came back to the pixels it decodes from its own bytes.
    first = bytes(rows[0]["image/png"])
    assert np.array_equal(tf.io.decode_png(first).numpy(), tf.io.decode_png(images[0][1]).numpy())


@pytest.mark.parametrize("tf_compression,option", [("", None), ("GZIP", "gzip"), ("ZLIB", "zlib")])
def test_tensorflow_shard_names_as_a_directory_or_a_glob(
    spark, tf, tmp_path: Path, tf_compression: str, option: str | None
) -> None:
    """`train.tfrecord-00000-of-00003` and `train-00000-of-00003`: no extension, so a compressed
    shard is read by `compression=`, as TensorFlow reads it by `compression_type`."""
    F = tf.train.Feature
    for prefix in ("train.tfrecord", "train"):
        for s in range(3):
            name = tmp_path / prefix / f"{prefix}-{s:05d}-of-00003"
            name.parent.mkdir(exist_ok=True)
            with tf.io.TFRecordWriter(str(name), options=tf_compression or None) as w:
                for i in range(s * 10, s * 10 + 10):
                    feature = {"id": F(int64_list=tf.train.Int64List(value=[i]))}
                    w.write(
                        tf.train.Example(
                            features=tf.train.Features(feature=feature)
                        ).SerializeToString()
                    )
    options = {"compression": option} if option else {}
    every, first_and_last = list(range(30)), [*range(10), *range(20, 30)]
    for path, expected in (
        (tmp_path / "train.tfrecord", every),
        (tmp_path / "train", every),
        (tmp_path / "train.tfrecord" / "train.tfrecord-*-of-00003", every),
        (tmp_path / "*" / "train*-0000[02]-of-00003", sorted(first_and_last * 2)),
    ):
        df = spark_tfrecord.read(spark, str(path), **options)
        assert sorted(r.id for r in df.collect()) == expected, path
        assert df.count() == len(expected)
