"""The pure-Python decoder behind torch_dataset and grain_source (no TensorFlow, no JVM), through
grain_source: every column type and layout equal to the DataFrame's, bit for bit; record i the
i-th record of the manifest's file order; files TensorFlow writes and hand-built protobuf read
as the JVM reader reads them; damaged records an error naming the file and the byte offset."""

from __future__ import annotations

import datetime
import math
import shutil
import struct
from decimal import Decimal
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

import spark_tfrecord
from spark_tfrecord import errors
from support import write_with_tensorflow
from support.decoded import LIST_LENGTH, assert_same, expected, file_order_ids
from support.tfrecord_bytes import (
    bytes_list,
    entry,
    example,
    feature,
    field,
    float_list_packed,
    float_list_unpacked,
    index_lines,
    int64_list_packed,
    int64_list_unpacked,
    ld,
    varint,
    write_records,
)
from test_wire_encoding import EVERY_VARINT_LENGTH

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
NAN_BITS = 0x7FC00001  # a NaN with a payload: its bits must survive
NAN = struct.unpack("<f", struct.pack("<I", NAN_BITS))[0]
F32_DENORMAL = struct.unpack("<f", struct.pack("<I", 1))[0]
INF = math.inf
UTC = datetime.timezone.utc


def schema_of_every_type() -> Any:
    """Every scalar type, an array of each, lists of lists, a struct, an array of structs (with
    a list leaf, a list of lists leaf, a fixed-length list leaf and a nested struct) and a dense
    ML vector."""
    from pyspark.ml.linalg import VectorUDT
    from pyspark.sql import types as T

    scalars = {
        "b": T.ByteType(),
        "s": T.ShortType(),
        "i": T.IntegerType(),
        "l": T.LongType(),
        "bo": T.BooleanType(),
        "d": T.DateType(),
        "ts": T.TimestampType(),
        "ntz": T.TimestampNTZType(),
        "f": T.FloatType(),
        "db": T.DoubleType(),
        "dec": T.DecimalType(10, 3),
        "str": T.StringType(),
        "bin": T.BinaryType(),
    }
    box = T.StructType(
        [
            T.StructField("n", T.LongType()),
            T.StructField("w", T.FloatType()),
            T.StructField("name", T.StringType()),
            T.StructField("toks", T.ArrayType(T.StringType())),
            T.StructField("bbox", T.ArrayType(T.FloatType()), metadata={LIST_LENGTH: 4}),
            T.StructField("m", T.ArrayType(T.ArrayType(T.LongType()))),
            T.StructField("inner", T.StructType([T.StructField("a", T.IntegerType())])),
        ]
    )
    inner = T.StructType(
        [T.StructField("x", T.FloatType()), T.StructField("tags", T.ArrayType(T.StringType()))]
    )
    st = T.StructType(
        [
            T.StructField("h", T.LongType()),
            T.StructField("name", T.StringType()),
            T.StructField("inner", inner),
        ]
    )
    return T.StructType(
        [
            T.StructField("id", T.LongType(), nullable=False),
            *(T.StructField(k, t) for k, t in scalars.items()),
            *(T.StructField(f"a_{k}", T.ArrayType(t)) for k, t in scalars.items()),
            T.StructField("r2", T.ArrayType(T.ArrayType(T.LongType()))),
            T.StructField("r3", T.ArrayType(T.ArrayType(T.ArrayType(T.FloatType())))),
            T.StructField("rs", T.ArrayType(T.ArrayType(T.StringType()))),
            T.StructField("st", st),
            T.StructField("objs", T.ArrayType(box)),
            T.StructField("vec", VectorUDT()),
        ]
    )


