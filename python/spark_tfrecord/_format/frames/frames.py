"""A batch's records framed as TensorFlow's ``RecordWriter`` frames them, in one buffer."""

from __future__ import annotations

import struct

import numpy as np

from spark_tfrecord import errors
from spark_tfrecord._format.frames.crc import crc32c, masked_all
from spark_tfrecord._format.frames.encode_errors import data_error
from spark_tfrecord._format.frames.framing import FOOTER, HEADER, MAX_RECORD_BYTES
from spark_tfrecord._format.frames.packing import Bytes, Ints, Ragged, concat, const

#: The most data a record written holds: its frame is at most the largest record read.
MAX_DATA_BYTES = MAX_RECORD_BYTES - HEADER - FOOTER


class Encoded:
    """A batch's framed records in one buffer: record i is ``framed[offsets[i]:offsets[i + 1]]``."""

    def __init__(self, framed: Bytes, offsets: Ints) -> None:
        self.framed, self.offsets = framed, offsets

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def framed_bytes(self) -> memoryview:
        """The framed records, as written to a ``.tfrecord`` file."""
        return self.framed.data

    def record(self, i: int) -> bytes:
        """Record i's data: the serialized message."""
        start, end = int(self.offsets[i]), int(self.offsets[i + 1])
        return self.framed[start + HEADER : end - FOOTER].tobytes()

    def records(self) -> list[bytes]:
        """Every record's data, in order."""
        return [self.record(i) for i in range(len(self))]


def frame(record: list[Ragged], n: int) -> Encoded:
    """The ``n`` records framed: uint64 LE length, its masked CRC32C, data, data's masked CRC32C."""
    crc = crc32c()
    sizes = np.zeros(n, np.int64)
    for p in record:
        sizes += p.size
    if n and int(sizes.max()) > MAX_DATA_BYTES:
        row = int(np.argmax(sizes > MAX_DATA_BYTES))
        raise data_error(
            errors.RECORD_TOO_LARGE,
            None,
            f"Row too large for one TFRecord: {int(sizes[row])} bytes, at most {MAX_DATA_BYTES} "
            "fit in one record",
            row,
        )
    lengths, which = np.unique(sizes, return_inverse=True)
    raw_crcs = [crc(struct.pack("<Q", int(x))) for x in lengths.tolist()]
    header = np.empty((n, HEADER), np.uint8)
    header[:, :8] = sizes.astype("<u8").view(np.uint8).reshape(n, 8)
    header[:, 8:] = (
        masked_all(np.array(raw_crcs, np.uint64))[which].astype("<u4").view(np.uint8).reshape(n, 4)
    )
    heads = Ragged(
        header.ravel(), HEADER * np.arange(n, dtype=np.int64), np.full(n, HEADER), HEADER
    )
    footer = const(bytes(FOOTER), np.ones(n, np.bool_))
    framed, off = concat([heads, *record, footer], n)
    four = np.arange(4, dtype=np.int64)
    slices = map(slice, (off[:-1] + HEADER).tolist(), (off[1:] - FOOTER).tolist())
    data_crcs = masked_all(
        np.fromiter(map(crc, map(framed.data.__getitem__, slices)), np.uint64, n)
    )
    framed[((off[1:] - FOOTER)[:, None] + four).ravel()] = data_crcs.view(np.uint8)
    return Encoded(framed, off)
