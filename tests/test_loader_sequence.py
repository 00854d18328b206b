"""The loaders' batches of SequenceExamples (``torch_dataset``, ``grain_source``): ``collate``
of a DataLoader's batch decodes it at once (the batch decoder's ``sequence.locate`` and steps,
as the jar-less source's batch path), giving exactly the record path's arrays: a counter on the
record path fails the test if a clean batch is decoded record by record. A record whose name is
both a context feature and a feature list fails in the loaders as the jar (JPype) fails it,
whichever field comes first, batch or record.
"""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import spark_tfrecord
from spark_tfrecord import errors
from spark_tfrecord._loaders import source
from support.jar_decoder import Failure, jar_results, schema_of_ddl
from support.tfrecord_bytes import (
    bytes_list,
    entry,
    feature,
    float_list_packed,
    int64_list_packed,
    ld,
    write_records,
)

SEQUENCE = {"recordType": "SequenceExample"}
DDL = (
    "id bigint, label string, tags array<string>, f array<array<float>>, "
    "g array<array<bigint>>, s array<array<string>>, b array<array<binary>>, "
    "d array<array<double>>, st array<struct<a: float, w: array<bigint>>>"
)
RECORDS = 600
BATCH = 64
FLOATS = [0.0, -0.0, 1.5, math.nan, math.inf, -math.inf, 1e-45, 3.4e38]
INTS = [0, -1, 1, 2**63 - 1, -(2**63), 2**35]


def _steps(rng: random.Random, values: list[Any], i: int) -> list[list[Any]] | None:
    """Record i's feature list: absent, of no steps, or steps of 0 to 3 values."""
    if i % 7 == 3:
        return None
    if i % 11 == 5:
        return []
    return [[rng.choice(values) for _ in range(rng.randint(0, 3))] for _ in range(i % 5 + 1)]


def _row(i: int, rng: random.Random) -> tuple[Any, ...]:
    lists = [
        _steps(rng, values, i + k)
        for k, values in enumerate(
            [FLOATS, INTS, ["", "a", "é", "日本"], [b"", b"\xff", b"\x00\x80"], FLOATS]
        )
    ]
    structs = (
        None
        if i % 9 == 4
        else [(rng.choice(FLOATS), [rng.choice(INTS)] * (k % 3)) for k in range(i % 4)]
    )
    label = None if i % 3 == 0 else rng.choice(["", "x", "é"])
    tags = None if i % 5 == 0 else ["t"] * (i % 3)
    return (None if i % 13 == 0 else i, label, tags, *lists, structs)


