"""What a read does with bad input: the `mode` option (FAILFAST, PERMISSIVE with its corrupt-record
column, DROPMALFORMED) for malformed records, and Spark's ignoreCorruptFiles / ignoreMissingFiles
switches for damaged and vanished files."""

from __future__ import annotations

from pathlib import Path

import pytest

import spark_tfrecord
from support.tfrecord_bytes import (
    bytes_list,
    entry,
    example,
    feature,
    frame,
    int64_list_packed,
    write_records,
)


def good(i: int) -> bytes:
    return example(entry(b"id", feature("int64", int64_list_packed([i]))))


def corrupt_file(path: Path, good_ids: list[int]) -> Path:
    """Good records, then one whose data checksum is wrong, then more good ones."""
    bad = bytearray(frame(good(999)))
    bad[-1] ^= 0xFF
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(frame(good(i)) for i in good_ids) + bytes(bad) + frame(good(1000)))
    return path


def test_ignore_corrupt_files_option_and_conf(spark, tmp_path: Path) -> None:
    write_records(tmp_path / "a.tfrecord", [good(i) for i in range(3)])
    corrupt_file(tmp_path / "b.tfrecord", [10, 11])
    with pytest.raises(Exception, match="data checksum mismatch"):
        spark_tfrecord.read(spark, str(tmp_path), schema="id long").collect()
    kept = spark_tfrecord.read(spark, str(tmp_path), schema="id long", ignoreCorruptFiles=True)
    assert sorted(r.id for r in kept.collect()) == [0, 1, 2, 10, 11]
    spark.conf.set("spark.sql.files.ignoreCorruptFiles", "true")
    try:
        df = spark_tfrecord.read(spark, str(tmp_path), schema="id long")
        assert sorted(r.id for r in df.collect()) == [0, 1, 2, 10, 11]
        # Inference honours it too: the corrupt file comes first in path order here.
        (tmp_path / "inf").mkdir()
        corrupt_file(tmp_path / "inf" / "a.tfrecord", [])
        write_records(tmp_path / "inf" / "b.tfrecord", [good(5)])
        assert spark_tfrecord.read(spark, str(tmp_path / "inf")).columns == ["id"]
    finally:
        spark.conf.unset("spark.sql.files.ignoreCorruptFiles")
    with pytest.raises(Exception, match="data checksum mismatch"):
        spark_tfrecord.read(spark, str(tmp_path / "inf"))


def test_ignore_missing_files(spark, tmp_path: Path) -> None:
    write_records(tmp_path / "a.tfrecord", [good(1)])
    doomed = write_records(tmp_path / "b.tfrecord", [good(2)])
    df = spark_tfrecord.read(spark, str(tmp_path), schema="id long", ignoreMissingFiles=True)
    strict = spark_tfrecord.read(spark, str(tmp_path), schema="id long")
    doomed.unlink()  # after listing, before reading
    assert [r.id for r in df.collect()] == [1]
    with pytest.raises(Exception, match=r"(?i)(does not exist|FileNotFound|No such file)"):
        strict.collect()


def malformed_file(path: Path) -> Path:
    return write_records(
        path,
        [
            good(1),
            b"\x0a\x05\x0a",  # truncated protobuf
            example(entry(b"id", feature("bytes", bytes_list([b"x"])))),  # wrong kind
            example(entry(b"id", feature("int64", int64_list_packed([1, 2])))),  # too many
            good(2),
        ],
    )


def test_mode_dropmalformed(spark, tmp_path: Path) -> None:
    path = malformed_file(tmp_path / "m.tfrecord")
    df = spark_tfrecord.read(spark, str(path), schema="id long", mode="DROPMALFORMED")
    assert [r.id for r in df.collect()] == [1, 2]


def test_mode_permissive_keeps_the_bytes(spark, tmp_path: Path) -> None:
    path = malformed_file(tmp_path / "m.tfrecord")
    for column_type in ("binary", "string"):
        df = spark_tfrecord.read(
            spark, str(path), schema=f"id long, _corrupt_record {column_type}", mode="permissive"
        )
        rows = [(r.id, r._corrupt_record) for r in df.collect()]
        assert [r[0] for r in rows] == [1, None, None, None, 2]
        assert rows[0][1] is None and rows[4][1] is None
        raw = bytes(rows[1][1]) if column_type == "binary" else rows[1][1].encode("latin-1")
        assert raw == b"\x0a\x05\x0a"
    custom = spark_tfrecord.read(
        spark,
        str(path),
        schema="id long, bad binary",
        mode="PERMISSIVE",
        columnNameOfCorruptRecord="bad",
    )
    assert [r.bad is None for r in custom.collect()] == [True, False, False, False, True]
    # Without the column, PERMISSIVE still keeps every record, as nulls.
    plain = spark_tfrecord.read(spark, str(path), schema="id long", mode="PERMISSIVE")
    assert [r.id for r in plain.collect()] == [1, None, None, None, 2]


def test_mode_errors(spark, tmp_path: Path) -> None:
    path = malformed_file(tmp_path / "m.tfrecord")
    with pytest.raises(Exception, match=r"Malformed tf\.train\.Example"):
        spark_tfrecord.read(spark, str(path), schema="id long", mode="FAILFAST").collect()
    with pytest.raises(Exception, match="Valid values: FAILFAST, PERMISSIVE, DROPMALFORMED"):
        spark_tfrecord.read(spark, str(path), schema="id long", mode="lenient").collect()
    with pytest.raises(Exception, match="corrupt-record column '_corrupt_record' must be binary"):
        spark_tfrecord.read(
            spark, str(path), schema="id long, _corrupt_record int", mode="PERMISSIVE"
        ).collect()
