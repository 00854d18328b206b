"""TFDV's weighted statistics (``StatsOptions(weight_feature=...)``), for :mod:`statistics`."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from spark_tfrecord._format.datasets import statistics_histograms as hist
from spark_tfrecord._format.datasets.statistics_proto import (
    STRING,
    WeightedCommon,
    WeightedNumeric,
)
from spark_tfrecord._spark.statistics_features import Column, quote

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

#: TFDV's ``weighted_frequency_threshold``: a value weighing less is no weighted top value.
WEIGHTED_FREQUENCY_THRESHOLD = 1.0
#: Values are ranked per hash part first (sorts in parallel), then the parts' tops together.
RANK_PARTS = 16
_INF = "CAST('Infinity' AS DOUBLE)"


def weight_sql(columns: list[Column], weight: str) -> str:
    """SQL of a row's weight as the record holds it; ValueError unless one number per row."""
    found = [c for c in columns if c.name == weight]
    if not found:
        names = ", ".join(repr(c.name) for c in columns)
        raise ValueError(f"statistics: weight {weight!r} is none of the features: {names}")
    (column,) = found
    if column.kind == STRING or column.values:
        raise ValueError(
            f"statistics: weight column {weight!r} holds "
            f"{'strings' if column.kind == STRING else 'lists'}; TFDV's weight feature holds "
            "exactly one number in every example"
        )
    return f"CAST({column.value.format(x=quote(weight))} AS DOUBLE)"


def ranked(counts: DataFrame, count: str, top: int) -> DataFrame:
    """The ``top`` values ``s`` of each ``f`` by ``count`` (ties: larger first), as ``rank``."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    order = (F.col(count).desc(), F.col("s").desc())
    part = F.expr(f"pmod(xxhash64(s), {RANK_PARTS})")
    return (
        counts.withColumn(
            "rank", F.row_number().over(Window.partitionBy("f", part).orderBy(*order))
        )
        .where(f"rank <= {top}")
        .withColumn("rank", F.row_number().over(Window.partitionBy("f").orderBy(*order)))
        .where(f"rank <= {top}")
    )


def _with_weights(i: int, column: Column, w: str) -> str:
    """SQL: the column's values as (place, value, weight) structs, none where it is null."""
    c = quote(column.name)
    if column.values:
        listed = column.values.format(x=c)
        places, weights = f"array_repeat({i}, size({c}))", f"array_repeat({w}, size({c}))"
    else:
        to = "BINARY" if column.kind == STRING else "DOUBLE"
        places, weights = f"array({i})", f"array({w})"
        listed = f"array(CAST({column.value.format(x=c)} AS {to}))"
    zipped = f"arrays_zip({places}, {listed}, {weights})"
    return f"coalesce(CASE WHEN {c} IS NOT NULL THEN {zipped} END, array())"


def _presence(df: DataFrame, columns: list[Column], w: str) -> DataFrame:
    """A row per column of its weighted presence and values; ``f`` -1: total weight and count."""
    from pyspark.sql import functions as F

    def row(i: int, present: str, tot: str, count: str) -> str:
        return (
            f"named_struct('f', {i}, 'w_present', CAST({present} AS DOUBLE), "
            f"'w_tot', CAST({tot} AS DOUBLE), 'w_count', CAST({count} AS BIGINT))"
        )

    rows = [row(-1, f"sum({w})", "NULL", f"count({w})")]
    for i, column in enumerate(columns):
        c = quote(column.name)
        n = f"size({c})" if column.values else "1"
        present = f"CASE WHEN {c} IS NOT NULL THEN {{}} END"
        rows.append(
            row(i, f"sum({present.format(w)})", f"sum({present.format(f'{n} * {w}')})", "NULL")
        )
    return df.agg(F.expr(f"array({', '.join(rows)})").alias("r")).selectExpr("inline(r)")