def rows_of_every_type() -> list[tuple[Any, ...]]:
    """Extremes (row 0 the smallest, row 1 the largest and empty lists), all nulls (row 2), and
    ordinary rows."""
    from pyspark.ml.linalg import DenseVector

    lowest = (
        -128,
        -(2**15),
        -(2**31),
        INT64_MIN,
        True,
        datetime.date(1, 1, 1),
        datetime.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
        datetime.datetime(1900, 1, 1, 0, 0, 0, 1),
        NAN,
        -0.0,
        Decimal("-999999.999"),  # as float32 -1.0E6; -9999999.999 is -1.0E7, which
        # decimal(10,3) cannot hold on read (the jar refuses it too)
        "héllo 🎉 日本語",
        b"\xff\xfe\x00\xc3\x28",
    )
    arrays0 = (
        [-128, 127, 0],
        [-(2**15), 2**15 - 1],
        [-(2**31), 2**31 - 1],
        [INT64_MAX, INT64_MIN, 0, -1],
        [True, False, True],
        [datetime.date(1970, 1, 1), datetime.date(2026, 11, 26), datetime.date(1969, 12, 31)],
        [datetime.datetime(2026, 11, 26, 18, 30, 0, 123456, tzinfo=UTC)],
        [datetime.datetime(1970, 1, 1), datetime.datetime(2262, 4, 11, 23, 47, 16)],
        [NAN, -0.0, INF, -INF, F32_DENORMAL, 0.1],
        [1e300, -1e300, 0.1, 1e-50, -0.0, math.nan],
        [Decimal("1.250"), Decimal("-0.001"), Decimal("0.000")],
        ["", "é", "日本語 🎉"],
        [b"\xc3\x28", b"", b"\x00"],
    )
    row0 = (
        0,
        *lowest,
        *arrays0,
        [[1, 2], [], [INT64_MIN]],
        [[[0.5], []], [], [[-0.0, 2.5, NAN]]],
        [["a", ""], ["é"]],
        (480, "x", (0.5, ["t1", "t2"])),
        [
            (7, 0.125, "a", ["x", "y"], [0.5, 0.25, 1.0, 0.75], [[1], [2, 3]], (1,)),
            (8, -0.0, "", [], [0.0, 0.0, 0.0, 0.0], [], (-(2**31),)),
            (INT64_MAX, NAN, "é", ["z"], [INF, -INF, NAN, -0.0], [[], [INT64_MIN]], (2**31 - 1,)),
        ],
        DenseVector([NAN, -0.0, 1.0, 1e300]),
    )
    highest = (
        127,
        2**15 - 1,
        2**31 - 1,
        INT64_MAX,
        False,
        datetime.date(9999, 12, 31),
        datetime.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
        datetime.datetime(9999, 12, 31, 23, 59, 59, 999999),
        -INF,
        1e300,  # beyond float32: inf
        Decimal("999999.999"),
        "",
        b"",
    )
    row1 = (
        1,
        *highest,
        *([] for _ in arrays0),
        [],
        [],
        [],
        (None, "only the name", None),
        [],
        DenseVector([]),
    )
    width = len(row0)
    row2 = (2, *(None for _ in range(width - 1)))
    rows = [row0, row1, row2]
    for i in range(3, 60):
        rows.append(
            (
                i,
                i % 100,
                -i * 100,
                i * 100_000,
                i * 10**12 * (-1) ** i,
                i % 2 == 0,
                datetime.date(2000, 1, 1) + datetime.timedelta(days=i * 37),
                datetime.datetime(2020, 1, 1, tzinfo=UTC) + datetime.timedelta(seconds=i * 3601.5),
                datetime.datetime(2020, 1, 1) + datetime.timedelta(microseconds=i * 7),
                i / 8,
                i / 3,
                Decimal(i) / Decimal(8),
                f"row {i}",
                bytes(range(i % 7)),
                [i % 128] * (i % 4),
                [-i, i],
                [i] * (i % 3),
                list(range(i % 5)),
                [i % 3 == 0],
                [datetime.date(2000, 1, 1) + datetime.timedelta(days=i)],
                [datetime.datetime(2001, 1, 1, tzinfo=UTC) + datetime.timedelta(hours=i)] * 2,
                [],
                [i / 4] * (i % 4),
                [i / 7, -i / 7],
                [Decimal(i) / Decimal(4)],
                [f"t{j}" for j in range(i % 3)],
                [bytes([i % 256])],
                [list(range(j)) for j in range(i % 4)],
                [[[float(i)]] * (i % 2), []],
                [[f"w{i}"], []] if i % 2 else [],
                (i, f"n{i}", (i / 2, [f"g{i}"] * (i % 3))) if i % 5 else None,
                [
                    (i * 10 + j, j / 2, f"e{j}", [f"k{j}"] * j, [j / 4] * 4, [[j]] * j, (j,))
                    for j in range(i % 4)
                ]
                if i % 7
                else None,
                DenseVector([i / 2, -i / 2, 0.0]) if i % 6 else None,
            )
        )
    return rows


