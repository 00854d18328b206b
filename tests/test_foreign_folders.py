"""Folders that TensorFlow alone wrote (no manifest, no index; GZIP shards named as TFX's
ExampleGen names them, as TensorFlow's sharded writers name them with no ``.gz``, or
uncompressed) read with no columns given: ``dataset_info``, ``torch_dataset``, ``grain_source``,
``tf_dataset``, ``feature_spec`` and ``read_arrow`` infer the schema the jar infers, and give
the values TensorFlow parses, NaN, -0.0, int64 extremes, bytes that are not UTF-8, empty lists
and unset features included; SequenceExamples with the recordType option. A TFDS folder, whose
splits lie side by side, is refused with the glob to use."""

from __future__ import annotations

import math
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import spark_tfrecord
from spark_tfrecord import errors
from spark_tfrecord._format.datasets.inference import as_nullable

pytestmark = pytest.mark.tensorflow

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
SPECIAL = [math.nan, math.inf, -math.inf, -0.0, 1.5]
N = 7
#: Where each layout puts its two shards (records 0-3, then 4-6), and the GZIP option of each.
LAYOUTS = {
    "tfx": (
        [f"Split-train/data_tfrecord-0000{k}-of-00002.gz" for k in range(2)],
        "GZIP",
        "Split-train",
    ),
    "tf-shards": (["train.tfrecord-00000-of-00002", "train.tfrecord-00001-of-00002"], "GZIP", ""),
    "plain": (["a.tfrecord", "b.tfrecord"], "", ""),
}


def values(i: int) -> dict[str, Any]:
    """Record i's features as written: ``label`` unset in record 3, ``x`` empty in every third."""
    found: dict[str, Any] = {
        "id": [i],
        "x": [i / 2] * (i % 3),
        "tokens": [f"t{k}é".encode() for k in range(i % 2 + 1)],
        "raw": [b"\xff\x00" + bytes([i])],
        "f": [SPECIAL[i % len(SPECIAL)]],
        "big": [INT64_MIN if i % 2 else INT64_MAX],
    }
    if i != 3:
        found["label"] = [i % 2]
    return found


def write_folder(tf: Any, root: Path, layout: str) -> Path:
    names, compression, read_at = LAYOUTS[layout]
    for name, ids in zip(names, (range(4), range(4, N))):
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        with tf.io.TFRecordWriter(str(path), options=compression or None) as writer:
            for i in ids:
                feature = {}
                for key, vs in values(i).items():
                    if key in ("id", "big", "label"):
                        feature[key] = tf.train.Feature(int64_list=tf.train.Int64List(value=vs))
                    elif key in ("x", "f"):
                        feature[key] = tf.train.Feature(float_list=tf.train.FloatList(value=vs))
                    else:
                        feature[key] = tf.train.Feature(bytes_list=tf.train.BytesList(value=vs))
                example = tf.train.Example(features=tf.train.Features(feature=feature))
                writer.write(example.SerializeToString())
    return root / read_at if read_at else root


def bits(v: Any) -> Any:
    """A value as comparable text: floats by their float32 bits (NaN, -0.0), bytes as they are."""
    if isinstance(v, (float, np.floating)):
        return ("f32", struct.unpack("<I", struct.pack("<f", float(v)))[0])
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, str):
        return v.encode()
    return v


def flat(value: Any) -> list[Any]:
    """A loader's value of one record as the list of values TensorFlow's Feature holds."""
    if value is None:
        return []
    if isinstance(value, (np.ndarray, torch.Tensor)):
        value = value.tolist()
    if not isinstance(value, (list, tuple)):
        value = [value]
    return [bits(v) for v in value]


def expected(i: int) -> dict[str, list[Any]]:
    return {k: [bits(v) for v in vs] for k, vs in values(i).items()}


