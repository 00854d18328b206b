"""Encodings TensorFlow's writer never makes but protobuf allows: we read them as protobuf does."""

from __future__ import annotations

import struct
from pathlib import Path

import spark_tfrecord
from support.tfrecord_bytes import (
    bytes_list,
    entry,
    example,
    feature,
    field,
    float_list_packed,
    float_list_unpacked,
    int64_list_packed,
    int64_list_unpacked,
    ld,
    read_records,
    varint,
    write_records,
)


def read(spark, path: Path, schema: str) -> list[tuple[object, ...]]:
    return [tuple(r) for r in spark_tfrecord.read(spark, str(path), schema=schema).collect()]


def test_unpacked_and_packed_lists(spark, tmp_path: Path) -> None:
    path = write_records(
        tmp_path / "a.tfrecord",
        [
            example(
                entry(b"i", feature("int64", int64_list_unpacked([1, -1, 2**63 - 1]))),
                entry(b"f", feature("float", float_list_unpacked([0.5, -2.0]))),
            ),
            example(
                entry(b"i", feature("int64", int64_list_packed([3]) + int64_list_unpacked([4]))),
                entry(
                    b"f", feature("float", float_list_packed([1.5]) + float_list_unpacked([2.5]))
                ),
            ),
        ],
    )
    assert read(spark, path, "i array<bigint>, f array<float>") == [
        ([1, -1, 2**63 - 1], [0.5, -2.0]),
        ([3, 4], [1.5, 2.5]),
    ]


# Varints of every length from 1 to 10 bytes, the lengths the decoder reads in different ways.
EVERY_VARINT_LENGTH = [0, 1, *(v for n in range(7, 63, 7) for v in (2**n - 1, 2**n)), 2**63 - 1]
EVERY_VARINT_LENGTH += [-1, -(2**63)]


def test_varints_of_every_length(spark, tmp_path: Path) -> None:
    values = EVERY_VARINT_LENGTH
    assert sorted({len(varint(v)) for v in values}) == list(range(1, 11))
    records = [example(entry(b"v", feature("int64", int64_list_packed(values))))]
    for v in values:  # each varint the last bytes of its record, or followed by another feature
        records.append(example(entry(b"s", feature("int64", int64_list_unpacked([v])))))
        records.append(
            example(
                entry(b"s", feature("int64", int64_list_packed([v]))),
                entry(b"v", feature("int64", int64_list_packed(values[::-1]))),
            )
        )
    path = write_records(tmp_path / "a.tfrecord", records)
    expected = [(values, None)]
    for v in values:
        expected += [(None, v), (values[::-1], v)]
    assert read(spark, path, "v array<bigint>, s bigint") == expected
    # Over-long encodings are valid protobuf: 0 and 1 in two to ten bytes.
    padded = [b"\x80" * n + b"\x00" for n in range(1, 10)] + [b"\x81" + b"\x80" * 8 + b"\x00"]
    record = example(entry(b"v", feature("int64", ld(1, b"".join(padded)))))
    path = write_records(tmp_path / "b.tfrecord", [record])
    assert read(spark, path, "v array<bigint>") == [([0] * 9 + [1],)]


def test_protobuf_merge_rules(spark, tmp_path: Path) -> None:
    # Two Example.features fields merge; a repeated key: the last entry wins; in a Feature the
    # last kind wins, and two list messages of that kind concatenate.
    record = example(entry(b"a", feature("int64", int64_list_packed([1])))) + example(
        entry(b"b", feature("bytes", bytes_list([b"x"]))),
        entry(b"a", feature("int64", int64_list_packed([2]))),
    )
    feature_c = (
        feature("bytes", bytes_list([b"dropped"]))
        + feature("int64", int64_list_packed([5]))
        + feature("int64", int64_list_packed([6, 7]))
    )
    record += example(entry(b"c", feature_c))
    path = write_records(tmp_path / "a.tfrecord", [record])
    assert read(spark, path, "a bigint, b string, c array<bigint>") == [(2, "x", [5, 6, 7])]


def test_entry_fields_in_any_order_and_unknown_fields_skipped(spark, tmp_path: Path) -> None:
    value = feature("int64", int64_list_packed([9]) + field(7, 0, varint(1)))
    swapped = ld(1, ld(2, value) + ld(1, b"k") + field(9, 5, b"\x00\x00\x00\x00"))
    unknown = field(15, 0, varint(300)) + ld(3, b"junk") + field(4, 1, b"\x00" * 8)
    record = unknown + ld(1, swapped + field(2, 0, varint(5))) + unknown
    path = write_records(tmp_path / "a.tfrecord", [record])
    assert read(spark, path, "k long") == [(9,)]


def test_unknown_fields_around_a_features_only_list(spark, tmp_path: Path) -> None:
    # One list message, with unknown Feature fields before and after it: read from where it lies.
    ints = field(7, 0, varint(1)) + feature("int64", int64_list_packed([2**40, -3]))
    floats = feature("float", float_list_packed([0.5, -1.5])) + ld(9, b"junk")
    names = feature("bytes", bytes_list([b"a"])) + field(6, 5, b"\x00\x00\x80\x3f")
    record = example(entry(b"i", ints), entry(b"f", floats), entry(b"s", names))
    path = write_records(tmp_path / "a.tfrecord", [record])
    assert read(spark, path, "i array<bigint>, f array<float>, s string") == [
        ([2**40, -3], [0.5, -1.5], "a")
    ]


def test_key_without_value_and_value_without_key(spark, tmp_path: Path) -> None:
    record = example(ld(1, ld(1, b"nokind")), ld(1, ld(2, feature("bytes", bytes_list([b"v"])))))
    path = write_records(tmp_path / "a.tfrecord", [record])
    assert read(spark, path, "nokind array<string>, `` string") == [([], "v")]


def test_written_bytes_are_canonical_protobuf(spark, out: Path) -> None:
    df = spark.createDataFrame(
        [(-1, [1.0, 2.0], "é", None)], "a long, b array<float>, c string, d int"
    )
    spark_tfrecord.write(df.coalesce(1), str(out))
    (data,) = [r for p in sorted(out.glob("part-*")) for r in read_records(p)]
    expected = example(
        entry(b"a", feature("int64", ld(1, varint(-1)))),  # negative int64: 10-byte varint
        entry(b"b", feature("float", ld(1, struct.pack("<ff", 1.0, 2.0)))),
        entry(b"c", feature("bytes", bytes_list(["é".encode()]))),
    )  # the null column d is omitted
    assert data == expected
