"""``spark_tfrecord.read_arrow`` reads what the jar wrote as the jar reads it, with no Spark.

Folders written by the jar (``df.write.format("tfrecord")``: scalars, arrays, strings, bytes,
nested arrays, structs, arrays of structs, Spark ML vectors, ``partitionBy`` columns,
SequenceExamples, GZIP; local, and through fsspec) give, through ``read_arrow``, the jar's
schema and its values, value for value: the table equals the jar's
``spark.read.format("tfrecord").load(path)`` as Arrow (``DataFrame.toArrow()``), sorted alike.
A projection by names and one by a DDL string give the jar's columns in that order; an unknown
name is refused with the columns listed; a malformed record is the jar's condition with its
file and offset. In a fresh Python, ``read_arrow`` imports no pyspark, py4j or JPype, and
without pyarrow it says what to install. Arrow's schema of a Spark schema, built without
pyspark, is pyspark's own (``to_arrow_schema``), for every type the reader gives.
"""

from __future__ import annotations

import datetime as dt
import inspect
import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from spark_tfrecord import errors, read_arrow
from spark_tfrecord._source.arrow_schema import METADATA_KEY, arrow_schema
from support import child_env
from support.tfrecord_bytes import (
    bytes_list,
    entry,
    example,
    feature,
    int64_list_packed,
    write_records,
)

UTC = dt.timezone.utc
#: Folders the jar writes: the DDL of the rows, the rows (``id`` first, unique), the write's
#: options, and the read's.
WRITTEN: dict[str, tuple[str, list[tuple[Any, ...]], dict[str, str], dict[str, str]]] = {
    "scalars": (
        "id long, i int, f float, d double, flag boolean, s string, raw binary",
        [
            (1, 7, 0.5, 2.25, True, "a", b"\x00\xff"),
            (2, None, -1.5, None, False, "é ü", b""),
            (3, -(2**31), None, 1e300, None, None, None),
        ],
        {},
        {},
    ),
    "arrays": (
        "id long, xs array<long>, fs array<float>, ss array<string>, bs array<binary>",
        [
            (1, [1, -2, 2**62], [0.5, 1.5], ["a", "bc"], [b"\x01", b""]),
            (2, [], [], [], []),
            (3, None, [3.0], None, [b"z"]),
        ],
        {},
        {},
    ),
    "nested arrays": (
        "id long, r array<array<long>>, rf array<array<float>>",
        [(1, [[1, 2], [], [3]], [[0.5]]), (2, [[4]], [[], [1.0, 2.0]]), (3, None, None)],
        {},
        {},
    ),
    "structs": (
        "id long, st struct<a: long, name: string, inner: struct<x: float, tags: array<string>>>",
        [(1, (5, "n", (0.25, ["t", "u"]))), (2, (6, None, None)), (3, None)],
        {},
        {"inferNesting": "true"},
    ),
    "arrays of structs": (
        "id long, objs array<struct<n: long, name: string, toks: array<string>>>",
        [(1, [(1, "a", ["x"]), (2, "b", [])]), (2, []), (3, [(3, "c", ["y", "z"])])],
        {},
        {"inferNesting": "true"},
    ),
    "structs, flat": (  # inferNesting's default: a struct's leaves are columns `st/a`...
        "id long, st struct<a: long, b: array<float>>",
        [(1, (2, [0.5])), (2, (3, [])), (3, None)],
        {},
        {},
    ),
    "GZIP": (
        "id long, x array<float>, s string",
        [(i, [i / 2, -1.0], f"s{i}") for i in range(50)],
        {"compression": "gzip"},
        {},
    ),
    "SequenceExample": (
        "id long, label string, frames array<array<float>>, words array<array<string>>",
        [(1, "a", [[0.5, 1.0], [2.0]], [["x"], ["y", "z"]]), (2, "b", [], [])],
        {"recordType": "SequenceExample"},
        {"recordType": "SequenceExample"},
    ),
    "ByteArray": (
        "id long, s string",
        [(1, "a"), (2, "b")],
        {},
        {"recordType": "ByteArray"},
    ),
    "nesting off": (
        "id long, st struct<a: long, b: array<float>>",
        [(1, (2, [0.5])), (2, (3, []))],
        {},
        {"inferNesting": "false", "pathSeparator": "."},
    ),
}


def _jar_arrow(df: Any) -> pa.Table:
    """A DataFrame as Arrow, as Spark gives it (``toArrow``, Spark 4; Spark 3.5's collection
    of Arrow batches)."""
    if hasattr(df, "toArrow"):
        return df.toArrow()
    return pa.Table.from_batches(df._collect_as_arrow(), schema=None)


def _sorted(table: pa.Table) -> pa.Table:
    """The rows by ``id`` (by ``byteArray`` without it): the jar's tasks and the reader's file
    order need not agree."""
    key = "id" if "id" in table.column_names else table.column_names[0]
    return table.sort_by(key)


