"""Write → read with the same schema: exact for int64, float32, bytes, UTF-8; double → float32."""

from __future__ import annotations

import math
import struct
from decimal import Decimal
from pathlib import Path

import pytest

import spark_tfrecord

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
FLOATS = [0.0, -0.0, 1.5, -2.25, math.inf, -math.inf, math.nan, 3.4028234663852886e38, 1e-45]


def f32(x: float) -> float:
    """The float32 nearest to x (what a float_list holds)."""
    return float(struct.unpack("<f", struct.pack("<f", x))[0])


def bits32(x: float) -> int:
    return int(struct.unpack("<I", struct.pack("<f", x))[0])


SCHEMA = (
    "id long, b boolean, i8 tinyint, i16 smallint, i32 int, i64 bigint, f float, d double, "
    "dec decimal(10,2), s string, bin binary, "
    "ai64 array<bigint>, ai32 array<int>, ab array<boolean>, af array<float>, ad array<double>, "
    "adec array<decimal(20,4)>, as_ array<string>, abin array<binary>"
)

ROWS = [
    (
        0,
        True,
        127,
        32767,
        2**31 - 1,
        INT64_MAX,
        FLOATS[0],
        0.1,
        Decimal("123.45"),
        "",
        b"",
        [INT64_MIN, INT64_MAX, 0, -1],
        [-(2**31), 2**31 - 1],
        [True, False],
        FLOATS,
        [0.1, -1e-3],
        [Decimal("1.5"), Decimal("-123.4567")],
        ["a", "é", "日本語", "🎉", ""],
        [b"\x00\xff", b"", b"\xc3\x28"],
    ),
    (
        1,
        False,
        -128,
        -32768,
        -(2**31),
        INT64_MIN,
        FLOATS[1],
        -2.5,
        Decimal("-0.01"),
        "héllo 🎉",
        b"\x00\x01\xfe\xff",
        [],
        [],
        [],
        [],
        [],
        [],
        [],
        [],
    ),
    (
        2,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
    ),
] + [
    (
        3 + k,
        k % 2 == 0,
        k,
        k * 100,
        k * 70000,
        k * 10**12,
        x,
        x,
        Decimal(k),
        str(k),
        bytes([k]),
        [k, -k],
        [k],
        [k % 3 == 0],
        [x, x],
        [x],
        [Decimal(k)],
        [str(k)] * k,
        [bytes([k])] * k,
    )
    for k, x in enumerate(FLOATS)
]


