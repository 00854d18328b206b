"""The Example encoder's errors, answering ``getCondition()`` as PySpark's exceptions do."""

from __future__ import annotations


class EncodeError(ValueError):
    """A schema, option or value the encoder refuses, with the jar's condition.
    ``row``: the offending row's index in the batch (None for a schema or option error).
    """

    def __init__(
        self,
        condition: str,
        reason: str,
        *,
        column: str | None = None,
        row: int | None = None,
        parameters: dict[str, str] | None = None,
    ) -> None:
        super().__init__(f"[{condition}] {reason}")
        self.condition = condition
        self.reason = reason
        self.column = column
        self.row = row
        self.parameters: dict[str, str] = dict(parameters or {})
        if column is not None:
            self.parameters["column"] = column
        self.parameters["reason"] = reason

    def getCondition(self) -> str:
        """The condition (``TFRECORD_DATA_MISMATCH``...), as PySpark's exceptions give it."""
        return self.condition

    #: The condition, under Spark 3.5's name.
    getErrorClass = getCondition

    def getMessageParameters(self) -> dict[str, str]:
        """The message parameters (``column``, ``reason``...), as the jar gives them."""
        return dict(self.parameters)


def data_error(condition: str, column: str | None, reason: str, row: int) -> EncodeError:
    """A value of ``column`` in row ``row`` that a record cannot hold (the jar's writeError)."""
    return EncodeError(condition, reason, column=column, row=row)


def argument_error(condition: str, reason: str, **parameters: str) -> EncodeError:
    """A schema or option the encoder refuses when it is built (the jar's argument errors)."""
    column = parameters.pop("column", None)
    return EncodeError(condition, reason, column=column, parameters=parameters)