def _same(ours: pa.Table, jar: pa.Table) -> None:
    """The two tables hold the same schema and values, value for value (floats bit for bit)."""
    assert ours.schema.names == jar.schema.names
    assert ours.schema.types == jar.schema.types, (ours.schema, jar.schema)
    assert [f.nullable for f in ours.schema] == [f.nullable for f in jar.schema]
    assert _sorted(ours).to_pylist() == _sorted(jar).to_pylist()


def _write(spark: Any, folder: Path, ddl: str, rows: list[Any], options: dict[str, str]) -> str:
    spark.createDataFrame(rows, ddl).coalesce(2).write.format("tfrecord").options(**options).mode(
        "overwrite"
    ).save(str(folder))
    return str(folder)


@pytest.mark.parametrize("case", list(WRITTEN))
def test_reads_what_the_jar_reads(spark: Any, tmp_path: Path, case: str) -> None:
    ddl, rows, write_options, read_options = WRITTEN[case]
    path = _write(spark, tmp_path / "t", ddl, rows, write_options)
    jar = _jar_arrow(spark.read.format("tfrecord").options(**read_options).load(path))
    ours = read_arrow(path, options=read_options)
    assert ours.schema == jar.schema
    table = ours.read_all()
    _same(table, jar)
    assert table.num_rows == len(rows)


def test_a_given_schema_is_the_schema_and_the_projection(spark: Any, tmp_path: Path) -> None:
    """A DDL string: Spark's narrower types, decimals, dates and timestamps from the int64s and
    floats written, in the DDL's order, only its columns decoded."""
    written = "id long, small long, money double, day date, at timestamp, tags array<long>"
    rows = [
        (1, 7, 1.25, dt.date(2024, 2, 29), dt.datetime(2024, 1, 1, 12, tzinfo=UTC), [1, 2]),
        (2, -3, -0.5, dt.date(1969, 12, 31), dt.datetime(1970, 1, 1, tzinfo=UTC), []),
        (3, None, None, None, None, None),
    ]
    path = _write(spark, tmp_path / "t", written, rows, {})
    ddl = (
        "at timestamp, tags array<int>, small smallint, money decimal(10,2), day date, "
        "id long not null"  # nullable, as Spark makes a file source's schema
    )
    jar = _jar_arrow(spark.read.format("tfrecord").schema(ddl).load(path))
    ours = read_arrow(path, ddl).read_all()
    _same(ours, jar)
    assert ours.schema.names == ["at", "tags", "small", "money", "day", "id"]
    by_id = {r["id"]: r for r in ours.to_pylist()}
    assert by_id[1]["money"] == Decimal("1.25") and by_id[1]["day"] == dt.date(2024, 2, 29)
    assert by_id[1]["at"] == dt.datetime(2024, 1, 1, 12, tzinfo=UTC)


def test_a_projection_by_names_keeps_their_order(spark: Any, tmp_path: Path) -> None:
    path = _write(spark, tmp_path / "t", *WRITTEN["arrays"][:2], {})
    jar = _jar_arrow(spark.read.format("tfrecord").load(path).select("ss", "id"))
    ours = read_arrow(path, ["ss", "id"]).read_all()
    _same(ours, jar)
    assert ours.column_names == ["ss", "id"]


def test_partition_columns_come_after_the_others(spark: Any, tmp_path: Path) -> None:
    rows = [(i, [float(i)], "p" if i % 2 else "q", 2020 + i % 3) for i in range(12)]
    path = str(tmp_path / "t")
    df = spark.createDataFrame(rows, "id long, x array<float>, part string, year int")
    df.write.format("tfrecord").partitionBy("part", "year").save(path)
    jar = _jar_arrow(spark.read.format("tfrecord").load(path))
    ours = read_arrow(path).read_all()
    _same(ours, jar)
    assert ours.schema.names == ["id", "x", "part", "year"]
    assert ours.schema.field("year").type == pa.int32()
    by_id = {r["id"]: (r["part"], r["year"]) for r in ours.to_pylist()}
    assert by_id == {i: ("p" if i % 2 else "q", 2020 + i % 3) for i in range(12)}
    # the partition columns by name, in the order given, and in a DDL
    assert _sorted(read_arrow(path, ["year", "id"]).read_all()).to_pydict() == {
        "year": [2020 + i % 3 for i in range(12)],
        "id": list(range(12)),
    }
    assert _sorted(read_arrow(path, "id long, part string").read_all()).to_pydict() == {
        "id": list(range(12)),
        "part": ["p" if i % 2 else "q" for i in range(12)],
    }


