"""A batch's records framed as TensorFlow's ``RecordWriter`` frames them: length (uint64
little-endian), its masked CRC32C, the data, the data's masked CRC32C; all the batch's records in
one buffer.
"""

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
    """A batch's records, framed and laid end to end in one buffer: record i's frame is
    ``framed[offsets[i] : offsets[i + 1]]``, its data 12 bytes in, without the last 4."""

    def __init__(self, framed: Bytes, offsets: Ints) -> None:
        self.framed = framed
        self.offsets = offsets

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
    """The records framed as TensorFlow's ``RecordWriter`` frames them: length (uint64 LE), its
    masked CRC32C, the data, the data's masked CRC32C."""
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
    everyone = np.ones(n, np.bool_)
    header = const(bytes(HEADER), everyone)
    footer = const(bytes(FOOTER), everyone)
    framed, off = concat([header, *record, footer], n)
    start = off[:-1]
    columns = np.arange(8, dtype=np.int64)
    framed[(start[:, None] + columns).ravel()] = sizes.astype("<u8").view(np.uint8)
    lengths, which = np.unique(sizes, return_inverse=True)
    raw_crcs = [crc(struct.pack("<Q", int(x))) for x in lengths.tolist()]
    length_crcs = masked_all(np.array(raw_crcs, np.uint64))
    four = np.arange(4, dtype=np.int64)
    framed[(start[:, None] + 8 + four).ravel()] = length_crcs[which].view(np.uint8)
    view = framed.data
    begin = (start + HEADER).tolist()
    end = (off[1:] - FOOTER).tolist()
    data_crcs = masked_all(np.array([crc(view[b:e]) for b, e in zip(begin, end)], np.uint64))
    framed[((off[1:] - FOOTER)[:, None] + four).ravel()] = data_crcs.view(np.uint8)
    return Encoded(framed, off)