def weighted_parts(
    df: DataFrame, columns: list[Column], w: str, fine: int, top: int
) -> list[DataFrame]:
    """The weighted parts of the query: ``fine`` quantile steps, ``top`` strings by weight."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    parts = [_presence(df, columns, w)]
    numbers = [_with_weights(i, c, w) for i, c in enumerate(columns) if c.kind != STRING]
    if numbers:
        values = df.selectExpr(f"inline(concat({', '.join(numbers)}))").toDF("f", "d", "w")
        number = "CASE WHEN NOT isnan(d) THEN {} END"
        parts.append(
            values.groupBy("f").agg(
                F.expr(f"sum({number.format('w')})").alias("w_values"),
                F.expr(f"sum({number.format('w * d')})").alias("w_sum"),
                F.expr(f"sum({number.format('w * d * d')})").alias("w_sq"),
                F.expr(f"sum(CASE WHEN d = {_INF} THEN w ELSE 0 END)").alias("w_pos_inf"),
            )
        )
        # Exact weighted quantiles: values where the cumulative weight crosses a step (a superset).
        by_value = (
            values.where("NOT isnan(d) AND w > 0").groupBy("f", "d").agg(F.sum("w").alias("w"))
        )
        cum = F.sum("w").over(
            Window.partitionBy("f").orderBy("d").rowsBetween(Window.unboundedPreceding, 0)
        )
        steps = by_value.withColumn("wq_cum", cum).withColumn(
            "wq_total", F.sum("w").over(Window.partitionBy("f"))
        )
        crossing = (
            f"floor(wq_cum * {fine} / wq_total + 1e-7) > "
            f"floor((wq_cum - w) * {fine} / wq_total - 1e-7)"
        )
        parts.append(
            steps.where(crossing).select("f", F.col("d").alias("wq"), "wq_cum", "wq_total")
        )
    strings = [_with_weights(i, c, w) for i, c in enumerate(columns) if c.kind == STRING]
    if strings:
        values = df.selectExpr(f"inline(concat({', '.join(strings)}))").toDF("f", "s", "w")
        weights = values.groupBy("f", "s").agg(F.sum("w").alias("ws"))
        parts.append(
            ranked(weights, "ws", top).select(
                "f", F.col("s").alias("wtop"), "ws", F.col("rank").alias("wrank")
            )
        )
    return parts


def _quantiles(found: list[dict[str, Any]], fine: int) -> tuple[list[float], float]:
    """The weighted quantiles at ``fine`` steps, and the total weight, from the crossing rows."""
    found = sorted(found, key=lambda r: float(r["wq"]))
    total = float(found[0]["wq_total"])
    out, j = [], 0
    for k in range(fine + 1):
        target = total * k / fine
        while j < len(found) - 1 and float(found[j]["wq_cum"]) < target * (1 - 1e-12):
            j += 1
        out.append(float(found[j]["wq"]))
    return out, total


def weighted_common(row: dict[str, Any], total_weight: float) -> WeightedCommon:
    present = float(row.get("w_present") or 0.0)
    tot = float(row.get("w_tot") or 0.0)
    return WeightedCommon(present, total_weight - present, tot / present if present else 0.0, tot)


def weighted_numeric(
    row: dict[str, Any], found: list[dict[str, Any]], buckets: int, fine: int
) -> WeightedNumeric:
    """A column's weighted numbers from its row and its quantile rows ``found``."""
    weight = float(row.get("w_values") or 0.0)
    mean = float(row["w_sum"]) / weight if weight else math.nan
    variance = float(row["w_sq"]) / weight - mean * mean if weight else math.nan
    numeric = WeightedNumeric(
        # TFDV's running mean takes inf - inf once an infinity is in: NaN, whatever the sign.
        mean=mean if math.isfinite(mean) else math.nan,
        std_dev=math.sqrt(variance) if variance > 0 else 0.0,
    )
    if found:
        q, total = _quantiles(found, fine)
        finite_min = math.inf if row.get("finite_min") is None else float(row["finite_min"])
        finite_max = -math.inf if row.get("finite_max") is None else float(row["finite_max"])
        numeric.median, numeric.histograms = hist.numeric_histograms(
            q, total, (finite_min, finite_max), float(row["w_pos_inf"]), int(row["nan"]), buckets
        )
    return numeric


def weighted_top(
    found: list[dict[str, Any]], label: Any, top: int, buckets: int
) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
    """The weighted top values and rank histogram of a string column's ranked rows."""
    found = sorted(found, key=lambda r: int(r["wrank"]))
    weighed = [(label(bytes(r["wtop"])), float(r["ws"])) for r in found]
    weighed = [(v, c) for v, c in weighed if c >= WEIGHTED_FREQUENCY_THRESHOLD]
    return weighed[:top], weighed[:buckets]
