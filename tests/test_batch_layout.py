"""The batch decoder's prediction of one layout for a whole batch (``_format.record_layout``):
the records that hold the first record's layout are read where it puts their features, the
others are walked entry by entry as before. On batches of one layout and of mixed layouts (an
odd record in the middle, shuffled key orders, a length whose varint grows, a missing key, empty
lists, a record cut short, random damage), each batch's located features are the walk's, bit for
bit; its values are the record decoder's; and a batch the record decoder refuses is handed to it
(no values where the record path raises). The batch's float columns reach torch with no copy;
its string columns of one short value a record are sliced at once, as the record decoder reads
them, values and errors."""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np
import pytest

from spark_tfrecord._format.columns.column_errors import ColumnError
from spark_tfrecord._format.columns.layout import Layout, layout
from spark_tfrecord._format.entries import batch, record_layout
from spark_tfrecord._format.entries.wire import FLOAT, MalformedRecord
from support.batch_path import framed, same
from support.tfrecord_bytes import (
    bytes_list,
    entry,
    example,
    feature,
    float_list_packed,
    int64_list_packed,
    ld,
    varint,
)

SCHEMA = {
    "type": "struct",
    "fields": [
        {"name": "i", "type": "long", "nullable": False, "metadata": {}},
        {"name": "x", "type": {"type": "array", "elementType": "float", "containsNull": True},
         "nullable": True, "metadata": {}},
        {"name": "f", "type": "float", "nullable": False, "metadata": {}},
        {"name": "s", "type": "string", "nullable": True, "metadata": {}},
        {"name": "n", "type": {"type": "array", "elementType": "long", "containsNull": True},
         "nullable": True, "metadata": {}},
    ],
}  # fmt: skip
#: The manifest's counts: x holds 4 floats in every record (a (B, 4) column).
COUNTS = {"i": (1, 1), "x": (4, 4), "f": (1, 1)}
KEYS = ["i", "x", "f", "s", "n"]


def the_layout() -> Layout:
    return layout(SCHEMA, COUNTS, None, "test")


def record(j: int, order: list[str] | None = None, **changed: Any) -> bytes:
    """Record j of the common layout (its id j, floats and a list of j % 5 + 1 ints), with the
    Features of ``changed`` (None: left out), its keys in ``order``."""
    values: dict[str, bytes | None] = {
        "i": feature("int64", int64_list_packed([j])),
        "x": feature("float", float_list_packed([j / 3, -0.0, math.nan, -math.inf])),
        "f": feature("float", float_list_packed([j * 0.5])),
        "s": feature("bytes", bytes_list([f"r{j}".encode()])),
        "n": feature("int64", int64_list_packed(list(range(-1, 2**40, 2**38))[: j % 5 + 1])),
    }
    values.update(changed)
    chosen = [(k, values[k]) for k in order or KEYS]
    return example(*(entry(k.encode(), v) for k, v in chosen if v is not None))


def walked_rows(records: list[bytes], keys: list[bytes]) -> list[int]:
    """The records of the batch that the prediction leaves to the walk."""
    buf, starts, stops = framed(records)
    t = record_layout.template(buf, int(starts[0]), int(stops[0]), keys)
    if t is None:
        return list(range(len(records)))
    predicted = record_layout.predict(buf, starts, stops, len(keys), t)
    return np.flatnonzero(predicted.odd).tolist()


def decoded(lay: Layout, records: list[bytes]) -> dict[str, Any] | None:
    """The batch as the record path makes it, or None where it raises."""
    try:
        return lay.collate([lay.record(r) for r in records])
    except (MalformedRecord, ColumnError, ValueError):
        return None


def check(records: list[bytes], read_at_once: bool = True) -> dict[str, Any] | None:
    """Asserts that the batch ``records`` is located as the walk locates it and decoded as the
    record decoder decodes it; the batch path's batch (None: handed to the record path)."""
    lay = the_layout()
    buf, starts, stops = framed(records)
    found = batch.locate(buf, starts, stops, lay.decoder_keys)
    walked = batch.walk(buf, starts, stops, lay.decoder_keys)
    for name in ("kind", "start", "stop", "fallback"):
        assert (getattr(found, name) == getattr(walked, name)).all(), name
    fast = lay.collate_raw(buf, starts, stops)
    slow = decoded(lay, records)
    if slow is None:
        assert fast is None, "values for a batch the record path refuses"
    elif fast is not None:
        assert same(fast, slow)
    assert (fast is not None) == read_at_once
    return fast


