"""The Python Example encoder writes the jar's bytes: every type, layout, record type and codec.

Each case writes one DataFrame twice, with the jar (`df.coalesce(1).write.format("tfrecord")`)
and with `spark_tfrecord._format.columns.encoder.ExampleEncoder` from the same DataFrame's Arrow
batches (`toArrow()` on Spark 4, `_collect_as_arrow()` on 3.5), and compares every record's
bytes in order. Bad values fail in both with the same condition, column and reason. What the
encoder writes, the jar reads back to the same rows, and TensorFlow parses value for value.
"""

from __future__ import annotations

import datetime
import decimal
import gzip
import io
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    FloatType,
    LongType,
    ShortType,
    StringType,
    StructField,
    StructType,
)

from spark_tfrecord import errors
from spark_tfrecord._format.columns.encoder import ExampleEncoder
from spark_tfrecord._format.frames.encode_errors import EncodeError
from spark_tfrecord._format.frames.record_writer import RecordFileWriter
from support import encoded_tensors
from support.tfrecord_bytes import read_records

UTC = datetime.timezone.utc
I64_MIN, I64_MAX = -(2**63), 2**63 - 1
NAN, INF = float("nan"), float("inf")


def arrow_batches(df: DataFrame) -> list[Any]:
    """The DataFrame's rows as Arrow record batches, in order: the encoder's input, as Spark's
    ``ArrowWriter`` makes them for a ``DataSourceArrowWriter``. ``_collect_as_arrow`` (3.5 and
    4.x) rather than 4.x's ``toArrow``, whose last step, a cast to the schema's Arrow types,
    refuses a null vector (pyspark 4.0.5 with pyarrow 26: "nulls in input cannot be viewed as
    non-nullable")."""
    return list(df._collect_as_arrow())


def jar_stream(df: DataFrame, out: Path, **options: str) -> bytes:
    """The uncompressed record stream of the one file the jar writes for ``df``."""
    df.coalesce(1).write.format("tfrecord").options(**options).save(str(out))
    (path,) = [p for p in out.iterdir() if p.name.startswith("part-")]
    raw = path.read_bytes()
    if path.name.endswith(".gz"):
        return gzip.decompress(raw)
    if path.name.endswith(".deflate"):
        return zlib.decompress(raw)
    return raw


def split(stream: bytes, tmp: Path) -> list[bytes]:
    tmp.write_bytes(stream)
    return list(read_records(tmp))


def python_stream(df: DataFrame, *, slices: int = 0, **options: Any) -> bytes:
    """The encoder's framed records of ``df``; with ``slices``, each batch is encoded in slices
    of that many rows (arrays that start inside their buffers)."""
    encoder = ExampleEncoder(df.schema, **options)
    batches = arrow_batches(df)
    if slices:
        batches = [b.slice(i, slices) for b in batches for i in range(0, b.num_rows, slices)]
    return b"".join(bytes(encoder.encode(b).framed_bytes()) for b in batches)


def assert_same_records(df: DataFrame, tmp_path: Path, slices: int = 0, **options: str) -> int:
    """The jar's and the encoder's records, compared in order; returns how many."""
    names = {"recordType": "record_type", "pathSeparator": "path_separator"}
    names["vectorLayout"] = "vector_layout"
    ours = python_stream(df, slices=slices, **{names[k]: v for k, v in options.items()})
    theirs = jar_stream(df, tmp_path / "jar", **options)
    expected = split(theirs, tmp_path / "jar.records")
    got = split(ours, tmp_path / "py.records")
    assert len(got) == len(expected) == df.count()
    for i, (g, e) in enumerate(zip(got, expected)):
        assert g == e, f"record {i}: {g.hex()} != {e.hex()}"
    assert ours == theirs  # the framing too
    return len(got)


# --- the cases: one DataFrame each ---------------------------------------------------------------