@pytest.fixture(scope="module")
def every_type(spark, tmp_path_factory) -> tuple[str, Any, dict[int, tuple[Any, ...]]]:
    """A folder of every type in three files with their indexes: (path, schema, rows by id)."""
    schema = schema_of_every_type()
    rows = rows_of_every_type()
    path = str(tmp_path_factory.mktemp("decoder") / "every_type")
    df = spark.createDataFrame(rows, schema)
    spark_tfrecord.write(df.repartition(3), path, write_index=True)
    return path, schema, {r[0]: r for r in rows}


def test_every_type_and_layout_equals_the_dataframe_in_file_order(spark, every_type) -> None:
    path, schema, rows = every_type
    info = spark_tfrecord.dataset_info(path)
    assert len(info.files) == 3 and all(n > 0 for _, n, _ in info.files)
    ids = file_order_ids(spark, path)
    assert sorted(ids) == sorted(rows)
    source = spark_tfrecord.grain_source(path)
    assert len(source) == info.num_records == len(rows)
    for i, row_id in enumerate(ids):
        assert_same(source[i], expected(schema, rows[row_id]), f"record {i} (id {row_id})")


def test_the_special_values_by_their_bits(every_type) -> None:
    """The rules spelled out on row 0 and 1, beside the generic comparison."""
    path, _, _ = every_type
    source = spark_tfrecord.grain_source(path, columns=["id", "l", "f", "db", "a_f", "bin", "ts"])
    by_id = {int(r["id"]): r for r in (source[i] for i in range(len(source)))}
    low, high = by_id[0], by_id[1]
    assert (low["l"], high["l"]) == (INT64_MIN, INT64_MAX)
    assert low["f"].view(np.uint32) == NAN_BITS and np.isneginf(high["f"])
    assert low["db"].view(np.uint32) == 0x80000000 and np.isposinf(high["db"])  # -0.0; 1e300
    assert low["a_f"].view(np.uint32).tolist() == [
        NAN_BITS, 0x80000000, 0x7F800000, 0xFF800000, 1, 0x3DCCCCCD
    ]  # fmt: skip
    assert low["bin"] == b"\xff\xfe\x00\xc3\x28" and high["bin"] == b""
    assert low["ts"] == -1 and high["ts"] == 253402300799999999
    assert sorted(low) == ["a_f", "bin", "db", "f", "id", "l", "ts"]


#: Floats by their bits and the text of Java's ``Float.toString`` for them, from JDK 25 (JDK 19
#: and later specify the digits: the shortest that read back, at least two); JDK 17 writes
#: 00800000 as 1.17549435E-38 and 5c57532b as 2.42434257E17.
JAVA_FLOAT_TEXT = {
    0x501502F9: "1.0E10",
    0x3727C5AC: "1.0E-5",
    0x3A83126F: "0.001",
    0x3A83126E: "9.999999E-4",
    0x42C80000: "100.0",
    0x4B18967F: "9999999.0",
    0x4B189680: "1.0E7",
    0x3DCCCCCD: "0.1",
    0x3E99999A: "0.3",
    0x47F12065: "123456.79",
    0xC0200000: "-2.5",
    0x00800000: "1.1754944E-38",
    0x7F7FFFFF: "3.4028235E38",
    0x7F000000: "1.7014118E38",
    0x33800000: "5.9604645E-8",
    0x5C57532B: "2.4243426E17",
    0x00000001: "1.4E-45",
    0x00000004: "5.6E-45",
    0x00000015: "2.9E-44",
    0x7FC00000: "NaN",
    0x7F800000: "Infinity",
    0xFF800000: "-Infinity",
    0x80000000: "-0.0",
    0x00000000: "0.0",
}


def test_floats_read_as_text_are_javas_float_to_string() -> None:
    from spark_tfrecord._format.columns.conversions import java_float

    floats = np.array(list(JAVA_FLOAT_TEXT), np.uint32).view(np.float32)
    assert [java_float(f) for f in floats] == list(JAVA_FLOAT_TEXT.values())
    # a Python float (a float32's value as a double), as the JSON rows give it
    assert [java_float(float(f)) for f in floats] == list(JAVA_FLOAT_TEXT.values())