KEYS_B = [k.encode() for k in KEYS]


def test_a_batch_of_one_layout_is_read_where_the_first_record_puts_its_features() -> None:
    # ids cross 127 and 16383 (their varints grow), strings and lists vary in length: the
    # lengths before them shift by as much, and the prediction follows them
    records = [record(j) for j in [*range(300), 16383, 16384, 2**40, 2**63 - 1]]
    assert walked_rows(records, KEYS_B) == []
    fast = check(records)
    assert fast is not None
    assert fast["i"].tolist() == [*range(300), 16383, 16384, 2**40, 2**63 - 1]
    assert fast["x"].shape == (304, 4) and fast["x"].dtype == np.float32
    assert fast["x"][:, 1:].view(np.uint32)[0].tolist() == [0x80000000, 0x7FC00000, 0xFF800000]
    assert fast["f"].tolist() == [j * 0.5 for j in range(300)] + [8191.5, 8192.0, 2.0**39, 2.0**62]
    assert fast["s"][1][:3].tolist() == [0, 1, 2] and fast["s"][0][299] == "r299"
    assert fast["n"][1][:7].tolist() == [0, 1, 3, 6, 10, 15, 16]
    one = check(records[7:8])
    assert one is not None and one["i"].tolist() == [7]
    # a batch held in a bytearray or a memoryview is located alike
    buf, starts, stops = framed(records)
    keys = the_layout().decoder_keys
    walked = batch.walk(buf, starts, stops, keys)
    for held in (bytearray(buf), memoryview(buf)):
        found = batch.locate(held, starts, stops, keys)  # type: ignore[arg-type]
        assert not found.fallback.any() and (found.start == walked.start).all()


@pytest.mark.parametrize("size", [2, 17, 256])
def test_one_odd_record_in_the_middle_is_walked_alone(size: int) -> None:
    middle = size // 2
    odd = {
        "an unwanted key": record(middle, order=["zz", *KEYS], zz=b""),
        "a key missing": record(middle, s=None),
        "shuffled keys": record(middle, order=["x", "i", "f", "s", "n"]),
        "a feature with no kind": record(middle, s=b""),
        "a float list of another length": record(middle, f=feature("float", b"")),
    }
    for why, bad in odd.items():
        records = [record(j) for j in range(size)]
        records[middle] = bad
        assert walked_rows(records, KEYS_B) == [middle], why
        # the column f is not null: a record without its value cannot be stacked
        check(records, read_at_once=why != "a float list of another length")


def test_shuffled_key_orders_are_walked_record_by_record() -> None:
    rng = random.Random(5)
    few = [3, 40, 41]
    orders = [rng.sample(KEYS, len(KEYS)) if j in few else KEYS for j in range(64)]
    records = [record(j, order=o) for j, o in enumerate(orders)]
    assert walked_rows(records, KEYS_B) == [j for j in few if orders[j] != KEYS]
    fast = check(records)
    assert fast is not None and fast["i"].tolist() == list(range(64))
    # most records in other orders: the check stops and the whole batch is walked
    orders = [rng.sample(KEYS, len(KEYS)) for _ in range(64)]
    records = [record(j, order=o) for j, o in enumerate(orders)]
    assert sum(o == orders[0] for o in orders) < 32
    assert walked_rows(records, KEYS_B) == list(range(64))
    fast = check(records)
    assert fast is not None and fast["i"].tolist() == list(range(64))


def test_a_length_whose_varint_grows_is_walked() -> None:
    # a string of 120 + k bytes, its Feature's length 124 + k: two bytes from k = 4 on
    sizes = [120 + (j % 8) for j in range(32)]
    records = [record(j, s=feature("bytes", bytes_list([b"a" * k]))) for j, k in enumerate(sizes)]
    assert walked_rows(records, KEYS_B) == [j for j in range(32) if j % 8 >= 4]
    fast = check(records)
    assert fast is not None and [len(v) for v in fast["s"][0]] == sizes


