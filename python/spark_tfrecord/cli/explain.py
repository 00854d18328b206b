"""How a failure deep in Spark or the JVM is reported: one line, a hint and an exit status."""

from __future__ import annotations

import re
from typing import Any

from spark_tfrecord import errors
from spark_tfrecord.cli.common import (
    EXIT_BAD_DATA,
    EXIT_EXISTS,
    EXIT_FAILURE,
    EXIT_NOT_FOUND,
    EXIT_USAGE,
    CliError,
    first_line,
)

_DAMAGED = "the file is damaged or not TFRecord; see docs/errors.md"
_SEE_HELP = "see spark-tfrecord --help, docs/options.md and docs/types.md"
#: Exit status and hint by our error's condition (or the condition it is a sub-condition of).
_CONDITIONS = {
    errors.CORRUPT_RECORD: (EXIT_BAD_DATA, _DAMAGED),
    errors.MALFORMED_RECORD: (EXIT_BAD_DATA, _DAMAGED),
    errors.RECORD_TOO_LARGE: (EXIT_BAD_DATA, _DAMAGED),
    errors.DATA_MISMATCH: (
        EXIT_BAD_DATA,
        "a value does not fit its column; see docs/errors.md and docs/types.md",
    ),
    errors.INVALID_OPTION: (EXIT_USAGE, _SEE_HELP),
    errors.UNSUPPORTED_TYPE: (EXIT_USAGE, _SEE_HELP),
    errors.INVALID_SCHEMA: (EXIT_USAGE, _SEE_HELP),
    errors.CANNOT_INFER_SCHEMA: (EXIT_USAGE, _SEE_HELP),
    errors.TFDS_FEATURES: (
        EXIT_USAGE,
        "give --cast COLUMN:TYPE or --features FILE; see docs/tfds.md",
    ),
    errors.DATASET_FOLDER: (EXIT_USAGE, "see docs/tfds.md"),
}
#: Otherwise, by the class (or a superclass) of the Java exception or of one of its causes.
_JAVA_FAILURES = (
    (("java.io.FileNotFoundException",), EXIT_NOT_FOUND, "check the path"),
    (
        ("java.lang.IllegalArgumentException", "org.apache.spark.sql.AnalysisException"),
        EXIT_USAGE,
        _SEE_HELP,
    ),
)
_DEBUG_HINT = "run with SPARK_TFRECORD_DEBUG=1 for the full trace"


def explain(exc: Exception) -> CliError:
    """A :class:`CliError` by our condition, Spark's ``PATH_NOT_FOUND``, or the Java class."""
    chain = errors.java_chain(exc)
    ours = errors.condition(exc)
    if ours is not None and ours.split(".")[0] in _CONDITIONS:
        java = [j for j in chain if errors.from_java(j) is not None]
        return _by_condition(_describe(exc, java[:1] or chain[-1:]), ours)
    if _error_condition(exc) == "PATH_ALREADY_EXISTS":
        return CliError(
            _describe(exc, chain[:1]), "use --mode overwrite or --mode append", EXIT_EXISTS
        )
    if _error_condition(exc) == "PATH_NOT_FOUND":
        return CliError(_describe(exc, chain[:1]), "check the path", EXIT_NOT_FOUND)
    for class_names, status, hint in _JAVA_FAILURES:
        for java in chain:
            if _java_classes(java).intersection(class_names):
                return CliError(_describe(exc, [java]), hint, status)
    # Otherwise the innermost cause says best what went wrong.
    return CliError(_describe(exc, chain[-1:]), _DEBUG_HINT, EXIT_FAILURE)


def explain_python(exc: Exception) -> CliError:
    """A :class:`CliError` for a plain-Python reader's error, worded as the jar's."""
    if isinstance(exc, FileNotFoundError):
        return CliError(f"FileNotFoundException: {exc}", "check the path", EXIT_NOT_FOUND)
    condition = exc.condition  # type: ignore[attr-defined]
    params: dict[str, str] = exc.parameters  # type: ignore[attr-defined]
    reason = params["reason"]
    if isinstance(exc, errors.ArgumentError):
        message = f"TFRecordArgumentException: [{condition}] {reason}"
    elif condition in (errors.MALFORMED_RECORD, errors.DATA_MISMATCH):
        message = (
            f"TFRecordDataException: [{condition}] {reason}, in the record at byte offset "
            f"{params['offset']} of {params['path']}"
        )
    else:
        message = f"TFRecordCorruptException: {exc}"
    return _by_condition(message, condition)


def _by_condition(message: str, condition: str) -> CliError:
    """The error of ``message``, with the status and hint of our ``condition``."""
    entry = _CONDITIONS.get(condition.split(".")[0])
    if entry is None:
        return CliError(message, _DEBUG_HINT, EXIT_FAILURE)
    status, hint = entry
    if condition == errors.TFDS_FEATURES:
        message = _command_line_words(message)
    message = message.replace("with the option 'split'", "with --split NAME")
    if condition == errors.DATASET_FOLDER and "already has the split" in message:
        return CliError(
            message.split(" Write it with mode overwrite")[0],
            "use --mode overwrite to replace it, or another --split",
            EXIT_EXISTS,
        )
    return CliError(message, hint, status)


def _command_line_words(message: str) -> str:
    """A TFDS features error in the command line's flags, not write_tfds's ``features=``."""
    column = re.search(r"Column '([^']+)'", message)
    flag = f"--cast {column.group(1)}:" if column else "--cast COLUMN:"
    message = message.replace(
        "Cast it (to bigint, double or string)", f"Cast it ({flag}bigint, double or string)"
    )
    return message.replace("give features=", "give --features FILE").replace(
        "Give features=", "Give --features FILE"
    )


def _java_classes(java: Any) -> set[str]:
    """The names of a Java object's class and of all its superclasses."""
    names = set()
    cls = java.getClass()
    while cls is not None:
        names.add(str(cls.getName()))
        cls = cls.getSuperclass()
    return names


def _error_condition(exc: Exception) -> str | None:
    """Spark's error condition of a pyspark exception (``getCondition``, 3.5: ``getErrorClass``)."""
    get = getattr(exc, "getCondition", None) or getattr(exc, "getErrorClass", None)
    condition = get() if get is not None else None
    return None if condition is None else str(condition)


def _describe(exc: Exception, java: list[Any]) -> str:
    """``ClassName: first line of the message`` of the Java exception if given, else of ``exc``."""
    if java:
        name, message = java[0].getClass().getSimpleName(), java[0].getMessage()
    else:
        name, message = type(exc).__name__, str(exc)
    return f"{name}: {first_line(str(message or ''))}"
