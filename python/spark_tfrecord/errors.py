"""The error conditions of spark-tfrecord, and how to find them in what PySpark raises.

Every error of the data source is a Spark ``SparkThrowable`` with a condition of its own
(``TFRECORD_CORRUPT_RECORD.TRUNCATED``, ``TFRECORD_INVALID_OPTION``, ...: the constants below,
and docs/errors.md) and message parameters (``path``, ``offset``, ``column``, ...). Errors found
while planning (an option, a type, a schema) reach Python as they are: PySpark raises its
``IllegalArgumentException`` and ``getCondition()`` (Spark 4) or ``getErrorClass()`` (3.5)
returns ours. Errors of a task (damaged files, values that do not fit) reach Python inside
Spark's own (``FAILED_READ_FILE``, ``TASK_WRITE_FAILED``), as they do for Parquet or JSON: their
cause carries our condition. In a classic session,
:func:`spark_tfrecord.install_exception_handler` (which ``configure()`` and ``add_jar()`` call)
makes such an error start with our condition and message; a Spark Connect client shows Spark's
(docs/errors.md, "What Python shows first").
:func:`condition` and :func:`parameters` find ours wherever it is, in a classic session (Py4J),
a Spark Connect client, or :mod:`spark_tfrecord.local` (JPype)::

    >>> import tempfile
    >>> from spark_tfrecord import errors
    >>> try:
    ...     spark.range(1).write.format("tfrecord").option("recordType", "Examples").save(
    ...         tempfile.mkdtemp() + "/out")
    ... except Exception as e:
    ...     print(errors.condition(e), "|", errors.parameters(e)["valid"])
    TFRECORD_INVALID_OPTION | Example, SequenceExample, ByteArray

:func:`matches` tells a condition and its sub-conditions apart::

    errors.matches(e, errors.CORRUPT_RECORD)  # any TFRECORD_CORRUPT_RECORD.* error

In a Spark Connect client the causes of an error are known only by their text (Spark sends
the client the conditions and parameters of the outermost error alone), so there
:func:`parameters` is empty for a task's error: its message still names the file, the offset
and the column.
"""

from __future__ import annotations

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
#: ``[TFRECORD_…]`` at the start of a message, as the JVM writes them (and a Connect client's
#: server stack trace repeats for each cause).
_IN_TEXT = re.compile(r"\[(TFRECORD_[A-Z_]+(?:\.[A-Z_]+)?)\]")


