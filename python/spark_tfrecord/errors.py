"""The error conditions of spark-tfrecord, and how to find them in what PySpark raises.

Each data source error has a condition (the constants below; docs/errors.md) and parameters; a
task's error is the cause of Spark's. :func:`condition` and :func:`parameters` find ours in any
cause, with Py4J, Spark Connect (no parameters for a task's error) or JPype::

    >>> import tempfile
    >>> from spark_tfrecord import errors
    >>> try:
    ...     spark.range(1).write.format("tfrecord").option("recordType", "Examples").save(
    ...         tempfile.mkdtemp() + "/out")
    ... except Exception as e:
    ...     print(errors.condition(e), "|", errors.parameters(e)["valid"])
    TFRECORD_INVALID_OPTION | Example, SequenceExample, ByteArray
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Any

__all__ = [
    "CANNOT_INFER_SCHEMA",
    "CONDITIONS",
    "CORRUPT_RECORD",
    "DATASET_FOLDER",
    "DATA_CHECKSUM",
    "DATA_MISMATCH",
    "INVALID_OPTION",
    "INVALID_SCHEMA",
    "LENGTH_CHECKSUM",
    "MALFORMED_RECORD",
    "RECORD_TOO_LARGE",
    "TFDS_FEATURES",
    "TRUNCATED",
    "UNREADABLE",
    "UNSUPPORTED_TYPE",
    "ArgumentError",
    "CorruptFileError",
    "condition",
    "matches",
    "parameters",
]

#: A record whose framing is broken (the sub-conditions below say how).
CORRUPT_RECORD = "TFRECORD_CORRUPT_RECORD"
#: The file ends inside a record's header, data or footer.
TRUNCATED = "TFRECORD_CORRUPT_RECORD.TRUNCATED"
#: The checksum of a record's length does not match.
LENGTH_CHECKSUM = "TFRECORD_CORRUPT_RECORD.LENGTH_CHECKSUM"
#: The checksum of a record's data does not match.
DATA_CHECKSUM = "TFRECORD_CORRUPT_RECORD.DATA_CHECKSUM"
#: The bytes could not be read or decompressed.
UNREADABLE = "TFRECORD_CORRUPT_RECORD.UNREADABLE"
#: A record above ``maxRecordBytes`` (read), or a row too large for one record (write).
RECORD_TOO_LARGE = "TFRECORD_RECORD_TOO_LARGE"
#: A record that is not a ``tf.train.Example`` / ``SequenceExample``.
MALFORMED_RECORD = "TFRECORD_MALFORMED_RECORD"
#: A value that does not fit its column, on read or write.
DATA_MISMATCH = "TFRECORD_DATA_MISMATCH"
#: An option with a value it cannot take, or options that cannot go together.
INVALID_OPTION = "TFRECORD_INVALID_OPTION"
#: A column of a type the record type cannot hold.
UNSUPPORTED_TYPE = "TFRECORD_UNSUPPORTED_TYPE"
#: A schema that does not fit the record type.
INVALID_SCHEMA = "TFRECORD_INVALID_SCHEMA"
#: Records from which no schema can be inferred.
CANNOT_INFER_SCHEMA = "TFRECORD_CANNOT_INFER_SCHEMA"
#: TensorFlow Datasets features that are invalid, unsupported or do not fit the DataFrame.
TFDS_FEATURES = "TFRECORD_TFDS_FEATURES"
#: A folder (a TFDS dataset, sharded output) that is not as the read or write needs.
DATASET_FOLDER = "TFRECORD_DATASET_FOLDER"

#: Every condition an error of the data source can have.
CONDITIONS = (
    TRUNCATED,
    LENGTH_CHECKSUM,
    DATA_CHECKSUM,
    UNREADABLE,
    RECORD_TOO_LARGE,
    MALFORMED_RECORD,
    DATA_MISMATCH,
    INVALID_OPTION,
    UNSUPPORTED_TYPE,
    INVALID_SCHEMA,
    CANNOT_INFER_SCHEMA,
    TFDS_FEATURES,
    DATASET_FOLDER,
)

_PREFIX = "TFRECORD_"
#: ``[TFRECORD_…]`` at the start of a message, as the JVM writes them.
_IN_TEXT = re.compile(r"\[(TFRECORD_[A-Z_]+(?:\.[A-Z_]+)?)\]")


class CorruptFileError(ValueError):
    """A damaged file met in plain Python, with the data source's condition, message, parameters."""

    def __init__(
        self, condition: str, reason: str, path: str, offset: int, column: str | None = None
    ) -> None:
        super().__init__(f"[{condition}] {reason} at byte offset {offset} of {path}")
        self.condition = condition
        self.parameters = {"path": path, "offset": str(offset), "reason": reason}
        if column is not None:
            self.parameters["column"] = column

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled by its parameters, not its message (``args``).
        p = self.parameters
        args = (self.condition, p["reason"], p["path"], int(p["offset"]), p.get("column"))
        return type(self), args


def condition(error: BaseException | Any) -> str | None:
    """The spark-tfrecord condition of ``error`` (from PySpark or JPype) or a cause, or None."""
    found = _find(error)
    return None if found is None else found[0]


def parameters(error: BaseException | Any) -> dict[str, str]:
    """The parameters (``path``, ``offset``, ``reason``...) of :func:`condition`'s error, or {}."""
    found = _find(error)
    return {} if found is None else found[1]


