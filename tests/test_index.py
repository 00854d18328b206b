"""Index files for PyTorch and DALI: written with the data (``writeIndex``) and by
``spark-tfrecord index``, read through the ``tfrecord`` package from PyPI with ``index_path`` and
``shard=(i, n)``, whose shards together give the DataFrame back, record for record."""

from __future__ import annotations

import gzip
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import spark_tfrecord
from support import tfrecord_files, tfrecord_package
from support.tfrecord_bytes import index_lines

CLI = [sys.executable, "-m", "spark_tfrecord"]
ROWS = 1000
#: The tfrecord package's names for the kinds: what each column is written as.
DESCRIPTION = {"id": "int", "label": "float", "x": "float", "raw": "byte", "s": "byte"}


def training_set(spark: Any, partitions: int = 3) -> Any:
    return spark.range(ROWS, numPartitions=partitions).selectExpr(
        "id",
        "cast(id % 10 as float) as label",
        "array(cast(id as float), cast(-id as float), 0.5f) as x",
        "unhex(concat('FFD8', hex(id))) as raw",  # a JPEG's first bytes: not UTF-8
        "concat('é', cast(id as string)) as s",
        "cast(id % 2 as string) as day",
    )


def as_tuple(row: Any) -> tuple[Any, ...]:
    """A record as the tfrecord package gives it (int64 and float32 arrays, one bytes value as
    bytes), or a DataFrame row, in one shape."""
    if isinstance(row, dict):
        return (
            row["id"][0],
            row["label"][0],
            tuple(row["x"]),
            row["raw"].encode("latin-1"),
            row["s"].encode("latin-1").decode(),
        )
    return (row.id, row.label, tuple(row.x), bytes(row.raw), row.s)


def shard_union(files: list[tuple[str, str]], n: int, compression: str | None) -> list[Any]:
    """Every record of every shard (i, n) of every file, as PyTorch's workers would read them."""
    request = {"shards": files, "n": n, "description": DESCRIPTION, "compression": compression}
    return [as_tuple(r) for r in tfrecord_package.run(request)]


def indexes(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_text()
        for p in sorted(root.rglob("_*.idx"))
        if not p.name.startswith(".")
    }


@pytest.mark.parametrize("compression", [None, "gzip"])
def test_indexes_shard_the_data_for_the_tfrecord_package(
    spark, out: Path, compression: str | None
) -> None:
    df = training_set(spark).drop("day")
    options = {"compression": compression} if compression else {}
    spark_tfrecord.write(df, str(out), write_index=True, **options)
    data_files = tfrecord_files(out)
    assert len(data_files) == 3
    # Each data file has its index beside it, and there is no other index.
    assert sorted(indexes(out)) == sorted(f"_{f.name}.idx" for f in data_files)
    pairs = spark_tfrecord.indexed_files(str(out))
    assert pairs == [(str(f), str(f.parent / f"_{f.name}.idx")) for f in data_files]
    for data, index in pairs:
        content = Path(data).read_bytes()
        stream = gzip.decompress(content) if compression else content
        assert Path(index).read_text() == index_lines(stream)
        if not compression:  # the tfrecord package's own indexer writes the same file
            theirs = Path(index).parent / "theirs.idx"
            tfrecord_package.run({"create_index": [data, str(theirs)]})
            assert theirs.read_text() == Path(index).read_text()
            theirs.unlink()
    # Spark reads the directory as its data files only.
    back = spark_tfrecord.read(spark, str(out))
    assert not [f for f in back.inputFiles() if f.endswith(".idx")]
    expected = sorted(as_tuple(r) for r in df.collect())
    assert sorted(as_tuple(r) for r in back.collect()) == expected
    for n in (1, 2, 3, 7):
        assert sorted(shard_union(pairs, n, compression)) == expected, f"{n} shards"


def test_partitioned_writes_index_every_file(spark, out: Path) -> None:
    df = training_set(spark)
    spark_tfrecord.write(df, str(out), partition_by="day", write_index=True)
    pairs = spark_tfrecord.indexed_files(str(out))
    assert {Path(d).parent.name for d, _ in pairs} == {"day=0", "day=1"}
    assert len(pairs) == len(tfrecord_files(out)) == len(indexes(out))
    expected = sorted(as_tuple(r) for r in df.collect())
    assert sorted(shard_union(pairs, 4, None)) == expected


def test_codecs_without_an_index_reader_are_refused(spark, out: Path) -> None:
    df = spark.range(3)
    with pytest.raises(Exception, match=r"compression deflate.*Valid compressions") as e:
        spark_tfrecord.write(df, str(out), write_index=True, compression="deflate")
    assert "IllegalArgumentException" in repr(e.value) or "Cannot index" in str(e.value)
    assert not out.exists() or not [p for p in out.rglob("*") if p.is_file()]


def test_a_failed_job_leaves_neither_data_nor_indexes(spark, out: Path) -> None:
    def rows(index: int, ids: Any) -> Any:
        for i in ids:
            yield (i, "x" * 100)
        if index == 1:  # after handing the writer all its rows
            raise RuntimeError("this task fails")

    data = spark.sparkContext.parallelize(range(300), 3).mapPartitionsWithIndex(rows)
    df = spark.createDataFrame(data, "id long, pad string")
    with pytest.raises(Exception, match="this task fails"):
        spark_tfrecord.write(df, str(out), write_index=True)
    # What a reader sees: files outside Hadoop's _temporary, where a straggler task of the
    # aborted job may still write its attempt's files after the abort.
    left = [
        p
        for p in out.rglob("*")
        if p.is_file()
        and not p.name.startswith(".")
        and "_temporary" not in p.relative_to(out).parts
    ]
    assert not [p for p in left if re.search(r"\.(tfrecord|idx)", p.name)], left
    if out.exists():
        assert spark.read.format("tfrecord").schema("id long").load(str(out)).count() == 0


