"""The Grain (JAX) side of :func:`spark_tfrecord.grain_source`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from spark_tfrecord._loaders.source import RecordSource


class GrainSource(RecordSource):
    """A random-access source of a TFRecord folder's records for Grain (``__len__``,
    ``__getitem__``): what :func:`spark_tfrecord.grain_source` returns. ``collate`` is a
    ``batch_fn`` for ``grain.transforms.Batch`` (NumPy arrays)."""

    def _getitems(self, indices: Sequence[int]) -> Sequence[Any]:
        """Grain's batched read (``SupportsBatchedReadRandomAccessDataSource``): the records
        ``indices`` read together; ``collate`` then decodes them at once."""
        return self.__getitems__(indices)
