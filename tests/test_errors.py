"""Every refusal names what is wrong: the option and its valid values, the column, the file.

Error behaviour lives in this file and its family, `test_errors_*.py`:

- here: options and their valid values (codecs included), column types and values that do not
  fit, damaged files and hostile protobuf, every row of docs/errors.md, inference's errors;
- `test_errors_columns.py`: maps, nested columns and SequenceExample feature lists that cannot be
  read or written as asked, each naming the column;
- `test_errors_modes.py`: the read modes (FAILFAST, PERMISSIVE, DROPMALFORMED) and Spark's
  ignoreCorruptFiles / ignoreMissingFiles;
- `test_errors_conditions.py`: the error conditions and parameters, as a program matches them;
- `test_errors_first_lines.py`: the first lines a PySpark user reads;
- `test_errors_troubleshooting.py`: the troubleshooting table of docs/errors.md;
- `test_errors_hostile_lengths.py`: headers that lie about their length, on a small heap.

Refusals that belong to one feature stay with it: TFDS writes in test_tfds.py, the CLI's exit
codes in test_cli.py, Spark Connect in test_connect.py, the Python helpers' arguments in
test_python_api.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import spark_tfrecord
from support.tfrecord_bytes import (
    bytes_list,
    entry,
    example,
    feature,
    field,
    float_list_packed,
    frame,
    int64_list_packed,
    ld,
    varint,
    write_records,
)


def test_unknown_record_type_lists_valid_values(spark, tmp_path: Path) -> None:
    write_records(tmp_path / "a.tfrecord", [example()])
    expected = (
        "Invalid value 'Exampel' for TFRecord option 'recordType'. Valid values: "
        "Example, SequenceExample, ByteArray"
    )
    with pytest.raises(Exception, match=expected):
        spark.read.format("tfrecord").option("recordType", "Exampel").load(str(tmp_path))
    df = spark.createDataFrame([(1,)], "id long")
    with pytest.raises(Exception, match=expected):
        df.write.format("tfrecord").option("recordType", "Exampel").save(str(tmp_path / "w"))
    assert not (tmp_path / "w").exists() or not list((tmp_path / "w").glob("part-*"))


@pytest.mark.parametrize(
    "option,value,valid",
    [
        ("inferSchemaMaxFiles", "0", "a positive integer, -1"),
        ("maxRecordBytes", "lots", "an integer from 1 to"),
        ("verifyChecksums", "yes", "true, false"),
    ],
)
def test_bad_option_values(spark, tmp_path: Path, option: str, value: str, valid: str) -> None:
    write_records(tmp_path / "a.tfrecord", [example(entry(b"x", feature("int64", b"")))])
    with pytest.raises(Exception, match=f"option '{option}'. Valid values: {valid}"):
        spark.read.format("tfrecord").option(option, value).load(str(tmp_path)).collect()


@pytest.mark.parametrize(
    "ddl,column",
    [
        ("m map<string,int>", "m"),
        ("s struct<a:map<string,int>>", "s"),
        ("deep array<array<map<string,int>>>", "deep"),
        ("am array<map<string,int>>", "am"),
    ],
)
def test_unsupported_column_types_fail_before_writing(
    spark, out: Path, ddl: str, column: str
) -> None:
    df = spark.sql("select 1 as id").selectExpr(
        "id", f"cast(null as {ddl.split(' ', 1)[1]}) as {column}"
    )
    with pytest.raises(Exception) as err:
        spark_tfrecord.write(df, str(out))
    message = str(err.value)
    assert f"'{column}'" in message or f"`{column}`" in message
    assert "cannot hold" in message or "doesn't support" in message
    assert not list(out.glob("part-*"))


def test_deep_nested_array_error_in_sequence_example_hints_at_example(spark, out: Path) -> None:
    df = spark.createDataFrame([([[[1]]],)], "nested array<array<array<int>>>")
    with pytest.raises(Exception, match="written ragged with recordType Example"):
        spark_tfrecord.write(df, str(out), record_type="SequenceExample")


def test_null_array_element_names_the_column(spark, out: Path) -> None:
    df = spark.createDataFrame([([1, None, 3],)], "xs array<int>")
    with pytest.raises(
        Exception, match="Column 'xs' holds an array with a null element at index 1"
    ):
        spark_tfrecord.write(df, str(out))


def test_byte_array_write_needs_one_binary_column(spark, out: Path) -> None:
    df = spark.createDataFrame([(1, b"x")], "id long, payload binary")
    with pytest.raises(Exception, match="recordType ByteArray writes exactly one binary column"):
        spark_tfrecord.write(df, str(out), record_type="ByteArray")


def test_scalar_column_with_many_values(spark, tmp_path: Path) -> None:
    first = example(entry(b"x", feature("int64", int64_list_packed([1]))))
    path = write_records(
        tmp_path / "many.tfrecord",
        [first, example(entry(b"x", feature("int64", int64_list_packed([1, 2, 3]))))],
    )
    with pytest.raises(Exception) as err:
        spark_tfrecord.read(spark, str(path), schema="x long").collect()
    message = str(err.value)
    assert "Column 'x' (bigint) is a scalar but the feature holds 3 values" in message
    assert "read it as array<bigint>" in message
    assert f"at byte offset {len(frame(first))} of" in message and "many.tfrecord" in message


@pytest.mark.parametrize(
    "schema,values,message",
    [
        ("x int", [2**31], "Column 'x' (int) cannot hold the value 2147483648"),
        ("x tinyint", [-129], "Column 'x' (tinyint) cannot hold the value -129"),
        ("x boolean", [2], "cannot hold the value 2 (a boolean is stored as 0 or 1)"),
        ("x decimal(3,1)", [1000], "Column 'x' (decimal(3,1)) cannot hold the value 1000"),
        ("x binary", [1], "Column 'x' (binary) cannot be read from a int64_list feature"),
    ],
)
def test_values_that_do_not_fit(
    spark, tmp_path: Path, schema: str, values: list[int], message: str
) -> None:
    path = write_records(
        tmp_path / "a.tfrecord", [example(entry(b"x", feature("int64", int64_list_packed(values))))]
    )
    with pytest.raises(Exception, match=message.replace("(", r"\(").replace(")", r"\)")):
        spark_tfrecord.read(spark, str(path), schema=schema).collect()


def test_kind_mismatch(spark, tmp_path: Path) -> None:
    path = write_records(
        tmp_path / "a.tfrecord",
        [
            example(
                entry(b"f", feature("float", float_list_packed([0.5]))),
                entry(b"s", feature("bytes", bytes_list([b"a"]))),
            )
        ],
    )
    with pytest.raises(Exception, match=r"Column 'f' \(bigint\) cannot be read from a float_list"):
        spark_tfrecord.read(spark, str(path), schema="f long").collect()
    with pytest.raises(Exception, match=r"Column 's' \(float\) cannot be read from a bytes_list"):
        spark_tfrecord.read(spark, str(path), schema="s float").collect()


def test_malformed_protobuf_names_file_and_offset(spark, tmp_path: Path) -> None:
    good = example(entry(b"x", feature("int64", int64_list_packed([1]))))
    path = write_records(tmp_path / "bad.tfrecord", [good, b"\x0a\x05\x0a"])
    with pytest.raises(Exception) as err:
        spark_tfrecord.read(spark, str(path), schema="x long").collect()
    assert "Malformed tf.train.Example" in str(err.value)
    assert f"at byte offset {len(frame(good))} of" in str(err.value)
    assert "bad.tfrecord" in str(err.value)


def test_corrupt_checksum_names_file_and_offset(spark, tmp_path: Path) -> None:
    good = frame(example(entry(b"x", feature("int64", int64_list_packed([1])))))
    bad = bytearray(good)
    bad[-1] ^= 0x01
    path = tmp_path / "crc.tfrecord"
    path.write_bytes(good + bytes(bad))
    for schema in ("x long", "x long"):  # with columns, and for count() below
        with pytest.raises(
            Exception, match=f"data checksum mismatch at byte offset {len(good)} of"
        ):
            spark_tfrecord.read(spark, str(path), schema=schema).collect()
    with pytest.raises(Exception, match="data checksum mismatch"):
        spark_tfrecord.read(spark, str(path), schema="x long").count()
    # verifyChecksums=false trusts the data CRC (the length CRC is always checked).
    assert (
        spark_tfrecord.read(spark, str(path), schema="x long", verifyChecksums=False).count() == 2
    )


def test_truncated_file(spark, tmp_path: Path) -> None:
    good = frame(example(entry(b"x", feature("int64", int64_list_packed([1])))))
    path = tmp_path / "short.tfrecord"
    data_bytes = len(good) - 16
    for cut, what in (
        (5, "Truncated TFRecord: 5 of 12 header bytes"),
        (
            len(good) - 2,
            f"Truncated TFRecord: the header claims {data_bytes} data bytes, but the file ends "
            f"{data_bytes + 2} bytes after it",
        ),
    ):
        path.write_bytes(good + good[:cut])
        with pytest.raises(Exception, match=f"{what} at byte offset {len(good)} of"):
            spark_tfrecord.read(spark, str(path), schema="x long").count()
    # In a compressed stream the length is not known up front: the stream simply ends.
    import gzip

    packed = tmp_path / "short.tfrecord.gz"
    packed.write_bytes(gzip.compress(good + good[:-2]))
    with pytest.raises(
        Exception,
        match=f"Truncated TFRecord: stream ends inside a record of {data_bytes} data bytes at "
        f"byte offset {len(good)} of",
    ):
        spark_tfrecord.read(spark, str(packed), schema="x long").collect()


def test_huge_length_field_is_refused_without_allocating(spark, tmp_path: Path) -> None:
    import struct

    from support.tfrecord_bytes import masked_crc

    header = struct.pack("<Q", 2**60)
    path = tmp_path / "huge.tfrecord"
    path.write_bytes(header + struct.pack("<I", masked_crc(header)) + b"\x00" * 32)
    with pytest.raises(
        Exception, match="TFRecord of 1152921504606846976 bytes exceeds maxRecordBytes"
    ):
        spark_tfrecord.read(spark, str(path), schema="x long").count()


# --- every row of docs/errors.md ---------------------------------------------------------------


def one(i: int) -> bytes:
    return example(entry(b"x", feature("int64", int64_list_packed([i]))))


def test_length_checksum_mismatch_even_without_data_checksums(spark, tmp_path: Path) -> None:
    good = frame(one(1))
    bad = bytearray(frame(one(2)))
    bad[9] ^= 0x04  # inside the length's CRC
    path = tmp_path / "len.tfrecord"
    path.write_bytes(good + bytes(bad) + good)
    message = f"Corrupt TFRecord: length checksum mismatch at byte offset {len(good)} of"
    for verify in (True, False):  # verifyChecksums=false skips the data CRC only
        with pytest.raises(Exception, match=message):
            spark_tfrecord.read(spark, str(path), schema="x long", verifyChecksums=verify).collect()
        with pytest.raises(Exception, match=message):
            spark_tfrecord.read(spark, str(path), schema="x long", verifyChecksums=verify).count()


def test_lying_length_in_an_uncompressed_file_is_a_truncation(spark, tmp_path: Path) -> None:
    from support.tfrecord_bytes import lying_header

    good = frame(one(1))
    path = tmp_path / "lie.tfrecord"
    path.write_bytes(good + lying_header(1000) + b"\x00" * 50)
    with pytest.raises(
        Exception,
        match="Truncated TFRecord: the header claims 1000 data bytes, but the file ends 50 "
        f"bytes after it at byte offset {len(good)} of",
    ):
        spark_tfrecord.read(spark, str(path), schema="x long").collect()


def test_low_max_record_bytes(spark, tmp_path: Path) -> None:
    small, big = one(1), example(entry(b"x", feature("int64", int64_list_packed([2**62]))))
    path = write_records(tmp_path / "a.tfrecord", [small, big])
    limit = len(small)
    assert len(big) > limit
    df = spark_tfrecord.read(spark, str(path), schema="x long", maxRecordBytes=str(limit))
    with pytest.raises(
        Exception,
        match=f"TFRecord of {len(big)} bytes exceeds maxRecordBytes \\({limit}\\) at byte offset "
        f"{len(frame(small))} of",
    ):
        df.collect()
    kept = spark_tfrecord.read(
        spark,
        str(path),
        schema="x long",
        maxRecordBytes=str(limit),
        ignoreCorruptFiles=True,
    )
    assert [r.x for r in kept.collect()] == [1]
    with pytest.raises(Exception, match="Valid values: an integer from 1 to"):
        spark_tfrecord.read(spark, str(path), schema="x long", maxRecordBytes="0").collect()


@pytest.mark.parametrize("compression", ["gzip", "deflate"])
def test_damaged_compressed_streams(spark, tmp_path: Path, compression: str) -> None:
    import gzip
    import zlib

    # Large enough that the damage lies several 64 KiB reads into the decompressed stream.
    content = b"".join(frame(one(i)) for i in range(20000))
    packed = gzip.compress(content) if compression == "gzip" else zlib.compress(content)
    extension = ".gz" if compression == "gzip" else ".deflate"
    # Not a stream of that kind at all: the decompressor refuses it when the file is opened.
    header = tmp_path / f"header.tfrecord{extension}"
    header.write_bytes(b"PK\x03\x04" + packed[4:])
    with pytest.raises(Exception) as err:
        spark_tfrecord.read(spark, str(header), schema="x long").collect()
    assert "header.tfrecord" in str(err.value)
    # The stream is checked against the codec's magic bytes when the file is opened.
    codec = "gzip" if compression == "gzip" else "deflate"
    assert (
        f"Cannot decompress as {codec}, as its name says (the file does not start as a {codec} "
        "stream does) at byte offset 0 of"
    ) in str(err.value)
    # Damaged in the middle: the records before the damage are fine, then the stream fails.
    middle = bytearray(packed)
    for i in range(len(middle) // 2, len(middle) // 2 + 64):
        middle[i] ^= 0x5A
    damaged = tmp_path / f"middle.tfrecord{extension}"
    damaged.write_bytes(bytes(middle))
    with pytest.raises(Exception, match=r"(Cannot read TFRecord \(|Corrupt TFRecord: )"):
        spark_tfrecord.read(spark, str(damaged), schema="x long").collect()
    kept = spark_tfrecord.read(spark, str(damaged), schema="x long", ignoreCorruptFiles=True)
    ids = [r.x for r in kept.collect()]
    assert 0 < len(ids) < 20000 and ids == list(range(len(ids)))


def test_data_checksum_met_by_a_split_searching_for_its_first_record(spark, tmp_path: Path) -> None:
    first = frame(example(entry(b"x", feature("bytes", bytes_list([b"a" * 200])))))
    bad = bytearray(frame(example(entry(b"x", feature("bytes", bytes_list([b"b" * 10]))))))
    bad[-1] ^= 0x01
    path = tmp_path / "split.tfrecord"
    path.write_bytes(first + bytes(bad))
    # A later split starts inside the first record's data and finds the bad one.
    spark.conf.set("spark.sql.files.maxPartitionBytes", "100")
    spark.conf.set("spark.sql.files.openCostInBytes", "0")
    try:
        df = spark_tfrecord.read(spark, str(path), schema="x binary")
        assert df.rdd.getNumPartitions() == -(-path.stat().st_size // 100)
        assert len(first) >= 100  # the bad record is not the first split's to read
        with pytest.raises(
            Exception,
            match="Corrupt TFRecord: data checksum mismatch \\(found while looking for the first "
            f"record of a split\\) at byte offset {len(first)} of",
        ):
            df.collect()
        with pytest.raises(Exception, match="found while looking for the first record"):
            df.count()
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")
        spark.conf.unset("spark.sql.files.openCostInBytes")


def test_a_split_checks_the_header_it_stops_at(spark, tmp_path: Path) -> None:
    # The first record ends inside the second split, at a header whose length CRC is wrong: the
    # second split's search passes over it, so the first split's reader must report it.
    def blob(data: bytes) -> bytes:
        return frame(example(entry(b"x", feature("bytes", bytes_list([data])))))

    first, bad = blob(b"a" * 120), bytearray(blob(b"b"))
    bad[8] ^= 0x01
    path = tmp_path / "stop.tfrecord"
    path.write_bytes(first + bytes(bad) + blob(b"c"))
    spark.conf.set("spark.sql.files.maxPartitionBytes", "100")
    spark.conf.set("spark.sql.files.openCostInBytes", "0")
    try:
        df = spark_tfrecord.read(spark, str(path), schema="x binary")
        assert df.rdd.getNumPartitions() == -(-path.stat().st_size // 100)
        assert 100 <= len(first) < 200  # the first record ends inside the second split
        with pytest.raises(
            Exception, match=f"length checksum mismatch at byte offset {len(first)} of"
        ):
            df.collect()
        with pytest.raises(Exception, match="length checksum mismatch"):
            df.count()
        # ignoreCorruptFiles keeps each split's records before its damage, and the later ones.
        kept = spark_tfrecord.read(spark, str(path), schema="x binary", ignoreCorruptFiles=True)
        assert sorted(bytes(r.x) for r in kept.collect()) == [b"a" * 120, b"c"]
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")
        spark.conf.unset("spark.sql.files.openCostInBytes")


@pytest.mark.parametrize(
    "value,message",
    [
        (float("nan"), "Column 'x' (decimal(3,1)) cannot hold the value NaN"),
        (float("inf"), "Column 'x' (decimal(3,1)) cannot hold the value Infinity"),
        (123.45, "Column 'x' (decimal(3,1)) cannot hold the value 123.45"),
    ],
)
def test_floats_that_a_decimal_cannot_hold(
    spark, tmp_path: Path, value: float, message: str
) -> None:
    path = write_records(
        tmp_path / "d.tfrecord",
        [example(entry(b"x", feature("float", float_list_packed([value]))))],
    )
    with pytest.raises(Exception, match=message.replace("(", r"\(").replace(")", r"\)")):
        spark_tfrecord.read(spark, str(path), schema="x decimal(3,1)").collect()
    dropped = spark_tfrecord.read(spark, str(path), schema="x decimal(3,1)", mode="DROPMALFORMED")
    assert dropped.collect() == []


def test_null_byte_array_value_on_write(spark, out: Path) -> None:
    df = spark.createDataFrame([(b"a",), (None,)], "payload binary")
    with pytest.raises(Exception, match="Column 'payload' is null in a row: recordType ByteArray"):
        spark_tfrecord.write(df.coalesce(1), str(out), record_type="ByteArray")
    assert not out.exists() or not list(out.rglob("part-*"))


def test_count_counts_malformed_payloads(spark, tmp_path: Path) -> None:
    path = write_records(tmp_path / "m.tfrecord", [one(1), b"\x0a\x05\x0a", one(2)])
    df = spark_tfrecord.read(spark, str(path), schema="x long")
    assert df.count() == 3  # the framing is sound: count() never parses
    with pytest.raises(Exception, match=r"Malformed tf\.train\.Example"):
        df.collect()
    assert spark_tfrecord.read(spark, str(path), schema="x long", mode="DROPMALFORMED").count() == 3


@pytest.mark.parametrize(
    "payload,detail",
    [
        (b"\xff" * 5, "varint runs past its message"),
        (b"\xff" * 11 + b"\x01", "varint longer than 10 bytes"),
        (b"\x0a" + b"\xff" * 9 + b"\x01", "runs past its message"),  # a length of 2^64 - 1
        (b"\x0a\x05\x0a", "runs past its message"),
        (b"\x0b" * 3000, "varint runs past its message"),  # groups that never end
        (b"\x0c", "invalid wire type 4"),  # the end of a group that never began
        (b"\x0e\x00", "invalid wire type 6"),
        (
            ld(1, entry(b"a", feature("int64", ld(1, b"\x80" * 5)))),
            "packed int64 run ends inside a varint",
        ),
        (ld(1, entry(b"b", feature("float", ld(1, b"\x00" * 7)))), "packed float run of 7 bytes"),
        (
            ld(1, ld(1, ld(1, b"a") + ld(2, field(3, 0, varint(1))))),
            "Feature field 3 has wire type 0",
        ),
        (
            ld(1, entry(b"a", feature("int64", ld(1, b"\xff" * 11 + b"\x01")))),
            "longer than 10 bytes",
        ),
        (
            ld(1, entry(b"b", feature("float", field(1, 0, varint(1))))),
            "float_list value with wire type 0",
        ),
    ],
)
def test_hostile_protobuf_is_malformed(spark, tmp_path: Path, payload: bytes, detail: str) -> None:
    path = write_records(tmp_path / "h.tfrecord", [one(1), payload])
    with pytest.raises(Exception) as err:
        spark_tfrecord.read(spark, str(path), schema="a long, b array<float>").collect()
    message = str(err.value)
    assert "Malformed tf.train.Example (" in message and detail in message, message[:2000]
    assert f"at byte offset {len(frame(one(1)))} of" in message and "h.tfrecord" in message


def test_deep_groups_that_end_are_skipped(spark, tmp_path: Path) -> None:
    # Unknown groups nested 100,000 deep: skipped without recursion (no stack overflow).
    payload = (
        b"\x0b" * 100_000
        + b"\x0c" * 100_000
        + ld(1, entry(b"a", feature("int64", ld(1, varint(5)))))
    )
    path = write_records(tmp_path / "g.tfrecord", [payload])
    assert [r.a for r in spark_tfrecord.read(spark, str(path), schema="a long").collect()] == [5]


# --- codecs ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "option,value",
    [
        ("compression", "snappy"),
        ("compression", "zstd"),
        ("codec", "org.apache.hadoop.io.compress.BZip2Codec"),
    ],
)
def test_codecs_tensorflow_cannot_read_are_refused(spark, out: Path, option, value) -> None:
    with pytest.raises(
        Exception, match=f"TFRecord option '{option}' is '{value}', a codec TensorFlow cannot read"
    ):
        spark.range(3).write.format("tfrecord").option(option, value).save(str(out))


def test_unknown_compression_lists_valid_values(spark, out: Path) -> None:
    with pytest.raises(
        Exception,
        match=r"Invalid value 'brotli' for TFRecord option 'compression'\. Valid values: none",
    ):
        spark.range(3).write.format("tfrecord").option("compression", "brotli").save(str(out))


# --- schema inference --------------------------------------------------------------------------


def test_nothing_to_infer_from(spark, tmp_path: Path) -> None:
    write_records(tmp_path / "empty" / "a.tfrecord", [])
    with pytest.raises(Exception, match=r"Cannot infer a TFRecord schema.*schema"):
        spark_tfrecord.read(spark, str(tmp_path / "empty"))
    write_records(tmp_path / "featureless" / "a.tfrecord", [example(), b""])
    with pytest.raises(Exception, match="2 records read from 1 of 1 files have no features"):
        spark_tfrecord.read(spark, str(tmp_path / "featureless"))
