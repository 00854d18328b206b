"""TFDV's statistics of a DataFrame, computed by Spark: :func:`statistics` gives the binary
``DatasetFeatureStatisticsList`` that TensorFlow Data Validation computes (its default
``StatsOptions``) for the ``Example`` records the jar writes from the DataFrame, or writes it
as TFX's StatisticsGen does (``Split-<name>/FeatureStats.pb``).

One query of aggregates whatever the number of columns: each row becomes, by ``explode``, one
entry per column (whether it is present, how many values it has) and one per value; the
entries are aggregated per column (counts, min, max, mean, variance, quantiles), and the string
values per column and value (the top values and the unique count, exactly), the two parts
unioned into one result that one action collects.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from spark_tfrecord._format.datasets import statistics_histograms as hist
from spark_tfrecord._format.datasets.statistics_proto import (
    FLOAT,
    INT,
    QUANTILES,
    STANDARD,
    STRING,
    Common,
    DatasetStatistics,
    Feature,
    Histogram,
    Numeric,
    Strings,
    encode,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import DataType

#: TFDV's default ``StatsOptions``: the buckets of the number-of-values histogram, of the
#: standard and quantiles histograms, the top values and the rank histogram's buckets.
NUM_VALUES_BUCKETS = 10
HISTOGRAM_BUCKETS = 10
QUANTILES_BUCKETS = 10
TOP_VALUES = 20
RANK_BUCKETS = 1000
#: TFDV takes the standard histogram and the median from 100 times finer quantiles.
FINE = 100 * QUANTILES_BUCKETS
#: ``percentile_approx``'s accuracy: a rank error of at most 1/ACCURACY of the values, 10
#: times under TFDV's own (its ``epsilon``, 0.01).
ACCURACY = 1000
_INF = "CAST('Infinity' AS DOUBLE)"


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _kind(name: str, data_type: DataType) -> tuple[int, str, bool]:
    """The TFDV type of a column, the SQL of one of its values (``{x}``) as the record holds it,
    and whether it is a list; a column the record cannot hold flat is refused."""
    from pyspark.sql import types as t

    is_list = isinstance(data_type, t.ArrayType)
    element = data_type.elementType if isinstance(data_type, t.ArrayType) else data_type
    if isinstance(element, t.BooleanType):
        return INT, "CAST(CAST({x} AS INT) AS DOUBLE)", is_list
    if isinstance(element, (t.ByteType, t.ShortType, t.IntegerType, t.LongType)):
        return INT, "CAST({x} AS DOUBLE)", is_list
    if isinstance(element, (t.FloatType, t.DoubleType, t.DecimalType)):
        # The jar writes a float_list: a double is rounded to float32 first.
        return FLOAT, "CAST(CAST({x} AS FLOAT) AS DOUBLE)", is_list
    if isinstance(element, (t.StringType, t.BinaryType)):
        return STRING, "CAST({x} AS BINARY)", is_list
    if isinstance(element, t.DateType):
        return INT, "CAST(unix_date({x}) AS DOUBLE)", is_list
    raise ValueError(
        f"statistics: column {name!r} has type {data_type.simpleString()}; the statistics take "
        "the columns the jar writes as flat features (numbers, booleans, dates, strings, "
        "binary, and arrays of them). Select the others out, or flatten them first."
    )


def _zipped(i: int, c: str, kind: int, value: str, is_list: bool) -> str:
    """SQL: the column's values as (its place, value) structs, none where it is null: a
    number as a double, a string as its bytes. Casts and ``arrays_zip``, which Spark compiles,
    rather than ``transform``, which it interprets (a date's ``unix_date`` excepted)."""
    to = "binary" if kind == STRING else "double"
    if not is_list:
        listed = f"array(CAST({value.format(x=c)} AS {to}))"
        places = f"array({i})"
    else:
        if "unix_date" in value:
            listed = f"transform({c}, x -> {value.format(x='x')})"
        elif "AS FLOAT" in value:
            listed = f"CAST(CAST({c} AS array<float>) AS array<double>)"
        elif "AS INT" in value:
            listed = f"CAST(CAST({c} AS array<int>) AS array<double>)"
        else:
            listed = f"CAST({c} AS array<{to}>)"
        places = f"array_repeat({i}, size({c}))"
    return f"coalesce(CASE WHEN {c} IS NOT NULL THEN arrays_zip({places}, {listed}) END, array())"


#: The fields of a row of the query's numbers, with their types: a column's presence and
#: counts of values (``n_``), and its numbers' aggregates.
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
    """SQL: whether the bytes ``s`` are not UTF-8. Spark 4 has ``is_valid_utf8``; Spark 3.5's
    ``decode`` puts U+FFFD for what is not UTF-8, so that the bytes do not come back."""
    if int(spark_version.split(".")[0]) >= 4:
        return "NOT is_valid_utf8(CAST(s AS STRING))"
    return "encode(decode(s, 'UTF-8'), 'UTF-8') != s"


#: The aggregates that are sketches (``percentile_approx``): Spark runs an aggregation that has
#: one without generated code, so they are aggregated apart from the others.
SKETCHES = ("n_q", "d_q")


def _split(
    df: DataFrame, rows: list[tuple[int, dict[str, str]]], grouped: str | None = None
) -> list[DataFrame]:
    """The aggregation of ``rows`` (a column's place and its aggregates), as two: one of the
    sketches, one of the rest (by ``grouped``, a column, or over all rows)."""
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


def _query(df: DataFrame, columns: list[tuple[str, int, str, bool]]) -> DataFrame:
    """The one query: a row per column of its aggregates (the numbers of a list column in a
    second row, the sketches in a third), and a row per top string value of a column."""
    rows: list[tuple[int, dict[str, str]]] = [(-1, {"present": "count(1)"})]
    lists, strings = [], []
    for i, (name, kind, value, is_list) in enumerate(columns):
        c = _quote(name)
        aggregates = _presence(c, is_list)
        if kind != STRING and not is_list:
            aggregates.update(_numbers(value.format(x=c)))
        rows.append((i, aggregates))
        (strings if kind == STRING else lists if is_list else []).append(
            _zipped(i, c, kind, value, is_list)
        )
    parts = _split(df, rows)
    if lists:
        values = df.selectExpr(f"inline(concat({', '.join(lists)}))").toDF("f", "d")
        parts += _split(values, [(0, _numbers("d"))], grouped="f")
    if strings:
        parts.append(_top_strings(df, strings))
    query = parts[0]
    for part in parts[1:]:
        query = query.unionByName(part, allowMissingColumns=True)
    return query


def _top_strings(df: DataFrame, strings: list[str]) -> DataFrame:
    """Per string column, its values' counts, the top ones ranked, the unique count, the total
    length and the count of values that are not UTF-8."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    values = df.selectExpr(f"inline(concat({', '.join(strings)}))").toDF("f", "s")
    counts = values.groupBy("f", "s").agg(F.count(F.lit(1)).alias("c"))
    everything = Window.partitionBy("f")
    ranked = Window.partitionBy("f").orderBy(F.col("c").desc(), F.col("s").desc())
    invalid = _invalid_utf8(df.sparkSession.version)
    return (
        counts.withColumn("rank", F.row_number().over(ranked))
        .withColumn("unique", F.count(F.lit(1)).over(everything))
        .withColumn("length", F.sum(F.expr("CAST(length(s) AS BIGINT) * c")).over(everything))
        .withColumn(
            "invalid", F.sum(F.expr(f"CASE WHEN {invalid} THEN c ELSE 0 END")).over(everything)
        )
        .where(f"rank <= {max(TOP_VALUES, RANK_BUCKETS)}")
    )


def _cumulative(quantiles: list[float], total: int) -> list[float]:
    """The counts at or below each boundary, as TFDV's sketch gives them with its quantiles:
    a boundary's count is the rank of the last of the equal boundaries around it."""
    steps = len(quantiles) - 1
    out = [0.0] * len(quantiles)
    k = steps
    for i in range(steps, -1, -1):
        if i < steps and quantiles[i] != quantiles[i + 1]:
            k = i
        out[i] = total * k / steps
    return out


def _common(row: dict[str, Any], num_examples: int) -> Common:
    present = int(row["present"])
    common = Common(num_non_missing=present, num_missing=num_examples - present)
    if present:
        common.min_num_values = int(row["n_min"])
        common.max_num_values = int(row["n_max"])
        common.tot_num_values = int(row["n_tot"])
        common.avg_num_values = common.tot_num_values / present
        q = [float(v) for v in row["n_q"]]
        common.num_values_histogram = hist.quantiles_histogram(q, _cumulative(q, present))
    return common


def _numeric(row: dict[str, Any]) -> Numeric:
    nan = int(row.get("nan") or 0)
    total = int(row.get("values") or 0) - nan  # a list column of empty lists has no row
    if total == 0:
        only_nan = [Histogram([], STANDARD, nan), Histogram([], QUANTILES, nan)] if nan else []
        return Numeric(histograms=only_nan)
    variance, mean = row["variance"], float(row["mean"])
    numeric = Numeric(
        # TFDV's running mean takes inf - inf once an infinity is in: NaN, whatever the sign.
        mean=mean if math.isfinite(mean) else math.nan,
        std_dev=math.sqrt(variance) if variance is not None and variance > 0 else 0.0,
        num_zeros=int(row["zeros"]),
        min=float(row["d_min"]),
        max=float(row["d_max"]),
    )
    q = [float(v) for v in row["d_q"]]
    cumulative = _cumulative(q, total)
    numeric.median = hist.median(q)
    finite_min = math.inf if row["finite_min"] is None else float(row["finite_min"])
    finite_max = -math.inf if row["finite_max"] is None else float(row["finite_max"])
    standard = hist.equi_width_histogram(
        q, cumulative, finite_min, finite_max, HISTOGRAM_BUCKETS, int(row["pos_inf"])
    )
    standard.num_nan = nan
    quantiles = hist.quantiles_histogram(*hist.rebin(q, cumulative, FINE // QUANTILES_BUCKETS))
    quantiles.num_nan = nan
    numeric.histograms = [standard, quantiles]
    return numeric


def _label(value: bytes) -> str:
    """A top value as TFDV labels it: its text, or ``__BYTES_VALUE__`` if it is not UTF-8."""
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return "__BYTES_VALUE__"


def _strings(top: list[dict[str, Any]], total_values: int) -> Strings:
    top = sorted(top, key=lambda r: int(r["rank"]))
    counted = [(_label(bytes(r["s"])), float(r["c"])) for r in top]
    strings = Strings(top_values=counted[:TOP_VALUES], rank=counted[:RANK_BUCKETS])
    if top:
        strings.unique = int(top[0]["unique"])
        strings.invalid_utf8_count = int(top[0]["invalid"])
        strings.avg_length = int(top[0]["length"]) / total_values
    return strings


def dataset_statistics(df: DataFrame, name: str = "") -> DatasetStatistics:
    """The statistics of ``df`` (one Spark action)."""
    columns = []
    for f in df.schema.fields:
        kind, value, is_list = _kind(f.name, f.dataType)
        columns.append((f.name, kind, value, is_list))
    rows = [r.asDict() for r in _query(df, columns).collect()]
    by_column: dict[int, dict[str, Any]] = {}
    tops: dict[int, list[dict[str, Any]]] = {}
    for r in rows:
        if r.get("s") is not None:
            tops.setdefault(int(r["f"]), []).append(r)
        else:  # a column's aggregates; a list column's numbers in a row of their own
            mine = by_column.setdefault(int(r["f"]), {})
            mine.update({k: v for k, v in r.items() if k in FIELDS and v is not None})
    num_examples = int(by_column[-1]["present"])
    features = []
    for i, (column, kind, _, _) in enumerate(columns):
        row = by_column[i]
        if not int(row["present"]):
            continue  # the jar writes no feature of a column that is null in every row
        feature = Feature([column], kind, _common(row, num_examples))
        if kind == STRING:
            feature.strings = _strings(tops.get(i, []), feature.common.tot_num_values)
        else:
            feature.numeric = _numeric(row)
        features.append(feature)
    return DatasetStatistics(num_examples, features, name)


def statistics(
    df: DataFrame,
    path: str | None = None,
    *,
    tfx_split: str | None = None,
    name: str = "",
) -> bytes:
    """TensorFlow Data Validation's statistics of the ``Example`` records the jar writes from
    ``df``, as TFDV's ``generate_statistics_from_tfrecord`` computes them with its default
    options: a binary ``DatasetFeatureStatisticsList`` (``tfdv.load_stats_binary`` reads it).
    Spark computes them in one query of aggregates, whatever the number of columns: counts,
    min, max, mean, standard deviation, zeros, average lengths, unique counts and top values
    are exact; the quantiles (median, histograms) are within 1/10000 of the values' ranks.

    ``path``: also write them there (a file; with ``tfx_split``, the folder of a TFX
    ExampleStatistics artifact, into which ``Split-<tfx_split>/FeatureStats.pb`` is written,
    as StatisticsGen writes it). ``name``: the dataset's name in the message.

    >>> import spark_tfrecord
    >>> df = spark.createDataFrame([(1, "a"), (2, "b"), (3, "a")], "id long, s string")
    >>> stats = spark_tfrecord.statistics(df)
    >>> print(spark_tfrecord.infer_schema(stats).splitlines()[:2])
    ['feature {', '  name: "id"']
    """
    data = encode([dataset_statistics(df, name)])
    if path is not None:
        import os

        from spark_tfrecord._format.files.files import LocalFiles, file_system

        files, where = file_system(path)
        if tfx_split is not None:
            where = files.join(where, f"Split-{tfx_split}/FeatureStats.pb")
        if isinstance(files, LocalFiles):
            os.makedirs(os.path.dirname(os.path.abspath(where)), exist_ok=True)
        files.write_whole(where, data)
    elif tfx_split is not None:
        raise ValueError("tfx_split names the split of an artifact written to path: give path")
    return data