def test_nulls_are_none_and_empty_lists_are_empty(every_type) -> None:
    path, _, _ = every_type
    source = spark_tfrecord.grain_source(path)
    by_id = {int(r["id"]): r for r in (source[i] for i in range(len(source)))}
    nulls, empties = by_id[2], by_id[1]
    assert all(v is None for k, v in nulls.items() if k != "id"), nulls
    assert empties["a_l"].shape == (0,) and empties["a_l"].dtype == np.int64
    assert empties["a_str"] == [] and empties["objs/bbox"].shape == (0, 4)
    assert len(empties["r2"].values) == 0 and [len(x) for x in empties["r2"].row_lengths] == [0]
    assert empties["st/h"] is None and empties["st/name"] == "only the name"


def test_columns_select_leaves_and_a_ddl_string_retypes(spark, every_type) -> None:
    path, schema, rows = every_type
    ids = file_order_ids(spark, path)
    picked = spark_tfrecord.grain_source(path, columns=["id", "st", "objs"])
    assert sorted(picked[0]) == [
        "id", "objs/bbox", "objs/inner/a", "objs/m", "objs/n", "objs/name", "objs/toks",
        "objs/w", "st/h", "st/inner/tags", "st/inner/x", "st/name",
    ]  # fmt: skip
    names = ["id", "st", "objs"]
    sub = type(schema)([schema[n] for n in names])
    for i, row_id in enumerate(ids):
        row = rows[row_id]
        values = [row[schema.fieldNames().index(n)] for n in names]
        assert_same(picked[i], expected(sub, values), f"record {i}")
    # A DDL string: a string feature read as binary gives its UTF-8 bytes.
    retyped = spark_tfrecord.grain_source(path, columns="id long, str binary, a_str array<binary>")
    for i, row_id in enumerate(ids):
        row = rows[row_id]
        s, a = row[schema.fieldNames().index("str")], row[schema.fieldNames().index("a_str")]
        want = {
            "id": np.int64(row_id),
            "str": None if s is None else s.encode(),
            "a_str": None if a is None else [v.encode() for v in a],
        }
        assert_same(retyped[i], want, f"record {i}")


def test_sparse_vectors(spark, tmp_path: Path) -> None:
    from pyspark.ml.linalg import DenseVector, SparseVector, VectorUDT
    from pyspark.sql import types as T

    schema = T.StructType(
        [T.StructField("id", T.LongType(), nullable=False), T.StructField("v", VectorUDT())]
    )
    rows = [
        (0, SparseVector(2**20, [0, 5, 2**20 - 1], [NAN, -0.0, 1e300])),
        (1, SparseVector(7, [], [])),
        (2, None),
        (3, DenseVector([0.0, -0.0, 1.5, 0.0])),  # its entries: -0.0 and 1.5
        *((i, SparseVector(10, [i % 10], [i / 4])) for i in range(4, 30)),
    ]
    path = str(tmp_path / "sparse")
    spark_tfrecord.write(
        spark.createDataFrame(rows, schema).repartition(2), path, vector_layout="sparse"
    )
    ids = file_order_ids(spark, path)
    source = spark_tfrecord.grain_source(path)
    by_id = {r[0]: r for r in rows}
    assert len(source) == len(rows)
    for i, row_id in enumerate(ids):
        want = expected(schema, by_id[row_id], sparse_vectors=True)
        assert_same(source[i], want, f"record {i} (id {row_id})")
    first = source[ids.index(0)]["v"]
    assert (first.size, first.indices.tolist()) == (2**20, [0, 5, 2**20 - 1])
    assert first.values.view(np.uint32).tolist() == [NAN_BITS, 0x80000000, 0x7F800000]


def test_a_byte_array_folder_and_a_sequence_example_folder(spark, tmp_path: Path) -> None:
    blobs = [b"\x00\xff", b"", b"plain"]
    raw = str(tmp_path / "raw")
    df = spark.createDataFrame([(b,) for b in blobs], "byteArray binary")
    spark_tfrecord.write(df.coalesce(1), raw, record_type="ByteArray")
    source = spark_tfrecord.grain_source(raw)
    assert len(source) == 3
    assert [source[i] for i in range(3)] == [{"byteArray": b} for b in blobs]
    assert all(type(source[i]["byteArray"]) is bytes for i in range(3))
    seq = str(tmp_path / "seq")
    rows = [(1, [[1, 2], [3]], "a"), (2, [], None), (3, None, "c")]
    spark_tfrecord.write(
        spark.createDataFrame(rows, "id long, x array<array<long>>, s string").coalesce(1),
        seq,
        record_type="SequenceExample",
    )
    source = spark_tfrecord.grain_source(seq)  # the manifest says the record type
    got = [source[i] for i in range(3)]
    assert [(r["id"], r["x"] and r["x"].to_list(), r["s"]) for r in got] == [
        (1, [[1, 2], [3]], "a"),
        (2, [], None),
        (3, None, "c"),
    ]
    values, offsets, inner = source.collate(source.__getitems__([0, 1, 2]))["x"]
    assert (values.tolist(), offsets.tolist(), inner.tolist()) == (
        [1, 2, 3],
        [0, 2, 2, 2],
        [0, 2, 3],
    )


