"""The errors of reading a column from records' features: the reader adds the file and offset."""

from __future__ import annotations

from spark_tfrecord._format.columns.schema import Column


class ColumnError(Exception):
    """A record's feature cannot be the column's value; the reader adds the file and offset."""

    def __init__(self, column: str, reason: str) -> None:
        super().__init__(f"Column {column!r}: {reason}")
        self.column = column

    @classmethod
    def said(cls, column: str, message: str) -> ColumnError:
        """The error of ``column`` whose whole message is ``message``."""
        error = cls(column, "")
        Exception.__init__(error, message)
        return error

    @classmethod
    def of(cls, c: Column, what: str) -> ColumnError:
        """The jar's form of a column's error: ``Column 'r' (array<array<bigint>>) what``."""
        return cls.said(c.path, f"Column '{c.path}' ({c.type_name}) {what}")


class NoValue(ColumnError, ValueError):
    """A batch cannot stack a NOT NULL (or always held) column's value that ``record`` lacks."""

    def __init__(self, c: Column, record: int) -> None:
        ColumnError.__init__(self, c.path, "")
        Exception.__init__(
            self,
            f"Column '{c.path}' ({c.type_name}) has no value in this record, which a batch "
            "cannot stack: the column is NOT NULL, or the manifest says every record holds it",
        )
        self.record = record


class ValueRefused(ColumnError):
    """A value the column's type refuses, with the jar's message (``Column 'x' (tinyint) ...``)."""

    def __init__(self, column: str, type_name: str, what: str) -> None:
        Exception.__init__(self, f"Column '{column}' ({type_name}) {what}")
        self.column = column


class StepRefused(ColumnError):
    """A feature list step not holding one value of an array-of-structs field; names the array."""

    def __init__(self, column: str, message: str) -> None:
        Exception.__init__(self, message)
        self.column = column
