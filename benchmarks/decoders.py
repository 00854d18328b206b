"""How to decode Examples in a trainer without TensorFlow: the choices issue 34 weighed, on the
same records, values checked against each other.

    python benchmarks/decoders.py --data DIR [--records 50000] [--batch 256]

DIR is a folder a spark-tfrecord write made (benchmarks/loaders.py writes them under its
``--data``: ``narrow`` and ``image``). Its records are read once into memory; then, per
choice, records/s of decoding only (no file reads), one process:

- ``protobuf``: the ``protobuf`` package's parser (upb, in C, what the ``tfrecord`` package
  uses) into ``tf.train.Example`` messages, then each wanted feature's values into NumPy;
- ``record``: spark-tfrecord's record decoder (``_decoder.ExampleDecoder``: the wire walked in
  Python, packed lists taken with ``numpy.frombuffer``), what ``ds[i]`` runs;
- ``batch``: spark-tfrecord's batch decoder (``_batch``: the records of a batch walked together
  with NumPy), what ``DataLoader(ds, batch_size=B, collate_fn=ds.collate)`` runs.

``protobuf`` needs an ``Example`` class: the ``tfrecord`` package's ``example_pb2``, else
TensorFlow's; without either it is left out (and says so).

``--clock cpu`` times each choice in this process's CPU seconds rather than wall seconds: on a
machine shared with other work the ratios then hold while the wall clock's do not.

``--shuffle-keys`` first rewrites each record with its map entries in a random order (the same
values): the batch decoder's layout then holds for few records, and the others cost what they
cost before it, plus its check.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

import spark_tfrecord


def _example_class() -> Any:
    try:
        from tfrecord import example_pb2  # type: ignore[import-not-found]

        return example_pb2.Example
    except ImportError:
        pass
    try:
        import tensorflow as tf  # type: ignore[import-not-found]

        return tf.train.Example
    except ImportError:
        return None


def _protobuf(example: Any, datas: list[bytes], columns: list[Any]) -> list[dict[str, Any]]:
    kinds = {"int": ("int64_list", np.int64), "float": ("float_list", np.float32)}
    out = []
    for data in datas:
        message = example.FromString(data)
        features = message.features.feature
        record: dict[str, Any] = {}
        for c in columns:
            kind, dtype = kinds.get(c.value, ("bytes_list", None))
            values = getattr(features[c.key], kind).value
            record[c.key] = list(values) if dtype is None else np.array(values, dtype)
        out.append(record)
    return out


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        b = buf[pos]
        value |= (b & 0x7F) << shift
        pos += 1
        if b < 0x80:
            return value, pos
        shift += 7


def _encoded(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _shuffled(data: bytes, rng: random.Random) -> bytes:
    """The Example ``data`` (one ``features`` field) with its map entries in a random order."""
    size, pos = _varint(data, 1)
    entries = []
    while pos < len(data):
        length, body = _varint(data, pos + 1)
        entries.append(data[pos : body + length])
        pos = body + length
    rng.shuffle(entries)
    return b"\x0a" + _encoded(size) + b"".join(entries)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return a.shape == b.shape and a.tobytes() == np.asarray(b, a.dtype).tobytes()
    return bool(a == b)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="a folder a spark-tfrecord write made")
    parser.add_argument("--records", type=int, default=50_000)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--clock", choices=["wall", "cpu"], default="wall", help="seconds of which clock"
    )
    parser.add_argument(
        "--shuffle-keys", action="store_true", help="each record's keys in a random order"
    )
    args = parser.parse_args()
    source = spark_tfrecord.grain_source(args.data)
    layout = source._layout
    simple = [c for c in layout.columns if c.shape in ("scalar", "list")]
    if len(simple) != len(layout.columns):
        sys.exit("this comparison reads folders of scalar and list columns only")
    n = min(args.records, len(source))
    batch = source.__getitems__(list(range(n)))
    datas = [batch.buf[a:b] for a, b in zip(batch.starts.tolist(), batch.stops.tolist())]
    del batch
    if args.shuffle_keys:
        rng = random.Random(45)
        datas = [_shuffled(d, rng) for d in datas]

    def by_record() -> Any:
        return [layout.record(d) for d in datas]

    def by_batch() -> Any:
        out = []
        for s in range(0, n, args.batch):
            part = datas[s : s + args.batch]
            sizes = np.array([len(d) for d in part], np.int64)
            ends = np.cumsum(sizes)
            out.append(layout.collate_raw(b"".join(part), ends - sizes, ends))
        return out

    choices = {"record": by_record, "batch": by_batch}
    example = _example_class()
    if example is not None:
        choices["protobuf"] = lambda: _protobuf(example, datas, simple)
    else:
        print("protobuf: left out (neither the tfrecord package nor TensorFlow is installed)")
    results: dict[str, float] = {}
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    outputs: dict[str, Any] = {}
    for name, run in choices.items():
        best = float("inf")
        for _ in range(args.repeat):
            start = clock()
            outputs[name] = run()
            best = min(best, clock() - start)
        results[name] = n / best
    # The same values every way: the batches' against the records', the records' against
    # protobuf's.
    for k, got in enumerate(outputs["batch"]):
        assert got is not None, "the batch decoder handed a batch to the record decoder"
        want = layout.collate(outputs["record"][k * args.batch : (k + 1) * args.batch])
        assert _same(got, want), f"batch {k}"
    for mine, theirs in zip(outputs["record"], outputs.get("protobuf", [])):
        for c in simple:
            values = [mine[c.key]] if c.shape == "scalar" else list(mine[c.key])
            if c.value == "str":
                values = [v.encode("utf-8") for v in values]
            assert _same(np.asarray(values), np.asarray(theirs[c.key])), c.key
    base = results.get("protobuf", results["record"])
    shuffled = ", keys shuffled" if args.shuffle_keys else ""
    print(
        f"{args.data}: {n:,} records{shuffled}, batches of {args.batch}, best of "
        f"{args.repeat} ({args.clock} clock)"
    )
    for name, rate in results.items():
        print(f"  {name:<9} {rate:>12,.0f} records/s  {rate / base:5.2f}x")


if __name__ == "__main__":
    main()