SCALARS = (
    "b boolean, y tinyint, s smallint, i int, l bigint, f float, d double, "
    "m decimal(10,2), w decimal(38,18), t string, bin binary, dt date, ts timestamp, "
    "nt timestamp_ntz"
)
SCALAR_ROWS = [
    (
        True,
        127,
        32767,
        2**31 - 1,
        I64_MAX,
        NAN,
        NAN,
        decimal.Decimal("12345678.91"),
        decimal.Decimal("12345678901234567890.123456789012345678"),
        "héllo ✓",
        b"\xff\xfe\x00bad utf-8",
        datetime.date(2024, 2, 29),
        datetime.datetime(2024, 1, 2, 3, 4, 5, 678901, tzinfo=UTC),
        datetime.datetime(1969, 12, 31, 23, 59, 59, 999999),
    ),
    (
        False,
        -128,
        -32768,
        -(2**31),
        I64_MIN,
        INF,
        -INF,
        decimal.Decimal("-0.01"),
        decimal.Decimal("0.000000000000000001"),
        "",
        b"",
        datetime.date(1, 1, 1),
        datetime.datetime(1900, 1, 1, tzinfo=UTC),
        datetime.datetime(9999, 12, 31, 23, 59, 59),
    ),
    (
        None,
        0,
        None,
        0,
        -1,
        -0.0,
        -0.0,
        decimal.Decimal("0.10"),
        decimal.Decimal("-99999999999999999999.999999999999999999"),
        None,
        None,
        None,
        None,
        None,
    ),
    (True, None, 1, None, 0, 3.4028235e38, 1e300, None, None, "a", b"\x00", None, None, None),
    (
        None,
        1,
        2,
        3,
        2**35,
        1.5e-45,
        2.0 ** (-149) * 0.5,
        decimal.Decimal("0.05"),
        None,
        "x",
        b"y",
        datetime.date(1970, 1, 1),
        datetime.datetime(1970, 1, 1, tzinfo=UTC),
        None,
    ),
    (None,) * 14,
    (
        None,
        None,
        None,
        None,
        None,
        None,
        0.1,
        decimal.Decimal("16777217.00"),
        decimal.Decimal("3.000000059604644775"),
        None,
        None,
        None,
        None,
        None,
    ),
]

ARRAYS = " ,".join(
    f"a_{n} array<{t}>"
    for n, t in [
        ("b", "boolean"),
        ("y", "tinyint"),
        ("s", "smallint"),
        ("i", "int"),
        ("l", "bigint"),
        ("f", "float"),
        ("d", "double"),
        ("m", "decimal(12,3)"),
        ("t", "string"),
        ("bin", "binary"),
        ("dt", "date"),
        ("ts", "timestamp"),
    ]
)
ARRAY_ROWS = [
    (
        [True, False],
        [-1, 2],
        [300, -300],
        [1, 2, 3],
        [I64_MIN, I64_MAX, 0, 127, 128],
        [1.5, NAN, -0.0],
        [INF, 1e-300, 2.5],
        [decimal.Decimal("1.125"), decimal.Decimal("-2.000")],
        ["a", "", "ünï"],
        [b"\x80", b""],
        [datetime.date(2000, 1, 1)],
        [datetime.datetime(2000, 1, 1, tzinfo=UTC)],
    ),
    ([], [], [], [], [], [], [], [], [], [], [], []),
    (None,) * 12,
    ([True], None, [], [7], None, [1.0] * 40, [], None, ["x" * 300], [b"y" * 200], [], None),
]

RAGGED = "r2 array<array<int>>, r3 array<array<array<string>>>, rf array<array<float>>"
RAGGED_ROWS = [
    ([[1, 2], [], [3]], [[["a"], []], [], [["b", "c"], ["d"]]], [[1.5], [2.5, NAN]]),
    ([], [], []),
    ([[]], [[]], [[], []]),
    (None, [[[]]], None),
    ([[I64_MAX % 2**31]], None, [[-0.0]]),
]

NESTED = StructType(
    [
        StructField("id", LongType()),
        StructField(
            "image",
            StructType(
                [
                    StructField("height", LongType()),
                    StructField("encoded", BinaryType()),
                    StructField(
                        "object",
                        StructType(
                            [
                                StructField("label", ArrayType(StringType())),
                                StructField("xs", ArrayType(FloatType())),
                            ]
                        ),
                    ),
                ]
            ),
        ),
    ]
)
NESTED_ROWS = [
    (1, (10, b"\x89PNG", (["cat", "dog"], [0.5, 0.25]))),
    (2, None),
    (3, (None, None, None)),
    (4, (20, b"", ([], None))),
]

