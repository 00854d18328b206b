"""The two ways a trainer-side loader decodes Examples agree: a DataLoader's batch decoded at once
(``spark_tfrecord._format.entries.batch``, NumPy over the batch) and record by record
(``_format.decoder``), on every layout spark-tfrecord writes and on records only hand-built bytes
produce (unpacked lists, merged messages, unknown fields, a key twice, entries value first), which
the batch path hands to the record path whole. Values are compared by their bytes (NaN payloads
and -0.0 included)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import spark_tfrecord
from spark_tfrecord import errors
from support.tfrecord_bytes import (
    bytes_list,
    entry,
    example,
    feature,
    field,
    float_list_packed,
    float_list_unpacked,
    frame,
    int64_list_packed,
    int64_list_unpacked,
    ld,
    write_records,
)


def same(a: Any, b: Any) -> bool:
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, np.ndarray):
        return (
            isinstance(b, np.ndarray)
            and a.dtype == b.dtype
            and a.shape == b.shape
            and a.tobytes() == b.tobytes()
        )
    return bool(a == b)


def both_ways(source: Any, indices: list[int]) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """(the batch path's batch, or None when it handed the batch over; the record path's)."""
    batch = source.__getitems__(indices)
    fast = source._layout.collate_raw(batch.buf, batch.starts, batch.stops)
    return fast, source._layout.collate(list(batch))


@pytest.fixture(scope="module")
def every_layout(spark, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from pyspark.ml.linalg import Vectors, VectorUDT
    from pyspark.sql.types import (
        ArrayType,
        BinaryType,
        BooleanType,
        DoubleType,
        FloatType,
        IntegerType,
        LongType,
        StringType,
        StructField,
        StructType,
    )

    box = StructType(
        [
            StructField("bbox", ArrayType(FloatType()), metadata={"tfrecord.listLength": 2}),
            StructField("label", LongType()),
            StructField("tags", ArrayType(StringType())),
        ]
    )
    schema = StructType(
        [
            StructField("id", LongType(), nullable=False),
            StructField("small", IntegerType()),
            StructField("flag", BooleanType()),
            StructField("f", FloatType()),
            StructField("d", DoubleType()),
            StructField("s", StringType()),
            StructField("b", BinaryType()),
            StructField("ints", ArrayType(LongType())),
            StructField("floats", ArrayType(FloatType())),
            StructField("words", ArrayType(StringType())),
            StructField("nested", ArrayType(ArrayType(ArrayType(FloatType())))),
            StructField(
                "st", StructType([StructField("a", LongType()), StructField("z", StringType())])
            ),
            StructField("objects", ArrayType(box)),
            StructField("vec", VectorUDT()),
        ]
    )
    big = 2**63 - 1
    rows = []
    for i in range(40):
        rows.append(
            (
                i,
                None if i % 4 == 0 else -i * 1000,
                i % 2 == 0,
                [math.nan, -0.0, math.inf, -math.inf, 1.5][i % 5],
                1e300 if i % 7 == 0 else i / 3,
                None if i % 5 == 0 else "é" * i,
                bytes([i % 256, 0xFF, 0xC3]),
                None if i % 6 == 0 else [big, -big - 1, i, -i][: i % 5],
                [float(i)] * (i % 3),
                ["w"] * (i % 4),
                [[[1.0, 2.0], []], [[float(i)]]] if i % 2 else [],
                None if i % 9 == 0 else (i, "z" * (i % 3)),
                [([0.5, float(i)], i, ["t"] * (i % 2)), ([1.0, 2.0], 7, [])][: i % 3],
                Vectors.sparse(6, [1, 4], [float(i), -0.0]) if i % 3 else Vectors.dense([0.0] * 6),
            )
        )
    folders = tmp_path_factory.mktemp("layouts")
    df = spark.createDataFrame(rows, schema)
    for layout in ("dense", "sparse"):
        spark_tfrecord.write(df.coalesce(3), str(folders / layout), vector_layout=layout)
    return folders


@pytest.mark.parametrize("layout", ["dense", "sparse"])
def test_a_batch_decodes_as_its_records_do_on_every_layout_spark_writes(
    every_layout: Path, layout: str
) -> None:
    source = spark_tfrecord.grain_source(every_layout / layout)
    rng = np.random.default_rng(7)
    for indices in (list(range(len(source))), rng.permutation(len(source))[:17].tolist(), [3]):
        fast, slow = both_ways(source, indices)
        assert fast is not None, "the batch path handed over a batch a spark-tfrecord write made"
        assert fast.keys() == slow.keys()
        for key in slow:
            assert same(fast[key], slow[key]), key
    record = source[1]
    assert isinstance(record["vec"], spark_tfrecord.Sparse if layout == "sparse" else np.ndarray)


def hand_built(tmp: Path, records: list[bytes]) -> Any:
    write_records(tmp / "data.tfrecord", records)
    return spark_tfrecord.grain_source(
        tmp, columns="i bigint, x array<float>, s string, n array<bigint>"
    )


def test_records_off_the_common_layout_decode_record_by_record(tmp_path: Path) -> None:
    ints = [0, 1, 127, 128, 2**31, -1, -(2**63), 2**63 - 1]
    common = example(
        entry(b"i", feature("int64", int64_list_packed([5]))),
        entry(b"x", feature("float", float_list_packed([-0.0, math.nan]))),
        entry(b"s", feature("bytes", bytes_list([b"ok"]))),
        entry(b"n", feature("int64", int64_list_packed(ints))),
    )
    unpacked = example(
        entry(b"i", feature("int64", int64_list_unpacked([6]))),
        entry(b"x", feature("float", float_list_unpacked([1.0, -math.inf]))),
        entry(b"n", feature("int64", int64_list_unpacked(ints))),
    )
    # two Features messages merge; a key given twice keeps its last Feature
    merged = example(entry(b"i", feature("int64", int64_list_packed([7])))) + example(
        entry(b"x", feature("float", float_list_packed([2.0]))),
        entry(b"i", feature("int64", int64_list_packed([8]))),
    )
    value_first = ld(1, ld(1, ld(2, feature("int64", int64_list_packed([9]))) + ld(1, b"i")))
    unknown_field = common + field(9, 0, b"\x05")
    unset = example(entry(b"i", b""), entry(b"x", b""))
    records = [common, unpacked, merged, value_first, unknown_field, unset, b""]
    source = hand_built(tmp_path, records)
    fast, slow = both_ways(source, [0, 0])
    assert fast is not None and all(same(fast[k], slow[k]) for k in slow)
    fast, slow = both_ways(source, list(range(len(records))))
    assert fast is None  # strays: decoded record by record
    i_values, i_offsets = slow["i"]
    assert i_values.tolist() == [5, 6, 8, 9, 5]
    assert i_offsets.tolist() == [0, 1, 2, 3, 4, 5, 5, 5]
    assert source[1]["x"].tobytes() == np.array([1.0, -math.inf], np.float32).tobytes()
    assert source[0]["x"].view(np.uint32).tolist() == [0x80000000, 0x7FC00000]
    assert source[2]["x"].tolist() == [2.0]
    assert source[0]["n"].tolist() == source[1]["n"].tolist() == ints
    unset_record = source[5]  # a Feature with no kind: null as a scalar, [] as a list
    assert unset_record["i"] is None and unset_record["s"] is None and unset_record["n"] is None
    assert unset_record["x"].dtype == np.float32 and unset_record["x"].size == 0
    assert source[6] == {"i": None, "x": None, "s": None, "n": None}


@pytest.mark.parametrize(
    ("awkward", "read"),
    [
        (None, None),
        (b"a\x00b", "a\x00b"),
        (b"\xff", "\ufffd"),
        (b"\xed\xa0\x80", "\ufffd"),  # an encoded surrogate: one U+FFFD, as Java reads it
        (b"\xc3", "\ufffd"),
        (b"\xc3x", "\ufffdx"),
    ],
    ids=["utf8", "a NUL", "invalid", "a surrogate", "a cut sequence", "a cut sequence, then x"],
)
def test_a_batch_of_strings_reads_as_its_records_do(
    tmp_path: Path, awkward: bytes | None, read: str | None
) -> None:
    """A string column's values in a batch read on the batch path are the record path's str
    (Java's U+FFFD for an invalid sequence, a NUL kept), empty strings, non-ASCII text and
    string lists included."""
    words = [b"", "é".encode(), "\u20ac".encode(), "\U0001f600".encode(), b"plain", b"x" * 300]
    records = [
        example(
            entry(b"i", feature("int64", int64_list_packed([k]))),
            entry(b"s", feature("bytes", bytes_list([words[k % len(words)]]))),
        )
        for k in range(40)
    ]
    if awkward is not None:
        records[17] = example(
            entry(b"i", feature("int64", int64_list_packed([17]))),
            entry(b"s", feature("bytes", bytes_list([awkward]))),
        )
    write_records(tmp_path / "data.tfrecord", records)
    one_by_one = [words[k % len(words)].decode() for k in range(40)]
    if read is not None:
        one_by_one[17] = read
    for columns in ("s string", "s array<string>"):
        source = spark_tfrecord.grain_source(tmp_path, columns=columns)
        fast, slow = both_ways(source, list(range(len(records))))
        assert fast is not None and same(fast["s"], slow["s"])
        assert fast["s"][0] == one_by_one
        assert fast["s"][1].tolist() == list(range(41))


def test_a_feature_of_another_kind_names_the_column_file_and_offset(tmp_path: Path) -> None:
    good = example(entry(b"i", feature("int64", int64_list_packed([1]))))
    wrong = example(entry(b"i", feature("float", float_list_packed([1.0]))))
    source = hand_built(tmp_path, [good, wrong])
    with pytest.raises(spark_tfrecord.errors.CorruptFileError) as caught:
        source.collate(source.__getitems__([0, 1]))
    parameters = spark_tfrecord.errors.parameters(caught.value)
    assert parameters["column"] == "i"
    assert parameters["offset"] == str(16 + len(good))
    assert parameters["path"].endswith("data.tfrecord")
    # the jar's message: the column, its type and the kind it cannot read
    assert "Column 'i' (bigint) cannot be read from a float_list feature" in str(caught.value)


def test_malformed_bytes_name_the_record(tmp_path: Path) -> None:
    good = example(entry(b"i", feature("int64", int64_list_packed([1]))))
    # a length that runs past the record, framed with valid checksums
    bad = b"\x0a\x7f" + good[2:]
    source = hand_built(tmp_path, [good, good, bad])
    for read in (lambda: source[2], lambda: source.collate(source.__getitems__([0, 1, 2]))):
        with pytest.raises(spark_tfrecord.errors.CorruptFileError) as caught:
            read()
        assert spark_tfrecord.errors.condition(caught.value) == "TFRECORD_MALFORMED_RECORD"
        assert spark_tfrecord.errors.parameters(caught.value)["offset"] == str(2 * (16 + len(good)))


@pytest.mark.parametrize("size", [5, 1023, 1024, 5000], ids=lambda n: f"{n} bytes")
def test_a_batch_is_sound_exactly_when_each_record_checked_alone_is(size: int) -> None:
    """frames_sound checks a batch's CRCs at once (short records' bytes copied, long ones
    viewed): it is True exactly when check_frame passes every record."""
    from spark_tfrecord._format.frames.framing import check_frame, frames_sound

    records = [frame(bytes([j]) * (size + j % 3)) for j in range(9)]
    for damage in [None, *[(4, at) for at in (0, 9, 13, 12 + size // 2, -1)]]:
        damaged = list(records)
        if damage is not None:
            k, at = damage
            r = bytearray(damaged[k])
            r[at] ^= 0x40
            damaged[k] = bytes(r)
        buf = b"".join(damaged)
        ends = np.cumsum([len(r) for r in damaged])
        starts = ends - [len(r) for r in damaged]
        alone = True
        for r in damaged:
            try:
                check_frame(r, "f", 0, len(r) - 16)
            except errors.CorruptFileError:
                alone = False
        assert frames_sound(buf, starts, ends) is alone
        assert frames_sound(memoryview(buf), starts, ends) is alone  # type: ignore[arg-type]
        assert alone == (damage is None)
