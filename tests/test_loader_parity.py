"""The loaders read as the jar reads (issue 42, point 4): the same folder and the same schema give
the same values through torch_dataset and grain_source as through Spark, and the same errors
(condition, file, offset, column): every Spark type a column can have, read from every feature
kind, converted or refused as the jar's type table does, range checks included; the record path
and the batch path alike. Partition columns (``name=value`` folders) have the values spark.read
gives them, typed as Spark's partition discovery types them. And a file truncated under a reader
raises CorruptFileError, not SIGBUS."""

from __future__ import annotations

import math
import os
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import spark_tfrecord
from spark_tfrecord import errors
from support import tfrecord_bytes

INTS = [0, 1, 2, -1, 127, 128, -129, 300, 32767, 40000, 2**31 - 1, 2**31, -(2**31) - 1]
INTS += [2**40 + 1, 2**53 + 1, 2**62 + 3, -(2**63), 2**63 - 1, 99999999, -99999999999]
FLOATS = [0.0, -0.0, 1.5, -2.25, 1e10, 1e-5, 3.4e38, math.nan, math.inf, -math.inf, 0.1]
FLOATS += [123456.7, 1e7, 9999999.0, 1e-3, 9.999e-4, 12345.678, -0.005, 16777217.0, 1e-45]
TEXTS = ["a", "", "héllo", "12", "x y", "true"]
N = len(INTS)

#: Every Spark type a feature value can take, as the columns of a DDL string.
TYPES = [
    "boolean",
    "tinyint",
    "smallint",
    "int",
    "bigint",
    "date",
    "timestamp",
    "timestamp_ntz",
    "float",
    "double",
    "decimal(10,2)",
    "decimal(38,18)",
    "string",
    "binary",
]


@pytest.fixture(scope="module")
def kinds(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> str:
    """One file of N records: int64 (i, ia), float (f, fa) and bytes (s, sa) features, one
    value and two values each."""
    rows = [
        (
            INTS[k],
            [INTS[k], INTS[(k + 1) % N]],
            FLOATS[k % len(FLOATS)],
            [FLOATS[k % len(FLOATS)], FLOATS[(k + 3) % len(FLOATS)]],
            TEXTS[k % len(TEXTS)],
            [TEXTS[k % len(TEXTS)], TEXTS[(k + 1) % len(TEXTS)]],
        )
        for k in range(N)
    ]
    ddl = "i bigint, ia array<bigint>, f float, fa array<float>, s string, sa array<string>"
    folder = str(tmp_path_factory.mktemp("parity") / "kinds")
    spark_tfrecord.write(spark.createDataFrame(rows, ddl).coalesce(1), folder)
    return folder


def _comparable(data_type: str, column: str) -> str:
    """A SQL expression of ``column`` that Python collects as the loader gives it (dates in
    days, timestamps in microseconds): no Python date of a day Python's dates cannot hold."""
    if data_type == "date":
        return f"unix_date({column})"
    if data_type == "timestamp":
        return f"unix_micros({column})"
    if data_type == "timestamp_ntz":
        return f"unix_micros(cast({column} as timestamp))"  # the session's time zone is UTC
    return column


def _spark_values(spark: Any, folder: str, feature: str, ddl_type: str, array: bool) -> list[Any]:
    """The values Spark reads, record by record in file order; None where it refuses one
    (PERMISSIVE mode makes such a record all nulls; every record holds the feature)."""
    read = spark.read.format("tfrecord").schema(f"`{feature}` {ddl_type}")
    df = read.option("mode", "PERMISSIVE").load(folder)
    element = ddl_type[6:-1] if array else ddl_type
    if _comparable(element, "x") == "x":
        expr = f"`{feature}`"
    elif array:
        expr = f"transform(`{feature}`, x -> {_comparable(element, 'x')})"
    else:
        expr = _comparable(element, f"`{feature}`")
    return [r[0] for r in df.selectExpr(expr).collect()]


def _spark_error(spark: Any, folder: str, feature: str, ddl_type: str) -> dict[str, str]:
    read = spark.read.format("tfrecord").schema(f"`{feature}` {ddl_type}")
    with pytest.raises(Exception) as failed:
        read.option("mode", "FAILFAST").load(folder).collect()
    found = errors.parameters(failed.value)
    found["condition"] = errors.condition(failed.value) or ""
    return found


def _expected(data_type: str, value: Any) -> Any:
    """Spark's value as the loaders give it: booleans and integers as int64, floats, doubles
    and decimals as float32, strings as str, binaries as bytes."""
    if value is None:
        return None
    if data_type in ("float", "double") or data_type.startswith("decimal"):
        return np.float32(float(value))
    if data_type == "binary":
        return bytes(value)
    if data_type == "string":
        return value
    return np.int64(int(value))


def _same(a: Any, b: Any) -> bool:
    """Equal, bit for bit for floats (NaN payloads and -0.0 included), dtypes included."""
    a, b = (x.numpy() if hasattr(x, "numpy") else x for x in (a, b))  # torch's tensors
    if isinstance(a, (np.ndarray, np.generic)) or isinstance(b, (np.ndarray, np.generic)):
        x, y = np.asarray(a), np.asarray(b)
        return x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(p, q) for p, q in zip(a, b))
    return type(a) is type(b) and bool(a == b)