OBJECTS = (
    "id bigint, objects array<struct<x: float, name: string, tags: array<string>, "
    "box: struct<w: int, h: double>, ids: array<array<bigint>>>>"
)
OBJECT_ROWS = [
    (1, [(0.5, "a", ["t1", "t2"], (1, 2.5), [[1], [2, 3]]), (1.5, "b", [], (3, 4.0), [])]),
    (2, []),
    (3, None),
    (4, [(2.5, "", ["x"], (5, -0.0), [[], []])]),
]


def _bbox_schema() -> StructType:
    fixed = {"tfrecord.listLength": 4}
    return StructType(
        [
            StructField("id", LongType()),
            StructField("pos", ArrayType(FloatType()), metadata={"tfrecord.listLength": 2}),
            StructField(
                "objects",
                ArrayType(
                    StructType(
                        [
                            StructField("bbox", ArrayType(FloatType()), metadata=fixed),
                            StructField("label", LongType()),
                        ]
                    )
                ),
            ),
        ]
    )


BBOX_ROWS = [
    (1, [0.5, 1.5], [([0.1, 0.2, 0.3, 0.4], 7), ([1.0, 2.0, 3.0, 4.0], 8)]),
    (2, None, []),
    (3, [1.0, 2.0], None),
]

SEQUENCE = (
    "id bigint, label string, frames array<array<float>>, words array<array<string>>, "
    "empty array<array<int>>, steps array<struct<t: bigint, vals: array<double>>>, "
    "meta struct<name: string, marks: array<array<bigint>>>, scores array<float>"
)
SEQUENCE_ROWS = [
    (
        1,
        "a",
        [[1.0, 2.0], [3.0]],
        [["x"], []],
        [],
        [(1, [0.5]), (2, [])],
        ("m", [[1], [2, 3]]),
        [0.5],
    ),
    (2, None, [], None, [[]], [], ("n", []), []),
    (3, "c", None, [[""]], None, None, None, None),
    (None, None, None, None, None, None, None, None),
]


def _tensor_schema(encoding: str) -> StructType:
    meta = {"tfrecord.tensorEncoding": encoding, "tfrecord.tensorDtype": "float32"}
    u8 = {"tfrecord.tensorEncoding": encoding, "tfrecord.tensorDtype": "uint8"}
    return StructType(
        [
            StructField("id", LongType()),
            StructField("t", ArrayType(ArrayType(FloatType(), False), False), metadata=meta),
            StructField("img", ArrayType(ArrayType(ShortType(), False), False), metadata=u8),
        ]
    )


TENSOR_ROWS = [
    (1, [[1.0, 2.0, 3.0], [4.0, 5.0, NAN]], [[0, 255], [128, 7]]),
    (2, [], [[]]),
    (3, None, [[1] * 300, [2] * 300]),
]


def _cases() -> list[Any]:
    cases = [
        pytest.param(SCALARS, SCALAR_ROWS, {}, id="scalars"),
        pytest.param(ARRAYS, ARRAY_ROWS, {}, id="arrays"),
        pytest.param(RAGGED, RAGGED_ROWS, {}, id="ragged"),
        pytest.param(NESTED, NESTED_ROWS, {}, id="nested"),
        pytest.param(NESTED, NESTED_ROWS, {"pathSeparator": "__"}, id="nested-separator"),
        pytest.param(OBJECTS, OBJECT_ROWS, {}, id="arrays-of-structs"),
        pytest.param(_bbox_schema(), BBOX_ROWS, {}, id="list-length"),
        pytest.param(SEQUENCE, SEQUENCE_ROWS, {"recordType": "SequenceExample"}, id="sequence"),
        pytest.param(SCALARS, SCALAR_ROWS, {"recordType": "SequenceExample"}, id="seq-scalars"),
        pytest.param(_tensor_schema("bytes"), TENSOR_ROWS, {}, id="tensor-bytes"),
        pytest.param(_tensor_schema("zlib"), TENSOR_ROWS, {}, id="tensor-zlib"),
        pytest.param("v binary", [(b"\x00\x01",), (b"",), (b"\xff" * 1000,)], {}, id="binary"),
        pytest.param(  # Spark's Arrow batches give an empty child an empty offsets buffer
            "r array<array<int>>, s array<string>, o array<struct<x: array<int>>>",
            [([], [], []), (None, None, None), ([[]], [""], [([],)])],
            {},
            id="empty-children",
        ),
        pytest.param(
            "v binary",
            [(b"\x00\x01",), (b"",), (b"\xff" * 1000,)],
            {"recordType": "ByteArray"},
            id="byte-array",
        ),
    ]
    return cases


