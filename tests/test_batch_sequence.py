"""The jar-less read's batch path on SequenceExamples (issue 57): context features read as an
Example's columns, feature lists as ``array<array<T>>`` built a batch at once, and arrays of
structs (a feature list per field, a step per element).

Files the jar writes (every element type a feature list holds, with lists absent, lists of no
steps, empty steps, absent context features, NaN and infinities, the int64 extremes) and files
built byte by byte (text that is not UTF-8, steps of no kind, lists of no value, a key in the
wrong field, a step of the wrong kind, the fields in the other order) are read three ways: by
``read_arrow`` as it runs (its clean batches must take the batch path: a counter on the record
path fails the test if it decodes one of them), by the record path alone (the batch path
switched off), and by the jar in this process (JPype). The two Arrow tables are equal and their
rows are the jar's, value for value; a record the jar refuses fails the read as the record path
fails it, with the jar's condition and offset.
"""

from __future__ import annotations

import datetime
import math
import random
from collections.abc import Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import spark_tfrecord
from spark_tfrecord import errors
from spark_tfrecord._format.datasets.inference import as_nullable
from spark_tfrecord._format.files.files import file_system
from spark_tfrecord._source import arrow_read, batch_arrays
from spark_tfrecord._source.options import ReadOptions
from support import batch_path, tfrecord_files
from support.jar_decoder import (
    Failure,
    Row,
    as_loaders_hold,
    jar_results,
    schema_of_ddl,
    value_tree,
)
from support.tfrecord_bytes import (
    bytes_list,
    entry,
    feature,
    float_list_packed,
    int64_list_packed,
    ld,
    write_records,
)

#: Records per batch in these tests, and records per file: four batches, the odd record in the
#: second.
BATCH = 500
RECORDS = 2000
ODD_AT = 701
SEQUENCE = {"recordType": "SequenceExample"}

#: Every element type of a feature list, with the values the jar writes at its edges.
ELEMENTS: dict[str, list[Any]] = {
    "bigint": [0, 1, -1, 2**63 - 1, -(2**63), 2**31],
    "int": [0, -1, 2**31 - 1, -(2**31)],
    "smallint": [0, -1, 2**15 - 1, -(2**15)],
    "tinyint": [0, -1, 127, -128],
    "boolean": [True, False],
    "float": [0.0, -0.0, 1.5, math.nan, math.inf, -math.inf, 3.4028234663852886e38, 1e-45],
    "double": [0.0, -0.0, 0.1, math.nan, math.inf, -math.inf, 1.7976931348623157e308, 5e-324],
    "string": ["", "a", "é", "日本", "\x00", "x" * 40],
    "binary": [b"", b"\xff", b"\x00\x80", "é".encode(), b"\xc3"],
    "date": [datetime.date(1970, 1, 1), datetime.date(1, 1, 1), datetime.date(9999, 12, 31)],
    "decimal(10,2)": [Decimal("0.00"), Decimal("-1.25"), Decimal("1024.50"), Decimal("0.75")],
}
JAR_DDL = "id bigint, label string, " + ", ".join(
    f"l{i} array<array<{t}>>" for i, t in enumerate(ELEMENTS)
)


def _steps(rng: random.Random, values: list[Any], i: int) -> list[list[Any]] | None:
    """Record i's feature list: absent, of no steps, or steps of 0 to 4 values by turns."""
    if i % 7 == 3:
        return None
    if i % 11 == 5:
        return []
    return [
        [rng.choice(values) for _ in range(rng.randint(0, 4))] for _ in range(rng.randint(1, 6))
    ]


def _row(i: int, rng: random.Random) -> tuple[Any, ...]:
    label = None if i % 3 == 0 else rng.choice(["", "a", "é", "x" * 30])
    lists = [_steps(rng, values, i + k) for k, values in enumerate(ELEMENTS.values())]
    return (None if i % 13 == 0 else i, label, *lists)


def _read(
    path: str, schema: Mapping[str, Any], monkeypatch: pytest.MonkeyPatch, mode: str
) -> tuple[pa.Table, list[int]]:
    """The file read through ``read_arrow`` as SequenceExamples, and the batches (by their
    first record's offset) the record path decoded."""
    return batch_path.read(path, schema, {"mode": mode, **SEQUENCE}, monkeypatch, BATCH)