@pytest.fixture(scope="module", params=sorted(LAYOUTS))
def folder(request: Any, tf: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_folder(tf, tmp_path_factory.mktemp(request.param), request.param)


def test_dataset_info_counts_and_infers_what_the_jar_infers(spark: Any, folder: Path) -> None:
    info = spark_tfrecord.dataset_info(str(folder))
    assert (info.num_records, info.source, info.schema_source) == (N, "counted", "inferred")
    assert [f.num_records for f in info.files] == [4, 3]
    jar = spark.read.format("tfrecord").load(str(folder))
    # the jar's inferred schema, made nullable as Spark makes every file source's
    assert as_nullable(info.schema_json) == jar.schema.jsonValue()
    # columns in the order their features are first met, which the records' bytes decide
    columns = ["id BIGINT", "x ARRAY<FLOAT>", "tokens ARRAY<STRING>", "raw BINARY", "f FLOAT"]
    assert sorted(info.schema.split(",")) == sorted([*columns, "big BIGINT", "label BIGINT"])
    assert info.record_type == "Example"


def test_torch_dataset_and_grain_source_read_every_value(folder: Path) -> None:
    ds = spark_tfrecord.torch_dataset(str(folder))
    src = spark_tfrecord.grain_source(str(folder))
    assert len(ds) == len(src) == N
    assert ds.schema_source == src.schema_source == "inferred"
    for i in range(N):
        want = expected(i)
        for record in (ds[i], src[i]):
            got = {k: flat(v) for k, v in record.items() if k in want or v is not None}
            assert got == want, i
        assert ds[i]["label"] is None if i == 3 else ds[i]["label"] == i % 2
    # An inferred schema has no value counts: every column batches as (values, offsets).
    batch = next(iter(torch.utils.data.DataLoader(ds, batch_size=N, collate_fn=ds.collate)))
    ids, offsets = batch["id"]
    assert ids.tolist() == list(range(N)) and offsets.tolist() == list(range(N + 1))
    labels, offsets = batch["label"]
    assert labels.tolist() == [i % 2 for i in range(N) if i != 3]
    assert offsets.tolist() == [0, 1, 2, 3, 3, 4, 5, 6]
    assert batch["big"][0].tolist() == [INT64_MIN if i % 2 else INT64_MAX for i in range(N)]
    xs, offsets = batch["x"]
    assert offsets.tolist() == np.cumsum([0] + [i % 3 for i in range(N)]).tolist()
    assert xs.tolist() == [i / 2 for i in range(N) for _ in range(i % 3)]


def test_tf_dataset_and_feature_spec_parse_as_tensorflow_does(tf: Any, folder: Path) -> None:
    ds = spark_tfrecord.tf_dataset(str(folder), batch_size=N)
    assert int(ds.cardinality()) == 1
    batch = next(iter(ds))
    spec = spark_tfrecord.feature_spec(str(folder))
    assert sorted(spec) == sorted(batch)
    files = [str(f) for f in sorted(folder.rglob("*")) if f.is_file()]
    kind = "" if files[0].endswith(".tfrecord") else "GZIP"
    raw = tf.data.TFRecordDataset(files, compression_type=kind).batch(N)
    theirs = tf.io.parse_example(next(iter(raw)), spec)
    for parsed in (batch, theirs):
        for key, tensor in parsed.items():
            if isinstance(tensor, tf.SparseTensor):
                rows: list[list[Any]] = [[] for _ in range(N)]
                for (r, _), v in zip(tensor.indices.numpy().tolist(), tensor.values.numpy()):
                    rows[r].append(bits(v))
            else:
                rows = [[bits(v) for v in row] for row in tensor.to_list()]
            assert rows == [expected(i).get(key, []) for i in range(N)], key


def test_read_arrow_reads_every_value(spark: Any, folder: Path) -> None:
    """The jar's schema and values, in the files' order, with no columns given."""
    table = spark_tfrecord.read_arrow(str(folder)).read_all()
    assert table.num_rows == N
    jar = spark.read.format("tfrecord").load(str(folder))
    assert table.schema.names == jar.columns
    rows = table.to_pylist()
    for i, row in enumerate(rows):
        want = expected(i)
        got = {k: flat(v) for k, v in row.items() if k in want or v is not None}
        assert got == want, i
    ours = sorted(rows, key=lambda r: r["id"])
    theirs = [r.asDict() for r in jar.orderBy("id").collect()]
    assert [{k: flat(v) for k, v in r.items()} for r in ours] == [
        {k: flat(v) for k, v in r.items()} for r in theirs
    ]


def test_options_pick_the_record_type_and_bad_ones_are_refused(folder: Path) -> None:
    raw = spark_tfrecord.torch_dataset(str(folder), options={"recordType": "ByteArray"})
    assert raw.keys == ["byteArray"] and len(raw[0]["byteArray"]) > 0
    with pytest.raises(errors.ArgumentError, match="recordType"):
        spark_tfrecord.torch_dataset(str(folder), options={"recordType": "Exampel"})
    with pytest.raises(errors.ArgumentError, match="inferSchemaMaxFiles"):
        spark_tfrecord.dataset_info(str(folder), options={"nope": "1"})


def test_a_given_ddl_still_wins_and_is_the_projection(folder: Path) -> None:
    ds = spark_tfrecord.torch_dataset(str(folder), "id long, x array<float>")
    assert ds.schema_source == "given" and sorted(ds[2]) == ["id", "x"]
    assert ds[2]["x"].tolist() == [1.0, 1.0]


def test_a_tfds_folder_is_refused_with_the_glob_to_use(tf: Any, tmp_path: Path) -> None:
    write_folder(tf, tmp_path, "plain")
    for name in ("a.tfrecord", "b.tfrecord"):
        (tmp_path / name).rename(tmp_path / f"ds-train.tfrecord-0000{name[0] == 'b':d}-of-00002")
    (tmp_path / "dataset_info.json").write_text("{}", encoding="utf-8")
    with pytest.raises(errors.ArgumentError, match="is a TensorFlow Datasets folder") as refused:
        spark_tfrecord.torch_dataset(str(tmp_path))
    assert errors.condition(refused.value) == errors.DATASET_FOLDER
    ds = spark_tfrecord.torch_dataset(str(tmp_path / "ds-train.tfrecord*"))
    assert len(ds) == N and [int(ds[i]["id"]) for i in range(N)] == list(range(N))


def test_sequence_examples_tensorflow_wrote(spark: Any, tf: Any, tmp_path: Path) -> None:
    """GZIP shards of SequenceExamples, read with the data source's recordType option."""
    for shard, ids in enumerate((range(3), range(3, 5))):
        name = tmp_path / f"seq.tfrecord-0000{shard}-of-00002"
        with tf.io.TFRecordWriter(str(name), options="GZIP") as writer:
            for i in ids:
                context = tf.train.Features(
                    feature={"id": tf.train.Feature(int64_list=tf.train.Int64List(value=[i]))}
                )
                steps = [
                    tf.train.Feature(int64_list=tf.train.Int64List(value=[i * 10 + k] * (k + 1)))
                    for k in range(i % 3)
                ]
                lists = tf.train.FeatureLists(
                    feature_list={"clicks": tf.train.FeatureList(feature=steps)}
                )
                example = tf.train.SequenceExample(context=context, feature_lists=lists)
                writer.write(example.SerializeToString())
    options = {"recordType": "SequenceExample"}
    info = spark_tfrecord.dataset_info(str(tmp_path), options=options)
    assert (info.num_records, info.record_type, info.schema) == (
        5,
        "SequenceExample",
        "id BIGINT,clicks ARRAY<ARRAY<BIGINT>>",
    )
    jar = spark.read.format("tfrecord").options(**options).load(str(tmp_path))
    assert as_nullable(info.schema_json) == jar.schema.jsonValue()
    ds = spark_tfrecord.torch_dataset(str(tmp_path), options=options)
    want = {i: [[i * 10 + k] * (k + 1) for k in range(i % 3)] for i in range(5)}
    got = {int(ds[j]["id"]): ds[j]["clicks"] for j in range(len(ds))}
    assert sorted(got) == list(range(5))
    for i, ragged in got.items():
        assert [[int(v) for v in step] for step in ragged.to_list()] == want[i], i
    parsed = next(iter(spark_tfrecord.tf_dataset(str(tmp_path), batch_size=5, options=options)))
    assert parsed["clicks"].to_list() == [want[i] for i in range(5)]
    assert [r.clicks for r in jar.orderBy("id").collect()] == [want[i] for i in range(5)]