def test_empty_lists() -> None:
    # packed as a run of no values (the walk's and the prediction's layout), or with no run
    empty_run = [record(j, n=feature("int64", int64_list_packed([]))) for j in range(8)]
    no_run = [record(j, n=feature("int64", b"")) for j in range(8)]
    for records in (empty_run, no_run):
        assert walked_rows(records, KEYS_B) == []
        fast = check(records)
        assert fast is not None and fast["n"][1].tolist() == [0] * 9
    mixed = [record(j) for j in range(8)]
    mixed[3] = no_run[3]  # record 3 holds no run where the others have one
    assert walked_rows(mixed, KEYS_B) == [3]
    fast = check(mixed)
    assert fast is not None and fast["n"][1].tolist() == [0, 1, 3, 6, 6, 11, 12, 14, 17]
    # a first record with no run: most others do not hold its layout, all are walked
    assert walked_rows([no_run[0], *mixed[1:]], KEYS_B) == list(range(8))


@pytest.mark.parametrize("odd_every", [3, 8])
def test_a_batch_led_by_a_record_of_another_layout_is_laid_out_as_a_typical_one(
    odd_every: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As an array of structs is written: a record with no objects holds its lists with no run,
    # the others with one. A batch led by such a record is laid out first by a record of the
    # median length (most records hold its layout), then by the odd ones' (at least
    # batch.FEW_LEFT of them): none is walked.
    no_run = [record(j, n=feature("int64", b"")) for j in range(256)]
    records = [no_run[j] if j % odd_every == 0 else record(j) for j in range(256)]
    assert walked_rows(records, KEYS_B) == list(range(256))  # the first one's layout fits few
    walked: list[int] = []
    real_walk = batch.walk

    def counted(buf: bytes, starts: Any, stops: Any, keys: Any, lists: bool = False) -> Any:
        walked.append(len(starts))
        return real_walk(buf, starts, stops, keys, lists)

    buf, starts, stops = framed(records)
    with monkeypatch.context() as m:
        m.setattr(batch, "walk", counted)
        found = batch.locate(buf, starts, stops, the_layout().decoder_keys)
    assert walked == [] and not found.fallback.any()
    fast = check(records)
    assert fast is not None and fast["i"].tolist() == list(range(256))
    # an odd record then a damaged one leading: the typical layout, the rest walked
    records[1] = records[1][:-1]
    check(records, read_at_once=False)


def test_a_length_that_would_wrap_its_bytes_is_walked() -> None:
    # The entry's length takes two bytes, the Feature's one: a record whose entry is 128 bytes
    # longer holds, in one byte, the Feature's length plus 128 wrapped to 7 bits; its bytes
    # match the prediction's but its Feature ends before its entry, which the walk refuses.
    text = entry(b"s", feature("bytes", bytes_list([b"t" * 200])))
    value = feature("float", float_list_packed([0.5] * 30))
    inner = ld(1, b"x") + ld(2, value)
    assert len(value) < 128 <= len(inner)
    first = example(text, b"\x0a" + varint(len(inner)) + inner)
    wrapped = example(text, b"\x0a" + varint(len(inner) + 128) + inner + bytes(128))
    keys = [b"s", b"x"]
    assert walked_rows([first, wrapped, first], keys) == [1]
    buf, starts, stops = framed([first, wrapped, first])
    found = batch.locate(buf, starts, stops, keys)
    assert found.fallback.tolist() == [False, True, False]
    assert (found.kind[:, 0] == found.kind[:, 2]).all()


def test_a_record_cut_short_goes_to_the_record_path() -> None:
    records = [record(j) for j in range(12)]
    for cut in (1, 2, 5, 40, len(records[6]) - 1):
        damaged = list(records)
        damaged[6] = records[6][:-cut]
        assert 6 in walked_rows(damaged, KEYS_B)
        check(damaged, read_at_once=False)
    # its outer length kept: the entries run past the record
    body = records[6][2:-3]
    damaged = list(records)
    damaged[6] = b"\x0a" + bytes([len(body)]) + body
    assert 6 in walked_rows(damaged, KEYS_B)
    check(damaged, read_at_once=False)


def test_a_first_record_off_the_layout_leaves_the_batch_to_the_walk() -> None:
    records = [record(j) for j in range(10)]
    records[0] = records[0] + b"\x48\x05"  # an unknown field: no template
    assert walked_rows(records, KEYS_B) == list(range(10))
    check(records, read_at_once=False)
    records[0] = b""  # an empty record: every column null
    assert walked_rows(records, KEYS_B) == list(range(10))
    check(records, read_at_once=False)


def test_random_damage_never_changes_what_is_located_or_read() -> None:
    rng = random.Random(11)
    for _ in range(150):
        size = rng.choice([1, 3, 40])
        records = [record(rng.randrange(0, 2 ** rng.randrange(1, 40))) for _ in range(size)]
        for _ in range(rng.randrange(0, 4)):
            j = rng.randrange(size)
            r = bytearray(records[j])
            what = rng.randrange(4)
            if what == 0 and r:
                r[rng.randrange(len(r))] = rng.randrange(256)
            elif what == 1:
                del r[rng.randrange(len(r) + 1) :]
            elif what == 2:
                at = rng.randrange(len(r) + 1)
                r[at:at] = bytes([rng.randrange(256)])
            else:
                r = bytearray(record(j, order=rng.sample(KEYS, len(KEYS))))
            records[j] = bytes(r)
        lay = the_layout()
        buf, starts, stops = framed(records)
        found = batch.locate(buf, starts, stops, lay.decoder_keys)
        walked = batch.walk(buf, starts, stops, lay.decoder_keys)
        for name in ("kind", "start", "stop", "fallback"):
            assert (getattr(found, name) == getattr(walked, name)).all(), name
        fast = lay.collate_raw(buf, starts, stops)
        slow = decoded(lay, records)
        assert fast is None or (slow is not None and same(fast, slow))


def test_the_float_columns_reach_torch_with_no_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    from spark_tfrecord._format.columns import batches
    from spark_tfrecord._loaders.torch import _tensor

    # the list "x" is gathered as rows (batch.fixed_floats), the scalar "f" with the batch's
    # other one-number features (gathered.scalars): each array is the tensor's memory
    gathered: dict[str, Any] = {}
    fixed_floats, scalars = batch.fixed_floats, batches.scalars

    def rows(*args: Any) -> Any:
        gathered["x"] = fixed_floats(*args)
        return gathered["x"]

    def numbers(buf: bytes, located: Any, slots: Any) -> Any:
        found = scalars(buf, located, slots)
        (slot,) = [s for s, (kind, _) in found.items() if kind == FLOAT]
        gathered["f"] = found[slot][1]
        return found

    monkeypatch.setattr(batch, "fixed_floats", rows)
    monkeypatch.setattr(batches, "scalars", numbers)
    for size in (4, 1024):  # a gather of bytes, and of rows
        gathered.clear()
        buf, starts, stops = framed([record(j) for j in range(size)])
        found = the_layout().collate_raw(buf, starts, stops)
        assert found is not None and sorted(gathered) == ["f", "x"]
        for key, array in gathered.items():
            tensor = _tensor(found[key])
            assert isinstance(tensor, torch.Tensor)
            assert np.shares_memory(tensor.numpy(), array), key
            assert tensor.data_ptr() == array.__array_interface__["data"][0]
            assert found[key].flags.writeable and found[key].flags.c_contiguous
            assert not np.shares_memory(found[key], np.frombuffer(buf, np.uint8))
        assert found["x"][size - 1, 0] == np.float32((size - 1) / 3)
        assert found["f"][size - 1] == np.float32((size - 1) / 2)


def test_bytes_lists_are_read_for_the_batch_at_once_as_the_record_decoder_reads_them() -> None:
    # A bytes column's entries are found for the whole batch at once (entries.bytes_entries):
    # any number of values in a list, of any length. A list that strays from the layout writers
    # produce hands the batch to the record decoder, for its values or its error.
    from spark_tfrecord._format.entries.entries import bytes_entries
    from spark_tfrecord._format.entries.lists import bytes_list as read_list

    def listed(buf: bytes, start: Any, stop: Any) -> list[list[bytes]]:
        return [read_list(buf, a, b) for a, b in zip(start.tolist(), stop.tolist())]

    lists_of = {
        "one value each": [[f"r{j}".encode()] for j in range(40)],
        "lengths 0, 1 and 127": [[b""], [b"a"], [b"b" * 127]] * 3,
        "empty lists": [[b"x"], [], [b"yz"], []],
        "not UTF-8": [[b"\xff"], [b"\xed\xa0\x80"], [b"\xc3"], [b"ok"]],
        "a value of 128 bytes": [[b"a"], [b"c" * 128]],
        "two values in a list": [[b"a"], [b"b", b"c"]],
        "lists of every length": [[b"v%d" % k for k in range(j % 4)] for j in range(13)],
    }
    damaged = {  # a list's bytes as given: a byte after its value, a length past its end
        "a byte after the value": b"\x0a\x03abc\x0a",
        "a length past the end": b"\x0a\x05abc",
        "another field": b"\x12\x01a",
    }
    for why, lists in lists_of.items():
        records = [record(j, s=feature("bytes", bytes_list(vs))) for j, vs in enumerate(lists)]
        buf, starts, stops = framed(records)
        found = batch.locate(buf, starts, stops, the_layout().decoder_keys)
        start, stop = found.start[3], found.stop[3]
        entries = bytes_entries(buf, start, stop)
        assert entries is not None, why
        first, last, counts = entries
        flat = [buf[a:b] for a, b in zip(first.tolist(), last.tolist())]
        assert flat == [v for vs in lists for v in vs] and counts.tolist() == list(map(len, lists))
        assert [v for vs in listed(buf, start, stop) for v in vs] == flat, why
        # the column is a string: a record giving it two values is the record path's to refuse
        check(records, read_at_once=max(map(len, lists)) <= 1)
    for why, raw in damaged.items():
        records = [record(j) for j in range(6)]
        records[2] = record(2, s=ld(1, raw))
        buf, starts, stops = framed(records)
        found = batch.locate(buf, starts, stops, the_layout().decoder_keys)
        start, stop = found.start[3], found.stop[3]
        assert bytes_entries(buf, start, stop) is None, why
        check(records, read_at_once=False)
        if why == "another field":  # an unknown field in the list, skipped
            assert listed(buf, start, stop)[2] == []
        else:
            with pytest.raises(MalformedRecord):
                listed(buf, start, stop)
    # a column of fixed lists of strings, and one of string lists of every length
    lay = layout(
        {
            "type": "struct",
            "fields": [
                {"name": n, "type": {"type": "array", "elementType": "string",
                 "containsNull": True}, "nullable": True, "metadata": {}}
                for n in ("w", "v")
            ],
        },
        {"w": (2, 2)},
        None,
        "test",
    )  # fmt: skip
    records = [
        example(
            entry(b"w", feature("bytes", bytes_list([b"a%d" % j, b"\xff"]))),
            entry(b"v", feature("bytes", bytes_list([b"b"] * (j % 3)))),
        )
        for j in range(9)
    ]
    buf, starts, stops = framed(records)
    fast = lay.collate_raw(buf, starts, stops)
    assert fast is not None and same(fast, lay.collate([lay.record(r) for r in records]))
    assert fast["w"][4] == ["a4", "\ufffd"]
    assert fast["v"][1].tolist() == [0, 0, 1, 3, 3, 4, 6, 6, 7, 9]


def test_a_gather_of_entries_is_their_bytes_concatenated() -> None:
    # entries.gather copies entries of one length as rows, of about one length as rows cut to
    # their lengths, skewed ones by an index a byte and long ones a slice each: the same bytes
    from spark_tfrecord._format.entries.entries import gather

    rng = np.random.default_rng(5)
    buf = rng.integers(0, 256, 4096, np.uint8).tobytes()
    cases = {
        "one length": [8] * 50,
        "one shorter": [8] * 49 + [7],
        "about one length": [5, 7, 6, 8, 0, 7] * 9,
        "skewed": [1] * 40 + [200],
        "long": [300, 700, 0, 1000],
        "empty": [0, 0, 0],
        "none": [],
    }
    for why, lengths in cases.items():
        for at_the_end in (False, True):  # the last entry ends where the buffer does
            start = rng.integers(0, len(buf) - 1000, len(lengths))
            if at_the_end and lengths:
                start[-1] = len(buf) - lengths[-1]
            stop = start + np.array(lengths, np.int64)
            got = gather(buf, start, stop)
            want = b"".join(buf[a:b] for a, b in zip(start.tolist(), stop.tolist()))
            assert got.dtype == np.uint8 and got.tobytes() == want, (why, at_the_end)


def test_rows_compared_as_values_are_compared_byte_by_byte() -> None:
    # record_layout compares a batch's header rows as n-byte values: the same answer as a
    # comparison of each byte, for any width, a row or rows, sliced (not contiguous) or not
    rng = np.random.default_rng(2)
    for n in (0, 1, 2, 7, 8, 12, 15, 16, 33):
        rows = rng.integers(0, 3, (300, n + 2), dtype=np.uint8)
        row = rows[5].copy()
        rows[::7] = row
        other = rng.integers(0, 3, (300, n + 2), dtype=np.uint8)
        other[::3] = rows[::3]
        for a, b in ((rows, row), (rows, other), (rows[:, 1 : n + 1], other[:, 1 : n + 1])):
            a, b = a[:, :n], b[..., :n]
            found = record_layout._equal_rows(a, b)
            assert found.dtype == np.bool_ and found.tolist() == (a == b).all(axis=1).tolist()


def test_a_batch_led_by_an_example_of_no_features_is_walked() -> None:
    # Example(features=Features()) is b"\x0a\x00": a layout of no entries, which the batch's
    # check cannot lay the others out by; the walk finds the others' features.
    records = [b"\x0a\x00", record(1), b"", record(2)]
    buf, starts, stops = framed(records)
    keys = the_layout().decoder_keys
    found = batch.locate(buf, starts, stops, keys)
    walked = batch.walk(buf, starts, stops, keys)
    for name in ("kind", "start", "stop", "fallback"):
        assert (getattr(found, name) == getattr(walked, name)).all(), name
    assert (found.kind[:, 0] == -1).all() and (found.kind[:, 1] >= 0).any()


def of_one_length(j: int, **changed: Any) -> bytes:
    """Record j with every value of one size (as a writer's records of fixed-size values): an
    id of 3 varint bytes, a 4-byte string, two ints."""
    values = {
        "i": feature("int64", int64_list_packed([2**14 + j])),
        "s": feature("bytes", bytes_list([b"r%03d" % (j % 1000)])),
        "n": feature("int64", int64_list_packed([5, 6])),
    }
    return record(j, **{**values, **changed})


def test_records_of_one_length_are_checked_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    records = [of_one_length(j) for j in range(256)]
    assert len({len(r) for r in records}) == 1
    with monkeypatch.context() as m:  # every header byte at once: no entry by entry check
        m.setattr(record_layout, "_places", None)
        assert walked_rows(records, KEYS_B) == []
        fast = check(records)
    assert fast is not None and fast["i"].tolist() == [2**14 + j for j in range(256)]
    assert fast["s"][0][7] == "r007" and fast["n"][1][:3].tolist() == [0, 2, 4]
    # the same length, another layout in the middle: checked entry by entry, or walked
    others = {
        "an id a byte shorter, a string a byte longer": (
            of_one_length(9, i=feature("int64", int64_list_packed([300])),
                          s=feature("bytes", bytes_list([b"r0009"]))),
            [],
            True,
        ),
        "another key of the same length": (
            of_one_length(9, order=["i", "x", "g", "s", "n"],
                          g=feature("float", float_list_packed([4.5]))),
            [128],
            False,  # the column f is not null: a record without it is the record path's
        ),
        "a float list's tag where the ints' is": (
            of_one_length(9, n=feature("float", int64_list_packed([5, 6]))),
            [128],
            False,
        ),
    }  # fmt: skip
    for why, (odd, walked, read) in others.items():
        changed = [*records[:128], odd, *records[129:]]
        assert len(odd) == len(records[0]), why
        assert walked_rows(changed, KEYS_B) == walked, why
        check(changed, read_at_once=read)
    # any byte of any record changed, its length kept: located as the walk locates it
    rng = random.Random(3)
    lay = the_layout()
    for _ in range(300):
        size = rng.choice([1, 2, 40, 256])
        damaged = [bytearray(r) for r in records[:size]]
        for _ in range(rng.randrange(1, 4)):
            r = damaged[rng.randrange(size)]
            r[rng.randrange(len(r))] = rng.choice([0, 1, 0x0A, 0x12, 0x80, rng.randrange(256)])
        buf, starts, stops = framed([bytes(r) for r in damaged])
        found = batch.locate(buf, starts, stops, lay.decoder_keys)
        walked_batch = batch.walk(buf, starts, stops, lay.decoder_keys)
        for name in ("kind", "start", "stop", "fallback"):
            assert (getattr(found, name) == getattr(walked_batch, name)).all(), name