@pytest.fixture(scope="module")
def written(spark, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("roundtrip") / "data"
    df = spark.createDataFrame(ROWS, SCHEMA).repartition(3)
    spark_tfrecord.write(df, str(path))
    return path


def test_every_type_round_trips_exactly(spark, written: Path) -> None:
    got = {r["id"]: r for r in spark_tfrecord.read(spark, str(written), schema=SCHEMA).collect()}
    assert sorted(got) == [r[0] for r in ROWS]
    for expected in ROWS:
        row = got[expected[0]]
        (_, b, i8, i16, i32, i64, f, d, dec, s, bin_, ai64, ai32, ab, af, ad, adec, as_, abin) = (
            expected
        )
        assert (row.b, row.i8, row.i16, row.i32, row.i64) == (b, i8, i16, i32, i64)
        if f is None:
            assert row.f is None and row.d is None
        else:
            assert bits32(row.f) == bits32(f32(f))  # float32: bit-exact, NaN and -0.0 included
            assert (math.isnan(row.d) and math.isnan(d)) or row.d == f32(d)  # double → float32
        assert row.dec == dec  # decimal → float32 → the shortest decimal, at the column's scale
        assert (row.s, row.bin) == (s, None if bin_ is None else bytearray(bin_))
        assert row.ai64 == ai64 and row.ai32 == ai32 and row.ab == ab
        if af is None:
            assert row.af is None and row.ad is None
        else:
            assert [bits32(v) for v in row.af] == [bits32(f32(v)) for v in af]
            assert [math.isnan(v) for v in row.ad] == [math.isnan(v) for v in ad]
            assert [v for v in row.ad if not math.isnan(v)] == [
                f32(v) for v in ad if not math.isnan(v)
            ]
        assert row.adec == adec
        assert row.as_ == as_
        assert row.abin == (None if abin is None else [bytearray(v) for v in abin])


def test_dates_and_timestamps_are_int64_days_and_microseconds(spark, out: Path) -> None:
    import datetime as dt

    utc = dt.timezone.utc
    day = dt.date(1969, 12, 31)
    ts = dt.datetime(2024, 2, 29, 23, 59, 59, 123456, tzinfo=utc)
    ntz = dt.datetime(1900, 1, 1, 0, 0, 0, 1)
    df = spark.createDataFrame(
        [(day, ts, ntz, [day, dt.date(2000, 1, 1)], [ts])],
        "d date, ts timestamp, ntz timestamp_ntz, ad array<date>, ats array<timestamp>",
    )
    spark_tfrecord.write(df, str(out))
    schema = "d date, ts timestamp, ntz timestamp_ntz, ad array<date>, ats array<timestamp>"
    (row,) = spark_tfrecord.read(spark, str(out), schema=schema).collect()
    assert row.d == day and row.ad == [day, dt.date(2000, 1, 1)]
    assert row.ts.astimezone(utc) == ts and row.ats[0].astimezone(utc) == ts
    assert row.ntz == ntz
    (raw,) = spark_tfrecord.read(spark, str(out)).collect()  # inferred: the int64 values
    assert raw.d == -1 and raw.ad == [-1, 10957]
    assert raw.ts == 1709251199123456 and raw.ntz == -2208988799999999


def test_decimal_keeps_float32_precision(spark, out: Path) -> None:
    # The documented loss: a float_list holds float32, about 7 significant digits.
    df = spark.createDataFrame(
        [(Decimal("-12345.6789"), Decimal("0.1"))], "a decimal(20,4), b decimal(3,2)"
    )
    spark_tfrecord.write(df, str(out))
    (row,) = spark_tfrecord.read(
        spark, str(out), schema="a decimal(20,4), b decimal(3,2)"
    ).collect()
    assert (row.a, row.b) == (Decimal("-12345.6790"), Decimal("0.10"))


def test_written_files_are_part_files_with_the_extension(written: Path) -> None:
    names = sorted(p.name for p in written.iterdir())
    assert "_SUCCESS" in names
    parts = [n for n in names if n.startswith("part-")]
    assert parts and all(n.endswith(".tfrecord") for n in parts)


def test_column_pruning_reads_only_requested_columns(spark, written: Path) -> None:
    df = spark_tfrecord.read(spark, str(written), schema=SCHEMA).select("id", "as_")
    got = sorted((r.id, r.as_) for r in df.collect())
    assert got == sorted((r[0], r[17]) for r in ROWS)


def test_count_without_columns(spark, written: Path) -> None:
    assert spark_tfrecord.read(spark, str(written), schema=SCHEMA).count() == len(ROWS)
    assert spark_tfrecord.read(spark, str(written)).count() == len(ROWS)


def test_integer_widths_read_from_int64(spark, written: Path) -> None:
    # The same int64 features read into narrower and wider types where the values fit.
    df = spark_tfrecord.read(
        spark, str(written), schema="id int, i8 long, i16 int, ai32 array<long>"
    )
    got = {r.id: r for r in df.collect()}
    assert got[0].i8 == 127 and got[1].i16 == -32768 and got[0].ai32 == [-(2**31), 2**31 - 1]


def test_float_features_read_as_double_and_decimal(spark, written: Path) -> None:
    df = spark_tfrecord.read(spark, str(written), schema="id long, d float, dec double")
    got = {r.id: r for r in df.collect()}
    assert got[0].d == f32(0.1) and got[0].dec == f32(123.45)
    assert got[2].d is None


def test_missing_column_is_null(spark, written: Path) -> None:
    df = spark_tfrecord.read(spark, str(written), schema="id long, nope string, nopes array<int>")
    assert all(r.nope is None and r.nopes is None for r in df.collect())


def test_write_modes(spark, out: Path) -> None:
    def ids() -> list[int]:
        return sorted(r.id for r in spark_tfrecord.read(spark, str(out)).collect())

    first = spark.createDataFrame([(1,), (2,)], "id long")
    second = spark.createDataFrame([(3,)], "id long")
    spark_tfrecord.write(first, str(out))
    with pytest.raises(Exception, match=r"(?i)already exists"):
        spark_tfrecord.write(second, str(out))
    assert ids() == [1, 2]
    spark_tfrecord.write(second, str(out), mode="ignore")
    assert ids() == [1, 2]
    spark_tfrecord.write(second, str(out), mode="append")
    assert ids() == [1, 2, 3]
    spark_tfrecord.write(second, str(out), mode="overwrite")
    assert ids() == [3]
    first.write.format("tfrecord").mode("errorifexists").save(str(out / "sub"))
    assert sorted(r.id for r in spark.read.format("tfrecord").load(str(out / "sub")).collect()) == [
        1,
        2,
    ]


def test_partition_by_round_trip(spark, out: Path) -> None:
    df = spark.createDataFrame(
        [(1, "2024-01-01", "a", 0.5), (2, "2024-01-01", "b", 1.5), (3, "2024-01-02", "a", 2.5)],
        "id long, day string, lang string, score float",
    )
    spark_tfrecord.write(df, str(out), partition_by=["day", "lang"])
    dirs = sorted(str(p.relative_to(out)) for p in out.glob("*/*") if p.is_dir())
    assert dirs == ["day=2024-01-01/lang=a", "day=2024-01-01/lang=b", "day=2024-01-02/lang=a"]

    back = spark_tfrecord.read(spark, str(out))
    assert back.columns == ["id", "score", "day", "lang"]
    got = sorted((r.id, str(r.day), r.lang, r.score) for r in back.collect())
    # Spark's partition discovery reads the day directories back as dates.
    assert back.schema["day"].dataType.simpleString() == "date"
    assert got == [
        (1, "2024-01-01", "a", 0.5),
        (2, "2024-01-01", "b", 1.5),
        (3, "2024-01-02", "a", 2.5),
    ]
    # Partition pruning and a filter on a partition column.
    assert [r.id for r in back.where("day = DATE'2024-01-02'").collect()] == [3]
    # Partition columns are not written into the records themselves.
    one_dir = spark_tfrecord.read(spark, str(out / "day=2024-01-01" / "lang=a"))
    assert one_dir.columns == ["id", "score"]


def test_dynamic_partition_overwrite_keeps_other_partitions(spark, out: Path) -> None:
    df = spark.createDataFrame([(1, "x"), (2, "y")], "id long, p string")
    spark_tfrecord.write(df, str(out), partition_by="p")
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    try:
        spark_tfrecord.write(
            spark.createDataFrame([(3, "y")], "id long, p string"),
            str(out),
            mode="overwrite",
            partition_by="p",
        )
    finally:
        spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
    got = sorted((r.id, r.p) for r in spark_tfrecord.read(spark, str(out)).collect())
    assert got == [(1, "x"), (3, "y")]


def test_options_are_case_insensitive(spark, out: Path) -> None:
    df = spark.createDataFrame([(b"raw",)], "payload binary")
    df.write.format("tfrecord").option("RECORDTYPE", "bytearray").save(str(out))
    got = spark.read.format("tfrecord").option("recordtype", "ByteArray").load(str(out))
    assert got.schema.simpleString() == "struct<byteArray:binary>"
    assert [bytes(r.byteArray) for r in got.collect()] == [b"raw"]
