"""Our condition and message first, for the errors a classic (Py4J) session raises.

A task's error reaches Python as a ``Py4JJavaError`` whose first line is Py4J's ``An error
occurred while calling o147.collectToPython.``: the Java error on the outside is Spark's
(``Job aborted due to stage failure``), which PySpark does not convert, and ours is a cause far
down its trace. :func:`install` wraps Py4J's ``get_return_value``, where PySpark converts Java
errors (``install_exception_handler``), so that a ``Py4JJavaError`` whose Java causes hold one
of our errors is raised as a :class:`TFRecordJavaError`: still a ``Py4JJavaError``, with the
same ``java_exception``, whose text starts with our ``[TFRECORD_…] message`` line and goes on
with the original text. Any other error passes unchanged; an error that PySpark converts to its
own class (a planning error: ``IllegalArgumentException``) is converted as before.

Importing this module imports py4j; ``spark_tfrecord`` imports it only to install.
"""

from __future__ import annotations

import functools
import threading
from typing import Any, Callable

import py4j.protocol
from py4j.protocol import Py4JJavaError

from spark_tfrecord import errors

_inspecting = threading.local()


class TFRecordJavaError(Py4JJavaError):  # type: ignore[misc]  # py4j has no types
    """A ``Py4JJavaError`` whose Java causes hold an error of spark-tfrecord.

    ``str()`` is that error's message (``[TFRECORD_…] …``, with the file, the byte offset and
    the column where they apply), then the original Py4J text (the call and the Java stack
    trace). ``java_exception`` is the original's; ``condition`` and ``parameters`` are ours, as
    :func:`spark_tfrecord.errors.condition` and :func:`~spark_tfrecord.errors.parameters` give
    them; ``py4j_error`` is the ``Py4JJavaError`` Py4J raised.
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
            message = str(java.getMessage())
            return TFRecordJavaError(error, found[0], found[1], message)
    return None


def _converting(get_return_value: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(get_return_value)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        try:
            return get_return_value(*args, **kwargs)
        except Py4JJavaError as e:
            # Reading the causes calls Java through this function again: those calls are not
            # inspected, and a failure to read them leaves the error as it was.
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
    """Wrap Py4J's ``get_return_value`` (once), below PySpark's conversion of Java errors.

    PySpark wraps ``py4j.protocol.get_return_value`` each time a session starts and sets the
    result where Py4J calls it (``py4j.java_gateway``); wrapping the one in ``py4j.protocol``
    puts ours under PySpark's for every session started afterwards, and re-running PySpark's
    installer puts it under a session that already runs.
    """
    if not getattr(py4j.protocol.get_return_value, "_spark_tfrecord", False):
        py4j.protocol.get_return_value = _converting(py4j.protocol.get_return_value)
    try:
        from pyspark.errors.exceptions.captured import install_exception_handler
    except ImportError:  # a pyspark without a classic session
        return
    install_exception_handler()
