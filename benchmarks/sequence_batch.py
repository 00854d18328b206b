"""The jar-less source's read of SequenceExamples (issue 57), and the loaders' (``--case
loader``): the record path (each record decoded alone) against the batch path (a batch of
records decoded at once with NumPy), on the same file, in one run.

    .cache/venv/spark-4/bin/python benchmarks/sequence_batch.py [--records 200000] [--rounds 5]
        [--case source|loader] [--structs]

Writes (once, under ``--data``) a file of SequenceExamples: a context int64 and string, and two
feature lists, floats and int64s, of 3 to 7 steps of 2 to 6 values. Then reads it whole with the
source's own reader in this process, with no Spark (what a Python worker of the source does:
framing, decoding, Arrow batches), ``--rounds`` times each way, the order alternating; both ways
must give the same table. With ``--case loader``, reads it whole through ``grain_source``
(``torch_dataset`` shares it) as a DataLoader does, ``collate(__getitems__(...))`` of
:data:`LOADER_BATCH` records at a time; both ways must give the same arrays. Prints each
way's median wall and CPU seconds (CPU: this process's, which holds on a machine shared with
other work) and records/s, and their ratio. ``--structs`` adds an array of structs (a float and
an int64 field: a feature list each, one value per step, as many steps as the others).
"""

from __future__ import annotations

import argparse
import random
import statistics
import struct
import time
from pathlib import Path
from typing import Any

import pyarrow as pa

import spark_tfrecord
from spark_tfrecord._format.columns import layout
from spark_tfrecord._format.columns.ddl import parse_ddl
from spark_tfrecord._format.datasets.inference import as_nullable
from spark_tfrecord._format.files.files import file_system
from spark_tfrecord._format.frames.crc import crc32c, masked
from spark_tfrecord._source import arrow_read, batch_arrays
from spark_tfrecord._source.options import ReadOptions

DDL = "id bigint, name string, frames array<array<float>>, ids array<array<bigint>>"
#: With ``--structs``: the array of structs.
STRUCTS = "steps array<struct<x: float, n: bigint>>"
SEQUENCE = {"recordType": "SequenceExample"}
#: Records a loader's batch holds.
LOADER_BATCH = 256


def _varint(v: int) -> bytes:
    out = bytearray()
    while v > 0x7F:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def _ld(field: int, payload: bytes) -> bytes:
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


def _entry(key: bytes, value: bytes) -> bytes:
    return _ld(1, _ld(1, key) + _ld(2, value))


def _record(i: int, rng: random.Random, structs: bool) -> bytes:
    """SequenceExample i: its context, then its feature lists, as writers lay them out."""
    context = _entry(b"id", _ld(3, _ld(1, _varint(i)))) + _entry(
        b"name", _ld(1, _ld(1, b"name-%d" % i))
    )
    steps = rng.randint(3, 7)
    frames = b"".join(
        _ld(1, _ld(2, _ld(1, struct.pack(f"<{n}f", *(rng.random() for _ in range(n))))))
        for n in (rng.randint(2, 6) for _ in range(steps))
    )
    ids = b"".join(
        _ld(1, _ld(3, _ld(1, b"".join(_varint(rng.randint(0, 10**6)) for _ in range(n)))))
        for n in (rng.randint(2, 6) for _ in range(steps))
    )
    lists = _entry(b"frames", frames) + _entry(b"ids", ids)
    if structs:
        xs = (_ld(1, _ld(2, _ld(1, struct.pack("<f", rng.random())))) for _ in range(steps))
        ns = (_ld(1, _ld(3, _ld(1, _varint(rng.randint(0, 10**6))))) for _ in range(steps))
        lists += _entry(b"steps/x", b"".join(xs)) + _entry(b"steps/n", b"".join(ns))
    return _ld(1, context) + _ld(2, lists)


def write(path: Path, records: int, structs: bool) -> None:
    """The file of ``records`` SequenceExamples, framed as TFRecords."""
    crc = crc32c()
    rng = random.Random(0)
    with path.open("wb") as f:
        for i in range(records):
            data = _record(i, rng, structs)
            header = struct.pack("<Q", len(data))
            f.write(header + struct.pack("<I", masked(crc(header))))
            f.write(data + struct.pack("<I", masked(crc(data))))


