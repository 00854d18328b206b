"""The Python codec (what torch_dataset and grain_source decode with) reads as the jar reads:
the same file and schema give the same values, bit for bit, and the same errors (condition,
file, offset, column; a mismatch's reason word for word), record by record (issue 42, point
4).

The jar's side is the data source's own scan, called in this process through JPype
(support/jar_decoder.py, ``tools.RecordResults``), and checked against a Spark query; the
Python side is the loaders' record path (``src[i]``) and batch path
(``src.collate(src.__getitems__(...))``). The inputs:

- files TensorFlow writes (support/tf_corpus.py), read with the schema the jar infers and with
  explicit schemas of every Spark type the Python codec reads;
- a fuzz run from a fixed seed: records mutated from valid ones, and hostile payloads
  (test_fuzz's), in sound framing;
- a folder of SequenceExamples TensorFlow writes (context features, feature lists, an array of
  structs' feature lists; empty and absent ones; names in the wrong place), whose manifest
  gives the record type.

Partition columns (``name=value`` folders, typed by Spark's partition discovery) are compared
with spark.read in test_loader_parity.py, which holds that module's Spark session.

The conversions and range checks (an int64 feature into a float or string column, a boolean
2, a tinyint 300) are read both ways here too (test_conversions_read_as_the_jar); decimals,
doubles and floats as text are compared with Spark in test_loader_parity.py. A float's text
(Java's ``Float.toString`` as JDK 19 specifies it, which the jar computes itself: JDK 17's
sometimes has more digits) is the codec's on random bits (test_a_floats_text_is_the_codecs),
and floats read into string and decimal columns by Spark with the jar give read_arrow's rows
(test_floats_read_as_text_and_decimals_through_spark).

The cases where the two once disagreed are read both ways too (test_cases_read_as_the_jar):
bytes not UTF-8 in a string column (Spark keeps them; the loaders give Java's decoding, which
pyspark shows), ragged features missing a part, arrays of structs whose leaves differ in
length, the wire types the jar checks, a record with two errors (the first in the record's
order), a key given twice whose first Feature does not fit, malformed records in a batch, a
struct leaf's column name (``st.a``). A NOT NULL column without a value reads null both ways;
a batch, which stacks such a column, raises the record's error
(test_a_batch_cannot_stack_a_missing_value).

Not here yet: a struct with none of its features is null in the jar and a struct of nulls in
the loaders, whose records key a struct's leaves by path; in a SequenceExample's array of
structs, a step without a value for a field that is not a list (Spark reads a null field, the
loaders refuse it).
"""

from __future__ import annotations

import decimal
import math
import random
import struct
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import spark_tfrecord
from spark_tfrecord._format.columns.conversions import java_float
from support import tf_corpus
from support.fuzz_corpus import base_records, hostile_payloads, mutate
from support.jar_decoder import (
    Failure,
    Result,
    Row,
    jar_float_texts,
    jar_inferred_schema,
    jar_results,
    python_batch,
    python_results,
    python_source,
    row_as_loaders_hold,
    schema_of_ddl,
    value_tree,
)
from support.manifests import write_manifest
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
    varint,
    write_records,
)

#: Each integer-kind feature of the corpus and the types that read it, then float and bytes.
TYPED = {
    "small": ("tinyint", "smallint", "int", "bigint"),
    "bit": ("boolean", "bigint"),
    "days": ("date", "int"),
    "micros": ("timestamp", "timestamp_ntz", "bigint"),
    "big": ("bigint",),
    "fl": ("float", "double"),
    "text": ("string", "binary"),
    "raw": ("binary",),
}
#: Explicit schemas of the every_kind file: each feature as each type, one value and a list.
EXPLICIT = {
    f"{name} {t}": f"{name}_1 {t}, {name} array<{t}>" for name, ts in TYPED.items() for t in ts
}
EXPLICIT |= {
    "ragged": "r array<array<bigint>>, rf array<array<float>>, rs array<array<string>>, "
    "r3 array<array<array<float>>>",
    "ragged double": "rf array<array<double>>, r3 array<array<array<double>>>",
    "struct": "st struct<a: bigint, name: string, inner: struct<x: float, tags: array<string>>>",
    "array of structs": "objs array<struct<n: bigint, name: string, toks: array<string>, "
    "inner: struct<a: int>>>",
    "struct as other types": "st struct<a: int, name: binary, inner: struct<x: double>>",
    "not null": "small_1 bigint NOT NULL, fl_1 float NOT NULL",
    "all": ", ".join(f"{n}_1 {ts[0]}, {n} array<{ts[0]}>" for n, ts in TYPED.items()),
}
CORPUS: dict[str, Callable[[Any], list[bytes]]] = {
    "interop": tf_corpus.interop,
    "every_kind": tf_corpus.every_kind,
    "images": tf_corpus.images,
}
#: Records in each file: each gives one result.
RECORDS = {"interop": 3, "every_kind": 24, "images": 2}
INTEROP_SCHEMA = (
    "id bigint, extremes array<bigint>, floats array<float>, text string, raw array<binary>, "
    "empty_ints array<bigint>, unset array<bigint>"
)
#: (file, schema id, DDL or None for the inferred schema)
READS = [(name, "inferred", None) for name in CORPUS]
READS += [("interop", "explicit", INTEROP_SCHEMA)]
READS += [("every_kind", key, ddl) for key, ddl in EXPLICIT.items()]

