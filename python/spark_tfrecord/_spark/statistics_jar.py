"""The jar engine of :mod:`statistics`: the whole message built in the session's JVM.

The jar's ``TFRecordStatistics.statistics`` selects the features as the records hold them,
aggregates every column in one Spark job (its partitions' figures merged in the driver as they
arrive) and builds the ``DatasetFeatureStatisticsList`` there, the bytes the other engines'
figures give through :mod:`statistics` (a differential test holds them equal). Python checks the
features first, as for the other engines, and takes the message whole.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def _entry(df: DataFrame) -> tuple[Any, str]:
    """The jar's ``TFRecordStatistics``, or None and why there is none to call."""
    jvm = getattr(df.sparkSession, "_jvm", None)
    if getattr(df, "_jdf", None) is None or jvm is None:
        return None, (
            'statistics: engine="jar" aggregates in the session\'s JVM, which a Spark Connect '
            'client cannot call: use engine="sql" or engine="arrow" there'
        )
    entry = jvm.io.github.sparktfrecord.TFRecordStatistics
    from py4j.java_gateway import JavaClass

    if not isinstance(entry, JavaClass):
        return None, (
            'statistics: engine="jar" needs the spark-tfrecord jar on the session\'s class '
            'path (spark_tfrecord.configure(builder)); engine="sql" needs none'
        )
    return entry, ""


def available(df: DataFrame) -> bool:
    """Whether ``df``'s session can run this engine: a classic one, with the jar."""
    return _entry(df)[0] is not None


def _jar(df: DataFrame) -> Any:
    """The jar's ``TFRecordStatistics``; ValueError where there is none to call."""
    entry, why = _entry(df)
    if entry is None:
        raise ValueError(why)
    return entry


def statistics(
    df: DataFrame, name: str, separator: str, weight: str | None, record_type: str
) -> bytes:
    """The binary ``DatasetFeatureStatisticsList`` of ``df``, built by the jar; its refusals
    after the data is read (a weight null in a row, or weighing 0 or less everywhere) are
    ValueErrors with its message, as the other engines raise them."""
    from spark_tfrecord import errors

    entry = _jar(df)
    options = {"recordType": record_type, "pathSeparator": separator}
    if weight is not None:
        options["weight"] = weight
    try:
        # base64: Py4J hands a byte[] over one byte at a time in Python, a string whole
        text = entry.statisticsBase64(df._jdf, name, options)
    except Exception as e:  # Py4J's error, or PySpark's of it
        thrown = errors.java_chain(e)[:1]  # the driver's own refusal, not a failed job's cause
        if thrown and thrown[0].getClass().getName() == "java.lang.IllegalArgumentException":
            raise ValueError(str(thrown[0].getMessage())) from None
        raise
    return base64.b64decode(text)
