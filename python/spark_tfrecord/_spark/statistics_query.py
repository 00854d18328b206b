"""The one query of :mod:`statistics`: a union of per-column aggregates, one action in all."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from spark_tfrecord._format.datasets.statistics_proto import FLOAT, STRING
from spark_tfrecord._spark import statistics_weighted as weighted
from spark_tfrecord._spark.statistics_features import Column, quote
from spark_tfrecord._spark.statistics_partials import PRESENCE, partials, top_strings

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

#: Aggregate by Spark SQL alone, in NumPy and Arrow in Spark's Python workers, or in the jar;
#: "auto": the jar where the session can call it, else Spark SQL.
Engine = Literal["auto", "sql", "arrow", "jar"]
#: TFDV's default ``StatsOptions``: histogram buckets, top values, rank histogram buckets.
NUM_VALUES_BUCKETS = 10
HISTOGRAM_BUCKETS = 10
QUANTILES_BUCKETS = 10
TOP_VALUES = 20
RANK_BUCKETS = 1000
#: TFDV takes the standard histogram and the median from 100 times finer quantiles.
FINE = 100 * QUANTILES_BUCKETS
#: ``percentile_approx``'s accuracy: a rank error of at most 1/ACCURACY of the values.
ACCURACY = 1000
_INF = "CAST('Infinity' AS DOUBLE)"


def _zipped(i: int, column: Column) -> str:
    """SQL: the column's values as (its place, value) structs, none where it is null."""
    c = quote(column.name)
    if column.values:
        places, listed = f"array_repeat({i}, size({c}))", column.values.format(x=c)
    else:
        to = "BINARY" if column.kind == STRING else "DOUBLE"
        places, listed = f"array({i})", f"array(CAST({column.value.format(x=c)} AS {to}))"
    return f"coalesce(CASE WHEN {c} IS NOT NULL THEN arrays_zip({places}, {listed}) END, array())"


#: The fields of a row of the query's numbers, with their types.
FIELDS = {
    "present": "BIGINT", "n_min": "INT", "n_max": "INT", "n_tot": "BIGINT",
    "n_q": "array<int>", "values": "BIGINT", "nan": "BIGINT", "pos_inf": "BIGINT",
    "zeros": "BIGINT", "d_min": "DOUBLE", "d_max": "DOUBLE", "finite_min": "DOUBLE",
    "finite_max": "DOUBLE", "mean": "DOUBLE", "variance": "DOUBLE", "d_q": "array<double>",
}  # fmt: skip


def _grid(steps: int) -> str:
    return "array(" + ", ".join(f"{k / steps!r}D" for k in range(steps + 1)) + ")"


def _presence(c: str, is_list: bool) -> dict[str, str]:
    """The aggregates of a column's presence and number of values (SQL)."""
    n = f"CASE WHEN {c} IS NOT NULL THEN {'size(' + c + ')' if is_list else '1'} END"
    quantiles = f"percentile_approx({n}, {_grid(NUM_VALUES_BUCKETS)}, {ACCURACY})"
    if not is_list:
        quantiles = f"CASE WHEN count({c}) > 0 THEN array_repeat(1, {NUM_VALUES_BUCKETS + 1}) END"
    return {
        "present": f"count({c})",
        "n_min": f"min({n})",
        "n_max": f"max({n})",
        "n_tot": f"sum({n})",
        "n_q": quantiles,
    }


def _numbers(x: str) -> dict[str, str]:
    """The aggregates of numbers ``x`` (SQL of a double, null where there is none)."""
    number = f"CASE WHEN NOT isnan({x}) THEN {x} END"
    finite = f"CASE WHEN {x} > -{_INF} AND {x} < {_INF} THEN {x} END"
    return {
        "values": f"count({x})",
        "nan": f"count_if(isnan({x}))",
        "pos_inf": f"count_if({x} = {_INF})",
        "zeros": f"count_if({x} = 0)",
        "d_min": f"min({number})",
        "d_max": f"max({number})",
        "finite_min": f"min({finite})",
        "finite_max": f"max({finite})",
        "mean": f"avg({number})",
        "variance": f"var_pop({number})",
        "d_q": f"percentile_approx({number}, {_grid(FINE)}, {ACCURACY})",
    }


def _struct(i: int, aggregates: dict[str, str]) -> str:
    """A row of the numbers' part: every field of FIELDS, null where ``aggregates`` has none."""
    fields = ", ".join(
        f"'{name}', CAST({aggregates.get(name, 'NULL')} AS {t})" for name, t in FIELDS.items()
    )
    return f"named_struct('f', {i}, {fields})"


def _invalid_utf8(spark_version: str) -> str:
    """SQL: whether the bytes ``s`` are not UTF-8 (on Spark 3.5: do not survive a round trip)."""
    if int(spark_version.split(".")[0]) >= 4:
        return "NOT is_valid_utf8(CAST(s AS STRING))"
    return "encode(decode(s, 'UTF-8'), 'UTF-8') != s"


#: Sketches (``percentile_approx``), aggregated apart: they disable generated code.
SKETCHES = ("n_q", "d_q")


