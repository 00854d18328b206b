"""The jar-less read's batch path (``_source/batch_arrays.py``) on the column types it came to read
last (issue 57): decimals (scalars, lists, lists of lists, in a struct and in an array of
structs, from floats and from int64s, at negative scales too).

On random records with their edge cases (missing features, empty lists, values at the ends of
the precision, halves that round up, -0.0, the largest int64s), the file is read three ways:
through ``read_arrow`` as it runs (its clean batches must take the batch path: a counter on the
record path fails the test if it decodes one of them), through the record path alone (the batch
path switched off), and by the jar in this process (JPype). The two Arrow tables are equal, and
their rows are the jar's, value for value. A batch that holds a record the jar refuses (a value
out of range, NaN, infinity) or reads with a decision of its own (a column given int64s and
floats) is decoded record by record: the jar's rows, or in FAILFAST the jar's condition and
offset.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from spark_tfrecord import errors
from spark_tfrecord._format.columns.conversions import java_float
from spark_tfrecord._format.entries.wire import FLOAT, INT64
from spark_tfrecord._source.decimal_arrays import decimal_array
from support import batch_path
from support.jar_decoder import (
    Failure,
    Row,
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
    write_records,
)

#: Records per batch in these tests, and records per file: four batches, the odd record in the
#: second.
BATCH = 500
RECORDS = 2000
ODD_AT = 701


def _floats(values: list[float]) -> bytes:
    return feature("float", float_list_packed(values))


def _ints(values: list[int]) -> bytes:
    return feature("int64", int64_list_packed(values))


def _ragged(
    name: bytes, lists: list[list[Any]], values: Callable[[list[Any]], bytes]
) -> list[bytes]:
    return [
        entry(name + b"/ragged_row_lengths_0", _ints([len(x) for x in lists])),
        entry(name + b"/ragged_flat_values", values([y for x in lists for y in x])),
    ]


def _table(path: str, schema: Mapping[str, Any], mode: str) -> pa.Table:
    """The file read as ``read_arrow`` reads it, with the schema ``schema`` (JSON)."""
    return batch_path.table(path, schema, {"mode": mode})


def _read(
    path: str, schema: Mapping[str, Any], monkeypatch: pytest.MonkeyPatch, mode: str = "FAILFAST"
) -> tuple[pa.Table, list[int]]:
    """The file read through ``read_arrow``, and the batches (by their first record's offset)
    the record path decoded."""
    return batch_path.read(path, schema, {"mode": mode}, monkeypatch, BATCH)


def _record_path(
    path: str, schema: Mapping[str, Any], monkeypatch: pytest.MonkeyPatch, mode: str
) -> pa.Table:
    """The file read with the batch path switched off."""
    return batch_path.read(path, schema, {"mode": mode}, monkeypatch, BATCH, False)[0]


def _value(t: Any, value: Any) -> Any:
    """A value of an Arrow table as :func:`value_tree` takes it: a vector's struct as
    pyspark's vector."""
    if isinstance(t, dict) and t.get("type") == "udt" and value is not None:
        from pyspark.ml.linalg import DenseVector, SparseVector

        if value["type"] == 0:
            return SparseVector(value["size"], value["indices"], value["values"])
        return DenseVector(value["values"])
    return value


def _check(
    path: str,
    given: str | Mapping[str, Any],
    odd: bool,
    fails: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The file read through the batch path, the record path and the jar: the same rows (the
    jar's condition and offset where it fails a record, and its other rows when dropped); the
    record path decoded only the batch of the odd record (none when not ``odd``)."""
    schema = schema_of_ddl(given) if isinstance(given, str) else dict(given)
    jar = jar_results(path, schema)
    offsets = [offset for offset, _ in jar]
    odd_batch = [offsets[ODD_AT // BATCH * BATCH]] if odd else []
    mode = "FAILFAST"
    if fails:
        (failed,) = [r for _, r in jar if isinstance(r, Failure)]
        with pytest.raises(errors.CorruptFileError) as raised:
            _read(path, schema, monkeypatch)
        assert errors.condition(raised.value) == failed.condition
        assert errors.parameters(raised.value).get("offset") == failed.parameters.get("offset")
        mode = "DROPMALFORMED"
    table, decoded = _read(path, schema, monkeypatch, mode)
    assert decoded == odd_batch
    assert table.equals(_record_path(path, schema, monkeypatch, mode))
    rows = table.to_pylist()
    fields = schema["fields"]
    trees = [
        {f["name"]: value_tree(f["type"], _value(f["type"], r[f["name"]])) for f in fields}
        for r in rows
    ]
    assert trees == [r.values for _, r in jar if isinstance(r, Row)]
    assert len(trees) == RECORDS - fails


# --- decimals ---------------------------------------------------------------------------------

DECIMAL_DDL = (
    "id bigint, f decimal(10,2), big decimal(38,18), i decimal(19,0), fs array<decimal(5,3)>, "
    "ll array<array<decimal(20,4)>>, st struct<d: decimal(12,6), n: bigint>, "
    "objs array<struct<d: decimal(9,1), name: string>>, tiny decimal(38,38)"
)
#: Floats a decimal(10,2) rounds on the edge: ties (rounded half up, as the shortest decimal
#: that reads back as the float, not as its binary value), -0.0, the largest values it holds.
EDGE_FLOATS = [0.125, 1.005, -2.675, 0.5, -0.0, 0.0, 99999992.0, -99999992.0, 1e-7, 0.015, 2.5e-3]


def _decimal_float(rng: random.Random) -> float:
    """A float for a decimal(10,2): one of the edges, or random at a random magnitude."""
    if rng.random() < 0.2:
        return rng.choice(EDGE_FLOATS)
    return _uniform(rng, -1, 1) * 10 ** rng.randint(-8, 7)


def _uniform(rng: random.Random, low: float, high: float) -> float:
    """A random float32 from ``low`` to ``high``."""
    return float(np.float32(rng.uniform(low, high)))


def _decimal_record(i: int, rng: random.Random, odd: str = "") -> bytes:
    """Record i: each column's features, some missing, empty or at their edges by turns; ``odd``
    spoils one (``range``: a value out of ``f``'s range, ``nan``, ``kinds``: ``f`` given
    int64s in a batch of floats, ``subnormal``: ``tiny`` a float below the normal ones)."""
    ents = [entry(b"id", _ints([i]))]
    if i % 5:
        f = _decimal_float(rng)
        odd_value = {"range": [1e8], "nan": [float("nan")], "inf": [float("-inf")]}.get(odd)
        ents.append(entry(b"f", _ints([i]) if odd == "kinds" else _floats(odd_value or [f])))
    if i % 7:
        big = rng.choice([2**63 - 1, -(2**63), 0, -1, rng.randint(-(2**63), 2**63 - 1)])
        ents.append(entry(b"big", _ints([big])))
    if i % 3:
        ents.append(entry(b"i", _floats([rng.choice([1e18, -9.99e18, 0.5, -0.5, 1.5, 2.5])])))
    ents.append(entry(b"fs", _floats([_uniform(rng, -99.9995, 99.9995) for _ in range(i % 4)])))
    if i % 4:
        lists = [[_uniform(rng, -1e15, 1e15) for _ in range(k)] for k in range(i % 3)]
        ents += _ragged(b"ll", lists, _floats)
    if i % 6:
        ents.append(entry(b"st/d", _floats([_uniform(rng, -999999, 999999)])))
    ents.append(entry(b"st/n", _ints([i])))
    if i % 9:
        n = i % 3
        tenths = [rng.randint(-(10**8) + 1, 10**8 - 1) for _ in range(n)]
        ents.append(entry(b"objs/d", _ints(tenths)))
        ents.append(
            entry(b"objs/name", feature("bytes", bytes_list([b"o%d" % e for e in range(n)])))
        )
    tiny = rng.choice([0.0, 1.2e-38, 1.5e-38, -2.5e-38, 0.99999994, -0.5, 1e-20, 3.5e-38])
    if odd == "subnormal":
        tiny = 1e-38  # a float below the normal ones, at scale 38: the record path's
    ents.append(entry(b"tiny", _floats([tiny])))
    return example(*ents)


def _decimal_file(folder: Path, odd: str = "") -> str:
    rng = random.Random(57)
    records = [_decimal_record(i, rng, odd if i == ODD_AT else "") for i in range(RECORDS)]
    return str(write_records(folder / "part-0.tfrecord", records))


@pytest.mark.parametrize("odd", ["", "range", "nan", "inf", "kinds", "subnormal"])
def test_decimals_take_the_batch_path_as_the_jar(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, odd: str
) -> None:
    """Decimal columns of every shape are read a batch at once, as the record path and the jar
    read them; a batch with a value the jar refuses fails as the jar fails, and one with a
    column of two kinds is read record by record."""
    path = _decimal_file(tmp_path, odd)
    _check(path, DECIMAL_DDL, bool(odd), odd in ("range", "nan", "inf"), monkeypatch)


@pytest.mark.parametrize(
    ("precision", "scale"),
    [(38, 18), (10, 2), (38, 0), (5, 3), (20, 10), (10, -2), (20, -5), (38, -10)],
)
def test_decimal_arrays_round_as_the_record_path(precision: int, scale: int) -> None:
    """On random float32s of every exponent (their bits) and int64s, ``decimal_array`` gives
    each value the record path's decimal (Java's shortest text, rounded half up; at a negative
    scale, an int64 rounded half up too) and gives None when any of them is out of range."""
    import decimal

    rng = np.random.default_rng(precision * 100 + scale)
    floats = rng.integers(0, 2**32, 20000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    floats = floats[np.isfinite(floats)]
    context = decimal.Context(prec=1000, rounding=decimal.ROUND_HALF_UP)
    quantum = decimal.Decimal(1).scaleb(-scale)
    limit = decimal.Decimal(10) ** (precision - scale)
    want = [decimal.Decimal(java_float(v)).quantize(quantum, context=context) for v in floats]
    held = np.array([abs(w) < limit for w in want])
    target = pa.decimal128(precision, scale)
    made = decimal_array(FLOAT, floats[held], target)
    assert made is not None
    assert made.to_pylist() == [w for w, h in zip(want, held) if h]
    assert (decimal_array(FLOAT, floats, target) is None) == (not held.all())
    ints = rng.integers(-(2**63), 2**63 - 1, 5000, dtype=np.int64)
    ints = np.concatenate([ints, [0, -1, 2**63 - 1, -(2**63)]]).astype(np.int64)
    rounded = [decimal.Decimal(int(v)).quantize(quantum, context=context) for v in ints]
    fits = np.array([abs(r) < limit for r in rounded])
    made = decimal_array(INT64, ints[fits], target)
    assert made is not None
    assert made.to_pylist() == [r for r, f in zip(rounded, fits) if f]
    assert (decimal_array(INT64, ints, target) is None) == (not fits.all())


def test_negative_scales_take_the_batch_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Decimals of a negative scale (Spark's ``spark.sql.legacy.allowNegativeScaleOfDecimal``)
    are read a batch at once too: int64s and floats rounded half up to tens, hundreds and
    thousands, as the record path reads them, value for value."""
    import decimal

    rng = random.Random(58)
    ints = [rng.choice([0, 50, -50, 149, -150, 2**63 - 1, -(2**63)]) for _ in range(50)]
    ints += [rng.randrange(-(10**9), 10**9) for _ in range(RECORDS - 50)]
    floats = [_decimal_float(rng) * 10 ** rng.randrange(0, 5) for _ in range(RECORDS)]
    records = [
        example(
            entry(b"id", _ints([i])),
            entry(b"i", _ints([ints[i]])),
            entry(b"f", _floats([floats[i]])),
            entry(b"fs", _floats(floats[i : i + i % 4])),
        )
        for i in range(RECORDS)
    ]
    path = str(write_records(tmp_path / "part-0.tfrecord", records))
    leaf = {"nullable": True, "metadata": {}}
    schema = {
        "type": "struct",
        "fields": [
            {"name": "id", "type": "long", **leaf},
            {"name": "i", "type": "decimal(38,-2)", **leaf},
            {"name": "f", "type": "decimal(20,-3)", **leaf},
            {"name": "fs", "type": {"type": "array", "elementType": "decimal(12,-1)",
                                    "containsNull": True}, **leaf},
        ],
    }  # fmt: skip
    table, decoded = _read(path, schema, monkeypatch)
    assert decoded == []
    assert table.equals(_record_path(path, schema, monkeypatch, "FAILFAST"))
    context = decimal.Context(prec=1000, rounding=decimal.ROUND_HALF_UP)

    def at(value: decimal.Decimal, scale: int) -> decimal.Decimal:
        return value.quantize(decimal.Decimal(1).scaleb(-scale), context=context)

    def shortest(f: float) -> decimal.Decimal:
        return decimal.Decimal(java_float(f))

    assert table.column("i").to_pylist() == [at(decimal.Decimal(v), -2) for v in ints]
    assert table.column("f").to_pylist() == [at(shortest(f), -3) for f in floats]
    want = [[at(shortest(f), -1) for f in floats[i : i + i % 4]] for i in range(RECORDS)]
    assert table.column("fs").to_pylist() == want


# --- ML vectors --------------------------------------------------------------------------------

#: The features of each odd vector record (its batch is the record path's, but for empty
#: parts), and whether the jar fails it.
ODD_VECTORS = {
    "": ({}, False),
    "unsorted": ({b"v/indices": [3, 1], b"v/values": [1.0, 2.0], b"v/size": [5]}, True),
    "index at the size": ({b"v/indices": [0, 5], b"v/values": [1.0, 2.0], b"v/size": [5]}, True),
    "negative index": ({b"v/indices": [-1], b"v/values": [1.0], b"v/size": [5]}, True),
    "fewer values": ({b"v/indices": [0, 1], b"v/values": [1.0], b"v/size": [5]}, True),
    "no size": ({b"v/indices": [0], b"v/values": [1.0]}, True),
    "two sizes": ({b"v/indices": [0], b"v/values": [1.0], b"v/size": [5, 6]}, True),
    "int64 values": ({b"v/indices": [0, 2], b"v/values": [7, -(2**53) - 1], b"v/size": [3]}, True),
    "beside a dense one": (
        {b"v": [1.0], b"v/indices": [0], b"v/values": [1.0], b"v/size": [3]},
        True,
    ),
    "a lone size": ({b"v/size": [3]}, True),
    "size too large": ({b"v/indices": [], b"v/values": [], b"v/size": [2**31]}, True),
    "negative size": ({b"v/indices": [], b"v/values": [], b"v/size": [-1]}, True),
    "float indices": ({b"v/indices": [0.0], b"v/values": [1.0], b"v/size": [3]}, True),
    "empty parts": ({b"v/indices": [], b"v/values": [], b"v/size": [0]}, False),
}


def _vector_record(i: int, rng: random.Random, odd: dict[bytes, list[Any]] | None) -> bytes:
    """Record i: ``v`` dense (some empty), sparse (some empty, of sizes up to the largest int),
    or missing, by turns; ``odd``: its features instead."""
    ents = [entry(b"id", _ints([i]))]
    features: dict[bytes, list[Any]] = {}
    turn = i % 6
    if turn in (1, 5):
        features[b"v"] = [rng.uniform(-1e6, 1e6) for _ in range(rng.randint(0, 5))]
    if turn in (2, 3, 4):
        n = rng.choice([0, 1, 7, 2**31 - 1]) if turn != 4 else rng.randint(1, 9)
        k = rng.randint(0, min(n, 6))
        features[b"v/indices"] = sorted(rng.sample(range(min(n, 10**6)), k))
        features[b"v/values"] = [rng.choice([0.0, -0.0, 1.5, rng.uniform(-9, 9)]) for _ in range(k)]
        features[b"v/size"] = [n]
    if odd is not None:
        features = dict(odd)
    for key, values in features.items():
        is_int = all(isinstance(x, int) for x in values) and (
            values or key not in (b"v", b"v/values")
        )
        ents.append(entry(key, _ints(values) if is_int else _floats(values)))
    return example(*ents)


@pytest.mark.parametrize("odd", list(ODD_VECTORS))
def test_sparse_vectors_take_the_batch_path_as_the_jar(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, odd: str
) -> None:
    """ML vector columns, sparse and dense in the same batch (empty ones, sparse ones beside a
    dense feature, sizes up to the largest int), are read a batch at once, as the record path
    and the jar read them; a batch with a sparse vector the jar refuses fails as the jar fails,
    one with values of two kinds is read record by record."""
    from pyspark.ml.linalg import VectorUDT

    features, fails = ODD_VECTORS[odd]
    rng = random.Random(58)
    records = [_vector_record(i, rng, features if i == ODD_AT else None) for i in range(RECORDS)]
    path = str(write_records(tmp_path / "part-0.tfrecord", records))
    schema = {
        "type": "struct",
        "fields": [
            {"name": "id", "type": "long", "nullable": True, "metadata": {}},
            {"name": "v", "type": VectorUDT().jsonValue(), "nullable": True, "metadata": {}},
        ],
    }
    _check(path, schema, odd not in ("", "empty parts"), fails, monkeypatch)


# --- lists of fixed length in an array of structs ----------------------------------------------


def _field(name: str, t: Any, length: int = 0) -> dict[str, Any]:
    metadata = {"tfrecord.listLength": length} if length else {}
    return {"name": name, "type": t, "nullable": True, "metadata": metadata}


def _array(element: str) -> dict[str, Any]:
    return {"type": "array", "elementType": element, "containsNull": True}


#: An array of structs with lists of fixed length (4 floats, 2 bigints, 1 boolean) beside a
#: string.
UNIFORM_SCHEMA = {
    "type": "struct",
    "fields": [
        _field("id", "long"),
        _field(
            "objs",
            {
                "type": "array",
                "elementType": {
                    "type": "struct",
                    "fields": [
                        _field("bbox", _array("float"), 4),
                        _field("codes", _array("long"), 2),
                        _field("flags", _array("boolean"), 1),
                        _field("name", "string"),
                    ],
                },
                "containsNull": True,
            },
        ),
    ],
}
#: The odd record's features, whether the jar fails it, and whether its batch is the record
#: path's (a float field stored as int64 in one record is gathered kind by kind, in the batch).
ODD_UNIFORM = {
    "": ({}, False, False),
    "a value too many": ({b"objs/bbox": [0.5] * 9}, True, True),
    "an element too many": ({b"objs/codes": [1] * 6}, True, True),
    "a bbox of ints": ({b"objs/bbox": [1] * 8}, False, False),
    "a boolean 2": ({b"objs/flags": [1, 2]}, True, True),
}


def _uniform_record(i: int, rng: random.Random, odd: dict[bytes, list[Any]] | None) -> bytes:
    """Record i: ``objs`` of 0 to 3 elements (missing in every fifth record), ``codes`` missing
    in every seventh (null in each element); ``odd``: features replaced, two elements."""
    ents = [entry(b"id", _ints([i]))]
    if i % 5 == 0 and odd is None:
        return example(*ents)
    n = 2 if odd is not None else i % 4
    features: dict[bytes, list[Any]] = {
        b"objs/bbox": [rng.uniform(-1, 1) for _ in range(4 * n)],
        b"objs/flags": [rng.randint(0, 1) for _ in range(n)],
    }
    if i % 7:
        features[b"objs/codes"] = [rng.randint(-(2**63), 2**63 - 1) for _ in range(2 * n)]
    features.update(odd or {})
    for key, values in features.items():
        ints = bool(values) and all(isinstance(x, int) for x in values)
        ents.append(entry(key, _ints(values) if ints else _floats(values)))
    ents.append(entry(b"objs/name", feature("bytes", bytes_list([b"o%d" % e for e in range(n)]))))
    return example(*ents)


@pytest.mark.parametrize("odd", list(ODD_UNIFORM))
def test_fixed_length_lists_in_arrays_of_structs_take_the_batch_path_as_the_jar(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, odd: str
) -> None:
    """Lists of fixed length in an array of structs (``tfrecord.listLength``: the elements'
    lists concatenated in one feature) are read a batch at once, as the record path and the jar
    read them (a field a record lacks null in each element); a batch where a record's lists do
    not make whole elements, or as many as the other fields', fails as the jar fails, and a
    float field stored as int64 in one record is read as the jar reads it, in the batch."""
    features, fails, record_path = ODD_UNIFORM[odd]
    rng = random.Random(59)
    records = [_uniform_record(i, rng, features if i == ODD_AT else None) for i in range(RECORDS)]
    path = str(write_records(tmp_path / "part-0.tfrecord", records))
    _check(path, UNIFORM_SCHEMA, record_path, fails, monkeypatch)


def test_a_fixed_length_list_of_decimals_is_the_jars_refusal(tmp_path: Path) -> None:
    """A list of fixed length of a type that is not of fixed size (a decimal, a string) in an
    array of structs is refused before any record is read, with the jar's condition and
    message."""
    rng = random.Random(60)
    records = [_uniform_record(i, rng, None) for i in range(10)]
    path = str(write_records(tmp_path / "part-0.tfrecord", records))
    for element in ("decimal(10,2)", "string"):
        schema = json.loads(json.dumps(UNIFORM_SCHEMA))
        schema["fields"][1]["type"]["elementType"]["fields"][2] = _field(
            "flags", _array(element), 1
        )
        ((offset, failed),) = jar_results(path, schema)
        assert offset == -1 and isinstance(failed, Failure)
        with pytest.raises(errors.ArgumentError) as raised:
            _table(path, schema, "FAILFAST")
        assert errors.condition(raised.value) == failed.condition
        assert errors.parameters(raised.value) == failed.parameters


@pytest.mark.parametrize("magnitude", [1.0, 100.0, 1e5, 1e7])
@pytest.mark.parametrize("scale", [0, 2, 6, 10, 22])
def test_decimal_arrays_of_usual_floats_round_as_the_record_path(
    magnitude: float, scale: int
) -> None:
    """Floats of usual magnitudes (most far from a half of the scale's unit, rounded in
    float64; eighths and ties, which are not, from their shortest text) are each the record
    path's decimal."""
    import decimal

    rng = np.random.default_rng(int(magnitude) + scale)
    floats = rng.uniform(-magnitude, magnitude, 20000)
    eighths = np.round(rng.uniform(-magnitude, magnitude, 5000) * 8) / 8
    ties = [0.125, 1.005, -2.675, 0.015, -0.0, 0.5, 2.5, -0.5]
    values = np.concatenate([floats, eighths, ties]).astype(np.float32)
    context = decimal.Context(prec=1000, rounding=decimal.ROUND_HALF_UP)
    quantum = decimal.Decimal(1).scaleb(-scale)
    want = [decimal.Decimal(java_float(v)).quantize(quantum, context=context) for v in values]
    made = decimal_array(FLOAT, values, pa.decimal128(38, scale))
    assert made is not None
    assert made.to_pylist() == want


# --- numbers of two kinds in one batch -----------------------------------------------------------

MIXED_DDL = "id bigint, f float, d double, fs array<float>, ds array<double>, n decimal(20,2)"


def _mixed_record(i: int, rng: random.Random, odd: str) -> bytes:
    """Record i: each number column given floats or int64s at random (empty or missing by
    turns); ``odd``: the decimal ``n`` given an int64 in a batch of floats."""
    ents = [entry(b"id", _ints([i]))]
    for key, count in ((b"f", 1), (b"d", 1), (b"fs", i % 4), (b"ds", i % 3)):
        if (i + len(key)) % 9 == 0:
            continue
        if rng.random() < 0.5:
            edges = [2**24 + 1, -(2**53) - 1, 2**63 - 1, -(2**63), 0]
            ints = [rng.choice([*edges, rng.randint(-(10**6), 10**6)]) for _ in range(count)]
            ents.append(entry(key, _ints(ints)))
        else:
            ents.append(entry(key, _floats([rng.uniform(-1e9, 1e9) for _ in range(count)])))
    n = _ints([i]) if odd else _floats([_uniform(rng, -1e6, 1e6)])
    ents.append(entry(b"n", n))
    return example(*ents)


@pytest.mark.parametrize("odd", ["", "a decimal of two kinds"])
def test_numbers_of_two_kinds_take_the_batch_path_as_the_jar(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, odd: str
) -> None:
    """Float and double columns (scalars and lists) whose records hold floats or int64s at
    random are read a batch at once, each kind converted as the record path and the jar
    convert it; a decimal given both kinds in a batch is read record by record."""
    rng = random.Random(61)
    records = [_mixed_record(i, rng, odd if i == ODD_AT else "") for i in range(RECORDS)]
    path = str(write_records(tmp_path / "part-0.tfrecord", records))
    _check(path, MIXED_DDL, bool(odd), False, monkeypatch)
