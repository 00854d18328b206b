"""A shuffle that reads each block once: the order of records for folders larger than the cache.

``DataLoader(shuffle=True)`` draws records uniformly from the whole folder, so in an object store
a folder larger than the loader's cache costs up to one ranged read per record. A
:class:`BlockShuffleSampler` shuffles at two levels instead, as tf.data's file shuffle plus
shuffle buffer does: the blocks of ``block_size`` bytes (the unit the loader fetches) in a
random order, then the records of each window of ``window`` consecutive blocks among
themselves. An epoch then reads each block once (per process that reads it), whatever the
folder's size, and records of one batch come from ``window`` blocks spread over the folder.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from spark_tfrecord._format.frames.records import RecordReader


class BlockShuffleSampler:
    """The record numbers of one epoch of ``reader``'s records, block-shuffled (see the
    module); a sampler for ``DataLoader(ds, sampler=...)``, which
    :meth:`~spark_tfrecord._loaders.source.RecordSource.block_sampler` makes. With
    ``num_replicas`` > 1 (distributed training) each rank takes its own contiguous run of the
    epoch's order, ``len(ds) // num_replicas`` records (the last ``len(ds) % num_replicas``
    records of the order are read by no rank that epoch, as ``DistributedSampler(drop_last=True)``
    drops them), so every rank reads the same number of batches. Call :meth:`set_epoch` before
    each epoch, as with ``DistributedSampler``; every rank must be given the same ``seed``."""

    def __init__(
        self,
        reader: RecordReader,
        *,
        seed: int = 0,
        window: int | None = None,
        num_replicas: int = 1,
        rank: int = 0,
    ) -> None:
        if not 0 <= rank < num_replicas:
            raise ValueError(f"rank must be in [0, {num_replicas}), not {rank}")
        if window is None:
            window = max(1, reader.cache_bytes // reader.block_size // 2)
        if window < 1:
            raise ValueError(f"window must be at least 1 block, not {window}")
        self.seed, self.window = seed, window
        self.num_replicas, self.rank = num_replicas, rank
        self.epoch = 0
        self._length = len(reader) // num_replicas
        # The records of each block (the block its record starts in), in file order.
        groups: list[Any] = []
        first = 0
        for f, info in enumerate(reader.files):
            if info.num_records == 0:
                continue
            starts = reader.offsets(f)[:, 0]
            blocks = starts // reader.block_size
            cuts = np.flatnonzero(np.diff(blocks)) + 1
            for run in np.split(np.arange(info.num_records, dtype=np.int64) + first, cuts):
                groups.append(run)
            first += info.num_records
        self._groups = groups

    def set_epoch(self, epoch: int) -> None:
        """The epoch whose order :meth:`__iter__` gives (each epoch its own)."""
        self.epoch = epoch

    def order(self) -> Any:
        """The whole epoch's order (all ranks'), an int64 array."""
        rng = np.random.default_rng([self.seed, self.epoch])
        groups = [self._groups[g] for g in rng.permutation(len(self._groups))]
        out = []
        for w in range(0, len(groups), self.window):
            records = np.concatenate(groups[w : w + self.window])
            out.append(records[rng.permutation(len(records))])
        return np.concatenate(out) if out else np.empty(0, np.int64)

    def __iter__(self) -> Iterator[int]:
        start = self.rank * self._length
        return iter(self.order()[start : start + self._length].tolist())

    def __len__(self) -> int:
        return self._length