MALFORMED = "TFRECORD_MALFORMED_RECORD"
MISMATCH = "TFRECORD_DATA_MISMATCH"
SEED = 20261128
FUZZ_RECORDS = 600
FUZZ_SCHEMA = "a bigint, b array<float>, c binary, d array<binary>, e float, f bigint"


@pytest.fixture(scope="module")
def corpus(tf: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("tf-corpus")
    return {
        name: str(tf_corpus.write(tf, root / f"{name}.tfrecord", build(tf)))
        for name, build in CORPUS.items()
    }


def _local(path: str) -> str:
    return path.removeprefix("file://").removeprefix("file:")


def disagreements(
    schema: Mapping[str, Any],
    jar: Sequence[tuple[int, Result]],
    python: Sequence[Result],
    *,
    batch: bool = False,
) -> list[str]:
    """Where the Python results differ from the jar's, record by record (empty: they agree)."""
    out = []
    if len(jar) != len(python):
        out.append(f"{len(jar)} results from the jar, {len(python)} from Python")
    for k, ((offset, want), got) in enumerate(zip(jar, python)):
        if isinstance(want, Row) and isinstance(got, Row):
            expected = row_as_loaders_hold(schema, want.values, batch=batch)
            for name, value in expected.items():
                if got.values.get(name) != value:
                    out.append(
                        f"record {k} (offset {offset}) column {name}: jar {value!r}, "
                        f"Python {got.values.get(name)!r}"
                    )
        elif isinstance(want, Failure) and isinstance(got, Failure):
            same = (
                want.condition == got.condition
                and want.offset == got.offset
                and want.parameters.get("column") == got.parameters.get("column")
                and (  # a mismatch's reason is the jar's, word for word
                    want.condition != MISMATCH
                    or want.parameters.get("reason") == got.parameters.get("reason")
                )
                and _local(want.parameters.get("path", ""))
                == _local(got.parameters.get("path", ""))
            )
            if not same:
                out.append(f"record {k} (offset {offset}): jar {want}, Python {got}")
        else:
            out.append(f"record {k} (offset {offset}): jar {want}, Python {got}")
    return out


def schema_of(path: str, ddl: str | None) -> dict[str, Any]:
    return jar_inferred_schema(path) if ddl is None else schema_of_ddl(ddl)


def _not_null(schema: Mapping[str, Any]) -> list[str]:
    return [f["name"] for f in schema["fields"] if not f.get("nullable", True)]


def batch_disagreements(
    source: Any, schema: Mapping[str, Any], jar: Sequence[tuple[int, Result]]
) -> list[str]:
    """The batch path against the jar: the records the jar reads as rows in one batch (those
    with a value in every NOT NULL column: a batch stacks them), and each record the jar
    fails with a mismatch in a batch of its own (the same error)."""
    required = _not_null(schema)
    rows = [
        k
        for k, (_, r) in enumerate(jar)
        if isinstance(r, Row) and all(r.values[n] is not None for n in required)
    ]
    batch = python_batch(source, schema, rows)
    found = disagreements(schema, [jar[k] for k in rows], batch, batch=True)
    for k, (_, r) in enumerate(jar):
        if isinstance(r, Failure) and r.condition == "TFRECORD_DATA_MISMATCH":
            alone = python_batch(source, schema, [k])
            found += [f"batch of record {k}: {d}" for d in disagreements(schema, [jar[k]], alone)]
    return found


READ_IDS = [f"{name}-{schema_id}" for name, schema_id, _ in READS]


@pytest.mark.parametrize(("name", "schema_id", "ddl"), READS, ids=READ_IDS)
def test_record_path_reads_as_the_jar(
    corpus: dict[str, str], name: str, schema_id: str, ddl: str | None
) -> None:
    path = corpus[name]
    schema = schema_of(path, ddl)
    jar = jar_results(path, schema)
    assert len(jar) == RECORDS[name]
    assert any(isinstance(r, Row) for _, r in jar)
    assert disagreements(schema, jar, python_results(path, schema)) == []


@pytest.mark.parametrize(("name", "schema_id", "ddl"), READS, ids=READ_IDS)
def test_batch_path_reads_as_the_jar(
    corpus: dict[str, str], name: str, schema_id: str, ddl: str | None
) -> None:
    path = corpus[name]
    schema = schema_of(path, ddl)
    jar = jar_results(path, schema)
    assert batch_disagreements(python_source(path, schema), schema, jar) == []


def fuzz_payloads() -> list[bytes]:
    """FUZZ_RECORDS payloads from SEED: mutated valid records (4 in 5) and hostile ones."""
    rng = random.Random(SEED)
    base = base_records(rng)
    payloads: list[bytes] = []
    while len(payloads) < FUZZ_RECORDS:
        if rng.random() < 0.8:
            payloads.append(mutate(rng, rng.choice(base)))
        else:
            payloads.append(rng.choice(hostile_payloads(rng)))
    return payloads


def test_fuzzed_records_read_as_the_jar(tmp_path: Path) -> None:
    path = str(write_records(tmp_path / "fuzz.tfrecord", fuzz_payloads()))
    schema = schema_of_ddl(FUZZ_SCHEMA)
    jar = jar_results(path, schema)
    assert len(jar) == FUZZ_RECORDS
    outcomes = {type(r).__name__ if isinstance(r, Row) else r.condition for _, r in jar}
    assert outcomes == {"Row", MALFORMED, "TFRECORD_DATA_MISMATCH"}
    assert disagreements(schema, jar, python_results(path, schema)) == []
    assert batch_disagreements(python_source(path, schema), schema, jar) == []


#: The structured fuzz: valid Examples whose features have random kinds, counts, encodings
#: (packed, unpacked, split in runs), duplicates and values, for columns of each kind.
STRUCTURED_RECORDS = 400
STRUCTURED_SCHEMA = (
    "i bigint, il array<bigint>, t tinyint, tl array<smallint>, f float, fl array<float>, "
    "s string, sl array<string>, b binary, bl array<binary>, r array<array<bigint>>"
)
#: The kinds each column's feature is given: its own and others (an int64 or a float feature
#: read as float or as text included).
KINDS = {"i": "ifb", "il": "ifb", "t": "i", "tl": "i", "f": "ifb", "fl": "ifb"}
KINDS |= {"s": "ibf", "sl": "ibf", "b": "bif", "bl": "bif"}


def _values(rng: random.Random, kind: str, column: str, count: int) -> list[Any]:
    if kind == "i":
        small = column in ("t", "tl")
        edges = [0, 1, -1, 127, -128] if small else [-(2**63), 2**63 - 1, 2**31, -(2**31) - 1]
        pick = (lambda: rng.randint(-128, 127)) if small else (lambda: rng.getrandbits(64) - 2**63)
        return [rng.choice(edges) if rng.random() < 0.3 else pick() for _ in range(count)]
    if kind == "f":
        bits = [rng.getrandbits(32) for _ in range(count)]
        return [struct.unpack("<f", struct.pack("<I", b))[0] for b in bits]
    if column.startswith("s"):
        return [
            "".join(
                chr(rng.choice([97, 233, 26085, 127881])) for _ in range(rng.randint(0, 3))
            ).encode()
            for _ in range(count)
        ]
    return [rng.randbytes(rng.randint(0, 4)) for _ in range(count)]


def _list(rng: random.Random, kind: str, values: list[Any]) -> bytes:
    """A Feature's list, packed, unpacked or split in two runs (which a parser joins)."""
    name = {"i": "int64", "f": "float", "b": "bytes"}[kind]
    if kind == "b":
        return feature(name, bytes_list(values))
    packed, unpacked = (
        (int64_list_packed, int64_list_unpacked)
        if kind == "i"
        else (float_list_packed, float_list_unpacked)
    )
    how = rng.random()
    if how < 0.6:
        return feature(name, packed(values))
    if how < 0.8:
        return feature(name, unpacked(values))
    half = len(values) // 2
    return feature(name, packed(values[:half]) + unpacked(values[half:]))


def structured_record(rng: random.Random) -> bytes:
    """A valid Example with up to two features that do not fit their columns (the error is
    the first in the record's order), and now and then a key given twice (the jar checks the
    first Feature, which the second replaces)."""
    units: list[list[bytes]] = []  # each column's entries, kept in order when shuffled
    bad = 2 if rng.random() < 0.1 else 1 if rng.random() < 0.3 else 0
    for column, kinds in KINDS.items():
        roll = rng.random()
        if roll < 0.15:
            continue  # absent
        if roll < 0.2:
            units.append([entry(column.encode(), b"")])  # a Feature of no kind
            continue
        scalar = column in ("i", "t", "f", "s", "b")
        kind, count = kinds[0], 1 if scalar else rng.randint(0, 4)
        if bad and rng.random() < 0.2:
            bad -= 1
            if len(kinds) > 1 and rng.random() < 0.5:
                kind = rng.choice(kinds[1:])
                count = max(count, 1)  # an empty list of another kind: a known disagreement
            else:
                count = 2 if scalar else count
        elif scalar and rng.random() < 0.05:
            count = 0  # a null
        unit = [entry(column.encode(), _list(rng, kind, _values(rng, kind, column, count)))]
        if rng.random() < 0.05:
            again = _values(rng, kind, column, 1)  # the same key again: the last entry wins
            unit.append(entry(column.encode(), _list(rng, kind, again)))
        units.append(unit)
    if rng.random() < 0.85:
        lengths = [rng.randint(0, 3) for _ in range(rng.randint(0, 3))]
        total = sum(lengths) + (1 if bad else 0)  # the bad feature: one value too many
        flat = _list(rng, "i", _values(rng, "i", "r", total))
        row_lengths = feature("int64", int64_list_packed(lengths))
        units.append([entry(b"r/ragged_flat_values", flat)])
        units.append([entry(b"r/ragged_row_lengths_0", row_lengths)])
    rng.shuffle(units)
    entries = [e for unit in units for e in unit]
    if rng.random() < 0.1:  # an unknown field, which parsers skip
        entries.append(field(15, 0, varint(rng.getrandbits(20))))
    return example(*entries)


def test_structured_fuzz_reads_as_the_jar(tmp_path: Path) -> None:
    rng = random.Random(SEED + 1)
    records = [structured_record(rng) for _ in range(STRUCTURED_RECORDS)]
    path = str(write_records(tmp_path / "structured.tfrecord", records))
    schema = schema_of_ddl(STRUCTURED_SCHEMA)
    jar = jar_results(path, schema)
    assert len(jar) == STRUCTURED_RECORDS
    rows = sum(isinstance(r, Row) for _, r in jar)
    assert STRUCTURED_RECORDS // 3 < rows < STRUCTURED_RECORDS  # some fail, many read
    assert disagreements(schema, jar, python_results(path, schema)) == []
    assert batch_disagreements(python_source(path, schema), schema, jar) == []


def _damaged(how: str) -> bytes:
    good = frame(example(entry(b"a", feature("int64", int64_list_packed([5])))))
    return (
        good * 2
        + {
            "truncated header": good[:7],
            "truncated data": good[:-3],
            "length checksum": good[:8] + bytes([good[8] ^ 1]) + good[9:],
            "data checksum": good[:-1] + bytes([good[-1] ^ 1]),
        }[how]
    )


@pytest.mark.parametrize(
    "how", ["truncated header", "truncated data", "length checksum", "data checksum"]
)
def test_damaged_framing_fails_as_in_the_jar(tmp_path: Path, how: str) -> None:
    """The jar reads the records before the damage, then fails; the loaders, which count the
    records first, fail as the source is made: the same condition, file and offset."""
    path = tmp_path / "damaged.tfrecord"
    path.write_bytes(_damaged(how))
    schema = schema_of_ddl("a bigint")
    jar = jar_results(str(path), schema)
    assert [type(r) for _, r in jar] == [Row, Row, Failure]
    assert disagreements(schema, jar[2:], python_results(str(path), schema)) == []


#: Schemas whose rows a pyspark Row gives exactly (no timestamps: collect() makes local times).
SCANNED = [("interop", INTEROP_SCHEMA), ("every_kind", EXPLICIT["ragged"])]
SCANNED += [("every_kind", EXPLICIT[k]) for k in ("small tinyint", "bit boolean", "days date")]
SCANNED += [("every_kind", EXPLICIT[k]) for k in ("fl double", "text string", "raw binary")]
SCANNED += [("every_kind", EXPLICIT[k]) for k in ("struct", "array of structs")]


@pytest.mark.parametrize(("name", "ddl"), SCANNED, ids=[d.split(" ")[0] for _, d in SCANNED])
def test_the_harness_reads_as_a_spark_query(
    spark: Any, corpus: dict[str, str], name: str, ddl: str
) -> None:
    """The jar's side of these tests is the scan of a query: the same rows, in the same order,
    as spark.read gives, beside Spark's own (Py4J) JVM in this process."""
    schema = schema_of_ddl(ddl)
    rows = spark.read.format("tfrecord").schema(ddl).option("mode", "FAILFAST").load(corpus[name])
    scanned = [
        {f["name"]: value_tree(f["type"], row[f["name"]]) for f in schema["fields"]}
        for row in rows.collect()
    ]
    jar = [r for _, r in jar_results(corpus[name], schema)]
    assert all(isinstance(r, Row) for r in jar)
    assert scanned == [r.values for r in jar if isinstance(r, Row)]


#: One value per record, an int64 feature then a float one, read into each type: the
#: conversions and range checks of the jar's type table (a boolean 2, a tinyint 300, an int64
#: into a float column or a string one).
CONVERSION_INTS = [0, 1, 2, -1, 127, 128, -129, 300, 40000, 2**31, -(2**31) - 1, 2**53 + 1]
CONVERSION_INTS += [-(2**63), 2**63 - 1]
CONVERSION_FLOATS = [0.0, -0.0, 1.25, 1e10, 3.4e38, float("nan"), float("inf"), 0.1, 123456.7]
CONVERSION_FLOATS += [1e18, 1.1754944e-38, 8.589935e9, 1.4e-45, 2e-44]  # JDK 17: more digits
CONVERSION_TYPES = ["boolean", "tinyint", "smallint", "int", "bigint", "date", "timestamp"]
# Not double: the loaders give a double column as float32 (docs/pytorch.md), so an int64 beyond
# 2**24 read into it is Spark's double rounded to float32 (test_loader_parity compares so).
CONVERSION_TYPES += ["float", "string", "array<tinyint>", "array<float>"]


@pytest.mark.parametrize("ddl_type", CONVERSION_TYPES)
def test_conversions_read_as_the_jar(tmp_path: Path, ddl_type: str) -> None:
    ints = [example(entry(b"x", feature("int64", int64_list_packed([v])))) for v in CONVERSION_INTS]
    floats = [
        example(entry(b"x", feature("float", float_list_packed([v])))) for v in CONVERSION_FLOATS
    ]
    path = str(write_records(tmp_path / "conversions.tfrecord", ints + floats))
    schema = schema_of_ddl(f"x {ddl_type}")
    jar = jar_results(path, schema)
    assert len(jar) == len(ints) + len(floats)
    assert any(isinstance(r, Row) for _, r in jar)
    assert disagreements(schema, jar, python_results(path, schema)) == []
    assert batch_disagreements(python_source(path, schema), schema, jar) == []


# --- floats as text ----------------------------------------------------------------------------

#: Floats that JDK 17's Float.toString writes with more digits than the shortest (1e18, the
#: smallest normal float, 2**33, ...), subnormals, the ends of Java's plain layout (1e-3, 1e7),
#: one digit that takes a second (2e-44 is 2.0E-44), zeros.
FLOAT_EDGES = [1e18, -1e18, 1.1754944e-38, 2.4243426e17, 8.589935e9, 1.4e-45, 4.2e-45, 8.4e-45]
FLOAT_EDGES += [2e-44, 3.4028235e38, 1.7014118e38, 5.9604645e-8, 0.1, 0.3, 1e-3, 9.999999e-4]
FLOAT_EDGES += [9999999.0, 1e7, 123456.79, 100.0, 0.5, -2.5, 1e23, 0.0, -0.0]
FLOAT_SPECIALS = [math.nan, math.inf, -math.inf]


def _random_floats(rng: random.Random, count: int) -> list[float]:
    """Float32s of random bits (NaNs and infinities among them), as Python floats."""
    bits = np.array([rng.getrandbits(32) for _ in range(count)], np.uint32)
    return [float(v) for v in bits.view(np.float32)]


def test_a_floats_text_is_the_codecs() -> None:
    """The jar's text of a float32 (JDK 19's ``Float.toString``, on any JVM: this one's may be
    JDK 17's, which differs) is the Python codec's ``java_float``, on random bits and edges."""
    values = FLOAT_EDGES + FLOAT_SPECIALS + _random_floats(random.Random(SEED + 3), 100_000)
    texts = jar_float_texts(values)
    assert texts[:4] == ["1.0E18", "-1.0E18", "1.1754944E-38", "2.4243426E17"]
    assert texts[len(FLOAT_EDGES) :][:3] == ["NaN", "Infinity", "-Infinity"]
    differ = [(v, t, java_float(v)) for v, t in zip(values, texts) if t != java_float(v)]
    assert differ[:10] == []


#: Column types a float feature is read into as its text or as a decimal, with the magnitude
#: below which the type holds every float (None: all, NaN and infinities too).
TEXT_READS: dict[str, float | None] = {
    "string": None,
    "array<string>": None,
    "decimal(38,18)": 9e19,
    "decimal(38,0)": 9e37,
    "decimal(10,2)": 9e7,
    "array<decimal(20,10)>": 9e9,
}


def _as_read(ddl_type: str, value: float) -> Any:
    """What the Python codec's ``java_float`` makes of a float in a column of the type: its
    text, or that decimal rounded half up to the scale."""
    if "string" in ddl_type:
        return java_float(value)
    scale = int(ddl_type.rstrip(">)").split(",")[1])
    context = decimal.Context(prec=100, rounding=decimal.ROUND_HALF_UP)
    quantum = decimal.Decimal(1).scaleb(-scale)
    return decimal.Decimal(java_float(value)).quantize(quantum, context=context)


@pytest.mark.parametrize("ddl_type", list(TEXT_READS))
def test_floats_read_as_text_and_decimals_through_spark(
    spark: Any, tmp_path: Path, ddl_type: str
) -> None:
    """Float features (random bits and the edges) read by Spark with the jar into a string or
    a decimal column (one value a record, or lists of 0 to 3) give read_arrow's rows (the
    Python codec, no JVM), and text the jar's scan gives the loaders' (which hold a decimal as
    a float32); each value is the codec's ``java_float`` of the float (rounded half up to a
    decimal's scale)."""
    limit = TEXT_READS[ddl_type]
    rng = random.Random(SEED + 4)
    values = FLOAT_EDGES + _random_floats(rng, 3000)
    if limit is None:
        values += FLOAT_SPECIALS
    else:
        values = [v for v in values if abs(v) < limit]  # NaN is not
    if ddl_type.startswith("array"):
        lists: list[list[float]] = []
        while values:
            lists.append(values[: rng.randint(0, 3)])
            values = values[len(lists[-1]) :]
    else:
        lists = [[v] for v in values]
    records = [example(entry(b"x", _floats(v))) for v in lists]
    path = str(write_records(tmp_path / "floats.tfrecord", records))
    read = spark.read.format("tfrecord").schema(f"x {ddl_type}").option("mode", "FAILFAST")
    spark_rows = [r.x for r in read.load(path).collect()]
    arrow_rows = spark_tfrecord.read_arrow(path, f"x {ddl_type}").read_all().column("x")
    want: list[Any] = [[_as_read(ddl_type, v) for v in vs] for vs in lists]
    if not ddl_type.startswith("array"):
        want = [w[0] for w in want]
    assert spark_rows == want
    assert arrow_rows.to_pylist() == want
    if "string" in ddl_type:
        schema = schema_of_ddl(f"x {ddl_type}")
        jar = jar_results(path, schema)
        assert all(isinstance(r, Row) for _, r in jar)
        assert disagreements(schema, jar, python_results(path, schema)) == []
        assert batch_disagreements(python_source(path, schema), schema, jar) == []


def _ints(values: list[int]) -> bytes:
    return feature("int64", int64_list_packed(values))


def _floats(values: list[float]) -> bytes:
    return feature("float", float_list_packed(values))


def _bytes(values: list[bytes]) -> bytes:
    return feature("bytes", bytes_list(values))


#: Bytes that are not UTF-8: invalid sequences of each sort, encoded surrogates (which Java
#: decodes to one U+FFFD, Python's "replace" to one per byte), and random bytes from those
#: that start, continue or cannot be in a sequence.
NOT_UTF8 = [b"a\xffb", b"\xc3", b"\xed\xa0\x80", b"\xed\xbf", b"\xf4\x90\x80\x80", b"\xe2\x82"]
NOT_UTF8 += [b"\xc0\xaf", b"\xf0\x9f\x8e", b"\x80\xbf", b"\xe0\xbf\xed\xbf\xa0"]
_RNG = random.Random(SEED + 2)
_UTF8_BYTES = [0x41, 0x80, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5]
NOT_UTF8 += [bytes(_RNG.choices(_UTF8_BYTES, k=_RNG.randint(1, 6))) for _ in range(400)]

#: Records where the Python codec once read otherwise than the jar: (schema, records).
CASES: dict[str, tuple[str, list[bytes]]] = {
    "not utf-8": (
        "s string, sl array<string>",
        [
            example(entry(b"s", _bytes([b"a\xffb"])), entry(b"sl", _bytes([b"\xc3", b"ok"]))),
            example(entry(b"s", _bytes([b"\xed\xa0\x80\xf4\x90"])), entry(b"sl", _bytes([]))),
            example(entry(b"sl", _bytes(NOT_UTF8))),
        ],
    ),
    "ragged missing a part": (
        "r array<array<bigint>>, r3 array<array<array<float>>>",
        [
            example(entry(b"r/ragged_flat_values", _ints([1, 2]))),
            example(entry(b"r/ragged_row_lengths_0", _ints([0, 0]))),
            example(
                entry(b"r3/ragged_flat_values", _floats([1.0])),
                entry(b"r3/ragged_row_lengths_0", _ints([1])),
            ),
            example(entry(b"r/ragged_row_lengths_0", _ints([1, -1]))),
        ],
    ),
    "array of structs of unequal leaves": (
        "o array<struct<a: bigint, b: string, t: array<bigint>>>",
        [
            example(entry(b"o/a", _ints([1, 2])), entry(b"o/b", _bytes([b"x"]))),
            example(entry(b"o/a", _ints([1, 2]))),  # absent leaves: null in each element
            example(
                entry(b"o/a", _ints([1, 2])),
                entry(b"o/t/ragged_flat_values", _ints([5])),
                entry(b"o/t/ragged_row_lengths_0", _ints([1])),
            ),
            example(entry(b"o/a", _ints([1])), entry(b"o/b", feature("bytes", b""))),
        ],
    ),
    "wire types": (
        "x bigint, y float, z binary",
        [
            example(entry(b"x", field(3, 0, varint(5)))),
            example(entry(b"x", field(1, 5, b"abcd"))),
            example(entry(b"x", feature("int64", field(1, 5, b"abcd")))),
            example(entry(b"y", feature("float", field(1, 0, varint(3))))),
            example(entry(b"z", feature("bytes", field(1, 0, varint(3))))),
            # a list of a kind a later one replaces is not read, but its field's wire type is
            example(entry(b"x", feature("bytes", field(1, 0, varint(3))) + _ints([4]))),
        ],
    ),
    "two errors": (
        "x tinyint, y bigint, st struct<a: tinyint>",
        [
            example(entry(b"y", _floats([1.0])), entry(b"x", _ints([300]))),
            example(entry(b"y", _ints([1])), entry(b"x", _ints([300]))),
            example(entry(b"st/a", _ints([-200])), entry(b"y", _ints([1, 2]))),
            # a mismatch before malformed bytes, and malformed bytes before a mismatch
            example(entry(b"x", _ints([300])), entry(b"y", feature("int64", b"\x0a\x02\x80\x80"))),
            example(entry(b"y", feature("int64", b"\x0a\x02\x80\x80")), entry(b"x", _ints([300]))),
        ],
    ),
    "a key twice": (
        "x tinyint, l array<bigint>",
        [
            example(entry(b"x", _ints([300])), entry(b"x", _ints([3]))),
            example(entry(b"x", _ints([3])), entry(b"x", _ints([300]))),
            example(entry(b"l", _floats([1.0])), entry(b"l", _ints([1, 2]))),
            example(entry(b"x", _ints([1, 2])), entry(b"x", _ints([3]))),
            example(entry(b"x", _ints([4])), entry(b"x", _ints([3]))),
        ],
    ),
    "malformed in a batch": (
        "x bigint, l array<bigint>",
        [
            example(entry(b"x", _ints([1])), entry(b"l", _ints([1, 2]))),
            example(entry(b"l", feature("int64", field(1, 2, b"\x80" * 11 + b"\x01")))),
            example(entry(b"x", feature("int64", b"\x0a\x02\x80\x80"))),
        ],
    ),
    "struct leaves": (
        "st struct<a: tinyint, in: struct<b: float>>",
        [
            example(entry(b"st/a", _ints([300]))),
            example(entry(b"st/in/b", _bytes([b"x"]))),
            example(entry(b"st/a", _ints([1, 2]))),
            example(entry(b"st/a", _ints([5]))),
        ],
    ),
    # The jar's decimals read SQLConf, whose loading logs: this once failed in local's JVM,
    # whose logging was log4j's simple logger, which Spark's logging cannot take.
    "decimals out of range": (
        "d decimal(4,1), e decimal(20,2)",
        [
            example(entry(b"d", _ints([10**12]))),
            example(entry(b"d", _floats([1e30]))),
            example(entry(b"d", _floats([123.4])), entry(b"e", _ints([2**63 - 1]))),
            example(entry(b"e", _floats([float("inf")]))),
        ],
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_cases_read_as_the_jar(tmp_path: Path, case: str) -> None:
    """Each record read both ways, record by record and in a batch of its own; and the
    records together in one batch, which fails with the first record's error, or reads."""
    ddl, records = CASES[case]
    path = str(write_records(tmp_path / "case.tfrecord", records))
    schema = schema_of_ddl(ddl)
    jar = jar_results(path, schema)
    assert len(jar) == len(records)
    assert disagreements(schema, jar, python_results(path, schema)) == []
    source = python_source(path, schema)
    for k in range(len(records)):
        alone = python_batch(source, schema, [k])
        found = disagreements(schema, [jar[k]], alone, batch=True)
        assert found == [], (k, found)
    first = next((k for k, (_, r) in enumerate(jar) if isinstance(r, Failure)), None)
    together = python_batch(source, schema, list(range(len(records))))
    if first is None:
        assert disagreements(schema, jar, together, batch=True) == []
    else:
        assert disagreements(schema, [jar[first]], together) == []


def test_a_batch_cannot_stack_a_missing_value(tmp_path: Path) -> None:
    """A NOT NULL column without a value in a record: null both ways record by record (Spark
    reads a file's columns as nullable); a batch stacks the column's values, so it raises the
    record's error (condition, file, offset, column) where it once raised a bare ValueError."""
    records = [
        example(entry(b"x", _ints([1]))),
        example(entry(b"y", _ints([1]))),
        example(entry(b"x", _ints([]))),
    ]
    path = str(write_records(tmp_path / "not-null.tfrecord", records))
    schema = schema_of_ddl("x bigint NOT NULL")
    jar = jar_results(path, schema)
    assert [r for _, r in jar] == [Row({"x": "1"}), Row({"x": None}), Row({"x": None})]
    assert disagreements(schema, jar, python_results(path, schema)) == []
    source = python_source(path, schema)
    assert python_batch(source, schema, [0]) == [Row({"x": "1"})]
    for k in (1, 2):
        (failed,) = python_batch(source, schema, [0, k])
        assert isinstance(failed, Failure)
        assert failed.condition == "TFRECORD_DATA_MISMATCH"
        assert (failed.offset, failed.parameters["column"]) == (jar[k][0], "x")
        assert _local(failed.parameters["path"]) == _local(path)


#: Schemas of the SequenceExample file (support/tf_corpus.sequences): its context features and
#: feature lists as written, then read into other types (a range check fails in a step).
SEQUENCE_SCHEMAS = {
    "as written": "id bigint, label string, tokens array<string>, frames array<array<float>>, "
    "ids array<array<bigint>>, words array<array<string>>, "
    "steps array<struct<t: bigint, tag: string, xs: array<float>>>",
    "converted": "id int, label binary, frames array<array<double>>, ids array<array<int>>, "
    "words array<array<binary>>",
    "narrow": "id boolean, ids array<array<tinyint>>, tokens array<binary>, "
    "steps array<struct<t: int, xs: array<double>>>",
}


@pytest.fixture(scope="module")
def sequence_folder(tf: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of one file of SequenceExamples TensorFlow writes, with its manifest (which
    says the record type)."""
    folder = tmp_path_factory.mktemp("sequences")
    records = tf_corpus.sequences(tf)
    tf_corpus.write(tf, folder / "part-00000.tfrecord", records)
    schema = schema_of_ddl(SEQUENCE_SCHEMAS["as written"])
    write_manifest(
        folder,
        {"part-00000.tfrecord": len(records)},
        schema=SEQUENCE_SCHEMAS["as written"],
        schema_json=schema,
        record_type="SequenceExample",
    )
    return folder


@pytest.mark.parametrize("schema_id", list(SEQUENCE_SCHEMAS))
def test_sequence_examples_read_as_the_jar(sequence_folder: Path, schema_id: str) -> None:
    """A SequenceExample folder: context features and feature lists (a list per step; a field
    of an array of structs, a value per step) give the jar's values, and a name in the wrong
    place (a feature list of a context column's name, a context feature of a feature list's)
    its error, through the record path and the batch path."""
    schema = schema_of_ddl(SEQUENCE_SCHEMAS[schema_id])
    path = str(sequence_folder / "part-00000.tfrecord")
    jar = jar_results(path, schema, {"recordType": "SequenceExample"})
    assert len(jar) == 7
    rows = [r for _, r in jar if isinstance(r, Row)]
    assert len(rows) >= 2
    if schema_id == "as written":
        assert rows[0].values["ids"] == [["1", "2"], [], [str(-(2**63)), str(2**63 - 1), "300"]]
        assert rows[0].values["steps"] == [
            {"t": "1", "tag": "s:78", "xs": ["f:3f000000"]},
            {"t": "2", "tag": "s:79", "xs": ["f:3f800000", "f:40000000"]},
        ]
        assert rows[1].values["frames"] == [] and rows[1].values["words"] == [[], []]
    failed = [r for _, r in jar if isinstance(r, Failure)]
    assert {f.condition for f in failed} == {"TFRECORD_DATA_MISMATCH"}
    folder = str(sequence_folder)
    assert disagreements(schema, jar, python_results(folder, schema)) == []
    assert batch_disagreements(python_source(folder, schema), schema, jar) == []