# --- files TensorFlow writes, and protobuf TensorFlow's writer never makes -------------------


def read_like_spark(spark, folder: str, ddl: str) -> None:
    """The records of `folder` (no manifest) read with `columns=ddl` equal Spark's rows of it,
    in order."""
    schema = spark.createDataFrame([], ddl).schema
    rows = spark_tfrecord.read(spark, folder, schema=ddl).collect()
    source = spark_tfrecord.grain_source(folder, columns=ddl)
    assert len(source) == len(rows) == spark_tfrecord.dataset_info(folder).num_records
    for i, row in enumerate(rows):
        assert_same(source[i], expected(schema, row), f"record {i}")


@pytest.mark.tensorflow
def test_files_tensorflow_writes(spark, tf, tmp_path: Path) -> None:
    F = tf.train.Feature

    def ints(*v: int) -> Any:
        return F(int64_list=tf.train.Int64List(value=v))

    def floats(*v: float) -> Any:
        return F(float_list=tf.train.FloatList(value=v))

    def blobs(*v: bytes) -> Any:
        return F(bytes_list=tf.train.BytesList(value=v))

    records = [
        {
            "id": ints(0),
            "extremes": ints(INT64_MIN, INT64_MAX, 0),
            "floats": floats(math.nan, INF, -INF, -0.0, 1e-45),
            "f": floats(-0.0),
            "text": blobs("日本語 é 🎉".encode()),
            "raw": blobs(b"\xff\xfe\x00", b"\xc3\x28"),
            "empty_ints": ints(),
            "unset": F(),
            "unset_scalar": F(),
            "x/ragged_flat_values": ints(1, 2, 3),
            "x/ragged_row_lengths_0": ints(2, 0, 1),
        },
        {"id": ints(1), "floats": floats(), "empty_ints": ints(7, 8), "f": floats(math.inf)},
        {},
    ]
    examples = [tf.train.Example(features=tf.train.Features(feature=r)) for r in records]
    write_with_tensorflow(tf, tmp_path / "tf", examples)
    ddl = (
        "id long, extremes array<long>, floats array<float>, f float, text string, "
        "raw array<binary>, empty_ints array<long>, unset array<long>, unset_scalar long, "
        "x array<array<long>>"
    )
    read_like_spark(spark, str(tmp_path / "tf"), ddl)
    source = spark_tfrecord.grain_source(str(tmp_path / "tf"), columns=ddl)
    first = source[0]
    assert first["floats"].view(np.uint32).tolist()[1:] == [0x7F800000, 0xFF800000, 0x80000000, 1]
    assert np.isnan(first["floats"][0]) and first["f"].view(np.uint32) == 0x80000000
    assert first["unset"].shape == (0,) and first["unset_scalar"] is None
    assert first["raw"] == [b"\xff\xfe\x00", b"\xc3\x28"]
    assert first["x"].values.tolist() == [1, 2, 3]
    assert [r.tolist() for r in first["x"].row_lengths] == [[2, 0, 1]]
    # Invalid UTF-8 read as a string: as Spark's value shows in pyspark (Java's decoding, U+FFFD
    # for each invalid sequence); read as binary (above) it is exact.
    text = spark_tfrecord.grain_source(str(tmp_path / "tf"), columns="raw array<string>")
    assert text[0]["raw"] == ["\ufffd\ufffd\x00", "\ufffd("]


