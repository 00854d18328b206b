"""The Grain (JAX) side of :func:`spark_tfrecord.grain_source`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from spark_tfrecord._loaders.source import RecordSource


class GrainSource(RecordSource):
    """What :func:`spark_tfrecord.grain_source` returns; ``collate`` is a Grain ``batch_fn``."""

    def _getitems(self, indices: Sequence[int]) -> Sequence[Any]:
        """Grain's batched read (``SupportsBatchedReadRandomAccessDataSource``)."""
        return self.__getitems__(indices)