@pytest.mark.parametrize(("schema", "rows", "options"), _cases())
def test_the_same_records_as_the_jar(
    spark: SparkSession, tmp_path: Path, schema: Any, rows: list[Any], options: dict[str, str]
) -> None:
    df = spark.createDataFrame(rows, schema)
    assert assert_same_records(df, tmp_path, **options) == len(rows)


def _vectors(spark: SparkSession) -> DataFrame:
    from pyspark.ml.linalg import DenseVector, SparseVector, VectorUDT

    schema = StructType(
        [
            StructField("id", LongType()),
            StructField("v", VectorUDT()),
            StructField("s", StructType([StructField("w", VectorUDT())])),
        ]
    )
    rows = [
        (1, DenseVector([1.0, 0.0, -0.0, NAN, 1e300]), (SparseVector(4, [1, 3], [2.0, 0.0]),)),
        (2, SparseVector(5, [0, 4], [0.5, -1.5]), None),
        (3, None, (DenseVector([]),)),
        (4, SparseVector(3, [], []), (DenseVector([0.0, 0.0]),)),
    ]
    return spark.createDataFrame(rows, schema)


@pytest.mark.parametrize("layout", ["dense", "sparse"])
@pytest.mark.parametrize("record_type", ["Example", "SequenceExample"])
def test_vectors_as_the_jar_writes_them(
    spark: SparkSession, tmp_path: Path, layout: str, record_type: str
) -> None:
    df = _vectors(spark)
    options = {"vectorLayout": layout, "recordType": record_type}
    assert assert_same_records(df, tmp_path, **options) == 4


@pytest.mark.parametrize("codec", ["gzip", "deflate"])
def test_compressed_files_hold_the_jar_stream(
    spark: SparkSession, tmp_path: Path, codec: str
) -> None:
    df = spark.createDataFrame(ARRAY_ROWS * 50, ARRAYS)
    theirs = jar_stream(df, tmp_path / "jar", compression=codec)
    encoder = ExampleEncoder(df.schema)
    out = io.BytesIO()
    with RecordFileWriter(out, codec) as writer:
        for batch in arrow_batches(df):
            writer.write(encoder.encode(batch))
    raw = out.getvalue()
    ours = gzip.decompress(raw) if codec == "gzip" else zlib.decompress(raw)
    assert ours == theirs
    assert len(split(ours, tmp_path / "records")) == writer.records == 200


def test_many_rows_in_many_batches(spark: SparkSession, tmp_path: Path) -> None:
    """Batches that start inside Spark's arrays (Arrow offsets) and rows of every size."""
    df = spark.range(20_000, numPartitions=3).selectExpr(
        "id",
        "id % 7 AS label",
        "IF(id % 11 = 0, NULL, transform(sequence(0, CAST(id % 33 AS INT)), x -> x * 0.5F)) AS f",
        "IF(id % 5 = 0, NULL, repeat('ab', CAST(id % 40 AS INT))) AS s",
        "named_struct('a', id * 3, 'b', IF(id % 3 = 0, NULL, array(id, -id))) AS st",
    )
    assert assert_same_records(df, tmp_path, slices=777) == 20_000


# --- the same errors ---------------------------------------------------------------------------

ERRORS = [
    pytest.param("a array<int>", [([1],), ([1, None],)], {}, "a", id="null-in-array"),
    pytest.param("r array<array<int>>", [([[1], None],)], {}, "r", id="null-list-ragged"),
    pytest.param("r array<array<int>>", [([[1], [2, None]],)], {}, "r", id="null-value-ragged"),
    pytest.param(
        "o array<struct<x: int>>", [([(1,), None],)], {}, "o.x", id="null-element-of-structs"
    ),
    pytest.param(
        "o array<struct<x: int>>", [([(1,), (None,)],)], {}, "o.x", id="null-field-of-structs"
    ),
    pytest.param(
        "f array<array<float>>",
        [([[1.0], None],)],
        {"recordType": "SequenceExample"},
        "f",
        id="null-step",
    ),
    pytest.param(
        "f array<array<float>>",
        [([[1.0], [2.0, None]],)],
        {"recordType": "SequenceExample"},
        "f",
        id="null-in-step",
    ),
    pytest.param("v binary", [(b"1",), (None,)], {"recordType": "ByteArray"}, "v", id="bytes"),
]


