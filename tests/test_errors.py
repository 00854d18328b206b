"""Every refusal names what is wrong: the option and its valid values, the column, the file."""

from __future__ import annotations

from pathlib import Path

import pytest

import spark_tfrecord
from tfrecord_bytes import (
    bytes_list,
    entry,
    example,
    feature,
    float_list_packed,
    frame,
    int64_list_packed,
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
        ("s struct<a:int>", "s"),
        ("nested array<array<int>>", "nested"),
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


def test_nested_array_error_hints_at_sequence_example(spark, out: Path) -> None:
    df = spark.createDataFrame([([[1]],)], "nested array<array<int>>")
    with pytest.raises(Exception, match="recordType SequenceExample"):
        spark_tfrecord.write(df, str(out))


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
    for cut, what in (
        (5, "Truncated TFRecord: 5 of 12 header bytes"),
        (len(good) - 2, "Truncated TFRecord: stream ends inside a record"),
    ):
        path.write_bytes(good + good[:cut])
        with pytest.raises(Exception, match=f"{what}.*at byte offset {len(good)} of"):
            spark_tfrecord.read(spark, str(path), schema="x long").count()


def test_huge_length_field_is_refused_without_allocating(spark, tmp_path: Path) -> None:
    import struct

    from tfrecord_bytes import masked_crc

    header = struct.pack("<Q", 2**60)
    path = tmp_path / "huge.tfrecord"
    path.write_bytes(header + struct.pack("<I", masked_crc(header)) + b"\x00" * 32)
    with pytest.raises(
        Exception, match="TFRecord of 1152921504606846976 bytes exceeds maxRecordBytes"
    ):
        spark_tfrecord.read(spark, str(path), schema="x long").count()
