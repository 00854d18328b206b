"""The two failures of reading ``inspect``'s JSON rows
(:mod:`spark_tfrecord._format.datasets.json_rows`): a column no reader reads (refused before any
record is read), and a record's feature that does not fit its column (raised while a row is read,
and reported with the file and offset).
"""

from __future__ import annotations


class Unsupported(Exception):
    """A column of a type no reader here reads (the message names it);
    :func:`~spark_tfrecord._format.datasets.json_rows.row_decoder` raises it as the jar's
    ``TFRECORD_UNSUPPORTED_TYPE``. The checks the jar makes of a schema
    come first, so that only types the jar refuses too get here."""


class Mismatch(Exception):
    """A record's feature does not fit its column: the reason, and the column; ``whole``: the
    reason is the whole message (the jar's own words), not to be put after the column's name."""

    def __init__(self, column: str, reason: str, whole: bool = False) -> None:
        super().__init__(reason)
        self.column = column
        self.reason = reason
        self.whole = whole

    @property
    def message(self) -> str:
        return self.reason if self.whole else f"Column '{self.column}': {self.reason}"