def _bad_bbox(spark: SparkSession) -> DataFrame:
    return spark.createDataFrame([(1, [0.5, 1.5], [([0.1, 0.2, 0.3], 7)])], _bbox_schema())


@pytest.mark.parametrize(("schema", "rows", "options", "column"), ERRORS)
def test_the_same_errors_as_the_jar(
    spark: SparkSession,
    tmp_path: Path,
    schema: str,
    rows: list[Any],
    options: dict[str, str],
    column: str,
) -> None:
    df = spark.createDataFrame(rows, schema)
    assert_same_error(df, tmp_path, column, **options)


def assert_same_error(df: DataFrame, tmp_path: Path, column: str, **options: str) -> None:
    names = {"recordType": "record_type"}
    with pytest.raises(EncodeError) as ours:
        python_stream(df, **{names[k]: v for k, v in options.items()})
    with pytest.raises(Exception) as theirs:
        jar_stream(df, tmp_path / "jar", **options)
    assert errors.condition(ours.value) == errors.condition(theirs.value) == errors.DATA_MISMATCH
    expected = errors.parameters(theirs.value)
    got = errors.parameters(ours.value)
    assert got["column"] == expected["column"] == column
    # The jar's reason says where the record would start, after its own last sentence.
    assert got["reason"].rstrip(".") == expected["reason"].rstrip(".")


def test_wrong_fixed_lengths_fail_as_in_the_jar(spark: SparkSession, tmp_path: Path) -> None:
    assert_same_error(_bad_bbox(spark), tmp_path / "a", "objects.bbox")
    bad = spark.createDataFrame([(1, [0.5], [])], _bbox_schema())
    assert_same_error(bad, tmp_path / "b", "pos")


def test_tensors_that_are_not_rectangular_fail_as_in_the_jar(
    spark: SparkSession, tmp_path: Path
) -> None:
    schema = _tensor_schema("bytes")
    ragged = spark.createDataFrame([(1, [[1.0], [2.0, 3.0]], [[1]])], schema)
    assert_same_error(ragged, tmp_path / "a", "t")
    too_big = spark.createDataFrame([(1, [[1.0]], [[256]])], schema)
    assert_same_error(too_big, tmp_path / "b", "img")


@pytest.mark.parametrize(
    ("schema", "options", "condition", "column"),
    [
        ("m map<string, int>", {}, errors.UNSUPPORTED_TYPE, "m"),
        ("s struct<a: map<string, int>>", {}, errors.UNSUPPORTED_TYPE, "s.a"),
        ("o array<struct<i: array<struct<x: int>>>>", {}, errors.UNSUPPORTED_TYPE, "o.i"),
        ("x array<array<array<int>>>", {"recordType": "SequenceExample"}, None, "x"),
        ("`a/b` int, a struct<b: int>", {}, errors.INVALID_SCHEMA, None),
        ("a int, b int", {"recordType": "ByteArray"}, errors.INVALID_SCHEMA, None),
        ("a int", {"recordType": "Examples"}, errors.INVALID_OPTION, None),
        ("a int", {"vectorLayout": "diagonal"}, errors.INVALID_OPTION, None),
    ],
)
def test_the_same_schema_errors_as_the_jar(
    spark: SparkSession,
    tmp_path: Path,
    schema: str,
    options: dict[str, str],
    condition: str | None,
    column: str | None,
) -> None:
    """Refused when the encoder is built, as the jar refuses them before any task."""
    df = spark.createDataFrame([], schema)
    names = {"recordType": "record_type", "vectorLayout": "vector_layout"}
    with pytest.raises(EncodeError) as ours:
        ExampleEncoder(df.schema, **{names[k]: v for k, v in options.items()})
    with pytest.raises(Exception) as theirs:
        jar_stream(df, tmp_path / "jar", **options)
    expected = errors.parameters(theirs.value)
    assert errors.condition(ours.value) == errors.condition(theirs.value)
    assert condition is None or errors.condition(ours.value) == condition
    assert ours.value.parameters == expected
    assert ours.value.parameters.get("column") == column