def test_the_index_command_writes_what_the_writer_wrote(spark, tf, tmp_path: Path) -> None:
    out = tmp_path / "spark"
    spark_tfrecord.write(training_set(spark), str(out), partition_by="day", write_index=True)
    written = indexes(out)
    for name in written:
        (out / name).unlink()
    # TensorFlow's own shard names, no extension, GZIP: indexed by --compression gzip.
    shards = tmp_path / "tf"
    shards.mkdir()
    for s in range(2):
        name = str(shards / f"train.tfrecord-{s:05d}-of-00002")
        with tf.io.TFRecordWriter(name, options="GZIP") as w:
            for i in range(s * 50, s * 50 + 50):
                w.write(spark_tfrecord_example(tf, i))
    env = {k: v for k, v in os.environ.items() if k != "SPARK_TFRECORD_DEBUG"}
    done = subprocess.run(
        [*CLI, "index", str(out), "--master", "local[2]"], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    assert indexes(out) == written
    assert re.search(
        r"indexed 6 files: 1,000 records, [\d,]+ bytes in .* MB/s; [\d,.]+ MB/s per task\)",
        done.stdout,
    )
    gz = subprocess.run(
        [*CLI, "index", str(shards / "train.tfrecord-*"), "--compression", "gzip"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert gz.returncode == 0, gz.stderr
    pairs = spark_tfrecord.indexed_files(str(shards))
    assert [Path(d).name for d, _ in pairs] == [f"train.tfrecord-{s:05d}-of-00002" for s in (0, 1)]
    for data, index in pairs:
        assert Path(index).read_text() == index_lines(gzip.decompress(Path(data).read_bytes()))
    request = {"shards": pairs, "n": 3, "description": {"id": "int"}, "compression": "gzip"}
    assert sorted(r["id"][0] for r in tfrecord_package.run(request)) == list(range(100))
    # A damaged file: exit 4 naming it, no index; a deflate file (no reader takes an index of
    # it): exit 2, no index. Both commands at once.
    damaged = tmp_path / "damaged"
    spark_tfrecord.write(spark.range(50).coalesce(1), str(damaged))
    (data,) = tfrecord_files(damaged)
    content = bytearray(data.read_bytes())
    content[len(content) // 2] ^= 1
    data.write_bytes(bytes(content))
    deflate = tmp_path / "deflate"
    spark_tfrecord.write(spark.range(2), str(deflate), compression="deflate")
    commands = [
        subprocess.Popen(
            [*CLI, "index", str(path), "--master", "local[1]"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for path in (damaged, deflate)
    ]
    (_, damaged_err), (_, deflate_err) = (c.communicate() for c in commands)
    assert commands[0].returncode == 4, damaged_err
    assert "TFRecordCorruptException: [TFRECORD_CORRUPT_RECORD." in damaged_err
    assert "] Corrupt TFRecord: " in damaged_err
    assert "checksum mismatch" in damaged_err
    assert data.name in damaged_err
    assert commands[1].returncode == 2, deflate_err
    assert "TFRecordArgumentException: [TFRECORD_INVALID_OPTION] Cannot index" in deflate_err
    assert not indexes(damaged) and not indexes(deflate)


def spark_tfrecord_example(tf: Any, i: int) -> bytes:
    feature = {"id": tf.train.Feature(int64_list=tf.train.Int64List(value=[i]))}
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def test_the_index_command_with_nothing_to_index(tmp_path: Path) -> None:
    """A directory with no file Spark would read (only `_` and `.` names): exit 3, one line."""
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "_SUCCESS").write_bytes(b"")
    (empty / ".hidden.tfrecord").write_bytes(b"")
    done = subprocess.run(
        [*CLI, "index", str(empty), "--master", "local[1]"], capture_output=True, text=True
    )
    assert done.returncode == 3, done.stderr
    assert done.stderr.splitlines()[-1:] == [
        f"spark-tfrecord: error: no TFRecord files under {empty} (is it the right path?)"
    ]
    assert sorted(p.name for p in empty.iterdir()) == [".hidden.tfrecord", "_SUCCESS"]


def test_indexed_files_lists_data_files_as_dataset_info_does(tmp_path: Path) -> None:
    """A TFDS dataset's metadata at the root of its folder is not data (it has no index), as
    ``dataset_info`` lists the folder; below the root such names are data, and hidden names
    (``_``, ``.``) are skipped everywhere."""
    for rel in ("dataset_info.json", "features.json", "label.labels.txt", "_SUCCESS", ".a.crc",
                "_tmp/x.tfrecord", "a.tfrecord", "_a.tfrecord.idx", "day=1/features.json",
                "day=1/_features.json.idx"):  # fmt: skip
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(b"")
    assert spark_tfrecord.indexed_files(str(tmp_path)) == [
        (str(tmp_path / "a.tfrecord"), str(tmp_path / "_a.tfrecord.idx")),
        (str(tmp_path / "day=1" / "features.json"), str(tmp_path / "day=1" / "_features.json.idx")),
    ]
    assert [f.path for f in spark_tfrecord.dataset_info(str(tmp_path)).files] == [
        str(tmp_path / "a.tfrecord"),
        str(tmp_path / "day=1" / "features.json"),
    ]
