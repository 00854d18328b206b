"""Wide records (hundreds of features, as ``benchmarks``' wide-1000) whose layouts vary from
record to record, through the batch decoder's check of all of a batch's entries at once
(``_format.entries.record_layout.predict``): features absent in some records, empty lists,
lists and strings whose lengths (and so their headers' lengths) vary, keys in another order, a
key twice, a feature of the wrong kind. Each batch's located features are the walk's, bit for
bit; the records the prediction leaves over are exactly those off the first record's layout;
the loaders' batch is the record decoder's; and the jar-less source's Arrow table is the record
path's, with the same error where the record path raises one."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from spark_tfrecord._format.columns.column_errors import ColumnError
from spark_tfrecord._format.columns.layout import Layout, layout
from spark_tfrecord._format.entries import batch, record_layout
from spark_tfrecord._format.entries.wire import MalformedRecord
from support.batch_path import framed, read, same
from support.tfrecord_bytes import (
    bytes_list,
    entry,
    example,
    feature,
    float_list_packed,
    int64_list_packed,
    write_records,
)

#: Features per record: by index modulo 6, a float, a bigint, a string, a list of floats, a
#: list of bigints, a list of strings.
WIDTH = 300
KINDS = ["float", "long", "string", "floats", "longs", "strings"]
KEYS = [f"w{i:04d}" for i in range(WIDTH)]


LISTS = {"floats": "float", "longs": "long", "strings": "string"}
#: Varints of 1 to 10 bytes.
BIG = [0, 1, 127, 128, 2**14, 2**28, 2**40, -1, -(2**63), 2**63 - 7]


def _type(kind: str) -> Any:
    if kind in LISTS:
        return {"type": "array", "elementType": LISTS[kind], "containsNull": True}
    return kind


def scalar(i: int, j: int) -> Any:
    """The float or bigint of feature i (a scalar's) of record j."""
    if KINDS[i % 6] == "float":
        return float(np.float32((7 * j + i) / 3))
    return BIG[(i + j) % len(BIG)] + j % 5


SCHEMA = {
    "type": "struct",
    "fields": [
        {"name": k, "type": _type(KINDS[i % 6]), "nullable": True, "metadata": {}}
        for i, k in enumerate(KEYS)
    ],
}


def value(i: int, j: int, rng: random.Random) -> bytes:
    """Feature i of record j: values that vary in size (varints of 1 to 10 bytes, strings and
    lists of 0 to a few items)."""
    kind = KINDS[i % 6]
    big = rng.choice(BIG)
    if kind == "float":
        return feature("float", float_list_packed([scalar(i, j)]))
    if kind == "long":
        return feature("int64", int64_list_packed([scalar(i, j)]))
    if kind == "string":
        return feature("bytes", bytes_list([f"s{j}-{i}".encode() * rng.randrange(1, 4)]))
    n = rng.randrange(1, 4)  # (an empty list of numbers is laid out otherwise: "empty")
    if kind == "floats":
        return feature("float", float_list_packed([rng.uniform(-1, 1) for _ in range(n)]))
    if kind == "longs":
        return feature("int64", int64_list_packed([big - k for k in range(n)]))
    return feature("bytes", bytes_list([b"t" * rng.randrange(0, 5) for _ in range(n)]))


def record(j: int, rng: random.Random, odd: str = "") -> bytes:
    """Record j, in the common layout unless ``odd`` says how it differs."""
    features = [(k.encode(), value(i, j, rng)) for i, k in enumerate(KEYS)]
    if odd == "absent":  # a few features left out
        gone = set(rng.sample(range(WIDTH), 7))
        features = [f for i, f in enumerate(features) if i not in gone]
    elif odd == "empty":  # lists of no values, and a Feature of no kind
        features[3] = (features[3][0], feature("float", float_list_packed([])))
        features[4] = (features[4][0], feature("int64", b""))
        features[200] = (features[200][0], b"")
    elif odd == "order":  # two blocks of keys swapped
        features = features[150:] + features[:150]
    elif odd == "twice":  # a key given again at the end (floats, for a list of bigints)
        features.append((features[10][0], feature("float", float_list_packed([1.5, 2.5]))))
    elif odd == "kind":  # a bigint given bytes
        features[1] = (features[1][0], feature("bytes", bytes_list([b"x"])))
    return example(*(entry(k, v) for k, v in features))


ODD = ["absent", "empty", "order", "twice", "kind"]


def the_layout() -> Layout:
    return layout(SCHEMA, {}, None, "test")


def walked_rows(records: list[bytes]) -> list[int]:
    """The records the first record's layout leaves over (to other layouts or the walk)."""
    buf, starts, stops = framed(records)
    keys = the_layout().decoder_keys
    t = record_layout.template(buf, int(starts[0]), int(stops[0]), keys)
    assert t is not None
    predicted = record_layout.predict(buf, starts, stops, len(keys), t)
    return np.flatnonzero(predicted.odd).tolist()


def check(records: list[bytes]) -> dict[str, Any] | None:
    """The batch is located as the walk locates it, and the loaders' batch is the record
    decoder's (or handed to it where the record decoder raises)."""
    lay = the_layout()
    buf, starts, stops = framed(records)
    found = batch.locate(buf, starts, stops, lay.decoder_keys)
    walked = batch.walk(buf, starts, stops, lay.decoder_keys)
    for name in ("kind", "start", "stop", "fallback"):
        assert (getattr(found, name) == getattr(walked, name)).all(), name
    fast = lay.collate_raw(buf, starts, stops)
    try:
        slow = lay.collate([lay.record(r) for r in records])
    except (MalformedRecord, ColumnError, ValueError):
        assert fast is None, "values for a batch the record path refuses"
        return None
    if fast is not None:
        assert same(fast, slow)
    return fast


def test_a_wide_batch_of_one_layout_is_placed_at_once() -> None:
    rng = random.Random(3)
    records = [record(j, rng) for j in range(64)]
    assert walked_rows(records) == []
    fast = check(records)
    assert fast is not None
    for i in range(12):
        got = fast[KEYS[i]]
        if KINDS[i % 6] in ("float", "long"):  # (values, offsets): one a record
            assert got[0].tolist() == [scalar(i, j) for j in range(64)]


@pytest.mark.parametrize("odd", ODD)
def test_records_off_the_layout_are_left_over_and_read_as_the_record_path(odd: str) -> None:
    rng = random.Random(ODD.index(odd))
    at = [5, 6, 40]
    records = [record(j, rng, odd if j in at else "") for j in range(64)]
    assert walked_rows(records) == at
    fast = check(records)
    assert (fast is None) == (odd in ("twice", "kind"))  # decided per record
    # most records off the first one's layout: the check stops, every record is walked;
    # but a key after the template's last is seen only at the record's end, past the checks
    records = [record(j, rng, odd if j % 3 else "") for j in range(48)]
    off = [j for j in range(48) if j % 3] if odd == "twice" else list(range(48))
    assert walked_rows(records) == off
    check(records)


def test_mixed_batches_at_random_are_read_as_the_record_path() -> None:
    rng = random.Random(17)
    for _ in range(12):
        size = rng.choice([1, 2, 9, 33])
        records = [record(j, rng, rng.choice(["", "", "", *ODD])) for j in range(size)]
        check(records)


# --- the jar-less source ----------------------------------------------------------------------

#: Records per batch in the source's tests, and records per file.
BATCH = 64
RECORDS = 256


def _read(path: str, monkeypatch: pytest.MonkeyPatch, batch_path: bool, mode: str) -> Any:
    """The file read as ``read_arrow`` reads it (with the batch path or without), and the
    number of batches the record path decoded; or the error it raised."""
    try:
        table, decoded = read(path, SCHEMA, {"mode": mode}, monkeypatch, BATCH, batch_path)
        return table, len(decoded)
    except Exception as e:
        return type(e), str(e)


def _file(folder: Path, odd: Callable[[int], str]) -> str:
    rng = random.Random(29)
    records = [record(j, rng, odd(j)) for j in range(RECORDS)]
    write_records(folder / "part-0.tfrecord", records)
    return str(folder)


@pytest.mark.parametrize("odd", ["", *ODD])
def test_the_source_reads_wide_batches_as_the_record_path(
    odd: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the odd records in the second batch only
    path = _file(tmp_path, lambda j: odd if j in (70, 71, 100) else "")
    for mode in ("PERMISSIVE", "FAILFAST"):
        fast = _read(path, monkeypatch, True, mode)
        slow = _read(path, monkeypatch, False, mode)
        if isinstance(slow[0], pa.Table):
            assert isinstance(fast[0], pa.Table) and fast[0].equals(slow[0])
            # the batch path read every batch with no odd record
            assert fast[1] == (1 if odd in ("twice", "kind") else 0)
            assert fast[0].num_rows == RECORDS
        else:
            assert fast == slow  # the same error
    table = _read(path, monkeypatch, True, "PERMISSIVE")[0]
    assert table.column("w0000").type == pa.float32()
    for i in (0, 1, 6, 7, 294, 295):
        want = [scalar(i, j) for j in range(RECORDS)]
        if odd == "absent":  # (which ones the odd records lack is random)
            want = [want[j] if j not in (70, 71, 100) else got for j, got in
                    enumerate(table.column(KEYS[i]).to_pylist())]  # fmt: skip
        elif odd in ("twice", "kind"):  # a record a column refuses: PERMISSIVE's nulls
            want[70] = want[71] = want[100] = None
        assert table.column(KEYS[i]).to_pylist() == want


def test_numbers_read_for_all_features_at_once_are_each_features_own() -> None:
    # varints of 1 to 10 bytes, some not the shortest (0x80 0x00 is 0), lists of two values
    # or none, floats of every kind of bits: gathered.scalars reads the features of one
    # number a record (of one kind) at once, and column_values gives the same as feature by
    # feature
    from spark_tfrecord._format.columns.conversions import conversion
    from spark_tfrecord._format.columns.gathered import column_values, scalars

    rng = random.Random(41)
    lists = [
        lambda j: int64_list_packed([rng.choice(BIG) + j]),
        lambda j: int64_list_packed([rng.randrange(0, 2**56)]),
        lambda j: b"\x0a\x02\x80\x00" if j % 2 else int64_list_packed([j]),
        lambda j: int64_list_packed([j, j]) if j == 5 else int64_list_packed([j]),
        lambda j: int64_list_packed([] if j == 3 else [j]),
        lambda j: float_list_packed([rng.choice([0.5, -0.0, float("nan"), float("inf")])]),
        lambda j: struct_bits(rng.getrandbits(32)),
    ]
    keys = [f"k{i}".encode() for i in range(len(lists))]
    for size in (1, 7, 40):
        records = [
            example(*(entry(k, feature("int64" if i < 5 else "float", make(j))) for i, (k, make)
                      in enumerate(zip(keys, lists))))
            for j in range(size)
        ]  # fmt: skip
        buf, starts, stops = framed(records)
        located = batch.locate(buf, starts, stops, keys)
        known = scalars(buf, located, list(range(len(keys))))
        assert {1, 2, 5, 6} <= set(known) <= set(range(len(keys)))
        assert size == 1 or not {3, 4} & set(known)  # two values, or none, in a record
        for slot, name in enumerate(["bigint"] * 5 + ["float"] * 2):
            conv = conversion(name)
            alone = column_values(buf, located, slot, conv, True)
            located.numbers = known
            both = column_values(buf, located, slot, conv, True)
            located.numbers = {}
            assert (alone is None) == (both is None)
            if alone is not None and both is not None:
                assert alone.source == both.source
                assert same(np.asarray(alone.values), np.asarray(both.values))
                assert same(alone.counts, both.counts) and same(alone.present, both.present)


def struct_bits(bits: int) -> bytes:
    """A packed float list of the float of these 32 bits (NaN payloads too)."""
    return b"\x0a\x04" + bits.to_bytes(4, "little")


def test_short_headers_are_checked_byte_by_byte() -> None:
    # headers under 8 bytes (a one-letter key, a Feature of no kind or an empty list) beside
    # longer ones, and one record whose unset Feature is set: placed as the walk places them
    def one(j: int, odd: bool = False) -> bytes:
        return example(
            entry(b"a", feature("int64", int64_list_packed([j])) if odd else b""),
            entry(b"b", feature("float", b"")),
            entry(b"c", feature("int64", int64_list_packed([j * 1000]))),
        )

    keys = [b"a", b"b", b"c"]
    records = [one(j, odd=j == 3) for j in range(9)]
    assert walked_rows_of(records, keys) == [3]
    buf, starts, stops = framed(records)
    found = batch.locate(buf, starts, stops, keys)
    walked = batch.walk(buf, starts, stops, keys)
    for name in ("kind", "start", "stop", "fallback"):
        assert (getattr(found, name) == getattr(walked, name)).all(), name
    assert found.kind[:, 3].tolist() == [3, 2, 3] and found.kind[:, 4].tolist() == [0, 2, 3]


def walked_rows_of(records: list[bytes], keys: list[bytes]) -> list[int]:
    buf, starts, stops = framed(records)
    t = record_layout.template(buf, int(starts[0]), int(stops[0]), keys)
    assert t is not None and min(e.size for e in t.entries) < 8
    return np.flatnonzero(record_layout.predict(buf, starts, stops, len(keys), t).odd).tolist()