def matches(error: BaseException | Any, wanted: str) -> bool:
    """Whether ``error`` has the condition ``wanted`` or one of its sub-conditions."""
    found = condition(error)
    return found is not None and (found == wanted or found.startswith(wanted + "."))


def _find(error: Any) -> tuple[str, dict[str, str]] | None:
    seen: set[int] = set()
    python: Any = error
    while python is not None and id(python) not in seen:
        seen.add(id(python))
        if isinstance(python, (CorruptFileError, ArgumentError)):
            return python.condition, dict(python.parameters)
        found = next(filter(None, map(from_java, java_chain(python))), None)
        found = found or _from_connect(python) or _from_python_worker(python)
        if found is not None:
            return found
        if not isinstance(python, BaseException):
            break
        python = python.__cause__ or python.__context__
    return None


#: The last line of a Python worker's traceback when the error is ours (Spark gives its text).
_WORKER_LINE = re.compile(
    r"spark_tfrecord\.(?:errors\.CorruptFileError|errors\.ArgumentError|"
    r"_format\.frames\.encode_errors\.EncodeError): "
    r"\[(TFRECORD_[A-Z_]+(?:\.[A-Z_]+)?)\] ([^\n]*)"
)
_AT_OFFSET = re.compile(r"(.*) at byte offset (\d+) of (.*)")
_COLUMN = re.compile(r"Column '([^']+)'")


def _from_python_worker(error: Any) -> tuple[str, dict[str, str]] | None:
    """Our error's condition and parameters (as the jar's), from a Python worker's error text."""
    found = _WORKER_LINE.findall(str(error))
    if not found:
        return None
    condition, text = found[-1]
    text = text.rstrip()
    at = _AT_OFFSET.fullmatch(text)
    if at is None:
        return condition, {"reason": text}
    parameters = {"reason": at.group(1), "offset": at.group(2), "path": at.group(3)}
    column = _COLUMN.match(at.group(1)) if condition == DATA_MISMATCH else None
    if column is not None:
        parameters["column"] = column.group(1)
    return condition, parameters


# Java exceptions (Py4J, JPype, Spark Connect) are duck-typed: this module imports nothing.
def java_chain(error: Any) -> list[Any]:
    """The Java exception behind ``error`` and its causes, outermost first; empty if none."""
    java: Any = getattr(error, "java_exception", None)
    if java is None:
        java = getattr(error, "_origin", None)
    if java is None and hasattr(error, "getClass"):
        java = error
    chain: list[Any] = []
    while java is not None and len(chain) < 100:  # Java allows cycles of causes
        chain.append(java)
        java = java.getCause()
    return chain


def from_java(java: Any) -> tuple[str, dict[str, str]] | None:
    """The condition and parameters of one Java exception (not of its causes), if it is ours."""
    if not str(java.getClass().getName()).startswith("io.github.sparktfrecord."):
        return None
    # Spark 4 has getCondition (Py4J misses the inherited getErrorClass), 3.5 getErrorClass.
    for name in ("getCondition", "getErrorClass"):
        try:
            found = str(getattr(java, name)())
        except Exception:
            continue
        if not found.startswith(_PREFIX):
            return None
        params = java.getMessageParameters()
        return found, {str(k): str(params.get(k)) for k in params.keySet()}
    return None


def _from_connect(error: Any) -> tuple[str, dict[str, str]] | None:
    """A Spark Connect exception: the condition of the outermost error, else one in the text."""
    get = getattr(error, "getCondition", None) or getattr(error, "getErrorClass", None)
    if get is None or hasattr(error, "_origin"):
        return None  # not a Connect exception (classic ones are read through Py4J above)
    found = get()
    if found is not None and str(found).startswith(_PREFIX):
        params = getattr(error, "getMessageParameters", lambda: None)() or {}
        return str(found), {str(k): str(v) for k, v in params.items()}
    text = "\n".join(
        str(t)
        for t in (getattr(error, "getMessage", lambda: None)(), _stack(error), str(error))
        if t
    )
    match = _IN_TEXT.search(text)
    return None if match is None else (match.group(1), {})


def _stack(error: Any) -> str | None:
    get = getattr(error, "getStackTrace", None)
    try:
        return None if get is None else get()
    except Exception:
        return None


class ArgumentError(ValueError):
    """A bad option, folder or records met in plain Python, as the data source's error."""

    def __init__(self, condition: str, reason: str, **parameters: str) -> None:
        super().__init__(f"[{condition}] {reason}")
        self.condition = condition
        self.parameters = {**parameters, "reason": reason}

    def __reduce__(self) -> tuple[Any, ...]:
        rest = {k: v for k, v in self.parameters.items() if k != "reason"}
        return functools.partial(type(self), **rest), (self.condition, self.parameters["reason"])


def invalid_option(option: str, value: str, valid: Sequence[str]) -> ArgumentError:
    """The jar's ``TFRecordError.invalidOption``: ``option``'s bad ``value``, and ``valid`` ones."""
    return ArgumentError(
        INVALID_OPTION,
        f"Invalid value '{value}' for TFRecord option '{option}'. Valid values: "
        f"{', '.join(valid)}.",
        option=option,
        value=value,
        valid=", ".join(valid),
    )
