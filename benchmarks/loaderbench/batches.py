"""The loaders under test, each a function from a data set to an epoch's batches, and what a
batch adds to the sums that `measure` checks (`data.total`)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import Any

#: The DataLoader's batch size, and the larger one the trainer's goals name (issue 57).
BATCH, LARGE_BATCH = 256, 4096


def total(batch: dict[str, Any], name: str) -> tuple[list[int], float]:
    """The batch's ids, and its labels plus (narrow) its floats and its names' lengths or
    (image) each image's length and first and last bytes, whatever the loader's batch layout:
    stacked tensors, ``(values, offsets)``, ``(B, 1)`` columns, lists of bytes."""
    ids = [int(i) for i in flat(batch["id"])]
    value = sum(float(v) for v in flat(batch["label"]))
    if name == "narrow":
        value += float(values(batch["x"]).double().sum()) + name_bytes(batch["name"])
    else:
        value += sum(len(b) + b[0] + b[-1] for b in as_bytes(batch["image"]))
    return ids, value


def name_bytes(column: Any) -> int:
    """The bytes of a batch's names: a list of strings (ours) or a ``(B, 10)`` tensor of their
    bytes (the tfrecord package's default collate)."""
    if isinstance(column, list):
        return sum(len(s.encode() if isinstance(s, str) else s) for s in column)
    return int(column.numel())


def values(column: Any) -> Any:
    """A column's values tensor: itself, or the values of ``(values, offsets)``."""
    import torch

    column = column[0] if isinstance(column, (tuple, list)) else column
    return column if isinstance(column, torch.Tensor) else torch.as_tensor(column)


def flat(column: Any) -> list[Any]:
    return values(column).reshape(-1).tolist()


def as_bytes(column: Any) -> list[bytes]:
    """A batch's images: a list of bytes (ours, the tfrecord package's), or ``(list,
    offsets)``, or an array of objects (Petastorm's)."""
    if isinstance(column, tuple) and len(column) == 2 and isinstance(column[0], list):
        column = column[0]
    return [bytes(b) for b in column]


def files(path: str) -> list[tuple[str, str]]:
    """The data files of a folder and their indexes, as the manifest orders them."""
    import spark_tfrecord

    data = [f.path for f in spark_tfrecord.dataset_info(path).files]
    return [(f, spark_tfrecord.index_path(f)) for f in data]


def ours(
    path: str, *, shuffle: bool, workers: int = 0, batch: int = BATCH
) -> Iterable[dict[str, Any]]:
    """``torch_dataset(path)`` through a DataLoader of ``batch`` records, with its collate (what
    docs/pytorch.md shows). With workers, the loader is made once and its workers persist
    across epochs."""
    from torch.utils.data import DataLoader

    import spark_tfrecord

    ds = spark_tfrecord.torch_dataset(path)
    return DataLoader(
        ds,
        batch_size=batch,
        shuffle=shuffle,
        collate_fn=ds.collate,
        num_workers=workers,
        persistent_workers=workers > 0,
    )


def tfrecord_package(path: str, name: str, batch: int = BATCH) -> Iterable[dict[str, Any]]:
    """The ``tfrecord`` package's ``TFRecordDataset`` (iterable), one per file with its index,
    chained in file order, with its description of the same features, through a DataLoader
    with torch's default collate (its README's usage)."""
    from tfrecord.torch.dataset import TFRecordDataset
    from torch.utils.data import ChainDataset, DataLoader

    description = {"id": "int", "label": "float"}
    description.update({"x": "float", "name": "byte"} if name == "narrow" else {"image": "byte"})
    chained = ChainDataset([TFRecordDataset(d, i, description) for d, i in files(path)])
    return DataLoader(chained, batch_size=batch)


def batch_spans(path: str) -> list[tuple[str, list[tuple[int, int]], list[list[tuple[int, int]]]]]:
    """Per file of the data set: its path, the byte span ``(first, end)`` of each batch of
    BATCH records in order, and each such batch's records' data spans (past the header,
    before the footer), from the reader's offsets."""
    import spark_tfrecord
    from spark_tfrecord._format.frames.framing import FOOTER, HEADER

    reader = spark_tfrecord.torch_dataset(path).reader
    out = []
    for f, info in enumerate(reader.files):
        table = reader.offsets(f)
        starts, ends = table[:, 0].tolist(), (table[:, 0] + table[:, 1]).tolist()
        batches = range(0, len(starts), BATCH)
        spans = [(starts[k], ends[min(k + BATCH, len(ends)) - 1]) for k in batches]
        data = [
            [(a + HEADER, b - FOOTER) for a, b in zip(starts[k : k + BATCH], ends[k : k + BATCH])]
            for k in batches
        ]
        out.append((info.path, spans, data))
    return out


class MemoryCopy:
    """The ceiling of a data set's reads: its files' bytes, read into memory once (not timed),
    copied in each epoch a batch at a time (the span of BATCH records of a file, in order) into
    a reused buffer with one ``np.copyto``: the machine's memory copy of the bytes the loaders
    read, with no decoding and no checksums."""

    def __init__(self, path: str) -> None:
        import numpy as np

        self.files = [(np.fromfile(p, np.uint8), spans) for p, spans, _ in batch_spans(path)]
        self.bytes = sum(b - a for _, spans in self.files for a, b in spans)
        longest = max((b - a for _, spans in self.files for a, b in spans), default=0)
        self.out = np.empty(longest, np.uint8)

    def epoch(self) -> None:
        import numpy as np

        for data, spans in self.files:
            for a, b in spans:
                np.copyto(self.out[: b - a], data[a:b])


class Checksums:
    """The checksums alone: each record's data CRC32C (``crc32c``, the implementation ours uses)
    over the files' bytes held in memory as :class:`MemoryCopy` holds them, nothing copied,
    nothing decoded. Its share of the memory copy bounds every reader that checks the data,
    whatever it hands out and however it gets the bytes: none can be faster than this pass."""

    def __init__(self, path: str) -> None:
        import numpy as np

        from spark_tfrecord._format.frames.crc import crc32c

        self.crc = crc32c()
        self.files = [
            (np.fromfile(p, np.uint8), [span for batch in data for span in batch])
            for p, _, data in batch_spans(path)
        ]

    def epoch(self) -> None:
        crc = self.crc
        for data, spans in self.files:
            view = memoryview(data)
            for a, b in spans:
                crc(view[a:b])


class CheckedRead:
    """The least a reader that hands out checked ``bytes`` must do, on the same spans as
    :class:`MemoryCopy`: one ``os.pread`` of a batch's span from the page cache into a new
    buffer (one copy out of the files; a memory map's ``bytes`` values would be that copy), and
    each record's data checksum over it (``crc32c``, the implementation ours uses), no
    decoding. Its share of the memory copy bounds ours: a checked read of ``bytes`` values
    cannot copy each byte fewer than once nor skip its checksum."""

    def __init__(self, path: str) -> None:
        from spark_tfrecord._format.frames.crc import crc32c

        self.crc = crc32c()
        self.files = []
        for p, spans, data in batch_spans(path):
            # each batch: where it starts, its length, its records' data spans within it
            batches = [(a, b - a, [(s - a, e - a) for s, e in d]) for (a, b), d in zip(spans, data)]
            self.files.append((p, batches))

    def epoch(self) -> None:
        crc = self.crc
        for path, batches in self.files:
            fd = os.open(path, os.O_RDONLY)
            try:
                for first, size, data in batches:
                    buf = memoryview(os.pread(fd, size, first))
                    for a, b in data:
                        crc(buf[a:b])
            finally:
                os.close(fd)


class Petastorm:
    """Petastorm's ``make_spark_converter(df)`` (it writes the DataFrame as Parquet under its
    cache folder) and ``make_torch_dataloader(batch_size=B, num_epochs=1, workers_count=W)``,
    one epoch per call: in the Spark driver's process, which the converter needs. ``W``
    is its reader's pool of threads (1, or 2 to set beside our DataLoader's 2 workers)."""

    def __init__(self, spark: Any, df: Any, cache: str) -> None:
        from petastorm.spark import SparkDatasetConverter, make_spark_converter

        spark.conf.set(SparkDatasetConverter.PARENT_CACHE_DIR_URL_CONF, f"file://{cache}")
        self.converter = make_spark_converter(df)
        self.empty = 0

    def epoch(self, workers: int = 1) -> Iterator[dict[str, Any]]:
        """One epoch; one that ends before its first batch is read again, in the same timed
        epoch, and counted in ``empty``: now and then Petastorm 0.13.1's reader ends at once on
        this loaded machine (a race in its pool of threads: the same loader reads every row
        in the next epoch)."""
        for _ in range(3):
            given = False
            with self.converter.make_torch_dataloader(
                batch_size=BATCH, num_epochs=1, workers_count=workers
            ) as loader:
                for batch in loader:
                    given = True
                    yield batch
            if given:
                return
            self.empty += 1

    def delete(self) -> None:
        self.converter.delete()


def cpu_count() -> int:
    return len(os.sched_getaffinity(0))