class CorruptFileError(ValueError):
    """A damaged file met in plain Python (:func:`spark_tfrecord.dataset_info` counting its
    records): the same condition, parameters (``path``, ``offset``, ``reason``) and message as
    the data source's, so that :func:`condition` and :func:`parameters` find them.
    """

    def __init__(
        self, condition: str, reason: str, path: str, offset: int, column: str | None = None
    ) -> None:
        super().__init__(f"[{condition}] {reason} at byte offset {offset} of {path}")
        self.condition = condition
        self.parameters = {"path": path, "offset": str(offset), "reason": reason}
        if column is not None:
            self.parameters["column"] = column

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled by its parameters, not its message (``args``): it crosses processes (a Ray
        # task's error reaches the driver pickled).
        p = self.parameters
        return type(self), (
            self.condition,
            p["reason"],
            p["path"],
            int(p["offset"]),
            p.get("column"),
        )


def condition(error: BaseException | Any) -> str | None:
    """The spark-tfrecord condition of ``error`` or of its first cause that has one, or None.

    ``error`` is what PySpark raised (a ``CapturedException``, a ``Py4JJavaError``, a Spark
    Connect exception) or a Java exception from :mod:`spark_tfrecord.local`.
    """
    found = _find(error)
    return None if found is None else found[0]


def parameters(error: BaseException | Any) -> dict[str, str]:
    """The message parameters of the error :func:`condition` finds (empty if none).

    Among them: ``path`` and ``offset`` (the file and the record's byte offset) for errors in a
    file, ``column`` for a column's value or type, ``option`` / ``value`` / ``valid`` for an
    option, and ``reason``, the message's own text.
    """
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
        for java in java_chain(python):
            found = from_java(java)
            if found is not None:
                return found
        found = _from_connect(python)
        if found is not None:
            return found
        found = _from_python_worker(python)
        if found is not None:
            return found
        if not isinstance(python, BaseException):
            break
        python = python.__cause__ or python.__context__
    return None


#: The last line of a Python worker's traceback, when the error is ours (the data source with no
#: jar raises them in Spark's Python workers, the encoder's when it writes; Spark gives their
#: text).
_WORKER_LINE = re.compile(
    r"spark_tfrecord\.(?:errors\.CorruptFileError|errors\.ArgumentError|"
    r"_format\.frames\.encode_errors\.EncodeError): "
    r"\[(TFRECORD_[A-Z_]+(?:\.[A-Z_]+)?)\] ([^\n]*)"
)
_AT_OFFSET = re.compile(r"(.*) at byte offset (\d+) of (.*)")
#: The column a record's value does not fit, named first in the reason of a DATA_MISMATCH.
_COLUMN = re.compile(r"Column '([^']+)'")


def _from_python_worker(error: Any) -> tuple[str, dict[str, str]] | None:
    """The condition and parameters of our error raised in a Python worker (a
    ``PythonException`` of pyspark), from its text: ``reason``, ``path`` and ``offset`` for
    a file's error, and ``column`` for a value that does not fit its column, as the jar's."""
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


# Reading Java exceptions (Py4J's, JPype's, a Spark Connect client's) is duck-typed: nothing is
# imported, so condition() and parameters() work wherever the error comes from. Wrapping Py4J to
# show our condition first is Spark's side: spark_tfrecord._spark.errors, installed by
# spark_tfrecord.install_exception_handler (spark_tfrecord._spark.session), so that this module
# imports nothing of the package.


def java_chain(error: Any) -> list[Any]:
    """The Java exception behind ``error`` and its causes, outermost first; empty if none
    (also the CLI's, which reports the first one of ours or the innermost).

    Py4J keeps it in ``java_exception``, PySpark's own exceptions in ``_origin`` (3.5 and 4.x),
    and JPype (:mod:`spark_tfrecord.local`) raises the Java exception itself.
    """
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
    found = None
    # Spark 4 has getCondition (Py4J does not see the getErrorClass it inherits), 3.5 only
    # getErrorClass; a class of ours that is not a SparkThrowable has neither.
    for name in ("getCondition", "getErrorClass"):
        try:
            found = str(getattr(java, name)())
            break
        except Exception:
            continue
    if found is None:
        return None
    if not found.startswith(_PREFIX):
        return None
    params = java.getMessageParameters()
    return found, {str(k): str(params.get(k)) for k in params.keySet()}


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
    """An option, a folder or records that a read cannot go on with, found in plain Python
    (schema inference, a TFDS folder's features): the same condition, parameters (``reason``,
    and ``option`` / ``value`` / ``valid`` for an option) and message as the data source's.
    """

    def __init__(self, condition: str, reason: str, **parameters: str) -> None:
        super().__init__(f"[{condition}] {reason}")
        self.condition = condition
        self.parameters = {**parameters, "reason": reason}

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled by its parameters, as CorruptFileError.
        rest = {k: v for k, v in self.parameters.items() if k != "reason"}
        return _argument_error, (type(self), self.condition, self.parameters["reason"], rest)


def _argument_error(
    cls: type[ArgumentError], condition: str, reason: str, parameters: dict[str, str]
) -> ArgumentError:
    """An ArgumentError unpickled (``__reduce__``)."""
    return cls(condition, reason, **parameters)


def invalid_option(option: str, value: str, valid: Sequence[str]) -> ArgumentError:
    """The jar's ``TFRecordError.invalidOption``: ``option``'s bad ``value``, and the values it
    takes."""
    return ArgumentError(
        INVALID_OPTION,
        f"Invalid value '{value}' for TFRecord option '{option}'. Valid values: "
        f"{', '.join(valid)}.",
        option=option,
        value=value,
        valid=", ".join(valid),
    )