WIRE_CASES = {
    "unpacked and mixed lists": (
        [
            example(
                entry(b"i", feature("int64", int64_list_unpacked([1, -1, INT64_MAX]))),
                entry(b"f", feature("float", float_list_unpacked([0.5, -2.0, NAN]))),
            ),
            example(
                entry(b"i", feature("int64", int64_list_packed([3]) + int64_list_unpacked([4]))),
                entry(
                    b"f", feature("float", float_list_packed([1.5]) + float_list_unpacked([2.5]))
                ),
            ),
        ],
        "i array<bigint>, f array<float>",
    ),
    "varints of every length": (
        [
            example(entry(b"v", feature("int64", int64_list_packed(EVERY_VARINT_LENGTH)))),
            *(
                example(entry(b"s", feature("int64", int64_list_unpacked([v]))))
                for v in EVERY_VARINT_LENGTH
            ),
            example(entry(b"v", feature("int64", ld(1, b"\x80\x80\x00" + b"\x81\x80\x00")))),
        ],
        "v array<bigint>, s bigint",
    ),
    "merge rules and duplicate keys": (
        [
            example(entry(b"a", feature("int64", int64_list_packed([1]))))
            + example(
                entry(b"b", feature("bytes", bytes_list([b"x"]))),
                entry(b"a", feature("int64", int64_list_packed([2]))),
            )
            + example(
                entry(
                    b"c",
                    feature("bytes", bytes_list([b"dropped"]))
                    + feature("int64", int64_list_packed([5]))
                    + feature("int64", int64_list_packed([6, 7])),
                )
            )
        ],
        "a bigint, b string, c array<bigint>",
    ),
    "unknown fields, entry fields in any order": (
        [
            field(15, 0, varint(300))
            + ld(
                1,
                ld(
                    1,
                    ld(2, feature("int64", int64_list_packed([9]) + field(7, 0, varint(1))))
                    + ld(1, b"k")
                    + field(9, 5, b"\x00\x00\x00\x00"),
                )
                + field(2, 0, varint(5)),
            )
            + ld(3, b"junk")
        ],
        "k long",
    ),
    "unset features, empty lists, absent features": (
        [
            example(
                entry(b"u", b""),
                entry(b"us", b""),
                entry(b"e", feature("float", b"")),
                entry(b"es", feature("bytes", b"")),
            ),
            example(),
            example(ld(1, ld(1, b"u")), entry(b"e", feature("float", float_list_packed([-0.0])))),
        ],
        "u array<long>, us long, e array<float>, es string",
    ),
}


@pytest.mark.parametrize("case", list(WIRE_CASES))
def test_hand_built_records_read_as_the_jvm_reader_reads_them(
    spark, tmp_path: Path, case: str
) -> None:
    records, ddl = WIRE_CASES[case]
    write_records(tmp_path / "wire" / "a.tfrecord", records)
    read_like_spark(spark, str(tmp_path / "wire"), ddl)


# --- damaged records ------------------------------------------------------------------------


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 1]) + data[at + 1 :]


def _offsets(data: bytes) -> list[int]:
    return [int(line.split()[0]) for line in index_lines(data).splitlines()]


#: (damage of a file's bytes given its records' offsets, condition, the damaged record's place)
DAMAGE: dict[str, tuple[Callable[[bytes, list[int]], bytes], str, int]] = {
    "data checksum": (lambda d, o: _flip(d, o[2] + 12 + 3), errors.DATA_CHECKSUM, 2),
    "data crc itself": (lambda d, o: _flip(d, o[3] - 2), errors.DATA_CHECKSUM, 2),
    "length checksum": (lambda d, o: _flip(d, o[2]), errors.LENGTH_CHECKSUM, 2),
    "truncated": (lambda d, o: d[: o[-1] + 12 + 5], errors.TRUNCATED, -1),
}


@pytest.mark.parametrize("indexed", [True, False], ids=["indexed", "no index"])
@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_record_names_the_file_and_its_offset(
    every_type, tmp_path: Path, damage: str, indexed: bool
) -> None:
    path, _, _ = every_type
    copy = tmp_path / "copy"
    shutil.copytree(path, copy)
    info = spark_tfrecord.dataset_info(str(copy))
    place = 1  # the second file, in order
    victim = Path(info.files[place].path)
    if not indexed:
        for index in copy.glob("_*.idx"):
            index.unlink()
    data = victim.read_bytes()
    offsets = _offsets(data)
    assert len(offsets) >= 4
    change, condition, k = DAMAGE[damage]
    victim.write_bytes(change(data, offsets))
    record = sum(n for _, n, _ in info.files[:place]) + (k % len(offsets))
    offset = offsets[k]

    def one() -> Any:
        return spark_tfrecord.grain_source(str(copy))[record]

    def batch() -> Any:  # as a DataLoader fetches: with the record before it, then collated
        source = spark_tfrecord.grain_source(str(copy))
        return source.collate(source.__getitems__([record - 1, record]))

    for read in (one, batch):
        with pytest.raises(errors.CorruptFileError) as raised:
            # A truncated file no longer matches the manifest: counting it may already raise.
            read()
        e = raised.value
        assert errors.condition(e) == condition, e
        assert errors.parameters(e)["path"] == str(victim), e
        assert errors.parameters(e)["offset"] == str(offset), e
        assert str(victim) in str(e) and str(offset) in str(e)