def _split(
    df: DataFrame, rows: list[tuple[int, dict[str, str]]], grouped: str | None = None
) -> list[DataFrame]:
    """The aggregation of ``rows`` ((place, aggregates)) by ``grouped``, sketches apart."""
    from pyspark.sql import functions as F

    out = []
    for sketches in (False, True):
        parts = [(i, {k: v for k, v in a.items() if (k in SKETCHES) == sketches}) for i, a in rows]
        parts = [(i, a) for i, a in parts if a]
        if not parts:
            continue
        if grouped is None:
            structs = ", ".join(_struct(i, a) for i, a in parts)
            out.append(df.agg(F.expr(f"array({structs})").alias("r")).selectExpr("inline(r)"))
        else:
            ((_, aggregates),) = parts
            out.append(
                df.groupBy(grouped).agg(*[F.expr(v).alias(k) for k, v in aggregates.items()])
            )
    return out


def query(df: DataFrame, columns: list[Column], engine: Engine, w: str | None) -> DataFrame:
    """The one query: rows of each column's aggregates, and of its top string values (for
    ``engine="jar"``, which aggregates in the JVM, only the weighted rows, ``w`` given)."""
    parts: list[DataFrame] = []
    if engine != "jar":
        parts = _arrow_parts(df, columns) if engine == "arrow" else _sql_parts(df, columns)
        strings = [_zipped(i, c) for i, c in enumerate(columns) if c.kind == STRING]
        if strings:
            parts += _top_strings(df, strings, engine)
    if w is not None:
        parts += weighted.weighted_parts(df, columns, w, FINE, max(TOP_VALUES, RANK_BUCKETS))
    query = parts[0]
    for part in parts[1:]:
        query = query.unionByName(part, allowMissingColumns=True)
    return query


def _sql_parts(df: DataFrame, columns: list[Column]) -> list[DataFrame]:
    """Spark SQL's aggregates of the rows, and of the list columns' numbers."""
    rows: list[tuple[int, dict[str, str]]] = [(-1, {"present": "count(1)"})]
    lists: list[tuple[int, Column]] = []
    for i, column in enumerate(columns):
        c = quote(column.name)
        aggregates = _presence(c, bool(column.values))
        if column.kind != STRING and column.values:
            lists.append((i, column))
        elif column.kind != STRING:
            aggregates.update(_numbers(column.value.format(x=c)))
        rows.append((i, aggregates))
    return _split(df, rows) + (_list_numbers(df, lists) if lists else [])


def _arrow_parts(df: DataFrame, columns: list[Column]) -> list[DataFrame]:
    """Every column's aggregates in NumPy (:mod:`statistics_partials`), in one pass."""
    from pyspark.sql import functions as F

    picked, kinds = [], []
    for i, c in enumerate(columns):
        scalar_number = c.kind != STRING and not c.values
        x = c.value.format(x=quote(c.name)) if scalar_number else quote(c.name)
        picked.append(F.expr(x).alias(f"c{i}"))
        kinds.append(PRESENCE if c.kind == STRING else "float" if c.kind == FLOAT else "int")
    places = list(range(len(columns)))
    return [df.select(*picked).mapInArrow(partials(places, kinds), "f int, partial binary")]


def _list_numbers(df: DataFrame, lists: list[tuple[int, Column]]) -> list[DataFrame]:
    """The numbers of list columns by Spark SQL: a row per value, aggregated per column."""
    from pyspark.sql import functions as F

    zipped = ", ".join(_zipped(i, c) for i, c in lists)
    values = df.selectExpr(f"inline(concat({zipped}))").toDF("f", "d")
    numbers = _numbers("d")
    del numbers["d_q"]
    parts = _split(values, [(0, numbers)], grouped="f")
    # The sketch takes the numbers alone: NaN filtered out costs it nothing.
    quantiles = F.expr(f"percentile_approx(d, {_grid(FINE)}, {ACCURACY})").alias("d_q")
    return [*parts, values.where("NOT isnan(d)").groupBy("f").agg(quantiles)]


def _top_strings(df: DataFrame, strings: list[str], engine: Engine) -> list[DataFrame]:
    """Per string column, a row of its figures and a row per top value (count and rank)."""
    from pyspark.sql import functions as F

    values = df.selectExpr(f"inline(concat({', '.join(strings)}))").toDF("f", "s")
    counts = values.groupBy("f", "s").agg(F.count(F.lit(1)).alias("c"))
    invalid = _invalid_utf8(df.sparkSession.version)
    top = max(TOP_VALUES, RANK_BUCKETS)
    if engine == "arrow":
        bad = counts.withColumn("bad", F.expr(invalid))
        return [bad.mapInArrow(top_strings(top), "f int, strings binary")]
    totals = counts.groupBy("f").agg(
        F.count(F.lit(1)).alias("unique"),
        F.sum(F.expr("CAST(length(s) AS BIGINT) * c")).alias("length"),
        F.sum(F.expr(f"CASE WHEN {invalid} THEN c ELSE 0 END")).alias("invalid"),
    )
    return [totals, weighted.ranked(counts, "c", top)]
