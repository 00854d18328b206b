"""The mutated files of the reliability tests (test_fuzz), for any test that reads them.

`make_cases` gives, from a seed, a fixed list of cases: valid files mutated anywhere (framing
included), truncated, sound framing around mutated or hostile protobuf payloads (`mutate`,
`hostile_payloads` of `base_records`), random bytes; written plain, gzip or deflate; and
gzip/deflate files whose compressed bytes are damaged. Each case has a schema (`EXAMPLE`,
`SEQUENCE` or `BYTE_ARRAY`) and a mode of `READS`. test_fuzz checks them against the oracle
(support/tfrecord_oracle.py); test_python_source_reliability reads them through both routes, the
jar and the Python data source; test_codec_differential decodes the records.
"""

from __future__ import annotations

import gzip
import random
import zlib
from dataclasses import dataclass

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
    ld,
    varint,
)
from support.tfrecord_oracle import Column

#: The seed of the reliability tests' corpus.
SEED = 20261122


@dataclass(frozen=True)
class Schema:
    ddl: str
    options: dict[str, str]
    columns: list[Column]

    @property
    def record_type(self) -> str:
        return self.options["recordType"]


EXAMPLE = Schema(
    "a long, b array<float>, c binary, d array<binary>, e double, f int",
    {"recordType": "Example"},
    [
        Column("a", "long", "scalar"),
        Column("b", "float", "array"),
        Column("c", "binary", "scalar"),
        Column("d", "binary", "array"),
        Column("e", "double", "scalar"),
        Column("f", "int", "scalar"),
    ],
)
SEQUENCE = Schema(
    "a long, fl array<array<long>>",
    {"recordType": "SequenceExample"},
    [Column("a", "long", "scalar"), Column("fl", "long", "nested")],
)
BYTE_ARRAY = Schema("byteArray binary", {"recordType": "ByteArray"}, [])
# (schema, mode): ByteArray records have no payload to get wrong.
READS = [(s, m) for s in (EXAMPLE, SEQUENCE) for m in ("FAILFAST", "DROPMALFORMED", "PERMISSIVE")]
READS.append((BYTE_ARRAY, "FAILFAST"))


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
                entry(b"f", feature("int64", int64_list_unpacked([rng.randint(-99, 99)]))),
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
        ld(1, ld(1, ld(1, b"a") + ld(2, ld(3, ld(1, b"\xff" * 11 + b"\x01"))))),  # 12-byte varint
        ld(1, ld(1, ld(1, b"fl") + ld(2, ld(3, b"")))),  # a context feature for a list column
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


@dataclass
class Case:
    name: str
    content: bytes  # the TFRecord stream (decompressed)
    compression: str  # none, gzip, deflate
    damaged_compression: bool  # the compressed bytes themselves were mutated
    schema: Schema
    mode: str

    @property
    def file_name(self) -> str:
        extension = {"none": "", "gzip": ".gz", "deflate": ".deflate"}[self.compression]
        return f"{self.name}.tfrecord{extension}"

    def file_bytes(self, rng: random.Random) -> bytes:
        if self.compression == "none":
            return self.content
        packed = (
            gzip.compress(self.content)
            if self.compression == "gzip"
            else (zlib.compress(self.content))
        )
        return mutate(rng, packed) if self.damaged_compression else packed


def make_cases(seed: int, count: int) -> list[tuple[Case, bytes]]:
    """The first ``count`` cases of ``seed``, each with its file's bytes (the first ``n`` of
    a seed are the same whatever the count)."""
    rng = random.Random(seed)
    base = base_records(rng)
    cases = []
    for n in range(count):
        kind = rng.randrange(5)
        if kind == 0:  # a valid file, mutated anywhere (framing included)
            content = mutate(rng, b"".join(frame(r) for r in rng.sample(base, 3)))
        elif kind == 1:  # a valid file, truncated
            whole = b"".join(frame(r) for r in rng.sample(base, 3))
            content = whole[: rng.randrange(len(whole) + 1)]
        elif kind == 2:  # sound framing around mutated or hostile payloads
            payloads = [mutate(rng, r) for r in rng.sample(base, 2)]
            payloads += rng.sample(hostile_payloads(rng), 2)
            rng.shuffle(payloads)
            content = b"".join(frame(p) for p in payloads)
        elif kind == 3:  # random bytes
            content = rng.randbytes(rng.randint(0, 300))
        else:  # a valid file, compressed, then its compressed bytes damaged
            content = b"".join(frame(r) for r in rng.sample(base, 3))
        compression = "none" if kind < 4 and rng.random() < 0.6 else rng.choice(["gzip", "deflate"])
        schema, mode = rng.choice(READS)
        case = Case(f"case{n:05d}", content, compression, kind == 4, schema, mode)
        cases.append((case, case.file_bytes(rng)))
    return cases