def test_a_record_that_is_not_an_example_and_a_feature_of_another_kind(tmp_path: Path) -> None:
    good = example(entry(b"id", feature("int64", int64_list_packed([1]))))
    not_an_example = good[:-2]  # framed, with valid checksums: its protobuf runs past its end
    wrong_kind = example(entry(b"id", feature("bytes", bytes_list([b"one"]))))
    records = [good, not_an_example, good, wrong_kind]
    path = write_records(tmp_path / "bad" / "a.tfrecord", records)
    offsets = _offsets(path.read_bytes())
    source = spark_tfrecord.grain_source(str(tmp_path / "bad"), columns="id long")
    assert source[0] == {"id": 1} and source[2] == {"id": 1}
    for i, column in ((1, None), (3, "id")):
        with pytest.raises(errors.CorruptFileError) as raised:
            source[i]
        parameters = errors.parameters(raised.value)
        assert (parameters["path"], parameters["offset"]) == (str(path), str(offsets[i]))
        if column is None:
            assert errors.condition(raised.value) == errors.MALFORMED_RECORD
        else:
            assert parameters["column"] == column, raised.value


def test_a_scalar_column_of_two_values_is_refused_as_the_jvm_reader_refuses_it(
    spark, tmp_path: Path
) -> None:
    path = write_records(
        tmp_path / "two" / "a.tfrecord",
        [example(entry(b"id", feature("int64", int64_list_packed(v)))) for v in ([1], [1, 2])],
    )
    with pytest.raises(Exception, match="TFRECORD_"):  # the JVM reader's refusal
        spark_tfrecord.read(spark, str(path.parent), schema="id long").collect()
    source = spark_tfrecord.grain_source(str(path.parent), columns="id long")
    assert source[0] == {"id": 1}
    with pytest.raises(errors.CorruptFileError) as raised:
        source[1]
    parameters = errors.parameters(raised.value)
    offset = _offsets(path.read_bytes())[1]
    assert (parameters["path"], parameters["offset"]) == (str(path), str(offset))
    assert parameters["column"] == "id"


def test_packed_varints_of_every_length_mixed_are_decoded_as_protobuf_decodes_them() -> None:
    # wire.packed_varints decodes a run's second byte for all varints, the later bytes for those
    # that have them: every length 1 to 10 in any order, runs of short ones and long ones, a
    # non-canonical varint (a zero continuation byte), a 10th byte beyond 64 bits (dropped, as
    # protobuf drops it); a run ending inside a varint, or one of 11 bytes, raises.
    from spark_tfrecord._format.entries.wire import MalformedRecord, packed_varints

    def signed(v: int) -> int:
        v &= 2**64 - 1
        return v - 2**64 if v >= 2**63 else v

    rng = np.random.default_rng(7)
    runs = {
        "every length": EVERY_VARINT_LENGTH,
        "short, then long": [5] * 50 + [-1] * 3,
        "long, then short": [2**62] * 3 + list(range(200)),
        "random mix": [int(v) for v in rng.choice(EVERY_VARINT_LENGTH, 500)],
    }
    for why, values in runs.items():
        data = b"".join(varint(v) for v in values)
        got = packed_varints(b"xy" + data + b"z", 2, 2 + len(data))
        assert got.dtype == np.int64 and got.tolist() == [signed(v) for v in values], why
    odd = {b"\x81\x00": 1, b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f": -1, b"\x80\x01\x05": 128}
    for raw, value in odd.items():
        assert packed_varints(raw, 0, len(raw)).tolist()[0] == value, raw
    assert packed_varints(b"\x80\x01\x05", 0, 3).tolist() == [128, 5]
    for bad in (b"\x05\x80", b"\x80" * 10 + b"\x01"):
        with pytest.raises(MalformedRecord):
            packed_varints(bad, 0, len(bad))