@pytest.fixture(scope="module")
def folder(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> str:
    rng = random.Random(61)
    df = spark.createDataFrame([_row(i, rng) for i in range(RECORDS)], DDL)
    out = str(tmp_path_factory.mktemp("loader_sequence") / "seq")
    spark_tfrecord.write(df.coalesce(1), out, record_type="SequenceExample")
    return out


def _exact(value: Any) -> Any:
    """A batch's value in a form compared exactly: arrays by dtype, shape and bits."""
    if hasattr(value, "numpy"):  # a torch tensor
        value = value.numpy()
    if isinstance(value, np.ndarray):
        return (str(value.dtype), value.shape, value.tobytes())
    if isinstance(value, dict):
        return {k: _exact(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [_exact(v) for v in value])
    return (type(value).__name__, value)


def _counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The records the record path decodes from now on."""
    decoded: list[int] = []
    record_path = source.RecordSource._decode

    def counted(self: Any, i: int) -> Any:
        decoded.append(i)
        return record_path(self, i)

    monkeypatch.setattr(source.RecordSource, "_decode", counted)
    return decoded


@pytest.mark.parametrize("loader", ["torch", "grain"])
def test_sequence_batches_take_the_batch_path(
    folder: str, loader: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every batch (in order, and shuffled) is decoded at once, as the record path decodes
    its records one by one, bit for bit."""
    if loader == "torch":
        ds: Any = spark_tfrecord.torch_dataset(folder, options=SEQUENCE)
    else:
        ds = spark_tfrecord.grain_source(folder, options=SEQUENCE)
    shuffled = list(range(RECORDS))
    random.Random(62).shuffle(shuffled)
    batches = [list(range(a, min(a + BATCH, RECORDS))) for a in range(0, RECORDS, BATCH)]
    batches += [shuffled[a : a + BATCH] for a in range(0, RECORDS, BATCH)]
    for indices in batches:
        decoded = _counted(monkeypatch)
        batch = ds.collate(ds.__getitems__(indices))
        assert decoded == []
        want = ds.collate([ds[j] for j in indices])
        assert sorted(batch) == sorted(want)
        for key in want:
            assert _exact(batch[key]) == _exact(want[key]), key
        monkeypatch.undo()
    one = ds.collate(ds.__getitems__([23]))  # record 23: four steps of f, three structs
    assert one["id"][0].tolist() == [23]
    assert one["f"][1].tolist() == [0, 4] and len(one["f"][2]) == 5
    assert one["st/a"][1].tolist() == [0, 3]
    assert one["st/w"][1].tolist() == [0, 3] and one["st/w"][2].tolist() == [0, 0, 1, 3]


def _built(i: int, odd: str) -> bytes:
    """Record i, byte by byte; ``odd`` gives a name both fields, or an array of structs' fields
    feature lists of unequal length (see the test)."""
    context = [entry(b"id", feature("int64", int64_list_packed([i])))]
    context.append(entry(b"label", feature("bytes", bytes_list([b"n%d" % i]))))
    floats = feature("float", float_list_packed([1.5] * (i % 3)))
    lists = [ld(1, ld(1, b"f") + ld(2, b"".join(ld(1, floats) for _ in range(i % 4))))]
    a = feature("float", float_list_packed([0.5]))
    n = feature("int64", int64_list_packed([i]))
    lists.append(ld(1, ld(1, b"st/a") + ld(2, b"".join(ld(1, a) for _ in range(i % 3)))))
    steps = i % 3 + (odd == "unequal")
    lists.append(ld(1, ld(1, b"st/n") + ld(2, b"".join(ld(1, n) for _ in range(steps)))))
    if odd.startswith("both_list"):  # the feature list's name a context feature too
        context.append(entry(b"f", feature("float", float_list_packed([2.0]))))
    elif odd.startswith("both_context"):  # the context feature's name a feature list too
        step = feature("bytes", bytes_list([b"x"]))
        lists.append(ld(1, ld(1, b"label") + ld(2, ld(1, step))))
    body, lists_field = ld(1, b"".join(context)), ld(2, b"".join(lists))
    return lists_field + body if odd.endswith("order") else body + lists_field


@pytest.mark.parametrize(
    "odd", ["both_list", "both_list_order", "both_context", "both_context_order", "unequal"]
)
def test_a_record_the_jar_refuses_fails_as_the_jar(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, odd: str
) -> None:
    """A record whose name is a context feature and a feature list (either first), or whose
    array of structs' fields are feature lists of unequal length: the jar's condition, offset
    and message, from the record and from the batch that holds it; the batches without it
    still take the batch path."""
    ddl = "id bigint, label string, f array<array<float>>, st array<struct<a: float, n: bigint>>"
    at = 70
    path = write_records(
        tmp_path / "part-0.tfrecord", [_built(i, odd if i == at else "") for i in range(200)]
    )
    jar = jar_results(str(path), schema_of_ddl(ddl), SEQUENCE)
    (failed,) = [r for _, r in jar if isinstance(r, Failure)]
    assert failed.condition == "TFRECORD_DATA_MISMATCH"
    ds = spark_tfrecord.torch_dataset(str(tmp_path), ddl, options=SEQUENCE)
    with pytest.raises(errors.CorruptFileError) as raised:
        ds[at]
    with pytest.raises(errors.CorruptFileError) as in_batch:
        ds.collate(ds.__getitems__(list(range(BATCH, 2 * BATCH))))
    for error in (raised.value, in_batch.value):
        assert errors.condition(error) == failed.condition
        got = errors.parameters(error)
        for name in ("offset", "column", "reason"):
            assert got.get(name) == failed.parameters.get(name), name
    decoded = _counted(monkeypatch)
    clean = ds.collate(ds.__getitems__(list(range(BATCH))))
    assert decoded == [] and clean["id"][0].tolist() == list(range(BATCH))
