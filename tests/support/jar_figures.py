"""The jar's figures alone (``TFRecordStatistics.figures``), read as the engine's tests
check them: per column the merged figures (its quantile summary read by
:func:`statistics_partials.merged_parts`, as the arrow engine's are) and per string column its
top values. The library takes the whole message from the jar (``statistics_jar``); a test of the
quantiles' bound needs the fine figures under it."""

from __future__ import annotations

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


def read_as(column: Column, data_type: Any) -> tuple[str, str]:
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

    entry = df.sparkSession._jvm.io.github.sparktfrecord.TFRecordStatistics
    picked, rounded = [], ""
    for i, c in enumerate(columns):
        sql, mark = read_as(c, df.schema[c.name].dataType)
        # a column read as it is keeps its name: a select of the scan's own columns copies no row
        picked.append(F.expr(sql) if sql == quote(c.name) else F.expr(sql).alias(f"c{i}"))
        rounded += mark
    reader = _Reader(bytes(entry.figures(df.select(*picked)._jdf, rounded, top)))
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
