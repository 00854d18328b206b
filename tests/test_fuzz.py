"""Thousands of mutated and random files, decoded on the driver's JVM with a fixed seed.

Each must end in rows or in one of our two clear errors (a framing error naming file and offset,
or a payload error naming the record), never another exception type, a hang or a crash.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from tfrecord_bytes import (
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
    ld,
    varint,
)

SEED = 20261121
MAX_CASES = 2000
MAX_SECONDS = 60
EXPECTED = {
    "io.github.sparktfrecord.TFRecordCorruptException",
    "io.github.sparktfrecord.TFRecordDataException",
}


def base_records(rng: random.Random) -> list[bytes]:
    def ints() -> list[int]:
        return [rng.randint(-(2**63), 2**63 - 1) for _ in range(rng.randint(0, 4))]

    def floats() -> list[float]:
        return [rng.uniform(-1e6, 1e6) for _ in range(rng.randint(0, 4))]

    records = []
    for _ in range(6):
        step = feature("int64", int64_list_packed(ints()))
        records += [
            example(
                entry(b"a", feature("int64", int64_list_packed(ints()[:1]))),
                entry(b"b", feature("float", float_list_packed(floats()))),
                entry(b"c", feature("bytes", bytes_list([rng.randbytes(rng.randint(0, 9))]))),
                entry(b"d", feature("bytes", bytes_list([b"x", b""]))),
                entry(b"f", feature("int64", int64_list_unpacked(ints()[:1]))),
                entry(b"e", feature("float", float_list_unpacked(floats()[:1]))),
            ),
            ld(1, entry(b"a", feature("int64", int64_list_packed([7]))))
            + ld(2, ld(1, ld(1, b"fl") + ld(2, ld(1, step) + ld(1, step)))),
        ]
    return records


def hostile_payloads(rng: random.Random) -> list[bytes]:
    return [
        b"\xff" * rng.randint(1, 20),  # an endless varint
        field(1, 2, b"")[:-1] + b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",  # huge length
        b"\x0b" * rng.randint(1, 3000) + b"\x0c" * rng.randint(0, 3000),  # deep groups
        ld(1, ld(1, ld(1, b"a") + ld(2, ld(3, ld(1, b"\x80" * 5))))),  # run ends mid-varint
        ld(1, ld(1, ld(1, b"b") + ld(2, ld(2, ld(1, b"\x00" * 7))))),  # 7-byte float run
        ld(1, ld(1, ld(1, b"a") + ld(2, field(3, 0, varint(1))))),  # kind with wire type 0
        rng.randbytes(rng.randint(0, 200)),
    ]


def mutate(rng: random.Random, data: bytes) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 6)):
        if not b:
            break
        i = rng.randrange(len(b))
        choice = rng.random()
        if choice < 0.6:
            b[i] ^= 1 << rng.randrange(8)
        elif choice < 0.8:
            b[i] = rng.choice([0x00, 0x7F, 0x80, 0xFF, 0x0A, 0x12, 0x1A])
        else:
            del b[i : i + rng.randint(1, 8)]
    return bytes(b)


def test_fuzzed_files_end_in_rows_or_clear_errors(spark, tmp_path: Path) -> None:
    from py4j.protocol import Py4JJavaError

    rng = random.Random(SEED)
    files = spark._jvm.io.github.sparktfrecord.TFRecordFiles
    schemas = [
        (
            "a long, b array<float>, c string, d array<binary>, e double, f int",
            {"recordType": "Example"},
        ),
        ("a long, fl array<array<long>>", {"recordType": "SequenceExample"}),
        ("byteArray binary", {"recordType": "ByteArray"}),
        ("a long, c binary", {"recordType": "Example", "mode": "DROPMALFORMED"}),
    ]
    schemas_json = [(spark.createDataFrame([], ddl).schema.json(), opts) for ddl, opts in schemas]
    base = base_records(rng)
    path = tmp_path / "case.tfrecord"
    outcomes: dict[str, int] = {}
    deadline = time.monotonic() + MAX_SECONDS
    cases = 0
    while cases < MAX_CASES and time.monotonic() < deadline:
        kind = rng.randrange(4)
        if kind == 0:  # a valid file, mutated anywhere (framing included)
            content = mutate(rng, b"".join(frame(r) for r in rng.sample(base, 3)))
        elif kind == 1:  # a valid file, truncated
            whole = b"".join(frame(r) for r in rng.sample(base, 3))
            content = whole[: rng.randrange(len(whole) + 1)]
        elif kind == 2:  # sound framing around a mutated or hostile payload
            payloads = [mutate(rng, r) for r in rng.sample(base, 2)]
            payloads += rng.sample(hostile_payloads(rng), 2)
            content = b"".join(frame(p) for p in payloads)
        else:  # random bytes
            content = rng.randbytes(rng.randint(0, 300))
        path.write_bytes(content)
        schema_json, options = rng.choice(schemas_json)
        try:
            rows = files.decodeFile(str(path), schema_json, options)
            outcomes["rows"] = outcomes.get("rows", 0) + 1
            assert rows >= 0
        except Py4JJavaError as e:
            name = e.java_exception.getClass().getName()
            if name not in EXPECTED:
                pytest.fail(f"case {cases} (seed {SEED}, {options}): {name}: {e.java_exception}")
            message = str(e.java_exception.getMessage())
            assert "at byte offset" in message and str(path) in message, message
            outcomes[name] = outcomes.get(name, 0) + 1
        cases += 1
    assert cases >= 500, f"only {cases} cases in {MAX_SECONDS}s"
    # The corpus reaches every outcome: rows, framing errors and payload errors.
    assert set(outcomes) == {"rows"} | EXPECTED, outcomes