def test_vectors_are_their_struct(spark: Any, tmp_path: Path) -> None:
    """Spark ML vectors, written sparse (``vectorLayout``), read as Spark gives them to Arrow:
    the vector's ``sqlType`` struct (type, size, indices, values)."""
    from pyspark.ml.linalg import Vectors, VectorUDT
    from pyspark.sql.types import LongType, StructField, StructType

    schema = StructType([StructField("id", LongType()), StructField("v", VectorUDT())])
    rows = [(1, Vectors.dense([1.0, 0.0, 2.5])), (2, Vectors.sparse(4, [1, 3], [3.0, -1.0]))]
    path = str(tmp_path / "t")
    df = spark.createDataFrame(rows, schema)
    df.write.format("tfrecord").option("vectorLayout", "sparse").save(path)
    jar = _jar_arrow(spark.read.format("tfrecord").load(path))
    ours = read_arrow(path).read_all()
    _same(ours, jar)
    assert pa.types.is_struct(ours.schema.field("v").type)
    by_id = {r["id"]: r["v"] for r in ours.to_pylist()}
    assert by_id == {
        1: {"type": 0, "size": 3, "indices": [0, 2], "values": [1.0, 2.5]},
        2: {"type": 0, "size": 4, "indices": [1, 3], "values": [3.0, -1.0]},
    }


def test_an_fsspec_url_reads_through_fsspec(spark: Any, tmp_path: Path) -> None:
    """A folder the jar wrote, copied into fsspec's in-memory file system, reads from its
    ``memory://`` URL as the jar reads the local one; ``storage_options`` go to fsspec."""
    import fsspec

    path = _write(spark, tmp_path / "t", *WRITTEN["GZIP"][:3])
    memory = fsspec.filesystem("memory")
    url = f"memory://read-arrow-{tmp_path.name}/t"
    for f in Path(path).rglob("*"):
        if f.is_file():
            memory.pipe(f"{url}/{f.relative_to(path).as_posix()}", f.read_bytes())
    jar = _jar_arrow(spark.read.format("tfrecord").load(path))
    try:
        ours = read_arrow(url, storage_options={"use_listings_cache": False}).read_all()
    finally:
        memory.rm(url, recursive=True)
    _same(ours, jar)
    assert ours.num_rows == 50


def _frames(folder: Path, bad: bytes) -> tuple[str, int]:
    """A file of ten records whose record 6 is ``bad``, and that record's byte offset."""
    records = [example(entry(b"id", feature("int64", int64_list_packed([i])))) for i in range(10)]
    records[6] = bad
    path = write_records(folder / "part-0.tfrecord", records)
    return str(path), sum(len(r) + 16 for r in records[:6])


@pytest.mark.parametrize(
    ("what", "bad", "condition"),
    [
        ("malformed", b"\x0a\x05ab", errors.MALFORMED_RECORD),
        ("text for a long", example(entry(b"id", feature("bytes", bytes_list([b"x"])))), None),
    ],
)
def test_a_bad_record_is_the_jars_error(
    spark: Any, tmp_path: Path, what: str, bad: bytes, condition: str | None
) -> None:
    path, offset = _frames(tmp_path / "t", bad)
    with pytest.raises(Exception) as jar_error:
        spark.read.format("tfrecord").schema("id long").load(str(tmp_path / "t")).collect()
    reader = read_arrow(tmp_path / "t", "id long")
    with pytest.raises(errors.CorruptFileError) as ours:
        reader.read_all()
    found = errors.parameters(ours.value)
    assert found["path"] == path and found["offset"] == str(offset)
    assert str(offset) in str(ours.value) and path in str(ours.value)
    assert ours.value.condition == errors.condition(jar_error.value)
    assert found["offset"] == errors.parameters(jar_error.value)["offset"]
    if condition is not None:
        assert ours.value.condition == condition
    else:
        assert found["column"] == "id" == errors.parameters(jar_error.value)["column"]


def test_damaged_framing_names_the_file_and_offset(tmp_path: Path) -> None:
    path, offset = _frames(tmp_path / "t", example())
    raw = bytearray(Path(path).read_bytes())
    raw[offset + 12] ^= 0xFF  # record 6's data: its checksum fails
    Path(path).write_bytes(bytes(raw))
    with pytest.raises(errors.CorruptFileError) as e:
        read_arrow(tmp_path / "t", "id long").read_all()
    assert e.value.parameters["path"] == path and e.value.parameters["offset"] == str(offset)
    # ignoreCorruptFiles keeps the records before it, as Spark does
    kept = read_arrow(tmp_path / "t", "id long", options={"ignoreCorruptFiles": "true"})
    assert kept.read_all().column("id").to_pylist() == list(range(6))