def read(path: Path, ddl: str) -> tuple[float, float, pa.Table]:
    """The file read whole by the source's reader: wall and CPU seconds, and the table."""
    fs, where = file_system(str(path), None)
    options = ReadOptions.parse(SEQUENCE)
    reader = arrow_read.ArrowRead(as_nullable(parse_ddl(ddl)), options, fs, where)
    wall, cpu = time.perf_counter(), time.process_time()
    batches = list(reader.read(reader.in_order()))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return wall, cpu, pa.Table.from_batches(batches, reader.target)


def load(path: Path, ddl: str) -> tuple[float, float, list[Any]]:
    """The file's folder read whole through ``grain_source``'s batches: wall and CPU seconds,
    and the batches (each column's arrays as bytes, to compare)."""
    ds = spark_tfrecord.grain_source(path.parent, ddl, options=SEQUENCE)
    n = len(ds)
    wall, cpu = time.perf_counter(), time.process_time()
    batches = [
        ds.collate(ds.__getitems__(list(range(a, min(a + LOADER_BATCH, n)))))
        for a in range(0, n, LOADER_BATCH)
    ]
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return wall, cpu, [_exact(b) for b in batches]


def _exact(value: Any) -> Any:
    if hasattr(value, "tobytes"):
        return (str(value.dtype), value.shape, value.tobytes())
    if isinstance(value, dict):
        return {k: _exact(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_exact(v) for v in value]
    return value


def _switch(case: str, batch: bool) -> None:
    """The batch path on or off (the record path for every batch)."""
    if case == "source":
        arrays = _PATHS["arrays"] if batch else lambda *_: None
        batch_arrays.BatchArrays.arrays = arrays  # type: ignore[method-assign]
    else:
        collate = _PATHS["collate_raw"] if batch else lambda *_: None
        layout.Layout.collate_raw = collate  # type: ignore[method-assign]


_PATHS: dict[str, Any] = {
    "arrays": batch_arrays.BatchArrays.arrays,
    "collate_raw": layout.Layout.collate_raw,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--case", choices=["source", "loader"], default="source")
    parser.add_argument("--structs", action="store_true")
    parser.add_argument("--data", type=Path, default=Path("/tmp/tfrecord-bench-sequence"))
    args = parser.parse_args()
    ddl = DDL + (", " + STRUCTS if args.structs else "")
    folder = f"sequence{'-structs' if args.structs else ''}-{args.records}"
    path = args.data / folder / "part-0.tfrecord"
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        write(path, args.records, args.structs)
    times: dict[str, list[tuple[float, float]]] = {"record": [], "batch": []}
    results: dict[str, Any] = {}
    try:
        for r in range(args.rounds):
            for name in sorted(times, reverse=bool(r % 2)):
                _switch(args.case, name == "batch")
                run = read if args.case == "source" else load
                wall, cpu, results[name] = run(path, ddl)
                times[name].append((wall, cpu))
    finally:
        _switch(args.case, True)
    if args.case == "source":
        assert results["batch"].num_rows == args.records
        assert results["batch"].equals(results["record"]), "the two paths' tables differ"
    else:
        assert results["batch"] == results["record"], "the two paths' batches differ"
    size = path.stat().st_size / 1e6
    print(
        f"{args.records} SequenceExamples ({ddl}), {size:.1f} MB, pyarrow {pa.__version__}, "
        + ("the source" if args.case == "source" else f"grain_source, batches of {LOADER_BATCH}")
    )
    medians = {}
    for name, found in times.items():
        wall = statistics.median(w for w, _ in found)
        cpu = statistics.median(c for _, c in found)
        medians[name] = (wall, cpu)
        print(
            f"{name:6s} wall {wall:6.2f} s ({args.records / wall:9,.0f} records/s), "
            f"CPU {cpu:6.2f} s ({args.records / cpu:9,.0f} records/s)"
        )
    (rw, rc), (bw, bc) = medians["record"], medians["batch"]
    print(f"batch path / record path: {rw / bw:.1f}x wall, {rc / bc:.1f}x CPU")


if __name__ == "__main__":
    main()
