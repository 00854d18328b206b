"""The values a trainer-side loader gives for lists of lists and sparse vectors."""

from __future__ import annotations

from itertools import accumulate
from typing import Any, NamedTuple


class Ragged(NamedTuple):
    """A list of lists (``array<array<T>>``, any depth) of one record, as TFDS stores it: the
    innermost ``values``, flat, and ``row_lengths`` per level but the innermost, outermost first.
    """

    values: Any
    row_lengths: tuple[Any, ...]

    def to_list(self) -> list[Any]:
        """The nested Python lists the column held."""
        items: list[Any] = list(self.values)
        for lengths in reversed(self.row_lengths):
            ends = [0, *accumulate(int(n) for n in lengths)]
            items = [items[start:end] for start, end in zip(ends, ends[1:])]
        return items


class Sparse(NamedTuple):
    """A sparse ML vector of one record: its entries' positions and values, and its size."""

    indices: Any
    values: Any
    size: int

    def to_dense(self) -> Any:
        """The vector as a float32 ndarray of its size."""
        import numpy as np

        dense = np.zeros(self.size, np.float32)
        dense[self.indices] = self.values
        return dense
