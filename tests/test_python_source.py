"""The jar-less ``tfrecord`` source (a Spark 4 Python data source, issue 43) reads as the jar
reads: in a Spark session started with no jar, ``spark.read.format("tfrecord")`` is the Python
source, found by Spark itself (the top-level ``pyspark_tfrecord`` module); the files TensorFlow
writes (support/tf_corpus.py) give the schema the jar infers and, row for row, the values the
jar's own scan gives (support/jar_decoder.py, through JPype), with inferred and given schemas
(narrower types, doubles, decimals, timestamps, structs, ragged lists, arrays of structs, ML
vectors, SequenceExamples, GZIP found by its magic bytes, ByteArray); bad records give the jar's
condition, file and offset in each mode; partition folders (local, and on an S3 server through
``s3a://``) are columns; a file read in slices gives each record once.

Writes (``df.write.format("tfrecord")`` with no jar): the same files, byte for byte (none, gzip,
deflate; vectors dense and sparse, nested paths, ragged lists, SequenceExamples), and the same
manifest as the jar writes from the same rows (a child session with the jar,
support/jar_writes.py), which the jar reads back to the rows and TensorFlow parses value for
value; append and overwrite; a task that fails leaves the folder as it was; numShards; the jar's
option errors; what Spark itself refuses (partitionBy, modes other than append and overwrite).

Collected only where pyspark has the Python data source API (tests/conftest.py). The tests of
the package's own reading (slices, the batch decoder's fast path and its fallback, and the
encoded tensors' cases but one read, one failed record and one refused column, marked
``once``) run in one Spark 4 suite of ci/test's matrix, the rest in each.
"""

from __future__ import annotations

import datetime as dt
import functools
import gzip
import json
import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pyspark
import pytest

import spark_tfrecord
from spark_tfrecord import errors
from spark_tfrecord._format.files.files import LocalFiles
from spark_tfrecord._format.frames.file_records import records
from spark_tfrecord._format.frames.read_options import InferenceOptions
from spark_tfrecord._source.planning import data_files, plan
from spark_tfrecord._source.slices import slice_records
from support import encoded_tensors, once_but, tf_corpus
from support.jar_decoder import (
    Failure,
    Row,
    as_loaders_hold,
    jar_inferred_schema,
    jar_results,
    schema_of_ddl,
    value_tree,
)
from support.tfrecord_bytes import (
    bytes_list,
    entry,
    example,
    feature,
    float_list_packed,
    int64_list_packed,
    int64_list_unpacked,
    write_records,
)