@pytest.mark.parametrize("case", list(encoded_tensors.REFUSED))
def test_a_bad_encoded_tensor_column_is_refused_as_by_the_jar(
    spark: SparkSession, tmp_path: Path, case: str
) -> None:
    """A column with an encoded tensor's metadata that it cannot hold (of no array, or of an
    encoding, a dtype or an element type it cannot have: ``encoded_tensors.REFUSED``): refused when
    the encoder is built, as the jar refuses the write before any task, with its condition and
    parameters."""
    schema = StructType.fromJson(encoded_tensors.refused_schema(case))
    df = spark.createDataFrame([], schema)
    with pytest.raises(EncodeError) as ours:
        ExampleEncoder(df.schema)
    with pytest.raises(Exception) as theirs:
        jar_stream(df, tmp_path / "jar")
    assert errors.condition(ours.value) == errors.condition(theirs.value) == errors.INVALID_SCHEMA
    reason = encoded_tensors.refused_reason(case)
    assert ours.value.parameters == errors.parameters(theirs.value)
    assert ours.value.parameters == {"column": "x", "reason": reason}
    assert not (tmp_path / "jar").exists()


# --- what the encoder writes is read back ------------------------------------------------------


def _write_python(df: DataFrame, folder: Path, **options: Any) -> Path:
    folder.mkdir(parents=True)
    path = folder / "part-00000.tfrecord"
    encoder = ExampleEncoder(df.schema, **options)
    with path.open("wb") as f, RecordFileWriter(f) as writer:
        for batch in arrow_batches(df):
            writer.write(encoder.encode(batch))
    return path


@pytest.mark.parametrize(
    ("schema", "rows", "options"),
    [
        pytest.param(SCALARS, SCALAR_ROWS, {}, id="scalars"),
        pytest.param(ARRAYS, ARRAY_ROWS, {}, id="arrays"),
        pytest.param(RAGGED, RAGGED_ROWS, {}, id="ragged"),
        pytest.param(OBJECTS, OBJECT_ROWS, {}, id="arrays-of-structs"),
        pytest.param(SEQUENCE, SEQUENCE_ROWS, {"recordType": "SequenceExample"}, id="sequence"),
    ],
)
def test_the_jar_reads_back_what_the_encoder_writes(
    spark: SparkSession, tmp_path: Path, schema: Any, rows: list[Any], options: dict[str, str]
) -> None:
    df = spark.createDataFrame(rows, schema)
    if "w" in df.columns:  # decimal(38,18): its float does not fit it again
        df = df.drop("w")
    names = {"recordType": "record_type"}
    _write_python(df, tmp_path / "py", **{names[k]: v for k, v in options.items()})
    back = spark.read.format("tfrecord").options(**options).schema(df.schema)
    read = back.load(str(tmp_path / "py")).collect()
    assert _canonical(read) == _canonical(df.collect())


def _canonical(rows: list[Any]) -> list[Any]:
    """Rows as comparable values: floats as float32 bits (NaN equal to NaN), structs as tuples."""

    def value(v: Any) -> Any:
        if isinstance(v, (float, decimal.Decimal)):
            with np.errstate(over="ignore"):  # 1e300: inf, as written
                return np.float32(float(v)).tobytes()
        if isinstance(v, (list, tuple)):
            return tuple(value(x) for x in v)
        return v

    return [value(tuple(r)) for r in rows]