def _loader_values(ds: Any, feature: str) -> tuple[list[Any], list[BaseException | None]]:
    values: list[Any] = []
    failures: list[BaseException | None] = []
    for j in range(len(ds)):
        try:
            values.append(ds[j][feature])
            failures.append(None)
        except errors.CorruptFileError as e:
            values.append(None)
            failures.append(e)
    return values, failures


def _local(path: str) -> str:
    return path.removeprefix("file://").removeprefix("file:")


@pytest.mark.parametrize("data_type", TYPES)
@pytest.mark.parametrize("array", [False, True], ids=["scalar", "array"])
def test_every_type_from_every_kind(spark: Any, kinds: str, data_type: str, array: bool) -> None:
    """Each feature kind read into each type: the values Spark reads, record by record, through
    the record path and the batch path; where Spark refuses a record, the loaders raise for that
    record, and the first refusal is Spark's error: condition, file, offset and column."""
    ddl_type = f"array<{data_type}>" if array else data_type
    for feature in ("ia", "fa", "sa") if array else ("i", "f", "s"):
        want = _spark_values(spark, kinds, feature, ddl_type, array)
        ds = spark_tfrecord.torch_dataset(kinds, columns=f"`{feature}` {ddl_type}")
        got, failures = _loader_values(ds, feature)
        for j, (w, g) in enumerate(zip(want, got)):
            expected = (
                None
                if w is None
                else [_expected(data_type, x) for x in w]
                if array
                else (_expected(data_type, w))
            )
            if array and g is not None and not isinstance(g, list):
                g = [x for x in g]
            assert _same(g, expected), (feature, ddl_type, j, w, g)
        refused = [j for j, w in enumerate(want) if w is None]
        assert [j for j, e in enumerate(failures) if e is not None] == refused, (feature, ddl_type)
        valid = [j for j in range(N) if j not in refused]
        if valid:  # the batch path gives what the record path gives
            batch = ds.collate(ds.__getitems__(valid))
            assert _same(batch[feature], ds.collate([ds[j] for j in valid])[feature]), feature
        if refused:
            spark_error = _spark_error(spark, kinds, feature, ddl_type)
            first = failures[refused[0]]
            assert first is not None
            mine = dict(errors.parameters(first), condition=errors.condition(first) or "")
            assert mine["condition"] == spark_error["condition"] == errors.DATA_MISMATCH
            assert mine["column"] == spark_error["column"] == feature
            assert int(mine["offset"]) == int(spark_error["offset"])
            assert _local(mine["path"]) == _local(spark_error["path"])
            assert mine["reason"] == spark_error["reason"], (mine, spark_error)
            with pytest.raises(errors.CorruptFileError) as batch_error:
                ds.collate(ds.__getitems__(list(range(N))))
            assert errors.parameters(batch_error.value) == errors.parameters(first)


def test_grain_source_reads_as_torch_dataset(kinds: str) -> None:
    """grain_source shares the conversions: a tinyint column's values and its refusals."""
    grain = spark_tfrecord.grain_source(kinds, columns="i smallint")
    torch = spark_tfrecord.torch_dataset(kinds, columns="i smallint")
    for j in range(N):
        if -(2**15) <= INTS[j] < 2**15:
            assert _same(grain[j]["i"], torch[j]["i"])
            assert _same(grain[j]["i"], np.int64(INTS[j]))
        else:
            with pytest.raises(errors.CorruptFileError) as failed:
                grain[j]
            assert errors.parameters(failed.value)["column"] == "i"
            assert errors.parameters(failed.value)["reason"] == (
                f"Column 'i' (smallint) cannot hold the value {INTS[j]}"
            )


_TRUNCATE_CHILD = r"""
import os, sys
import numpy as np
import spark_tfrecord
from spark_tfrecord import errors
from support import tfrecord_bytes

folder, data = sys.argv[1], sys.argv[2]
ds = spark_tfrecord.torch_dataset(folder)
n = len(ds)
first = ds.collate(ds.__getitems__(list(range(n))))  # maps or reads the whole file once
assert first["id"].tolist() == list(range(n)), first["id"]
os.truncate(data, os.path.getsize(data) // 2)  # another process's truncation, in effect
try:
    ds.collate(ds.__getitems__(list(range(n))))
except errors.CorruptFileError as e:
    p = errors.parameters(e)
    print(errors.condition(e), p["path"], p["offset"])
    sys.exit(0)
print("no error")
sys.exit(3)
"""


