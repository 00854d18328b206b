"""GZIP and ZLIB files whose names say nothing, as TensorFlow's own sharded writers leave them
(``tf.io.TFRecordWriter(path, options="GZIP")`` into ``train.tfrecord-00000-of-00002``): read
by their first bytes in every reader, whole or in splits."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import spark_tfrecord
from spark_tfrecord import errors

SHARDS, PER_SHARD = 2, 300
MAGIC = {"GZIP": b"\x1f\x8b\x08", "ZLIB": b"\x78"}


def _example(tf: Any, i: int) -> Any:
    f = tf.train
    return f.Example(
        features=f.Features(
            feature={
                "id": f.Feature(int64_list=f.Int64List(value=[i])),
                "name": f.Feature(bytes_list=f.BytesList(value=[f"n{i}".encode()])),
                "x": f.Feature(float_list=f.FloatList(value=[i / 4, -i])),
            }
        )
    )


def _tf_shards(tf: Any, folder: Path, tf_type: str) -> list[list[bytes]]:
    """Writes the shards with TensorFlow's writer; returns each shard's serialized records."""
    folder.mkdir()
    shards = []
    for shard in range(SHARDS):
        path = folder / f"train.tfrecord-{shard:05d}-of-{SHARDS:05d}"
        records = [
            _example(tf, i).SerializeToString()
            for i in range(shard * PER_SHARD, (shard + 1) * PER_SHARD)
        ]
        with tf.io.TFRecordWriter(str(path), options=tf_type) as writer:
            for record in records:
                writer.write(record)
        assert path.read_bytes().startswith(MAGIC[tf_type])
        shards.append(records)
    return shards


def _expected() -> list[tuple[int, str, list[float]]]:
    return [(i, f"n{i}", [i / 4, float(-i)]) for i in range(SHARDS * PER_SHARD)]


@pytest.mark.parametrize("tf_type", ["GZIP", "ZLIB"])
def test_tensorflow_shards_without_extension_read_value_for_value(
    spark, tf, tmp_path: Path, tf_type: str
) -> None:
    data = tmp_path / "data"
    _tf_shards(tf, data, tf_type)
    df = spark.read.format("tfrecord").load(str(data))
    # Columns in the order of the features in the first record: TensorFlow's map order.
    types = {f.name: f.dataType.simpleString() for f in df.schema}
    assert types == {"id": "bigint", "name": "string", "x": "array<float>"}
    rows = sorted((r.id, r.name, list(r.x)) for r in df.collect())
    assert rows == _expected()
    assert df.count() == SHARDS * PER_SHARD
    # Given as what TensorFlow reads them with, or as none (the default), they read the same.
    for compression in ("gzip" if tf_type == "GZIP" else "zlib", "none"):
        again = spark_tfrecord.read(spark, str(data), compression=compression)
        assert sorted((r.id, r.name, list(r.x)) for r in again.collect()) == _expected()


@pytest.mark.parametrize("tf_type", ["GZIP", "ZLIB"])
def test_split_files_are_read_once_by_the_split_at_their_start(
    spark, tf, tmp_path: Path, tf_type: str
) -> None:
    data = tmp_path / "data"
    _tf_shards(tf, data, tf_type)
    sizes = [p.stat().st_size for p in sorted(data.iterdir())]
    assert min(sizes) > 4 * 1024  # several splits of 1 KiB each
    previous = {
        k: spark.conf.get(k)
        for k in ("spark.sql.files.maxPartitionBytes", "spark.sql.files.openCostInBytes")
    }
    spark.conf.set("spark.sql.files.maxPartitionBytes", "1024")
    spark.conf.set("spark.sql.files.openCostInBytes", "0")
    try:
        df = spark_tfrecord.read(spark, str(data), schema="id long, name string, x array<float>")
        # Planned by name, as Spark plans: each file in splits, most of which read nothing.
        assert df.rdd.getNumPartitions() >= sum(s // 1024 for s in sizes)
        rows = sorted((r.id, r.name, list(r.x)) for r in df.collect())
        assert rows == _expected()  # none lost, none doubled
        assert df.count() == SHARDS * PER_SHARD
    finally:
        for k, v in previous.items():
            spark.conf.set(k, v)


def test_local_tools_and_index_detect_gzip(spark, tf, tmp_path: Path) -> None:
    data = tmp_path / "data"
    shards = _tf_shards(tf, data, "GZIP")
    files = sorted(str(p) for p in data.iterdir())
    # spark_tfrecord.local in a process of its own, as a script or the CLI uses it: its JVM
    # (JPype) in this process, beside TensorFlow's libraries, crashed pytest's exit (SIGSEGV).
    script = (
        "import json, sys\n"
        "from spark_tfrecord import local\n"
        "files = json.loads(sys.argv[1])\n"
        "schema = local.infer_schema(files)\n"
        "print(json.dumps({'counts': [local.count_records(f) for f in files], 'schema': schema,"
        " 'head': local.head(files, schema, 2)}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, json.dumps(files)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.splitlines()[-1])
    assert got["counts"] == [PER_SHARD] * SHARDS
    assert {f["name"]: f["type"] for f in got["schema"]["fields"]} == {
        "id": "long",
        "name": "string",
        "x": {"type": "array", "elementType": "float", "containsNull": False},
    }
    assert got["head"][1] == {"id": 1, "name": "n1", "x": [0.25, -1.0]}
    jvm: Any = spark._jvm
    lines = jvm.io.github.sparktfrecord.tools.TFRecordIndex.indexFiles(
        spark._jsparkSession, [str(data)], {}
    )
    assert [str(line).split("\t")[0] for line in lines] == [str(PER_SHARD)] * SHARDS
    for f, records in zip(files, shards):
        # Offsets in the uncompressed stream, as the tfrecord package's gzip reader seeks.
        offsets, at = [], 0
        for record in records:
            offsets.append(f"{at} {12 + len(record) + 4}")
            at += 12 + len(record) + 4
        index = Path(spark_tfrecord.index_path(f)).read_text()
        assert index.splitlines() == offsets


def test_zlib_files_found_by_their_bytes_are_not_indexed(spark, tf, tmp_path: Path) -> None:
    data = tmp_path / "data"
    _tf_shards(tf, data, "ZLIB")
    jvm: Any = spark._jvm
    with pytest.raises(Exception) as err:
        jvm.io.github.sparktfrecord.tools.TFRecordIndex.indexFiles(
            spark._jsparkSession, [str(data)], {}
        )
    assert errors.condition(err.value) == errors.INVALID_OPTION
    assert "Cannot index " in str(err.value)
    assert "train.tfrecord-0000" in str(err.value)
    assert "(compression deflate)" in str(err.value)
    assert not list(data.glob("_*"))  # no index, not even a partial one


def test_a_corrupt_first_header_names_the_codec_its_bytes_suggest(spark, tmp_path: Path) -> None:
    path = tmp_path / "shard-00000-of-00001"
    path.write_bytes(b"BZh91AY&SY" + bytes(range(40)))
    with pytest.raises(Exception) as err:
        spark_tfrecord.read(spark, str(path), schema="id long").collect()
    assert errors.condition(err.value) == errors.LENGTH_CHECKSUM
    assert (
        "Corrupt TFRecord: length checksum mismatch (the file's first bytes are bzip2's: set "
        "compression=bzip2 with allowNonTensorFlowCodec=true) at byte offset 0 of"
    ) in str(err.value)