def _record_path(
    path: str, schema: Mapping[str, Any], monkeypatch: pytest.MonkeyPatch, mode: str
) -> pa.Table:
    """The file read with the batch path switched off."""
    options = {"mode": mode, **SEQUENCE}
    return batch_path.read(path, schema, options, monkeypatch, BATCH, False)[0]


def _failure(path: str, schema: Mapping[str, Any], monkeypatch: pytest.MonkeyPatch) -> Any:
    with pytest.raises(errors.CorruptFileError) as raised:
        _read(path, schema, monkeypatch, "FAILFAST")
    return raised.value


def _check(
    path: str, ddl: str, odd: list[int], fails: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file read through the batch path, the record path and the jar: the same rows (the
    jar's condition and offset where it fails a record, and its other rows when dropped); the
    record path decoded only the batches ``odd`` (their first records)."""
    schema = schema_of_ddl(ddl)
    assert batch_arrays.BatchArrays.of(*_plan(path, schema)) is not None
    jar = jar_results(path, schema, SEQUENCE)
    offsets = [offset for offset, _ in jar]
    mode = "FAILFAST"
    if fails:
        (failed,) = [r for _, r in jar if isinstance(r, Failure)]
        error = _failure(path, schema, monkeypatch)
        assert errors.condition(error) == failed.condition
        assert errors.parameters(error).get("offset") == failed.parameters.get("offset")
        with monkeypatch.context() as m:
            m.setattr(batch_arrays.BatchArrays, "arrays", lambda *_: None)
            alone = _failure(path, schema, monkeypatch)
        assert str(alone) == str(error)
        assert errors.parameters(alone) == errors.parameters(error)
        mode = "DROPMALFORMED"
    table, decoded = _read(path, schema, monkeypatch, mode)
    assert decoded == [offsets[i // BATCH * BATCH] for i in odd]
    alone = _record_path(path, schema, monkeypatch, mode)
    assert table.schema == alone.schema
    trees = _trees(table, schema)
    assert trees == _trees(alone, schema)  # (bit for bit: a table's equals has NaN != NaN)
    assert trees == [_shown(schema, r.values) for _, r in jar if isinstance(r, Row)]
    assert len(trees) == len(jar) - fails


def _trees(table: pa.Table, schema: Mapping[str, Any]) -> list[Any]:
    """The table's rows in the jar's exact form (:func:`value_tree`: floats by their bits)."""
    fields = schema["fields"]
    return [
        {f["name"]: value_tree(f["type"], r[f["name"]]) for f in fields} for r in table.to_pylist()
    ]


def _shown(schema: Mapping[str, Any], row: Mapping[str, Any]) -> dict[str, Any]:
    """A jar's row as pyspark shows it: a string's bytes that are not UTF-8 as the JVM decodes
    them (U+FFFD, :func:`as_loaders_hold`), as the Python route reads them; structs as they
    are (the loaders' hold a null struct as a struct of nulls)."""
    return {
        f["name"]: row[f["name"]]
        if isinstance(f["type"], dict) and f["type"]["type"] == "struct"
        else as_loaders_hold(f["type"], row[f["name"]])
        for f in schema["fields"]
    }


def _plan(path: str, schema: Mapping[str, Any]) -> tuple[Any, Any]:
    """The read's layout and nodes, which :meth:`BatchArrays.of` takes."""
    fs, where = file_system(path, None)
    read = arrow_read.ArrowRead(
        as_nullable(dict(schema)), ReadOptions.parse(dict(SEQUENCE)), fs, where
    )
    found, columns, _, _ = read.columns()
    return found, columns.nodes


def test_jar_written_sequence_examples_take_the_batch_path(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every element type of a feature list, at its edges, written by the jar: each batch is
    read at once, as the record path and the jar read it."""
    rng = random.Random(57)
    rows = [_row(i, rng) for i in range(RECORDS)]
    df = spark.createDataFrame(rows, JAR_DDL)
    out = tmp_path / "jar"
    spark_tfrecord.write(df.coalesce(1), str(out), record_type="SequenceExample")
    (path,) = tfrecord_files(out)
    _check(str(path), JAR_DDL, [], False, monkeypatch)


STRUCTS_DDL = (
    "id bigint, st array<struct<a: float, n: bigint, s: string, d: double, w: array<bigint>, "
    "t: array<string>>>, f array<array<float>>"
)


def _structs_row(i: int, rng: random.Random) -> tuple[Any, ...]:
    """Record i: an array of structs (absent, empty, or 1 to 4 elements of every field)."""
    floats, ints = ELEMENTS["float"], ELEMENTS["bigint"]
    texts, doubles = ELEMENTS["string"], ELEMENTS["double"]
    elements = [
        (
            rng.choice(floats),
            rng.choice(ints),
            rng.choice(texts),
            rng.choice(doubles),
            [rng.choice(ints) for _ in range(rng.randint(0, 3))],
            [rng.choice(texts) for _ in range(rng.randint(0, 2))],
        )
        for _ in range(rng.randint(1, 4))
    ]
    st = None if i % 7 == 2 else [] if i % 11 == 4 else elements
    return (i, st, _steps(rng, floats, i))


def test_sequence_arrays_of_structs_take_the_batch_path(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A SequenceExample's array of structs (a feature list per field, a step per element:
    numbers, text, lists), written by the jar, is read a batch at once as the record path and
    the jar read it."""
    rng = random.Random(59)
    rows = [_structs_row(i, rng) for i in range(RECORDS)]
    df = spark.createDataFrame(rows, STRUCTS_DDL)
    out = tmp_path / "structs"
    spark_tfrecord.write(df.coalesce(1), str(out), record_type="SequenceExample")
    (path,) = tfrecord_files(out)
    _check(str(path), STRUCTS_DDL, [], False, monkeypatch)


# --- files built byte by byte ------------------------------------------------------------------

BUILT_DDL = (
    "id bigint, name string, tags array<string>, st struct<a: float, fl: array<array<double>>>, "
    "f array<array<float>>, g array<array<bigint>>, s array<array<string>>, "
    "b array<array<binary>>, d array<array<decimal(20,4)>>, missing array<array<int>>"
)


def _list(key: bytes, steps: list[bytes] | None) -> bytes:
    """A feature list entry: its steps (Features), or no value at all (None)."""
    if steps is None:
        return ld(1, ld(1, key))
    return ld(1, ld(1, key) + ld(2, b"".join(ld(1, s) for s in steps)))


def _ints(values: list[int]) -> bytes:
    return feature("int64", int64_list_packed(values))


def _floats(values: list[float]) -> bytes:
    return feature("float", float_list_packed(values))


def _texts(values: list[bytes]) -> bytes:
    return feature("bytes", bytes_list(values))


def _built(i: int, rng: random.Random, odd: str) -> bytes:
    """Record i, built byte by byte; ``odd`` spoils it (see the test)."""
    context = [entry(b"id", _ints([i]))] if i % 9 else []
    if i % 3 and odd != "list_in_context":
        context.append(entry(b"name", _texts([rng.choice([b"n", "é".encode(), b""])])))
    if i % 4:
        context.append(entry(b"tags", _texts([b"t%d" % k for k in range(i % 3)])))
    if i % 5:
        context.append(entry(b"st/a", _floats([rng.choice([0.5, math.nan, -math.inf])])))
    lists = []
    if i % 6:
        lists.append(_list(b"st/fl", [_floats([math.inf] * (k % 2)) for k in range(i % 4)]))
    floats = [rng.choice([0.0, -0.0, math.nan, math.inf, -1e-45, 2.5]) for _ in range(8)]
    if odd != "misplaced":
        lists.append(_list(b"f", [_floats(floats[: k % 5]) for k in range(i % 5)]))
    extremes = [2**63 - 1, -(2**63), 0, -1, 1 << 35]
    g_steps = [_ints([rng.choice(extremes) for _ in range(k % 4)]) for k in range(i % 6)]
    if odd == "kind":
        g_steps.append(_floats([1.5]))
    lists.append(_list(b"g", g_steps + ([b""] if i % 10 == 1 else [])))  # a step of no kind
    texts = [b"", b"abc", "日本".encode(), b"\x00"] if odd != "utf8" else [b"ok", b"\xff\xfe"]
    lists.append(
        _list(b"s", [] if i % 8 == 2 else [_texts(texts[: k % 4]) for k in range(i % 3 + 2)])
    )
    lists.append(_list(b"b", [_texts([b"\xff\xfe", b"\xc3", b""][:k]) for k in range(i % 4)]))
    lists.append(_list(b"d", [_ints([-(10**15), 123456789][:k]) for k in range(i % 3)]))
    if odd == "novalue":  # a map entry of no value: an empty list, read record by record
        lists.append(_list(b"missing", None))
    elif odd == "misplaced":
        context.append(entry(b"f", _floats([1.0])))
    elif odd == "list_in_context":
        lists.append(_list(b"name", [_texts([b"x"])]))
    elif odd.startswith("both_list"):  # a feature list's name a context feature too
        context.append(entry(b"f", _floats([2.0])))
    elif odd.startswith("both_context"):  # a context feature's name a feature list too
        lists.append(_list(b"name", [_texts([b"x"])]))
    body = ld(1, b"".join(context)) if context or i % 2 else b""
    lists_field = ld(2, b"".join(lists))
    return lists_field + body if odd.endswith("order") else body + lists_field


@pytest.mark.parametrize(
    ("odd", "fails"),
    [
        ("", False),
        ("utf8", False),
        ("order", False),
        ("novalue", False),
        ("kind", True),
        ("misplaced", True),
        ("list_in_context", True),
        ("both_list", True),
        ("both_list_order", True),
        ("both_context", True),
        ("both_context_order", True),
    ],
)
def test_built_sequence_examples_take_the_batch_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, odd: str, fails: bool
) -> None:
    """Records built byte by byte are read a batch at once as the record path and the jar
    read them; the batch of a record that needs the record path (text that is not UTF-8, its
    fields in the other order, a map entry of no value) is read record by record, and one the jar
    refuses (a step of the wrong kind, a feature list read as a context feature or the other
    way round, a name both a context feature and a feature list, either first in the record)
    fails as the record path and the jar fail."""
    rng = random.Random(58)
    records = [_built(i, rng, odd if i == ODD_AT else "") for i in range(RECORDS)]
    path = write_records(tmp_path / "part-0.tfrecord", records)
    _check(str(path), BUILT_DDL, [ODD_AT] if odd else [], fails, monkeypatch)


STRUCTS_BUILT_DDL = "id bigint, st array<struct<a: float, n: bigint, w: array<bigint>>>"


def _built_structs(i: int, odd: str) -> bytes:
    """Record i: an array of structs as feature lists (``st/a``, ``st/n``, ``st/w``: a step an
    element; absent, or 0 to 3 steps); ``odd`` spoils it (see the test)."""
    context = ld(1, entry(b"id", _ints([i])))
    if i % 7 == 2:
        return context
    n = i % 4
    a = [_floats([1.5 * k]) for k in range(n)]
    ns = [_ints([-(2**63) + k]) for k in range(n + (odd == "unequal"))]
    if odd in ("two_values", "no_value"):  # a step of a field that is not a list
        a.append(_floats([1.0, 2.0] if odd == "two_values" else []))
        ns.append(_ints([0]))
    w = [_ints([k] * k) for k in range(len(ns))]
    lists = _list(b"st/a", a) + _list(b"st/n", ns) + (b"" if odd == "absent" else _list(b"st/w", w))
    return context + ld(2, lists)


@pytest.mark.parametrize(
    ("odd", "fails"),
    [("", False), ("absent", False), ("no_value", False), ("unequal", True), ("two_values", True)],
)
def test_built_sequence_arrays_of_structs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, odd: str, fails: bool
) -> None:
    """An array of structs in SequenceExamples built byte by byte, read a batch at once as the
    record path and the jar read it (a field absent: null in each element); a step of no value
    of a field that is not a list is a null there (its batch read record by record); a record
    whose fields' feature lists differ in length, or whose step holds two values of such a
    field, fails as the jar fails it."""
    records = [_built_structs(i, odd if i == ODD_AT else "") for i in range(RECORDS)]
    path = write_records(tmp_path / "part-0.tfrecord", records)
    odd_batches = [ODD_AT] if odd not in ("", "absent") else []
    _check(str(path), STRUCTS_BUILT_DDL, odd_batches, fails, monkeypatch)