@pytest.mark.tensorflow
def test_tensorflow_parses_what_the_encoder_writes(
    spark: SparkSession, tf: Any, tmp_path: Path
) -> None:
    rows = [
        (NAN, [INF, -INF, -0.0], I64_MIN, [I64_MAX, 0, -1], b"\xff\xfe", ["ok", ""], [[1], []]),
        (-0.0, [], I64_MAX, [], b"", [], []),
        (None, None, None, None, None, None, None),
    ]
    schema = (
        "f float, fs array<float>, l bigint, ls array<bigint>, b binary, s array<string>, "
        "r array<array<int>>"
    )
    df = spark.createDataFrame(rows, schema)
    path = _write_python(df, tmp_path / "py")
    spec = {
        "f": tf.io.VarLenFeature(tf.float32),
        "fs": tf.io.VarLenFeature(tf.float32),
        "l": tf.io.VarLenFeature(tf.int64),
        "ls": tf.io.VarLenFeature(tf.int64),
        "b": tf.io.VarLenFeature(tf.string),
        "s": tf.io.VarLenFeature(tf.string),
        "r": tf.io.RaggedFeature(
            tf.int64,
            value_key="r/ragged_flat_values",
            partitions=[tf.io.RaggedFeature.RowLengths("r/ragged_row_lengths_0")],
        ),
    }
    parsed = [
        {k: (v.values.numpy() if hasattr(v, "values") and k != "r" else v) for k, v in p.items()}
        for p in (tf.io.parse_single_example(r, spec) for r in tf.data.TFRecordDataset(str(path)))
    ]
    first, second, third = parsed
    assert np.isnan(first["f"][0]) and list(first["fs"][:2]) == [INF, -INF]
    assert np.signbit(first["fs"][2]) and first["fs"][2] == 0.0
    assert list(first["l"]) == [I64_MIN] and list(first["ls"]) == [I64_MAX, 0, -1]
    assert list(first["b"]) == [b"\xff\xfe"] and list(first["s"]) == [b"ok", b""]
    assert first["r"].to_list() == [[1], []]
    assert np.signbit(second["f"][0]) and list(second["fs"]) == []
    assert (
        list(second["l"]) == [I64_MAX] and list(second["ls"]) == [] and list(second["b"]) == [b""]
    )
    assert second["r"].to_list() == []
    assert all(len(third[k]) == 0 for k in ("f", "fs", "l", "ls", "b", "s"))


@pytest.mark.parametrize(
    ("schema", "rows", "options"),
    [
        pytest.param(ARRAYS, ARRAY_ROWS, {}, id="arrays"),
        pytest.param(RAGGED, RAGGED_ROWS, {}, id="ragged"),
        pytest.param(OBJECTS, OBJECT_ROWS, {}, id="arrays-of-structs"),
        pytest.param(_bbox_schema(), BBOX_ROWS, {}, id="list-length"),
        pytest.param(_tensor_schema("zlib"), TENSOR_ROWS, {}, id="tensor"),
        pytest.param(SEQUENCE, SEQUENCE_ROWS, {"record_type": "SequenceExample"}, id="sequence"),
    ],
)
def test_value_counts_as_the_jar_keeps_them_in_its_manifest(
    spark: SparkSession, tmp_path: Path, schema: Any, rows: list[Any], options: dict[str, str]
) -> None:
    """The fewest and most values per feature and per feature list's step, for the manifest
    a jar-less write (issue 43) writes as the jar does."""
    import json

    import spark_tfrecord

    df = spark.createDataFrame(rows, schema).coalesce(1)
    spark_tfrecord.write(df, str(tmp_path / "jar"), **options)  # type: ignore[arg-type]
    manifest = json.loads((tmp_path / "jar" / "_tfrecord_manifest.json").read_text())
    encoder = ExampleEncoder(df.schema, **options)
    for batch in arrow_batches(df):
        encoder.encode(batch)
    features, lists = encoder.value_counts()

    def of(key: str) -> dict[str, tuple[int, int]]:
        return {k: (v["min"], v["max"]) for k, v in manifest.get(key, {}).items()}

    assert features == of("features")
    assert lists == of("feature_lists")


def test_a_slice_of_a_batch_encodes_its_own_values_only() -> None:
    """A batch sliced from a larger table (Ray's write cuts a block into batches so) has the
    whole child of each list column beneath it: its lists' values and offsets are its rows'
    alone, so that each batch's encoding reads its own values, and the records are those of a
    copy of the same rows."""
    import pyarrow as pa

    from spark_tfrecord._format.columns import arrow
    from spark_tfrecord._format.columns.ddl import parse_ddl

    ids = [[i] * (i % 4) if i % 9 else None for i in range(1000)]
    nested = [[[i, -i]] * (i % 3) for i in range(1000)]
    table = pa.table(
        {
            "ids": pa.array(ids, pa.list_(pa.int64())),
            "r": pa.array(nested, pa.list_(pa.list_(pa.int64()))),
        }
    )
    part = table.slice(500, 100).to_batches()[0]
    a = part.column(0)
    values, offsets = arrow.list_values(a), arrow.list_offsets(a)
    assert offsets[0] == 0 and offsets[-1] == len(values) == sum(len(v or []) for v in ids[500:600])
    assert values.to_pylist() == a.flatten().to_pylist()
    inner = arrow.list_values(arrow.list_values(part.column(1)))
    assert len(inner) == 2 * sum(i % 3 for i in range(500, 600))
    for empty in (a.slice(5, 0), pa.array([], pa.list_(pa.int64()))):
        assert len(arrow.list_values(empty)) == 0 and arrow.list_offsets(empty).tolist() == [0]

    encoder = ExampleEncoder(parse_ddl("ids array<bigint>, r array<array<bigint>>"))
    copied = pa.RecordBatch.from_pylist(part.to_pylist(), schema=part.schema)
    assert bytes(encoder.encode(part).framed_bytes()) == bytes(
        encoder.encode(copied).framed_bytes()
    )


