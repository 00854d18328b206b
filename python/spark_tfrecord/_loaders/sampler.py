"""A shuffle that reads each block once: the order of records for folders larger than the cache."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from spark_tfrecord._format.frames.records import RecordReader


class BlockShuffleSampler:
    """One epoch's block-shuffled record numbers of ``reader``: a ``DataLoader`` sampler.

    Shuffles blocks of ``block_size`` bytes, then records within each ``window`` of blocks, so an
    epoch reads each block once. Each rank takes ``len(ds) // num_replicas`` consecutive records;
    call :meth:`set_epoch` each epoch, with one ``seed`` for all ranks.
    """

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
        self._groups: list[Any] = []
        first = 0
        for f, info in enumerate(reader.files):
            if info.num_records == 0:
                continue
            blocks = reader.offsets(f)[:, 0] // reader.block_size
            cuts = np.flatnonzero(np.diff(blocks)) + 1
            self._groups.extend(np.split(np.arange(info.num_records, dtype=np.int64) + first, cuts))
            first += info.num_records

    def set_epoch(self, epoch: int) -> None:
        """The epoch whose order :meth:`__iter__` gives."""
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
