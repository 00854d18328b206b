"""Schema inference: kinds, shapes, merging, sampling, determinism. Its errors are in
test_errors.py."""

from __future__ import annotations

from pathlib import Path

import spark_tfrecord
from support.tfrecord_bytes import (
    bytes_list,
    entry,
    example,
    feature,
    float_list_packed,
    int64_list_packed,
    write_records,
)


def test_kinds_and_shapes(spark, out: Path) -> None:
    df = spark.createDataFrame(
        [(1, 0.5, "a", b"\x00", [1, 2], [0.5], ["x", "y"], True)],
        "id long, f double, s string, b binary, ai array<int>, af1 array<float>, "
        "as_ array<string>, flag boolean",
    )
    spark_tfrecord.write(df, str(out))
    schema = spark_tfrecord.read(spark, str(out)).schema
    # Column order is the writer's; a one-element list is a scalar until a longer one is seen.
    assert schema.simpleString() == (
        "struct<id:bigint,f:float,s:string,b:string,ai:array<bigint>,af1:float,"
        "as_:array<string>,flag:bigint>"
    )


def test_merges_kinds_and_lengths_across_files(spark, tmp_path: Path) -> None:
    write_records(
        tmp_path / "a.tfrecord",
        [
            example(
                entry(b"n", feature("int64", int64_list_packed([1]))),
                entry(b"m", feature("int64", int64_list_packed([7]))),
                entry(b"len", feature("int64", int64_list_packed([1]))),
            ),
        ],
    )
    write_records(
        tmp_path / "b.tfrecord",
        [
            example(
                entry(b"n", feature("float", float_list_packed([2.5]))),
                entry(b"m", feature("bytes", bytes_list([b"seven"]))),
                entry(b"len", feature("int64", int64_list_packed([1, 2, 3]))),
            ),
        ],
    )
    df = spark_tfrecord.read(spark, str(tmp_path))
    assert df.schema.simpleString() == "struct<n:float,m:string,len:array<bigint>>"
    got = sorted((r.n, r.m, r.len) for r in df.collect())
    # int64 read into the merged float column; int64 into the merged string column as text.
    assert got == [(1.0, "7", [1]), (2.5, "seven", [1, 2, 3])]


def test_empty_and_unset_features_do_not_crash(spark, tmp_path: Path) -> None:
    write_records(
        tmp_path / "a.tfrecord",
        [
            example(
                entry(b"empty_int", feature("int64", b"")),
                entry(b"unset", b""),
                entry(b"x", feature("int64", int64_list_packed([5]))),
            ),
            example(entry(b"empty_int", feature("int64", b""))),
        ],
    )
    df = spark_tfrecord.read(spark, str(tmp_path))
    assert df.schema.simpleString() == "struct<empty_int:bigint,unset:string,x:bigint>"
    assert sorted(df.collect(), key=str) == sorted([(None, None, 5), (None, None, None)], key=str)


def test_inference_is_deterministic(spark, tmp_path: Path) -> None:
    for i in range(5):
        write_records(
            tmp_path / f"part-{i}.tfrecord",
            [
                example(
                    entry(f"f{i}".encode(), feature("int64", int64_list_packed([i]))),
                    entry(b"common", feature("float", float_list_packed([0.5]))),
                )
            ],
        )
    schemas = {spark_tfrecord.read(spark, str(tmp_path)).schema.simpleString() for _ in range(3)}
    assert schemas == {"struct<f0:bigint,common:float,f1:bigint,f2:bigint,f3:bigint,f4:bigint>"}


def test_sampling_options_limit_what_is_read(spark, tmp_path: Path) -> None:
    for i in range(4):
        write_records(
            tmp_path / f"part-{i}.tfrecord",
            [
                example(entry(f"f{i}".encode(), feature("int64", int64_list_packed([i])))),
                example(entry(f"late{i}".encode(), feature("int64", int64_list_packed([i])))),
            ],
        )
    two_files = spark_tfrecord.read(
        spark, str(tmp_path), inferSchemaMaxFiles=2, inferSchemaMaxRecords=1
    )
    assert two_files.columns == ["f0", "f2"]  # evenly spread over the sorted files
    everything = spark_tfrecord.read(
        spark, str(tmp_path), inferSchemaMaxFiles=-1, inferSchemaMaxRecords=-1
    )
    assert everything.columns == ["f0", "late0", "f1", "late1", "f2", "late2", "f3", "late3"]
    # Columns outside the sample are simply not selected; the rows are all there.
    assert two_files.count() == 8


def test_byte_array_needs_no_inference(spark, tmp_path: Path) -> None:
    write_records(tmp_path / "a.tfrecord", [b"\x00raw", b"", b"\xff" * 3])
    df = spark_tfrecord.read(spark, str(tmp_path), record_type="ByteArray")
    assert df.schema.simpleString() == "struct<byteArray:binary>"
    assert [bytes(r.byteArray) for r in df.collect()] == [b"\x00raw", b"", b"\xff" * 3]