@pytest.mark.parametrize("forced", [False, True])
def test_a_batch_encodes_as_its_rows_placed_one_at_a_time(
    monkeypatch: pytest.MonkeyPatch, forced: bool
) -> None:
    """A batch's records are laid out in slots (a strided copy per piece, then one compress),
    unless that would be mostly padding (one string far longer than the others) or most bytes
    are in long pieces (over 1 KiB a record): with the slots taken whatever the batch
    (``forced``), and with the defaults, the records are those of every piece placed at its
    offset (no slots at all)."""
    import pyarrow as pa

    from spark_tfrecord._format.columns.ddl import parse_ddl
    from spark_tfrecord._format.frames import packing

    n = 300
    rows = {
        # varints of 1 to 10 bytes
        "id": [-(2**63) if i == 1 else (-1) ** i * ((i * 7919) ** 3 % 2**63) for i in range(n)],
        "label": [1] * n,  # a constant feature: its entry one constant
        "x": [None if i % 7 == 0 else [i * 0.5, -1.0, 2.0, 3.0] for i in range(n)],
        "s": ["é" * 150_000 if i == 5 else "ab" * (i % 13) for i in range(n)],
        "ids": [list(range(-(i % 5), i % 9)) for i in range(n)],
        "st": [None if i % 3 == 0 else {"a": i, "c": [float(i)] * (i % 2)} for i in range(n)],
        "b": [(bytes(range(256)) * 12)[i % 7 : i % 7 + i * 37 % 3000] for i in range(n)],
    }
    ddl = (
        "id bigint, label bigint, x array<float>, s string, ids array<bigint>, "
        "st struct<a: bigint, c: array<float>>, b binary"
    )
    table = pa.Table.from_pydict(rows).cast(
        pa.schema(
            [
                ("id", pa.int64()),
                ("label", pa.int64()),
                ("x", pa.list_(pa.float32())),
                ("s", pa.string()),
                ("ids", pa.list_(pa.int64())),
                ("st", pa.struct([("a", pa.int64()), ("c", pa.list_(pa.float32()))])),
                ("b", pa.binary()),
            ]
        )
    )
    even = table.slice(10)
    short = ddl.removesuffix(", b binary")
    batches = {  # each with its schema, and its records' layout under the defaults
        "skewed": (table, ddl, False),
        "long": (even, ddl, False),
        "short": (even.drop_columns(["b"]), short, True),
        "fixed": (  # every record as long: nothing to compress
            pa.table(
                {"x": [[1.0, i / 3, 2.0, 3.0] for i in range(50)]},
                schema=table.select(["x"]).schema,
            ),
            "x array<float>",
            True,
        ),
    }

    def encoded(batch: pa.Table, schema: str) -> bytes:
        encoder = ExampleEncoder(parse_ddl(schema))
        return bytes(encoder.encode(batch.to_batches()[0]).framed_bytes())

    monkeypatch.setattr(packing, "_PADDING", 0)  # every piece placed at its offset
    placed = {name: encoded(batch, schema) for name, (batch, schema, _) in batches.items()}
    monkeypatch.setattr(packing, "_PADDING", 10**9 if forced else 2)
    monkeypatch.setattr(packing, "_LONG_SHARE", 1.0 if forced else 0.5)
    slotted = []
    real = packing._compressed
    monkeypatch.setattr(
        packing, "_compressed", lambda p, w, t, k: slotted.append(k) or real(p, w, t, k)
    )
    for name, (batch, schema, slots) in batches.items():
        slotted.clear()
        assert encoded(batch, schema) == placed[name], name
        # The records' frames (a piece per feature, the batch's rows): in slots where they fit.
        assert (batch.num_rows in slotted) == (forced or slots), (name, slotted)