def test_a_file_truncated_under_a_reader_raises(spark: Any, tmp_path: Path) -> None:
    """A file truncated while a torch_dataset reads it raises CorruptFileError naming the file
    and the first record past the new end; the reader's process lives on (in a subprocess, so
    that a SIGBUS would show as its exit signal, not end pytest)."""
    folder = str(tmp_path / "t")
    rows = [(i, [float(i)] * 64) for i in range(2000)]
    spark_tfrecord.write(spark.createDataFrame(rows, "id long, x array<float>").coalesce(1), folder)
    info = spark_tfrecord.dataset_info(folder)
    (data,) = [f.path for f in info.files]
    size = os.path.getsize(data)
    cut = size // 2
    first_cut = 0  # the offset of the first record that ends past the cut
    with open(data, "rb") as file:
        while True:
            file.seek(first_cut)
            (length,) = struct.unpack("<Q", file.read(8))
            if first_cut + 16 + length > cut:
                break
            first_cut += 16 + length
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    child = subprocess.run(
        [sys.executable, "-c", _TRUNCATE_CHILD, folder, data],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert child.returncode == 0, (child.returncode, child.stdout, child.stderr[-2000:])
    condition, path, offset = child.stdout.split()
    assert condition == errors.TRUNCATED
    assert _local(path) == _local(data)
    assert int(offset) == first_cut


# --- partition columns ------------------------------------------------------------------------

#: The raw values of a partition column's folders (``v=<raw>``), and the type spark.read gives
#: the column: Spark's partition discovery (PartitioningUtils), which the loaders follow.
PARTITION_CASES = {
    "int": (["1", "-2", "+5", "007", "2147483647"], "int"),
    "bigint": (["1", "3000000000", "-9223372036854775808"], "bigint"),
    "decimal": (["1", "12345678901234567890123", "1.0e1"], "decimal(23,0)"),
    "double": (
        ["1", "2.5", "NaN", "+NaN", "1.5d", "-0.0", " 1", ".5", "-Infinity", "1e400"],
        "double",
    ),
    "exponents": (["1e3", "5.", "1.0e1"], "decimal(4,0)"),
    "bigint and double": (["3000000000", "2.5"], "string"),
    "decimal and double": (["12345678901234567890123", "2.5"], "string"),
    "date": (["2024-01-02", "1969-12-31"], "date"),
    "timestamp": (
        ["2024-01-02", "2024-01-02 03%3A04%3A05", "1960-01-02 03%3A04%3A05.7"],
        "timestamp",
    ),
    "timestamp of micros": (["2024-01-02 03%3A04%3A05.123456", "2024-01-02"], "string"),
    "string": (["a%3Db", "x y", "é", "2024-13-01", "1.2.3", "007x", "%7Bq%7D"], "string"),
    "date and int": (["2024-01-02", "5"], "string"),
    "null": (["__HIVE_DEFAULT_PARTITION__", "5"], "int"),
    "nulls only": (["__HIVE_DEFAULT_PARTITION__"], "void"),
}


def _comparable_partition(data_type: str, column: str) -> str:
    if data_type.startswith("decimal"):
        return f"cast({column} as double)"
    return _comparable(data_type, column)


def _as_loader_gives(data_type: str, value: Any) -> Any:
    """Spark's value (as `_comparable_partition` collects it) in the loaders' dtypes."""
    if value is None:
        return None
    if data_type in ("double", "float") or data_type.startswith("decimal"):
        return np.float32(value)
    if data_type in ("int", "bigint", "date", "timestamp"):
        return np.int64(value)
    return value


def _same_partition_value(got: Any, want: Any) -> bool:
    if isinstance(want, np.floating):
        return isinstance(got, np.float32) and got.tobytes() == want.tobytes()
    return type(got) is type(want) and got == want


def _batch_column(batch: Any, size: int) -> list[Any]:
    """A collated scalar column split back into its records' values."""
    if not isinstance(batch, tuple):
        return list(np.asarray(batch)) if hasattr(batch, "numpy") else list(batch)
    values, offsets = (np.asarray(b) if hasattr(b, "numpy") else b for b in batch)
    return [values[offsets[j]] if offsets[j + 1] > offsets[j] else None for j in range(size)]


def _utc(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process's time zone UTC, as the session's: a timestamp folder is local time."""
    import time

    monkeypatch.setenv("TZ", "UTC")
    time.tzset()


def assert_partitions_read_as_spark(
    spark: Any, folder: str, columns: str, names: list[str]
) -> None:
    """spark.read's partition columns of `folder` equal the loaders' (record path and batch
    path, grain_source and torch_dataset), record by record (by `id`)."""
    df = spark.read.format("tfrecord").load(folder)
    types = {n: df.schema[n].dataType.simpleString() for n in names}
    exprs = ["id"] + [f"{_comparable_partition(types[n], f'`{n}`')} as `{n}`" for n in names]
    want = {
        row["id"]: {n: _as_loader_gives(types[n], row[n]) for n in names}
        for row in df.selectExpr(*exprs).collect()
    }
    for make in (spark_tfrecord.grain_source, spark_tfrecord.torch_dataset):
        src = make(folder, columns=columns)
        assert len(src) == len(want)
        records = [src[i] for i in range(len(src))]
        batch = src.collate(src.__getitems__(list(range(len(src)))))
        for n in names:
            batched = _batch_column(batch[n], len(src))
            for k, r in enumerate(records):
                expected = want[int(r["id"])][n]
                assert _same_partition_value(r[n], expected), (n, r["id"], r[n], expected)
                assert _same_partition_value(batched[k], expected), (n, batched[k], expected)


@pytest.mark.parametrize("case", list(PARTITION_CASES))
def test_partition_folders_read_as_spark_reads_them(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    """Folders ``v=<raw>`` made by hand (a record each, ``id`` k): the column's type is what
    spark.read infers, and its values Spark's, in the loaders' dtypes."""
    _utc(monkeypatch)
    raws, spark_type = PARTITION_CASES[case]
    folder = tmp_path / "table"
    for k, raw in enumerate(raws):
        ids = tfrecord_bytes.int64_list_packed([k])
        record = tfrecord_bytes.example(
            tfrecord_bytes.entry(b"id", tfrecord_bytes.feature("int64", ids))
        )
        tfrecord_bytes.write_records(folder / f"v={raw}" / "part-00000.tfrecord", [record])
    df = spark.read.format("tfrecord").load(str(folder))
    assert df.schema["v"].dataType.simpleString() == spark_type
    assert_partitions_read_as_spark(spark, str(folder), "id bigint", ["v"])


def test_a_partitioned_write_reads_as_spark_reads_it(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A table ``df.write.partitionBy(...)`` wrote (escaped names and values, nulls, dates,
    timestamps) gives the loaders the partition values spark.read gives, after the data
    columns; ``columns`` selects partition columns by name."""
    _utc(monkeypatch)
    rows = [
        (0, 1.5, 1, "a=b/c", "2024-01-02", "2024-01-02 03:04:05"),
        (1, 2.5, None, "x y", "1969-12-31", "1969-12-31 23:59:59"),
        (2, -1.0, 3, "007", "2024-01-02", "2024-01-02 03:04:05"),
        (3, 0.0, 3, None, "2000-02-29", "2000-02-29 00:00:00"),
        (4, 9.0, 1, "é%{}", "2024-01-02", "2024-01-02 03:04:05"),
    ]
    df = spark.createDataFrame(rows, "id bigint, x float, `a=1` int, b string, c string, d string")
    df = df.selectExpr("id", "x", "`a=1`", "b", "cast(c as date) as c", "cast(d as timestamp) d")
    folder = str(tmp_path / "table")
    df.write.partitionBy("a=1", "b", "c", "d").format("tfrecord").save(folder)
    back = spark.read.format("tfrecord").load(folder)
    assert [f.name for f in back.schema.fields] == ["id", "x", "a=1", "b", "c", "d"]
    assert [f.dataType.simpleString() for f in back.schema.fields[2:]] == [
        "int",
        "string",
        "date",
        "timestamp",
    ]
    assert_partitions_read_as_spark(spark, folder, None, ["a=1", "b", "c", "d"])
    src = spark_tfrecord.grain_source(folder)
    assert src.keys == ["id", "x", "a=1", "b", "c", "d"]
    chosen = spark_tfrecord.grain_source(folder, columns=["d", "id"])
    assert chosen.keys == ["id", "d"]
    by_id = {int(r["id"]): r for r in (chosen[i] for i in range(len(chosen)))}
    assert by_id[1]["d"] == -1_000_000 and by_id[3]["d"] == 951782400 * 1_000_000
    # A schema that names a partition column types it: the date folders as strings.
    typed = spark.read.format("tfrecord").schema("id bigint, c string").load(folder)
    assert [f.name for f in typed.schema.fields] == ["id", "a=1", "b", "c", "d"]
    want = {r["id"]: r["c"] for r in typed.collect()}
    src = spark_tfrecord.grain_source(folder, columns="id bigint, c string")
    assert src.keys == [f.name for f in typed.schema.fields]
    assert {int(r["id"]): r["c"] for r in (src[i] for i in range(len(src)))} == want
    assert want[1] == "1969-12-31"