CORPUS = {
    "interop": tf_corpus.interop,
    "every_kind": tf_corpus.every_kind,
    "images": tf_corpus.images,
}
#: Given schemas: the projection (a few columns decoded), Spark's narrower types, a struct.
GIVEN = {
    "projection": "fl array<float>, big_1 bigint",
    "narrow types": "small_1 int, small array<smallint>, bit_1 boolean, bit array<boolean>, "
    "days_1 date, days array<date>, text_1 string, raw_1 binary",
    "struct": "st struct<a: bigint, name: string, inner: struct<x: float, tags: array<string>>>",
    "ragged": "r array<array<bigint>>, rs array<array<string>>, r3 array<array<array<float>>>",
    "doubles": "fl_1 double, fl array<double>, big_1 double, rf array<array<double>>",
    "decimals": "small_1 decimal(10,2), small array<decimal(5,0)>",
    "timestamps": "micros_1 timestamp, micros array<timestamp_ntz>",
    "array of structs": "objs array<struct<n: bigint, name: string, toks: array<string>, "
    "inner: struct<a: int>>>",
}
JAR_CLASS = "io.github.sparktfrecord.TFRecordFileFormat"


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    """One local session with no jar, whose Python workers import this package, in a JVM of its
    own: the module runs before any session with the jar (tests/conftest.py, FIRST), and its JVM
    ends with it, so that the next session starts a JVM with the jar."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    assert SparkContext._gateway is None, "a JVM runs already: this module must run first"
    package_root = str(Path(spark_tfrecord.__file__).resolve().parent.parent)
    saved = {k: os.environ.get(k) for k in ("PYSPARK_PYTHON", "PYTHONPATH")}
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, saved["PYTHONPATH"]) if p)
    session = (
        SparkSession.builder.master("local[2]")
        .appName("test_python_source")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        # Spark 4.1+'s file sources write and read TIME only when asked to (NEWER_ROWS).
        .config("spark.sql.timeType.enabled", "true")
        .getOrCreate()
    )
    try:
        jvm = session.sparkContext._jvm
        with pytest.raises(Exception, match="ClassNotFoundException"):
            jvm.java.lang.Class.forName(JAR_CLASS)
        yield session
    finally:
        session.stop()
        gateway = SparkContext._gateway
        # pyspark starts a JVM for the next session only when it has none (_ensure_initialized).
        SparkContext._gateway = SparkContext._jvm = None
        gateway.shutdown()
        gateway.proc.stdin.close()  # Spark's PythonGatewayServer exits at the end of its stdin
        gateway.proc.wait()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@pytest.fixture(scope="module")
def corpus(tf: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("tf-corpus")
    return {
        name: str(tf_corpus.write(tf, root / name / "part-0.tfrecord", build(tf)))
        for name, build in CORPUS.items()
    }


def _rows(df: Any) -> list[dict[str, Any]]:
    """The rows of ``df`` in order, dates as days and timestamps as microseconds (the jar's
    exact form stores both as integers), through Arrow."""
    import pyarrow as pa

    table = df.toArrow()
    columns = {}
    for name, column in zip(table.column_names, table.columns):
        if pa.types.is_date32(column.type):
            column = column.cast(pa.int32())
        elif pa.types.is_timestamp(column.type):
            column = column.cast(pa.int64())
        elif pa.types.is_list(column.type) and pa.types.is_date32(column.type.value_type):
            column = column.cast(pa.list_(pa.int32()))
        elif pa.types.is_list(column.type) and pa.types.is_timestamp(column.type.value_type):
            column = column.cast(pa.list_(pa.int64()))
        columns[name] = column.to_pylist()
    return [{k: v[i] for k, v in columns.items()} for i in range(table.num_rows)]


def _trees(schema: Mapping[str, Any], rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {f["name"]: value_tree(f["type"], r[f["name"]]) for f in schema["fields"]} for r in rows
    ]


def _jar_rows(path: str, schema: Mapping[str, Any]) -> list[dict[str, Any]]:
    found = jar_results(path, schema)
    assert all(isinstance(r, Row) for _, r in found), found
    return [r.values for _, r in found if isinstance(r, Row)]


def test_tfrecord_is_the_python_source_with_no_jar(spark: Any, corpus: dict[str, str]) -> None:
    """Spark finds the source by itself (``pyspark_tfrecord.DefaultSource``); ``register``
    registers it again, as the same source."""
    df = spark.read.format("tfrecord").load(corpus["interop"])
    assert df.count() == 3
    spark_tfrecord.register(spark)
    assert spark.read.format("tfrecord").load(corpus["interop"]).count() == 3


@pytest.mark.parametrize("name", list(CORPUS))
def test_the_inferred_schema_and_rows_are_the_jars(
    spark: Any, corpus: dict[str, str], name: str
) -> None:
    path = corpus[name]
    df = spark.read.format("tfrecord").load(path)
    schema = df.schema.jsonValue()
    assert schema == jar_inferred_schema(path)
    assert _trees(schema, _rows(df)) == _jar_rows(path, schema)


@pytest.mark.parametrize("key", list(GIVEN))
def test_a_given_schema_reads_as_the_jar(spark: Any, corpus: dict[str, str], key: str) -> None:
    path = corpus["every_kind"]
    df = spark.read.format("tfrecord").schema(GIVEN[key]).load(path)
    schema = schema_of_ddl(GIVEN[key])
    assert df.schema.jsonValue() == schema
    assert _trees(schema, _rows(df)) == _jar_rows(path, schema)


#: The SequenceExamples TensorFlow writes (tf_corpus.sequences): context features and feature
#: lists; some records hold a name in the wrong place, which both routes refuse.
SEQUENCE_SCHEMA = (
    "id bigint, label string, tokens array<string>, frames array<array<float>>, "
    "ids array<array<bigint>>, words array<array<string>>, "
    "steps array<struct<t: bigint, tag: string, xs: array<float>>>"
)


def test_sequence_examples_read_as_the_jar(spark: Any, tf: Any, tmp_path: Path) -> None:
    path = str(tf_corpus.write(tf, tmp_path / "seq" / "part-0.tfrecord", tf_corpus.sequences(tf)))
    schema = schema_of_ddl(SEQUENCE_SCHEMA)
    jar = jar_results(path, schema, {"recordType": "SequenceExample"})
    failed = [r for _, r in jar if isinstance(r, Failure)]
    assert failed and {f.condition for f in failed} == {"TFRECORD_DATA_MISMATCH"}
    df = (
        spark.read.format("tfrecord")
        .schema(SEQUENCE_SCHEMA)
        .options(recordType="SequenceExample", mode="DROPMALFORMED")
        .load(path)
    )
    assert _trees(schema, _rows(df)) == [r.values for _, r in jar if isinstance(r, Row)]


def test_gzip_by_magic_bytes_and_byte_arrays(
    spark: Any, corpus: dict[str, str], tmp_path: Path
) -> None:
    """A GZIP file whose name does not say so (TensorFlow's shards) is read by its first bytes;
    ByteArray gives each record's bytes."""
    path = corpus["every_kind"]
    packed = tmp_path / "gz" / "part-0.tfrecord"
    packed.parent.mkdir()
    packed.write_bytes(gzip.compress(Path(path).read_bytes()))
    df = spark.read.format("tfrecord").load(str(packed))
    schema = df.schema.jsonValue()
    assert schema == jar_inferred_schema(path)
    assert _trees(schema, _rows(df)) == _jar_rows(str(packed), schema)
    raw = spark.read.format("tfrecord").option("recordType", "ByteArray").load(str(packed))
    assert raw.schema.simpleString() == "struct<byteArray:binary>"
    assert [bytes(r.byteArray) for r in raw.collect()] == [
        d for _, d in records(path, LocalFiles())
    ]


def test_sparse_vectors_read_as_the_jar(spark: Any, tmp_path: Path) -> None:
    """Features ``v/indices``, ``v/values``, ``v/size`` (vectorLayout sparse) are one ML vector
    column, inferred and read as the jar reads them; a record without them a null."""

    def parts(indices: list[int], values: list[float], size: int) -> list[bytes]:
        return [
            entry(b"v/indices", feature("int64", int64_list_packed(indices))),
            entry(b"v/values", feature("float", float_list_packed(values))),
            entry(b"v/size", feature("int64", int64_list_packed([size]))),
        ]

    data = [
        example(
            entry(b"id", feature("int64", int64_list_packed([0]))), *parts([1, 3], [0.5, -2], 5)
        ),
        example(entry(b"id", feature("int64", int64_list_packed([1]))), *parts([], [], 3)),
        example(entry(b"id", feature("int64", int64_list_packed([2])))),
    ]
    path = str(write_records(tmp_path / "vectors" / "part-0.tfrecord", data))
    df = spark.read.format("tfrecord").load(path)
    schema = df.schema.jsonValue()
    assert schema == jar_inferred_schema(path)
    assert schema["fields"][1]["type"]["class"] == "org.apache.spark.ml.linalg.VectorUDT"
    rows = [r.asDict() for r in df.collect()]
    assert _trees(schema, rows) == _jar_rows(path, schema)
    # a dense feature (float or int64) read into a vector column given by the schema
    from pyspark.ml.linalg import VectorUDT
    from pyspark.sql.types import StructField, StructType

    dense = [
        example(entry(b"v", feature("float", float_list_packed([1.5, -0.0, 3])))),
        example(entry(b"v", feature("int64", int64_list_packed([2**53 + 1, -7])))),
        example(),
    ]
    dense_path = str(write_records(tmp_path / "dense" / "part-0.tfrecord", dense))
    given = StructType([StructField("v", VectorUDT())])
    dense_rows = [
        r.asDict() for r in spark.read.format("tfrecord").schema(given).load(dense_path).collect()
    ]
    assert _trees(given.jsonValue(), dense_rows) == _jar_rows(dense_path, given.jsonValue())


@pytest.mark.parametrize(
    "case", once_but(encoded_tensors.CASES, "encoded tensors", "encoded tensor, no shape")
)
def test_encoded_tensors_read_as_the_jar(spark: Any, tmp_path: Path, case: str) -> None:
    """Encoded tensor columns (the schema's field metadata ``tfrecord.tensorEncoding`` /
    ``tfrecord.tensorDtype``) of every dtype and rank, zlib or not, read as the jar reads them;
    a record the jar's ``EncodedTensorReader`` refuses fails with its condition, column and
    words."""
    from pyspark.sql.types import StructType

    path = str(write_records(tmp_path / "t" / "part-0.tfrecord", encoded_tensors.CASES[case]))
    schema = encoded_tensors.SCHEMA
    jar = jar_results(path, schema)
    df = spark.read.format("tfrecord").schema(StructType.fromJson(schema)).load(path)
    failed = [r for _, r in jar if isinstance(r, Failure)]
    if failed:
        with pytest.raises(Exception) as raised:
            df.collect()
        found = errors.parameters(raised.value)
        assert errors.condition(raised.value) == failed[0].condition == errors.DATA_MISMATCH
        assert (found["column"], found["reason"]) == (
            failed[0].parameters["column"],
            failed[0].parameters["reason"],
        )
        return
    assert df.schema.jsonValue()["fields"][1]["metadata"]["tfrecord.tensorDtype"] == "float32"
    assert _trees(schema, _rows(df)) == _jar_rows(path, schema)


@pytest.mark.parametrize("case", once_but(encoded_tensors.REFUSED, "float, zlib"))
def test_a_bad_encoded_tensor_column_is_refused_as_by_the_jar(
    spark: Any, tmp_path: Path, case: str
) -> None:
    """A column with an encoded tensor's metadata that it cannot hold (of no array, or of an
    encoding, a dtype or an element type it cannot have: ``encoded_tensors.REFUSED``): the read and
    the write are refused on the driver, before any record or file, with the jar's condition and
    words (the jar's scan gives them as its one result, before any record: offset -1). Spark gives
    the Python source's error as its text, from which the condition and the reason are read."""
    from pyspark.sql.types import StructType

    path = str(write_records(tmp_path / "t" / "part-0.tfrecord", encoded_tensors.SCALAR_RECORDS))
    schema = encoded_tensors.refused_schema(case)
    ((offset, jar),) = jar_results(path, schema)
    assert isinstance(jar, Failure) and offset == -1
    assert jar.condition == errors.INVALID_SCHEMA
    assert jar.parameters == {"column": "x", "reason": encoded_tensors.refused_reason(case)}
    given = StructType.fromJson(schema)
    with pytest.raises(Exception) as read:
        spark.read.format("tfrecord").schema(given).load(path).collect()
    assert errors.condition(read.value) == jar.condition
    assert errors.parameters(read.value)["reason"] == jar.parameters["reason"]
    df = spark.createDataFrame([], given)
    with pytest.raises(Exception) as written:
        df.write.format("tfrecord").mode("overwrite").save(str(tmp_path / "out"))
    assert errors.condition(written.value) == jar.condition
    assert errors.parameters(written.value)["reason"] == jar.parameters["reason"]
    assert not (tmp_path / "out").exists()


def _mixed_file(folder: Path) -> tuple[str, list[bytes]]:
    """Three records, the second not an Example (a wire type 7 tag)."""
    good = [example(entry(b"a", feature("int64", int64_list_packed([i])))) for i in (1, 3)]
    data = [good[0], b"\x0f\x01", good[1]]
    return str(write_records(folder / "part-0.tfrecord", data)), data


def test_bad_records_in_each_mode_as_the_jar(spark: Any, tmp_path: Path) -> None:
    path, data = _mixed_file(tmp_path / "mixed")
    schema = {
        "type": "struct",
        "fields": [{"name": "a", "type": "long", "nullable": True, "metadata": {}}],
    }
    jar = jar_results(path, schema)
    failure = jar[1][1]
    assert isinstance(failure, Failure) and failure.condition == "TFRECORD_MALFORMED_RECORD"
    reader = spark.read.format("tfrecord").schema("a bigint")
    with pytest.raises(Exception) as raised:
        reader.load(path).collect()
    # the condition, file and offset are the jar's (the reason's words are the Python codec's)
    assert errors.condition(raised.value) == failure.condition
    found = errors.parameters(raised.value)
    assert (found["path"], found["offset"]) == (path, str(failure.offset))
    dropped = reader.option("mode", "DROPMALFORMED").load(path).collect()
    assert [r.a for r in dropped] == [1, 3]
    permissive = (
        spark.read.format("tfrecord")
        .schema("a bigint, _corrupt_record binary")
        .option("mode", "PERMISSIVE")
        .load(path)
        .collect()
    )
    assert [(r.a, r._corrupt_record) for r in permissive] == [
        (1, None),
        (None, bytearray(data[1])),
        (3, None),
    ]


def test_a_glob_matching_nothing_with_a_schema_reads_no_rows(spark: Any, tmp_path: Path) -> None:
    df = spark.read.format("tfrecord").schema("a bigint").load(str(tmp_path / "none-*"))
    assert df.collect() == []


def test_a_bad_option_is_the_jars_error(spark: Any, corpus: dict[str, str]) -> None:
    with pytest.raises(Exception) as raised:
        spark.read.format("tfrecord").option("mode", "LENIENT").load(corpus["interop"]).count()
    assert errors.condition(raised.value) == "TFRECORD_INVALID_OPTION"
    assert (
        "Invalid value 'LENIENT' for TFRecord option 'mode'. Valid values: FAILFAST, "
        "PERMISSIVE, DROPMALFORMED." in str(raised.value)
    )


def test_ignore_corrupt_files_keeps_the_records_before_the_damage(
    spark: Any, tmp_path: Path
) -> None:
    path, _ = _mixed_file(tmp_path / "cut")
    Path(path).write_bytes(Path(path).read_bytes()[:-5])  # the last record cut short
    reader = spark.read.format("tfrecord").schema("a bigint").option("mode", "DROPMALFORMED")
    with pytest.raises(Exception) as raised:
        reader.load(path).collect()
    assert errors.condition(raised.value) == "TFRECORD_CORRUPT_RECORD.TRUNCATED"
    kept = reader.option("ignoreCorruptFiles", "true").load(path).collect()
    assert [r.a for r in kept] == [1]


def test_negative_scales_are_read_or_refused_by_name(spark: Any, tmp_path: Path) -> None:
    """Decimals of a negative scale (``spark.sql.legacy.allowNegativeScaleOfDecimal``): PySpark
    4.0's workers hand them over, and they read as the jar reads them (rounded half up); PySpark
    4.1's and later fail on them before the first batch (SPARK-53938's rescaling), so the read
    is refused when planned, naming the column."""
    import decimal

    from pyspark.sql.types import ArrayType, DecimalType, LongType, StructField, StructType

    from spark_tfrecord._source.reader import _handed_over

    path = write_records(
        tmp_path / "part-0.tfrecord",
        [
            example(
                entry(b"id", feature("int64", int64_list_packed([i]))),
                entry(b"i", feature("int64", int64_list_packed([i * 37 - 150]))),
                entry(b"f", feature("float", float_list_packed([i * 1370.5 - 7500.0, 49.5]))),
            )
            for i in range(5)
        ],
    )
    schema = StructType(
        [
            StructField("id", LongType()),
            StructField("i", DecimalType(10, -2)),
            StructField("f", ArrayType(DecimalType(12, -1))),
        ]
    )
    version = tuple(int(p) for p in pyspark.__version__.split(".")[:2])
    assert _handed_over(DecimalType(10, -2)) == (version < (4, 1))
    spark.conf.set("spark.sql.legacy.allowNegativeScaleOfDecimal", "true")
    try:
        df = spark.read.format("tfrecord").schema(schema).load(str(path))
        if version >= (4, 1):
            with pytest.raises(Exception) as raised:
                df.collect()
            assert errors.condition(raised.value) == errors.UNSUPPORTED_TYPE
            assert "Column 'i' has type decimal(10,-2), of a negative scale" in str(raised.value)
            return
        rows = sorted(df.collect())
    finally:
        spark.conf.unset("spark.sql.legacy.allowNegativeScaleOfDecimal")
    context = decimal.Context(prec=50, rounding=decimal.ROUND_HALF_UP)

    def at(value: float, scale: int) -> decimal.Decimal:
        return decimal.Decimal(repr(value)).quantize(
            decimal.Decimal(1).scaleb(-scale), context=context
        )

    assert [(r.id, r.i, r.f) for r in rows] == [
        (i, at(i * 37 - 150, -2), [at(i * 1370.5 - 7500.0, -1), at(49.5, -1)]) for i in range(5)
    ]


def test_register_needs_the_python_data_source_api(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where pyspark has no pyspark.sql.datasource (open-source Spark 3.5), register says so."""
    monkeypatch.setitem(sys.modules, "pyspark.sql.datasource", None)
    with pytest.raises(RuntimeError, match="has no Python data source API"):
        spark_tfrecord.register(object())


def test_partition_folders_are_columns(spark: Any, tmp_path: Path) -> None:
    table = tmp_path / "table"
    for k in (1, 20):
        records_k = [
            example(entry(b"v", feature("bytes", bytes_list([f"{k}-{i}".encode()]))))
            for i in range(2)
        ]
        write_records(table / f"k={k}" / "part-0.tfrecord", records_k)
    df = spark.read.format("tfrecord").load(str(table))
    assert df.schema.simpleString() == "struct<v:string,k:int>"
    assert sorted((r.v, r.k) for r in df.collect()) == [
        ("1-0", 1),
        ("1-1", 1),
        ("20-0", 20),
        ("20-1", 20),
    ]


def test_s3a_urls_read_through_fsspec(spark: Any, corpus: dict[str, str], tmp_path: Path) -> None:
    """``s3a://`` is read as ``s3://`` through s3fs, with ``storageOptions`` (an S3 server of
    moto's): the schema and rows of the local file, and partition folders."""
    from support.s3_server import ACCESS_KEY, REGION, SECRET_KEY, s3_bucket

    path = corpus["every_kind"]
    with s3_bucket(tmp_path / "moto.log", "jarless") as s3:
        for k in (1, 2):
            s3.client.upload_file(path, "jarless", f"table/k={k}/part-0.tfrecord")
        storage = {
            "endpoint_url": s3.endpoint,
            "key": ACCESS_KEY,
            "secret": SECRET_KEY,
            "client_kwargs": {"region_name": REGION},
        }
        df = (
            spark.read.format("tfrecord")
            .option("storageOptions", json.dumps(storage))
            .load("s3a://jarless/table")
        )
        schema = df.schema.jsonValue()
        rows = _rows(df)
    inferred = jar_inferred_schema(path)
    assert schema["fields"] == [
        *inferred["fields"],
        {"name": "k", "type": "integer", "nullable": True, "metadata": {}},
    ]
    jar = _jar_rows(path, inferred)
    for k in (1, 2):  # each file's rows in its order (a task reads a file in order)
        assert _trees(inferred, [r for r in rows if r["k"] == k]) == jar


@pytest.mark.once
def test_a_file_read_in_slices_gives_each_record_once(tmp_path: Path) -> None:
    """Slices of a file (cut anywhere) give the records whose header starts in each: together,
    every record of the file once, in order."""
    data = [
        example(entry(b"x", feature("bytes", bytes_list([bytes([i % 251]) * (i * 7)]))))
        for i in range(300)
    ]
    path = str(write_records(tmp_path / "big.tfrecord", data))
    files = data_files(path, LocalFiles())
    tasks = plan(
        files,
        compression=None,
        split_files=True,
        parallelism=1,
        max_partition_bytes=4096,
        open_cost=0,
    )
    assert len(tasks) > 10
    slices = sorted((s for t in tasks for s in t.slices), key=lambda s: s.start)
    options = InferenceOptions()
    got = [r for s in slices for r in slice_records(s, options, LocalFiles())]
    assert got == list(records(path, LocalFiles()))
    assert [d for _, d in got] == data


# --- writes ------------------------------------------------------------------------------------

#: What the Python route writes and the jar writes from the same rows: the schema (DDL, or a
#: function of pyspark.sql.types giving the StructType), the rows, the write options, and the
#: options a read of the files needs.
PLAIN = "id bigint, x array<float>, s string, b binary, flag boolean, n int"
PLAIN_ROWS = [
    (0, [0.5, 1.5], "a", b"\x00\x01", True, 3),
    (1, [], None, None, False, None),
    (2, None, "é€", b"", None, -7),
    (-(2**63), [float("inf"), -0.0], "", b"\xff" * 40, True, 2**31 - 1),
]
NESTED = "id bigint, st struct<a: bigint, inner: struct<x: float, tags: array<string>>>"
NESTED_ROWS = [(1, (7, (0.25, ["p", "q"]))), (2, None), (3, (None, (None, [])))]
RAGGED = "r array<array<bigint>>, rs array<array<string>>"
RAGGED_ROWS = [([[1, 2], [], [3]], [["a"], ["b", "c"]]), ([], None), (None, [[]])]
SEQUENCE = "id bigint, frames array<array<float>>, words array<array<string>>"
SEQUENCE_ROWS = [(1, [[0.5], [1.0, 2.0]], [["x"]]), (2, [], None), (3, None, [[], ["y", "z"]])]


#: Spark 4's newer types (docs/types.md): collated strings, and TIME from Spark 4.1.
SPARK = tuple(int(x) for x in pyspark.__version__.split(".")[:2])
NEWER = "id bigint, s string collate UTF8_LCASE, ss array<string collate UNICODE_CI>"
NEWER_ROWS: list[tuple[Any, ...]] = [(1, "Abc", ["x", "É"]), (2, None, []), (3, "", None)]
if SPARK >= (4, 1):
    NEWER += ", t time(6), ts array<time(3)>"
    NEWER_ROWS = [
        (*NEWER_ROWS[0], dt.time(12, 34, 56, 789012), [dt.time(0, 0), dt.time(23, 59, 59, 999000)]),
        (*NEWER_ROWS[1], None, []),
        (*NEWER_ROWS[2], dt.time(0, 0, 0, 1), None),
    ]


def _vectors(spark: Any) -> Any:
    from pyspark.ml.linalg import Vectors, VectorUDT
    from pyspark.sql.types import LongType, StructField, StructType

    schema = StructType([StructField("id", LongType()), StructField("v", VectorUDT())])
    rows = [(1, Vectors.dense([1.0, 0.0, 2.5])), (2, Vectors.sparse(4, [1, 3], [3.0, -1.0]))]
    return spark.createDataFrame([*rows, (3, None)], schema)


WRITES: dict[str, tuple[Any, Any, dict[str, str], dict[str, str]]] = {
    "none": (PLAIN, PLAIN_ROWS, {}, {}),
    "gzip": (PLAIN, PLAIN_ROWS, {"compression": "gzip"}, {}),
    "deflate": (PLAIN, PLAIN_ROWS, {"codec": "deflate"}, {}),
    "dense vectors": (_vectors, None, {}, {}),
    "sparse vectors": (_vectors, None, {"vectorLayout": "sparse"}, {}),
    "nested": (NESTED, NESTED_ROWS, {"pathSeparator": "."}, {"pathSeparator": "."}),
    "ragged": (RAGGED, RAGGED_ROWS, {}, {}),
    "newer types": (NEWER, NEWER_ROWS, {}, {}),
    "no rows": (PLAIN, [], {"compression": "gzip"}, {}),
    "sequence": (
        SEQUENCE,
        SEQUENCE_ROWS,
        {"recordType": "SequenceExample", "compression": "gzip"},
        {"recordType": "SequenceExample"},
    ),
}


def _frame(spark: Any, case: str) -> Any:
    schema, rows, _, _ = WRITES[case]
    return schema(spark) if callable(schema) else spark.createDataFrame(rows, schema)


@pytest.fixture(scope="module")
def writes(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Each case of WRITES written by the Python route and by the jar (in a child session with
    the jar, support/jar_writes.py) from the same rows, one file each; and the jar's reading of
    what the Python route wrote."""
    from support import child_results

    root = tmp_path_factory.mktemp("writes")
    spec = []
    for case, (_, _, options, read_options) in WRITES.items():
        rows = str(root / case / "rows")
        df = _frame(spark, case)
        df.coalesce(1).write.parquet(rows)
        source = spark.read.schema(df.schema).parquet(rows)
        python_out = str(root / case / "python")
        source.coalesce(1).write.format("tfrecord").mode("append").options(**options).save(
            python_out
        )
        spec.append(
            {
                "case": case,
                "rows": rows,
                "schema": df.schema.jsonValue(),
                "options": options,
                "read_options": read_options,
                "jar_out": str(root / case / "jar"),
                "python_out": python_out,
            }
        )
    (root / "spec.json").write_text(json.dumps(spec))
    return {"root": root, "jar": child_results("jar_writes", str(root / "spec.json"))}


def _data_file(folder: Path) -> Path:
    (found,) = [p for p in folder.iterdir() if p.name.startswith("part-")]
    return found


def _manifest(folder: Path) -> dict[str, Any]:
    """The folder's manifest, its file names without the write's id."""
    manifest = json.loads((folder / "_tfrecord_manifest.json").read_text())
    for f in manifest["files"]:
        f["path"] = f["path"][:11] + f["path"][47:]  # part-00000- + -c000.tfrecord...
    return dict(manifest)


@pytest.mark.parametrize("case", list(WRITES))
def test_a_write_is_the_jars_bytes_and_manifest(writes: dict[str, Any], case: str) -> None:
    """The same file, byte for byte (compressed too), and the same manifest, but the write's id
    in the file's name; the file's name is the jar's form."""
    folder = writes["root"] / case
    mine, jars = _data_file(folder / "python"), _data_file(folder / "jar")
    assert mine.name[:11] == jars.name[:11] == "part-00000-"
    assert mine.name[47:] == jars.name[47:]
    assert mine.read_bytes() == jars.read_bytes()
    assert _manifest(folder / "python") == _manifest(folder / "jar")
    assert sorted(p.name for p in (folder / "python").iterdir()) == [
        "_SUCCESS",
        "_tfrecord_manifest.json",
        mine.name,
    ]


@pytest.mark.parametrize("case", list(WRITES))
def test_the_jar_reads_what_the_python_route_wrote(writes: dict[str, Any], case: str) -> None:
    found = writes["jar"][case]
    assert found["jar_read"] == found["rows"]
    rows = WRITES[case][1]
    assert len(found["rows"]) == (3 if rows is None else len(rows))


@pytest.mark.parametrize("case", ["none", "gzip", "deflate"])
def test_tensorflow_parses_what_the_python_route_wrote(
    writes: dict[str, Any], tf: Any, case: str
) -> None:
    """Value for value: a null leaves its feature out, an empty list is a feature of no values."""
    path = _data_file(writes["root"] / case / "python")
    codec = {"none": "", "gzip": "GZIP", "deflate": "ZLIB"}[case]
    parsed = [
        tf.train.Example.FromString(r.numpy())
        for r in tf.data.TFRecordDataset(str(path), compression_type=codec)
    ]
    assert len(parsed) == len(PLAIN_ROWS)
    kinds = {"id": "int64_list", "x": "float_list", "s": "bytes_list", "b": "bytes_list"}
    kinds |= {"flag": "int64_list", "n": "int64_list"}
    for example_, row in zip(parsed, PLAIN_ROWS):
        features = example_.features.feature
        for (name, kind), value in zip(kinds.items(), row):
            if value is None:
                assert name not in features
                continue
            got = list(getattr(features[name], kind).value)
            if isinstance(value, bool):
                value = int(value)
            if isinstance(value, str):
                value = value.encode("utf-8")
            expected = value if isinstance(value, list) else [value]
            assert got == expected, (name, got, expected)


def _snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under the folder (hidden ones too), with its bytes."""
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def _write(df: Any, path: Path, mode: str = "append", **options: str) -> None:
    df.write.format("tfrecord").mode(mode).options(**options).save(str(path))


def test_append_and_overwrite(spark: Any, tmp_path: Path) -> None:
    """Append adds files and merges the manifest's counts; overwrite replaces the folder's data
    (the earlier files, manifest entries and counts) at commit."""
    out = tmp_path / "t"
    first = spark.createDataFrame([(1, [1.0]), (2, [2.0, 3.0])], "id bigint, x array<float>")
    _write(first.coalesce(1), out)
    _write(spark.createDataFrame([(3, None)], "id bigint, x array<float>").coalesce(1), out)
    manifest = json.loads((out / "_tfrecord_manifest.json").read_text())
    assert [f["num_records"] for f in manifest["files"]] in ([2, 1], [1, 2])
    assert manifest["num_records"] == 3
    assert manifest["features"] == {"id": {"min": 1, "max": 1}, "x": {"min": 0, "max": 2}}
    read = spark.read.format("tfrecord").schema("id bigint, x array<float>")
    assert sorted(read.load(str(out)).collect()) == [
        (1, [1.0]),
        (2, [2.0, 3.0]),
        (3, None),
    ]
    _write(
        spark.createDataFrame([(9, [9.0])], "id bigint, x array<float>").coalesce(1),
        out,
        "overwrite",
    )
    manifest = json.loads((out / "_tfrecord_manifest.json").read_text())
    assert manifest["num_records"] == 1 and len(manifest["files"]) == 1
    assert manifest["features"] == {"id": {"min": 1, "max": 1}, "x": {"min": 1, "max": 1}}
    assert read.load(str(out)).collect() == [(9, [9.0])]
    assert not [p for p in out.iterdir() if p.name.startswith(".")]


def test_a_write_of_no_partitions_leaves_one_empty_file(spark: Any, tmp_path: Path) -> None:
    """As Spark's file writes (the jar's): one empty part-00000 file, counted."""
    out = tmp_path / "t"
    _write(spark.createDataFrame(spark.sparkContext.emptyRDD(), "id bigint"), out)
    (name,) = [p.name for p in out.iterdir() if p.name.startswith("part-")]
    assert name.startswith("part-00000-") and name.endswith("-c000.tfrecord")
    assert (out / name).read_bytes() == b""
    manifest = json.loads((out / "_tfrecord_manifest.json").read_text())
    assert manifest["num_records"] == 0 and manifest["files"][0]["path"] == name


def _failing_writes(spark: Any) -> dict[str, Any]:
    from pyspark.sql.functions import col, udf

    boom = udf(lambda x: 1 // 0 if x == 5 else x, "bigint")  # a task fails mid-write
    rows = spark.range(0, 8, 1, 4)
    return {
        "udf": rows.select(boom(col("id")).alias("id")),
        # the encoder's refusal, in one task only: a null inside a list
        "null in a list": rows.selectExpr("id", "if(id = 5, array(1, null), array(id)) AS x"),
    }


@pytest.mark.parametrize("how", ["udf", "null in a list"])
@pytest.mark.parametrize("mode", ["append", "overwrite"])
def test_a_failed_write_leaves_the_folder_as_it_was(
    spark: Any, tmp_path: Path, how: str, mode: str
) -> None:
    """A task that fails (after others wrote their files) aborts the job: no staged file is
    left, and the files and manifest are as before, byte for byte."""
    out = tmp_path / "t"
    _write(spark.range(3).coalesce(1), out)
    before = _snapshot(out)
    with pytest.raises(Exception) as failure:
        _write(_failing_writes(spark)[how], out, mode)
    if how == "null in a list":
        assert errors.condition(failure.value) == errors.DATA_MISMATCH
    else:
        assert "ZeroDivisionError" in str(failure.value)
    assert _snapshot(out) == before
    fresh = tmp_path / "fresh"
    with pytest.raises(Exception, match=r"ZeroDivisionError|TFRECORD_DATA_MISMATCH"):
        _write(_failing_writes(spark)[how], fresh, mode)
    assert not fresh.exists()


def test_num_shards(spark: Any, tmp_path: Path) -> None:
    """numShards adds the missing files, empty (the jar's names), and counts them in the
    manifest; more write tasks than numShards fail the write, leaving the folder as it was."""
    out = tmp_path / "t"
    _write(spark.range(0, 6, 1, 2), out, numShards="4", compression="gzip")
    names = sorted(p.name for p in out.iterdir() if p.name.startswith("part-"))
    assert [n[:11] for n in names] == [f"part-{i:05d}-" for i in range(4)]
    assert [n[47:] for n in names] == ["-c000.tfrecord.gz"] * 2 + ["-empty.tfrecord.gz"] * 2
    manifest = json.loads((out / "_tfrecord_manifest.json").read_text())
    assert [f["num_records"] for f in manifest["files"]] == [3, 3, 0, 0]
    assert gzip.decompress((out / names[3]).read_bytes()) == b""
    assert sorted(r.id for r in spark.read.format("tfrecord").load(str(out)).collect()) == list(
        range(6)
    )
    before = _snapshot(out)
    with pytest.raises(Exception, match="more than its numShards 2: repartition the DataFrame"):
        _write(spark.range(0, 6, 1, 3), out, "overwrite", numShards="2")
    assert _snapshot(out) == before


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"numShards": "0"},
            "Invalid value '0' for TFRecord option 'numShards'. Valid values: an "
            "integer from 1 to 99999.",
        ),
        ({"recordType": "Feature"}, "Invalid value 'Feature' for TFRecord option 'recordType'."),
        ({"compression": "snappy"}, "a codec TensorFlow cannot read"),
        (
            {"shardPrefix": "train"},
            "The TFRecord option 'shardPrefix' needs the jar; the Python "
            "data source \\(no jar\\) does not write it",
        ),
        ({"writeIndex": "true"}, "does not write it: index the files after the write"),
    ],
)
def test_a_bad_write_option_is_the_jars_error_before_any_task(
    spark: Any, tmp_path: Path, options: dict[str, str], message: str
) -> None:
    with pytest.raises(Exception, match=message) as failure:
        _write(spark.range(2), tmp_path / "t", **options)
    assert errors.condition(failure.value) == errors.INVALID_OPTION
    assert not (tmp_path / "t").exists()


def test_what_spark_refuses_a_python_source_and_what_to_do(spark: Any, tmp_path: Path) -> None:
    """Spark tells a Python data source's writer no partition columns and refuses partitionBy
    itself, before the writer exists, with its own message; the rows written into key=value
    folders are what partitionBy writes, and read back as partition columns. Only modes append
    and overwrite exist."""
    df = spark.createDataFrame([(1, "a"), (2, "b"), (3, "a")], "id bigint, k string")
    out = tmp_path / "t"
    with pytest.raises(Exception, match="partitioning or clustering columns do not match"):
        df.write.format("tfrecord").mode("append").partitionBy("k").save(str(out))
    with pytest.raises(Exception, match="UNSUPPORTED_DATA_SOURCE_SAVE_MODE"):
        df.write.format("tfrecord").save(str(out))
    assert not out.exists()
    for (k,) in df.select("k").distinct().collect():
        _write(df.where(df.k == k).drop("k"), out / f"k={k}")
    back = spark.read.format("tfrecord").load(str(out))
    assert back.schema.simpleString() == "struct<id:bigint,k:string>"
    assert sorted(back.collect()) == [(1, "a"), (2, "b"), (3, "a")]


def test_newer_types_read_back_through_both_routes(
    spark: Any, writes: dict[str, Any], tf: Any
) -> None:
    """What either route wrote of collated strings and TIME reads back through this one as the
    rows written, with the schema's collations; TensorFlow parses UTF-8 bytes and nanoseconds
    since midnight (docs/types.md)."""
    df = _frame(spark, "newer types")
    for route in ("python", "jar"):
        back = (
            spark.read.format("tfrecord")
            .schema(df.schema)
            .load(str(writes["root"] / "newer types" / route))
        )
        assert back.schema == df.schema
        assert sorted(back.collect()) == sorted(df.collect()), route
    assert [r.id for r in back.where("s = 'ABC'").collect()] == [1]  # the collation compares
    path = _data_file(writes["root"] / "newer types" / "python")
    parsed = [
        tf.train.Example.FromString(r.numpy()).features.feature
        for r in tf.data.TFRecordDataset(str(path))
    ]
    assert [list(f["s"].bytes_list.value) if "s" in f else None for f in parsed] == [
        [b"Abc"],
        None,
        [b""],
    ]
    assert [list(f["ss"].bytes_list.value) if "ss" in f else None for f in parsed] == [
        [b"x", "É".encode()],
        [],
        None,
    ]
    if SPARK >= (4, 1):
        assert [list(f["t"].int64_list.value) if "t" in f else None for f in parsed] == [
            [45_296_789_012_000],
            None,
            [1_000],
        ]
        assert list(parsed[0]["ts"].int64_list.value) == [0, 86_399_999_000_000]


def test_variants_and_intervals_are_refused_with_the_alternative(
    spark: Any, tmp_path: Path
) -> None:
    """The jar's refusal and message, before any task: the one line to use instead."""
    refused = {
        "interval day to second": ("interval '1 02:03:04.5' day to second", "cast(d AS string)"),
        "interval year to month": ("interval '2-3' year to month", "cast(d AS string)"),
        "variant": ("parse_json('[1, 2]')", "to_json(d)"),
    }
    for case, (sql, alternative) in refused.items():
        df = spark.sql(f"SELECT 1L AS id, {sql} AS d")
        with pytest.raises(Exception, match="TFRECORD_UNSUPPORTED_TYPE") as failure:
            _write(df, tmp_path / "t")
        assert f"Column 'd' has type {case}, which TFRecord cannot hold" in str(failure.value)
        assert alternative in str(failure.value)
        assert not (tmp_path / "t").exists()
        _write(df.selectExpr("id", f"{alternative} AS d"), tmp_path / case)
        read = spark.read.format("tfrecord").schema(df.schema).load(str(tmp_path / case))
        with pytest.raises(Exception, match="TFRECORD_UNSUPPORTED_TYPE") as failure:
            read.collect()
        assert alternative in str(failure.value)


# --- the read's fast path (a batch decoded at once) and its fallback -----------------------

#: Every kind of column the fast path reads (spark_tfrecord._source.batch_arrays).
FAST_DDL = (
    "a bigint, b int, n tinyint, k boolean, d float, c double, e string, f binary, j date, "
    "l timestamp, g array<bigint>, h array<string>, i array<float>, m array<double>"
)
#: Records per file: more than two batches (BATCH_RECORDS, 4096), so that batches split.
FAST_RECORDS = 9000


def _ints(values: list[int]) -> bytes:
    return feature("int64", int64_list_packed(values))


def _floats(values: list[float]) -> bytes:
    return feature("float", float_list_packed(values))


def _texts(values: list[bytes]) -> bytes:
    return feature("bytes", bytes_list(values))


def _fast_record(i: int, odd: Mapping[bytes, bytes] | None = None) -> bytes:
    """Record i: every column's feature, but that some are missing, empty or unset by turns;
    ``odd`` replaces features (key: the Feature message) where they are."""
    features = {
        b"a": _ints([i * 2**40 - 2**62]),
        b"b": _ints([] if i % 7 == 0 else [i * 97 - 2**31 + 1]),
        b"n": _ints([i % 256 - 128]),
        b"k": _ints([i % 2]),
        b"d": _ints([i * 2**30 + 1]),  # a float read from int64s: Java's rounding
        b"c": _floats([i / 3]),
        b"e": _texts([("é" * (i % 4) + str(i)).encode()]),
        b"f": _texts([bytes([i % 256]) * (i % 5)]),
        b"j": _ints([i - 4000]),
        b"l": _ints([i * 10**9]),
        b"g": _ints(list(range(i % 4))),
        b"h": _texts([b"x" * k for k in range(i % 3)]),
        b"i": _floats([i + 0.5] * (i % 3)),
        b"m": _ints([2**53 + i] * (i % 2)),
        b"other": _ints([1, 2]),  # not wanted
    }
    keys = list(features)
    if i % 3:
        del features[keys[i % 11]]  # a feature missing
    features[keys[(i * 5) % 14]] = b""  # a Feature with no kind set
    features.update(odd or {})
    return example(*(entry(k, v) for k, v in features.items()))


@functools.cache
def _fast_records() -> tuple[bytes, ...]:
    """The records of a plain file, built once for the module's tests (1.7 s of Python each
    time)."""
    return tuple(_fast_record(i) for i in range(FAST_RECORDS))


def _fast_file(folder: Path, odd: Mapping[int, bytes] | None = None) -> str:
    records = list(_fast_records())
    for i, record in (odd or {}).items():
        records[i] = record
    return str(write_records(folder / "part-0.tfrecord", records))


def _taken(path: str, ddl: str | Mapping[str, Any]) -> list[bool]:
    """Whether each batch of the file takes the fast path, decided as a task decides it (the
    schema: DDL, or its JSON)."""
    import numpy as np
    from pyspark.sql.types import StructType

    from spark_tfrecord._source.reader import TFRecordReader

    schema = schema_of_ddl(ddl) if isinstance(ddl, str) else ddl
    reader = TFRecordReader({"path": path}, StructType.fromJson(dict(schema)))
    fast = reader.read_plan.columns()[3]
    assert fast is not None
    return [
        fast.arrays(buf, np.array(starts), np.array(stops)) is not None
        for task in reader.partitions()
        for s in task.task.slices  # type: ignore[attr-defined]
        for buf, starts, stops, _ in reader.read_plan.chunks(s)
    ]


def _shown(schema: Mapping[str, Any], rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The jar's rows as pyspark shows them: a string's bytes that are not UTF-8 as the JVM
    decodes them (U+FFFD), as the Python route reads them (support.jar_decoder)."""
    types = {f["name"]: f["type"] for f in schema["fields"]}
    return [{k: as_loaders_hold(types[k], v) for k, v in r.items()} for r in rows]


def _odd(key: bytes, kind: str, message: bytes) -> bytes:
    """Record 5000, its feature ``key`` a list of ``kind``: ``message``."""
    return _fast_record(5000, {key: feature(kind, message)})


ODD = {
    # a record the batch decoder does not read (unpacked int64s): its batch record by record
    "unpacked": _odd(b"g", "int64", int64_list_unpacked([1, 2, 3])),
    "not UTF-8": _odd(b"e", "bytes", bytes_list([b"ok\xff\xed\xa0\x80z"])),
    "not UTF-8 in a list": _odd(b"h", "bytes", bytes_list([b"\xc3", b"\xa9", b"\xed\xa0"])),
    "out of range": _odd(b"b", "int64", int64_list_packed([2**31])),
    "tinyint out of range": _odd(b"n", "int64", int64_list_packed([-129])),
    "boolean 2": _odd(b"k", "int64", int64_list_packed([2])),
    "two values for a scalar": _odd(b"a", "int64", int64_list_packed([1, 2])),
    "a kind the column does not read": _odd(b"j", "float", float_list_packed([1.5])),
    "numbers as text": _odd(b"e", "int64", int64_list_packed([7])),
}
#: The cases that fail the record (the others read, record by record).
ODD_FAILS = {
    "out of range",
    "tinyint out of range",
    "boolean 2",
    "two values for a scalar",
    "a kind the column does not read",
}


@pytest.mark.once
def test_every_batch_of_plain_columns_takes_the_fast_path_as_the_jar(
    spark: Any, tmp_path: Path
) -> None:
    """Batches of records every column of which is plain (missing features, empty lists and
    unset Features included) are decoded at once, and read as the jar reads them."""
    path = _fast_file(tmp_path / "plain")
    assert _taken(path, FAST_DDL) == [True, True, True]
    schema = schema_of_ddl(FAST_DDL)
    rows = _rows(spark.read.format("tfrecord").schema(FAST_DDL).load(path))
    assert _trees(schema, rows) == _jar_rows(path, schema)


@pytest.mark.once
def test_dense_and_sparse_vectors_take_the_fast_path(spark: Any, tmp_path: Path) -> None:
    """An ML vector column read dense (floats, or int64s, of any length, missing or empty by
    turns) is decoded a batch at once, and so is the batch that holds a sparse one
    (``v/indices``...); both as the jar reads them."""
    from pyspark.ml.linalg import VectorUDT
    from pyspark.sql.types import LongType, StructField, StructType

    def record(i: int) -> bytes:
        entries = [entry(b"id", feature("int64", int64_list_packed([i])))]
        if i % 5:
            values = [i + 0.25 * k for k in range(i % 4)]
            # int64s in the last batch (a batch of two kinds is the record path's)
            entries.append(entry(b"v", _floats(values) if i < 8192 else _ints([i, -(2**53) - 1])))
        return example(*entries)

    records = [record(i) for i in range(FAST_RECORDS)]
    records[5000] = example(
        entry(b"id", feature("int64", int64_list_packed([5000]))),
        entry(b"v/indices", _ints([1, 3])),
        entry(b"v/values", _floats([0.5, -2.0])),
        entry(b"v/size", _ints([5])),
    )
    path = str(write_records(tmp_path / "vectors" / "part-0.tfrecord", records))
    given = StructType([StructField("id", LongType()), StructField("v", VectorUDT())])
    schema = given.jsonValue()
    assert _taken(path, schema) == [True, True, True]
    rows = [r.asDict() for r in spark.read.format("tfrecord").schema(given).load(path).collect()]
    assert _trees(schema, rows) == _jar_rows(path, schema)


def _reads_as_the_jar(spark: Any, path: str, ddl: str, *, fails: bool) -> None:
    """The file read through the Python route with the schema ``ddl``: the jar's rows, or, where
    the jar fails one record (``fails``), the jar's condition and offset."""
    schema = schema_of_ddl(ddl)
    reader = spark.read.format("tfrecord").schema(ddl)
    if not fails:
        assert _trees(schema, _rows(reader.load(path))) == _jar_rows(path, schema)
        return
    (failed,) = [r for _, r in jar_results(path, schema) if isinstance(r, Failure)]
    with pytest.raises(Exception) as raised:
        reader.load(path).collect()
    assert errors.condition(raised.value) == failed.condition
    assert errors.parameters(raised.value).get("offset") == failed.parameters.get("offset")


#: Structs (a struct in a struct) of plain leaves: the fast path reads them too.
STRUCT_DDL = (
    "id bigint, st struct<a: bigint, e: string, inner: struct<x: float, tags: array<string>>>"
)


def _struct_record(i: int) -> bytes:
    """Record i: ``st``'s leaves by their paths, all of them missing in every fifth record (a
    null struct), ``inner``'s in every third (a null struct in a struct), some by turns."""
    features = {b"id": _ints([i])}
    if i % 5:
        features[b"st/a"] = _ints([i * 3 - 2**40])
        if i % 7:
            features[b"st/e"] = _texts([("é" * (i % 3) + str(i)).encode()])
        if i % 3:
            features[b"st/inner/x"] = _floats([i / 4])
            features[b"st/inner/tags"] = _texts([b"t" * k for k in range(i % 4)])
    return example(*(entry(k, v) for k, v in features.items()))


@pytest.mark.once
def test_batches_of_structs_take_the_fast_path_as_the_jar(spark: Any, tmp_path: Path) -> None:
    """Structs of plain leaves, null ones and null ones in a struct included, are decoded a
    batch at once, and read as the jar reads them."""
    path = str(
        write_records(tmp_path / "part-0.tfrecord", [_struct_record(i) for i in range(9000)])
    )
    assert _taken(path, STRUCT_DDL) == [True, True, True]
    _reads_as_the_jar(spark, path, STRUCT_DDL, fails=False)
    nulls = spark.read.format("tfrecord").schema(STRUCT_DDL).load(path).where("st is null")
    assert sorted(r.id for r in nulls.collect()) == list(range(0, 9000, 5))


#: Lists of lists (written ragged): the fast path reads them too.
RAGGED_DDL = (
    "id bigint, ll array<array<bigint>>, ss array<array<string>>, fff array<array<array<float>>>"
)


def _ragged(name: bytes, lists: list[Any] | None, depth: int, kind: str = "int64") -> list[bytes]:
    """The entries of the list of lists ``lists`` (``depth`` deep; None: no entry), written
    ragged: its row lengths per level, outermost first, and its values."""
    if lists is None:
        return []
    items, out = lists, []
    for k in range(depth - 1):
        out.append(entry(name + b"/ragged_row_lengths_%d" % k, _ints([len(x) for x in items])))
        items = [y for x in items for y in x]
    values = {"int64": _ints, "bytes": _texts, "float": _floats}[kind](items)
    return [*out, entry(name + b"/ragged_flat_values", values)]


def _ragged_record(i: int, odd: int = 0) -> bytes:
    """Record i: ``ll`` null in every fourth record and an empty list in every ninth, ``ss``
    of strings, ``fff`` three deep; ``odd`` spoils ``ll`` (1: a negative length, 2: lengths
    that add up to too few values, 3: its values' feature missing)."""
    ll = None if i % 4 == 0 else [] if i % 9 == 0 else [[i * k] * k for k in range(i % 3 + 1)]
    ss = [[str(i).encode() * k for k in range(j)] for j in range(i % 3)]
    fff = [[[i / 2] * (i % 2), [1.5]], []] if i % 5 else None
    ents = [entry(b"id", _ints([i])), *_ragged(b"ss", ss, 2, "bytes")]
    ents += _ragged(b"fff", fff, 3, "float")
    if odd == 1:
        ents += [
            entry(b"ll/ragged_flat_values", _ints([1])),
            entry(b"ll/ragged_row_lengths_0", _ints([-1, 2])),
        ]
    elif odd == 2:
        ents += [
            entry(b"ll/ragged_flat_values", _ints([1])),
            entry(b"ll/ragged_row_lengths_0", _ints([3])),
        ]
    elif odd == 3:
        ents += [entry(b"ll/ragged_row_lengths_0", _ints([0]))]
    else:
        ents += _ragged(b"ll", ll, 2)
    return example(*ents)


@pytest.mark.once
@pytest.mark.parametrize("odd", [0, 1, 2, 3])
def test_batches_of_lists_of_lists_take_the_fast_path_as_the_jar(
    spark: Any, tmp_path: Path, odd: int
) -> None:
    """Lists of lists (null, empty, three deep) are decoded a batch at once and read as the
    jar reads them; a record whose ragged features disagree sends its batch record by record,
    where the jar's error names it."""
    records = [_ragged_record(i, odd if i == 5000 else 0) for i in range(9000)]
    path = str(write_records(tmp_path / "part-0.tfrecord", records))
    assert _taken(path, RAGGED_DDL) == [True, not odd, True]
    _reads_as_the_jar(spark, path, RAGGED_DDL, fails=bool(odd))


#: Arrays of structs (a struct and a list in the element): the fast path reads them too.
ARRAY_DDL = (
    "id bigint, objs array<struct<n: bigint, name: string, inner: struct<a: int>, "
    "toks: array<string>>>"
)


def _array_record(i: int, odd: int = 0) -> bytes:
    """Record i: ``objs`` null in every fourth record, empty in every ninth; its ``name`` missing
    in every seventh (null in each element), ``inner``'s in every third (a null struct in each
    element); ``odd`` 1: leaves of different lengths, 2: ``toks`` missing (null in each
    element)."""
    ents = [entry(b"id", _ints([i]))]
    if i % 4 == 0:
        return example(*ents)
    n = 0 if i % 9 == 0 else i % 3 + 1
    ents.append(entry(b"objs/n", _ints([i * 10 + e for e in range(n)])))
    if i % 7:
        names = [f"o{e}é".encode() for e in range(n + (odd == 1))]
        ents.append(entry(b"objs/name", _texts(names)))
    if i % 3:
        ents.append(entry(b"objs/inner/a", _ints([e - i for e in range(n)])))
    if odd != 2:
        ents += _ragged(
            b"objs/toks", [[b"t" * k for k in range(e % 3)] for e in range(n)], 2, "bytes"
        )
    return example(*ents)


@pytest.mark.once
@pytest.mark.parametrize("odd", [0, 1, 2])
def test_batches_of_arrays_of_structs_take_the_fast_path_as_the_jar(
    spark: Any, tmp_path: Path, odd: int
) -> None:
    """Arrays of structs (null, empty, a field missing, a list field missing, a struct in the
    element) are decoded a batch at once and read as the jar reads them (a field a record lacks
    null in each element); a record whose leaves differ in length sends its batch record by
    record, where the jar's error names it."""
    records = [_array_record(i, odd if i == 5001 else 0) for i in range(9000)]
    path = str(write_records(tmp_path / "part-0.tfrecord", records))
    assert _taken(path, ARRAY_DDL) == [True, odd != 1, True]
    _reads_as_the_jar(spark, path, ARRAY_DDL, fails=odd == 1)


@pytest.mark.once
@pytest.mark.parametrize("case", list(ODD))
def test_a_batch_with_an_odd_record_reads_record_by_record_as_the_jar(
    spark: Any, tmp_path: Path, case: str
) -> None:
    """One record the fast path cannot read sends its batch (the second) through the record
    path: the jar's values, or in each mode the jar's condition, file, offset and column."""
    path = _fast_file(tmp_path / "odd", {5000: ODD[case]})
    assert _taken(path, FAST_DDL) == [True, False, True]
    schema = schema_of_ddl(FAST_DDL)
    jar = jar_results(path, schema)
    reader = spark.read.format("tfrecord").schema(FAST_DDL)
    if case not in ODD_FAILS:
        assert _trees(schema, _rows(reader.load(path))) == _shown(schema, _jar_rows(path, schema))
        return
    (failed,) = [(i, r) for i, (_, r) in enumerate(jar) if isinstance(r, Failure)]
    assert failed[0] == 5000
    failure = failed[1]
    with pytest.raises(Exception) as raised:
        reader.load(path).collect()
    assert errors.condition(raised.value) == failure.condition
    found = errors.parameters(raised.value)
    compared = ("path", "offset", "column")
    assert {k: found.get(k) for k in compared} == {k: failure.parameters.get(k) for k in compared}
    kept = [r.values for _, r in jar if isinstance(r, Row)]
    dropped = reader.option("mode", "DROPMALFORMED").load(path)
    assert _trees(schema, _rows(dropped)) == kept
    permissive = (
        spark.read.format("tfrecord")
        .schema(FAST_DDL + ", _corrupt_record binary")
        .option("mode", "PERMISSIVE")
        .load(path)
        .select("a", "_corrupt_record")
        .collect()
    )
    assert len(permissive) == FAST_RECORDS
    assert [i for i, r in enumerate(permissive) if r._corrupt_record is not None] == [5000]
    assert permissive[5000].a is None and permissive[5001].a is not None
