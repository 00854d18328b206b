"""The jar engine of :mod:`statistics`: every column's figures aggregated in the JVM, one job.

The features go to the jar's ``TFRecordStatistics.figures`` as they are where they are numbers,
strings or binary (or arrays of them), else as doubles (their SQL of :mod:`statistics_features`).
It gives the partitions' figures merged in the driver's JVM: the rows, per column how many rows
hold how many values and the numbers' partial (as one of the arrow engine's workers makes it,
its quantile summary a few thousand points whatever the partitions: read here by
:func:`statistics_partials.merged_parts`), and per string column its exact counts: unique
values, bytes, invalid UTF-8 and the top values.
"""

from __future__ import annotations

import base64
import struct
from typing import TYPE_CHECKING, Any

from spark_tfrecord._format.datasets.statistics_proto import STRING
from spark_tfrecord._spark.statistics_features import Column, quote
from spark_tfrecord._spark.statistics_partials import merged_parts

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

#: The numbers' exact figures in the jar's layout: five counts, then six doubles.
_COUNTS = ("values", "nan", "pos_inf", "zeros", "n")
_FIGURES = ("mean", "m2", "d_min", "d_max", "finite_min", "finite_max")


class _Reader:
    """Reads the jar's big-endian layout (Java's ``DataOutputStream``) in order."""

    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def count(self) -> int:
        (value,) = struct.unpack_from(">i", self.data, self.at)
        self.at += 4
        return int(value)

    def longs(self, n: int) -> Any:
        import numpy as np

        out = np.frombuffer(self.data, ">i8", n, self.at).astype(np.int64)
        self.at += 8 * n
        return out

    def doubles(self, n: int) -> Any:
        import numpy as np

        out = np.frombuffer(self.data, ">f8", n, self.at).astype(np.float64)
        self.at += 8 * n
        return out

    def blob(self) -> bytes:
        n = self.count()
        self.at += n
        return self.data[self.at - n : self.at]


def _numbers(reader: _Reader) -> dict[str, Any]:
    """A partition's partial of a numeric column, as ``statistics_partials._partial`` has it."""
    import math

    counts = [int(c) for c in reader.longs(len(_COUNTS))]
    figures = [float(x) for x in reader.doubles(len(_FIGURES))]
    part: dict[str, Any] = dict(zip(_COUNTS, counts))
    for name, x in zip(_FIGURES, figures):  # the extremes are NaN where there are none
        part[name] = None if name not in ("mean", "m2") and math.isnan(x) else x
    points = reader.count()
    part["summary"] = (reader.doubles(points), reader.longs(points))
    return part


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


def _read_as(column: Column, data_type: Any) -> tuple[str, str]:
    """SQL of what the jar reads of ``column``, and "f" if its doubles are rounded to float32.

    Numbers, strings and binary as they are (no array cast, which copies every list), doubles
    marked to be rounded as the jar writes them; others (booleans, decimals, dates, timestamps)
    by the column's own SQL, as doubles.
    """
    from pyspark.sql import types as t

    element = data_type.elementType if isinstance(data_type, t.ArrayType) else data_type
    raw = (t.ByteType, t.ShortType, t.IntegerType, t.LongType, t.FloatType, t.DoubleType)
    if isinstance(element, (*raw, t.StringType, t.BinaryType)):
        return quote(column.name), "f" if isinstance(element, t.DoubleType) else "-"
    return (column.values or column.value).format(x=quote(column.name)), "-"


def figures(
    df: DataFrame,
    columns: list[Column],
    top: int,
    grid: list[float],
    sizes_grid: list[float],
) -> tuple[dict[int, dict[str, Any]], dict[int, list[dict[str, Any]]]]:
    """Per column (and at -1, the rows) its figures, and per string column its top rows."""
    from pyspark.sql import functions as F

    entry = _jar(df)
    picked, rounded = [], ""
    for i, c in enumerate(columns):
        sql, mark = _read_as(c, df.schema[c.name].dataType)
        # a column read as it is keeps its name: a select of the scan's own columns copies no row
        picked.append(F.expr(sql) if sql == quote(c.name) else F.expr(sql).alias(f"c{i}"))
        rounded += mark
    # base64: Py4J decodes a byte[] one byte at a time in Python (a third of the engine's time)
    figures_text = entry.figuresBase64(df.select(*picked)._jdf, rounded, top)
    reader = _Reader(base64.b64decode(figures_text))
    by_column: dict[int, dict[str, Any]] = {-1: {"present": int(reader.longs(1)[0])}}
    for i, c in enumerate(columns):
        part = {"sizes": reader.longs(reader.count())}
        if c.kind != STRING:
            part.update(_numbers(reader))
        by_column[i] = merged_parts([part], grid, sizes_grid)
    top_rows: dict[int, list[dict[str, Any]]] = {}
    for i, c in enumerate(columns):
        if c.kind != STRING:
            continue
        unique, length, invalid = (int(x) for x in reader.longs(3))
        by_column[i].update({"unique": unique, "length": length, "invalid": invalid})
        top_rows[i] = []
        for rank in range(1, reader.count() + 1):
            s = reader.blob()
            top_rows[i].append({"s": s, "c": int(reader.longs(1)[0]), "rank": rank})
    return by_column, top_rows
