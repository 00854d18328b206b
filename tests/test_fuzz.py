"""Mutated, truncated and random files, read through `spark.read.format("tfrecord")`.

A fixed seed makes a fixed number of cases: valid files mutated anywhere (framing included),
truncated, sound framing around mutated or hostile protobuf payloads, random bytes; written
plain (read in splits of a few dozen bytes, so that each split's search for its first record
meets the damage), gzip or deflate; and gzip/deflate files whose compressed bytes are damaged.
The cases are support/fuzz_corpus.py's; every one is checked against the pure-Python oracle in
support/tfrecord_oracle.py:

- all cases of a schema and mode are read in one query with `ignoreCorruptFiles`: each file
  gives exactly the rows the oracle computes for each of its splits (the records before the
  split's first error);
- every fourth case is also read alone, without it: the rows equal the oracle's, or the query
  fails with the documented exception naming the file and the offset of a record the oracle
  finds bad (for a payload that does not parse: a "Malformed" error; for a value that does
  not fit its column: the column's error).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from support.fuzz_corpus import BYTE_ARRAY, READS, SEED, SEQUENCE, Case, Schema, make_cases
from support.tfrecord_oracle import (
    FramingError,
    decode,
    expected_rows,
    normalize,
    read_records,
    split_ranges,
)

CASES = 1200
STRICT_EVERY = 4  # every 4th case is also read alone, without ignoreCorruptFiles
MAX_SPLIT = 48  # spark.sql.files.maxPartitionBytes for every read here
CORRUPT = "io.github.sparktfrecord.TFRecordCorruptException"
DATA = "io.github.sparktfrecord.TFRecordDataException"


# --- what the oracle expects -----------------------------------------------------------------


def to_row(schema: Schema, mode: str, data: bytes) -> tuple[Any, ...]:
    if schema is BYTE_ARRAY:
        return (data,)
    values = decode(data, schema.columns, sequence=schema is SEQUENCE)
    row = tuple(values[c.name] for c in schema.columns)
    return (*row, None) if mode == "PERMISSIVE" else row


def corrupt_row(schema: Schema, data: bytes) -> tuple[Any, ...]:
    return (None,) * len(schema.columns) + (data,)


def all_rows(case: Case) -> list[tuple[Any, ...]]:
    """The rows of every record of the case's (undamaged) stream."""
    records, _ = read_records(case.content)
    return [to_row(case.schema, case.mode, r.data) for r in records]


@dataclass
class Split:
    start: int
    rows: list[tuple[Any, ...]]
    error: tuple[str, int, str] | None  # (exception class, offset, what) of its first error


def expected_splits(case: Case, max_split: int) -> list[Split]:
    """What each split of the case's file gives, as the oracle reads it."""
    plain = case.compression == "none"
    ranges = split_ranges(len(case.content), max_split) if plain else [(0, None)]
    splits = []
    for start, end in ranges:
        records, framing = read_records(case.content, start, end, split=plain)
        rows, payload = expected_rows(
            records,
            lambda d: to_row(case.schema, case.mode, d),
            case.mode,
            lambda d: corrupt_row(case.schema, d),
        )
        error: tuple[str, int, str] | None = None
        if payload is not None:
            offset, e = payload
            error = (DATA, offset, "Malformed" if e.malformed else "Column '")
        elif isinstance(framing, FramingError):
            error = (CORRUPT, framing.offset, framing.what)
        splits.append(Split(start, rows, error))
    return splits


# --- the test --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Case]]:
    root = tmp_path_factory.mktemp("fuzz")
    cases = []
    for case, data in make_cases(SEED, CASES):
        folder = root / f"{case.schema.record_type}-{case.mode}"
        folder.mkdir(exist_ok=True)
        (folder / case.file_name).write_bytes(data)
        cases.append(case)
    return root, cases


@pytest.fixture
def small_splits(spark: Any) -> Any:
    confs = {
        "spark.sql.files.maxPartitionBytes": str(MAX_SPLIT),
        "spark.sql.files.openCostInBytes": "0",
        "spark.sql.files.minPartitionNum": "1",
    }
    for key, value in confs.items():
        spark.conf.set(key, value)
    yield
    for key in confs:
        spark.conf.unset(key)


def read(spark: Any, path: Path, schema: Schema, mode: str, **options: str) -> Any:
    ddl = schema.ddl + (", _corrupt_record binary" if mode == "PERMISSIVE" else "")
    return (
        spark.read.format("tfrecord")
        .options(**schema.options, mode=mode, **options)
        .schema(ddl)
        .load(str(path))
    )