def test_an_unknown_column_is_refused_with_the_columns(spark: Any, tmp_path: Path) -> None:
    path = _write(spark, tmp_path / "t", *WRITTEN["arrays"][:2], {})
    with pytest.raises(ValueError, match=r"No column 'nope'; the columns: \['id', 'xs', 'fs'"):
        read_arrow(path, ["id", "nope"])
    with pytest.raises(errors.ArgumentError, match="mode"):
        read_arrow(path, options={"mode": "SOMETIMES"})


def test_a_trainer_needs_no_spark(spark: Any, tmp_path: Path) -> None:
    """In a fresh Python, read_arrow reads the folder and imports none of pyspark, py4j and
    JPype."""
    path = _write(spark, tmp_path / "t", *WRITTEN["structs"][:2], {})
    code = (
        "import sys, json\n"
        "from spark_tfrecord import read_arrow\n"
        f"t = read_arrow({path!r}, options={{'inferNesting': 'true'}}).read_all().sort_by('id')\n"
        "print(json.dumps(t.to_pylist()))\n"
        "print([m for m in ('pyspark', 'py4j', 'jpype') if m in sys.modules])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=child_env()
    )
    assert done.returncode == 0, done.stderr
    rows, loaded = done.stdout.splitlines()
    assert loaded == "[]"
    assert json.loads(rows) == [
        {"id": 1, "st": {"a": 5, "name": "n", "inner": {"x": 0.25, "tags": ["t", "u"]}}},
        {"id": 2, "st": {"a": 6, "name": None, "inner": None}},
        {"id": 3, "st": None},
    ]


def test_without_pyarrow_it_says_what_to_install(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from support.imported_modules import _Missing\n"
        "sys.meta_path.insert(0, _Missing(['pyarrow']))\n"
        "import spark_tfrecord\n"
        "try:\n"
        f"    spark_tfrecord.read_arrow({str(tmp_path)!r})\n"
        "except ModuleNotFoundError as e:\n"
        "    print(e.name, '|', e)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=child_env()
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        "pyarrow | spark_tfrecord.read_arrow needs pyarrow: pip install pyarrow "
        "(or pip install 'spark-tfrecord[arrow]')"
    )


def test_arrow_schema_is_pysparks(spark: Any) -> None:
    """Every type the reader gives, nested in arrays and structs, non-nullable fields, an ML
    vector and fields with metadata: the schema pyspark's ``to_arrow_schema`` gives (in
    pysparks before 4.2, which give no field metadata, the same but for it)."""
    from pyspark.ml.linalg import VectorUDT
    from pyspark.sql.pandas import types as pandas_types
    from pyspark.sql.types import StructField, StructType

    from spark_tfrecord._format.columns.ddl import parse_ddl

    ddl = (
        "l long, i int, sh smallint, b tinyint, f float, d double, flag boolean, s string, "
        "raw binary, dec decimal(12,3), day date, ts timestamp, ntz timestamp_ntz, "
        "xs array<long>, rr array<array<float>>, rrr array<array<array<string>>>, "
        "st struct<a: long, b: struct<c: array<binary>, d: decimal(38,0)>>, "
        "objs array<struct<n: bigint, t: array<timestamp>>>, req bigint not null"
    )
    spark_schema = StructType.fromJson(parse_ddl(ddl))
    spark_schema.add(StructField("v", VectorUDT()))
    spark_schema.add(StructField("m", StructType.fromJson(parse_ddl("a int")), True, {"k": 1}))
    spark_schema.add(StructField("n", StructType().add("x", "long", True, {"comment": "c"})))
    json_schema = spark_schema.jsonValue()
    ours = arrow_schema(json_schema)
    convert: Any = pandas_types.to_arrow_schema  # Spark 3.5's gives UTC with no keyword
    utc = {"timezone": "UTC"} if "timezone" in inspect.signature(convert).parameters else {}
    theirs = convert(spark_schema, **utc)
    if hasattr(pandas_types, "to_arrow_metadata"):
        assert ours.equals(theirs, check_metadata=True), (ours, theirs)
    else:
        bare = {**json_schema, "fields": [{**f, "metadata": {}} for f in json_schema["fields"]]}
        bare["fields"][-1]["type"]["fields"][0]["metadata"] = {}
        assert arrow_schema(bare).equals(theirs, check_metadata=True), (ours, theirs)
    assert ours.field("m").metadata == {METADATA_KEY: b'{"k": 1}'}
    assert ours.field("n").type.field("x").metadata == {METADATA_KEY: b'{"comment": "c"}'}
    assert ours.field("ts").type == pa.timestamp("us", tz="UTC")
    assert ours.field("req").nullable is False
    assert ours.field("v").type == pa.struct(
        [
            pa.field("type", pa.int8(), False),
            pa.field("size", pa.int32()),
            pa.field("indices", pa.list_(pa.field("element", pa.int32(), False))),
            pa.field("values", pa.list_(pa.field("element", pa.float64(), False))),
        ]
    )
