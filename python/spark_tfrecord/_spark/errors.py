"""Our condition and message first, for the errors a classic (Py4J) session raises."""

from __future__ import annotations

import functools
import threading
from typing import Any, Callable

import py4j.protocol
from py4j.protocol import Py4JJavaError

from spark_tfrecord import errors

_inspecting = threading.local()


class TFRecordJavaError(Py4JJavaError):  # type: ignore[misc]  # py4j has no types
    """A ``Py4JJavaError`` whose Java causes hold ours; ``str()`` starts with our message.

    ``condition`` and ``parameters`` are ours; ``py4j_error`` is the original error.
    """

    def __init__(
        self, original: Py4JJavaError, condition: str, parameters: dict[str, str], message: str
    ) -> None:
        super().__init__(original.errmsg, original.java_exception)
        self.condition = condition
        self.parameters = parameters
        self.message = message
        self.py4j_error = original

    def __str__(self) -> str:
        return f"{self.message}\n{super().__str__()}"


def _ours(error: Py4JJavaError) -> TFRecordJavaError | None:
    """``error`` as a :class:`TFRecordJavaError`, if one of its Java causes is ours."""
    for java in errors.java_chain(error):
        found = errors.from_java(java)
        if found is not None:
            return TFRecordJavaError(error, *found, str(java.getMessage()))
    return None


def _converting(get_return_value: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(get_return_value)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        try:
            return get_return_value(*args, **kwargs)
        except Py4JJavaError as e:
            # Reading the causes re-enters here (not inspected); failing leaves the error as is.
            if isinstance(e, TFRecordJavaError) or getattr(_inspecting, "on", False):
                raise
            _inspecting.on = True
            try:
                converted = _ours(e)
            except Exception:
                converted = None
            finally:
                _inspecting.on = False
            if converted is None:
                raise
            raise converted from None

    wrapped._spark_tfrecord = True  # type: ignore[attr-defined]
    return wrapped


def install() -> None:
    """Wrap Py4J's ``get_return_value`` (once), below PySpark's conversion of Java errors."""
    if not getattr(py4j.protocol.get_return_value, "_spark_tfrecord", False):
        py4j.protocol.get_return_value = _converting(py4j.protocol.get_return_value)
    try:
        from pyspark.errors.exceptions.captured import install_exception_handler
    except ImportError:  # a pyspark without a classic session
        return
    install_exception_handler()