def collected(df: Any) -> list[tuple[Any, ...]]:
    return [normalize(tuple(r)) for r in df.collect()]


def test_corpus_reaches_every_outcome(corpus: tuple[Path, list[Case]]) -> None:
    _, cases = corpus
    assert len(cases) == CASES
    outcomes: Counter[str] = Counter()
    for case in cases:
        if case.damaged_compression:
            continue
        for split in expected_splits(case, MAX_SPLIT):
            outcomes[split.error[2] if split.error else "rows"] += 1
    # Rows, every kind of framing error, payloads that do not parse and that do not fit.
    for outcome in (
        "rows",
        "length checksum",
        "data checksum",
        "data checksum (split start)",
        "truncated header",
        "truncated record",
        "Malformed",
        "Column '",
    ):
        assert outcomes[outcome] > 0, outcomes


def test_ignore_corrupt_files_gives_the_oracles_rows(
    spark: Any, corpus: tuple[Path, list[Case]], small_splits: Any
) -> None:
    from pyspark.sql import functions as F

    root, cases = corpus
    checked = 0
    for schema, mode in READS:
        group = [c for c in cases if (c.schema, c.mode) == (schema, mode)]
        folder = root / f"{schema.record_type}-{mode}"
        df = read(spark, folder, schema, mode, ignoreCorruptFiles="true")
        meta = df.select(
            "*", F.col("_metadata.file_name").alias("f"), F.col("_metadata.file_block_start")
        )
        got: dict[str, Counter[tuple[Any, ...]]] = {}
        for r in meta.collect():
            values = tuple(r)
            got.setdefault(values[-2], Counter())[normalize(values[:-2] + values[-1:])] += 1
        for case in group:
            if case.damaged_compression:
                # Damage to compressed bytes: the records before it, or all of them.
                rows = [normalize((*r, 0)) for r in all_rows(case)]
                kept = got.get(case.file_name, Counter())
                prefixes = [Counter(rows[:k]) for k in range(len(rows) + 1)]
                assert kept in prefixes, (case.name, kept, rows)
            else:
                expected = Counter(
                    normalize((*row, split.start))
                    for split in expected_splits(case, MAX_SPLIT)
                    for row in split.rows
                )
                actual = got.get(case.file_name, Counter())
                assert actual == expected, (case.name, case.compression, mode)
            checked += 1
    assert checked == CASES


def test_each_case_alone_gives_rows_or_the_documented_error(
    spark: Any, corpus: tuple[Path, list[Case]], small_splits: Any
) -> None:
    from py4j.protocol import Py4JJavaError

    root, cases = corpus
    errors: Counter[str] = Counter()
    predicted: Counter[str] = Counter()
    for case in cases[::STRICT_EVERY]:
        path = root / f"{case.schema.record_type}-{case.mode}" / case.file_name
        max_split = min(MAX_SPLIT, max(len(path.read_bytes()), 1))
        splits = expected_splits(case, max_split)
        possible = {s.error for s in splits if s.error is not None}
        predicted.update({e[2] for e in possible})
        try:
            rows = collected(read(spark, path, case.schema, case.mode))
        except Py4JJavaError as e:
            cause = e.java_exception  # Spark's exceptions wrap ours
            while cause.getCause() is not None and cause.getClass().getName() not in (
                CORRUPT,
                DATA,
            ):
                cause = cause.getCause()
            name, message = cause.getClass().getName(), str(cause.getMessage())
            assert name in (CORRUPT, DATA), (case.name, name, message)
            assert str(path) in message, (case.name, message)
            if case.damaged_compression:
                errors["damaged compression"] += 1
                continue
            match = [e for e in possible if e[0] == name and f"at byte offset {e[1]} of" in message]
            assert match, (case.name, message, possible)
            if match[0][0] == DATA:
                assert match[0][2] in message, (case.name, message, match)
            errors[match[0][2]] += 1
            continue
        if case.damaged_compression:  # damage that changed nothing (a header field, say)
            assert Counter(rows) == Counter(normalize(r) for r in all_rows(case)), case.name
            continue
        assert not possible, (case.name, possible, rows)
        expected = [normalize(r) for s in splits for r in s.rows]
        assert Counter(rows) == Counter(expected), case.name
        errors["rows"] += 1
    # Which of a file's errors a query reports depends on which of its splits fails first, so
    # the outcomes are counted as the oracle predicts them; each reported error was checked above.
    assert predicted["Malformed"] > 0 and predicted["Column '"] > 0, predicted
    assert errors["Malformed"] > 0 and errors["rows"] > 0, errors
