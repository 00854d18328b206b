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
#: ``percentile_approx``'s accuracy: a rank error of at most 1/ACCURACY of the values, 100
#: times under TFDV's own (its ``epsilon``, 0.01).
ACCURACY = 10000
_INF = "CAST('Infinity' AS DOUBLE)"


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _kind(name: str, data_type: DataType) -> tuple[int, str, bool]:
    """The TFDV type of a column, the SQL of one of its values (``x``) as the record holds it,
    and whether it is a list; a column the record cannot hold flat is refused."""
    from pyspark.sql import types as t

    is_list = isinstance(data_type, t.ArrayType)
    element = data_type.elementType if isinstance(data_type, t.ArrayType) else data_type
    if isinstance(element, t.BooleanType):
        return INT, "CAST(CAST(x AS INT) AS DOUBLE)", is_list
    if isinstance(element, (t.ByteType, t.ShortType, t.IntegerType, t.LongType)):
        return INT, "CAST(x AS DOUBLE)", is_list
    if isinstance(element, (t.FloatType, t.DoubleType, t.DecimalType)):
        # The jar writes a float_list: a double is rounded to float32 first.
        return FLOAT, "CAST(CAST(x AS FLOAT) AS DOUBLE)", is_list
    if isinstance(element, (t.StringType, t.BinaryType)):
        return STRING, "CAST(x AS BINARY)", is_list
    if isinstance(element, t.DateType):
        return INT, "CAST(unix_date(x) AS DOUBLE)", is_list
    raise ValueError(
        f"statistics: column {name!r} has type {data_type.simpleString()}; the statistics take "
        "the columns the jar writes as flat features (numbers, booleans, dates, strings, "
        "binary, and arrays of them). Select the others out, or flatten them first."
    )


def _entries(columns: list[tuple[str, int, str, bool]]) -> str:
    """The SQL of each row's entries: (f, k, n, d, s), f the column's place (-1: the row
    itself), k 0 for a column's presence (n values, -1: absent), 1 for a number d, 2 for a
    string's bytes s."""
    nothing = "'d', CAST(NULL AS DOUBLE), 's', CAST(NULL AS BINARY)"
    rows = [f"named_struct('f', -1, 'k', 0, 'n', 0, {nothing})"]
    values = []
    for i, (name, kind, value, is_list) in enumerate(columns):
        c = _quote(name)
        n = f"CASE WHEN {c} IS NULL THEN -1 ELSE {'size(' + c + ')' if is_list else '1'} END"
        rows.append(f"named_struct('f', {i}, 'k', 0, 'n', {n}, {nothing})")
        listed = f"coalesce({c}, array())" if is_list else f"filter(array({c}), x -> x IS NOT NULL)"
        if kind == STRING:
            entry = f"'k', 2, 'n', CAST(NULL AS INT), 'd', CAST(NULL AS DOUBLE), 's', {value}"
        else:
            entry = f"'k', 1, 'n', CAST(NULL AS INT), 'd', {value}, 's', CAST(NULL AS BINARY)"
        values.append(f"transform({listed}, x -> named_struct('f', {i}, {entry}))")
    return f"explode(concat(array({', '.join(rows)}), {', '.join(values) or 'array()'})) AS e"


def _grid(steps: int) -> str:
    return "array(" + ", ".join(f"{k / steps!r}D" for k in range(steps + 1)) + ")"


def _per_column() -> list[str]:
    """The aggregates of a column's presence and numbers (SQL, over the entries' fields)."""
    present = "k = 0 AND n >= 0"
    number = "k = 1 AND NOT isnan(d)"
    finite = f"k = 1 AND d > -{_INF} AND d < {_INF}"
    return [
        f"count_if({present}) AS present",
        f"min(CASE WHEN {present} THEN n END) AS n_min",
        f"max(CASE WHEN {present} THEN n END) AS n_max",
        f"sum(CASE WHEN {present} THEN n END) AS n_tot",
        f"percentile_approx(CASE WHEN {present} THEN n END, {_grid(NUM_VALUES_BUCKETS)}, "
        f"{ACCURACY}) AS n_q",
        "count_if(k = 1) AS values",
        "count_if(k = 1 AND isnan(d)) AS nan",
        f"count_if(k = 1 AND d = {_INF}) AS pos_inf",
        "count_if(k = 1 AND d = 0) AS zeros",
        f"min(CASE WHEN {number} THEN d END) AS d_min",
        f"max(CASE WHEN {number} THEN d END) AS d_max",
        f"min(CASE WHEN {finite} THEN d END) AS finite_min",
        f"max(CASE WHEN {finite} THEN d END) AS finite_max",
        f"avg(CASE WHEN {number} THEN d END) AS mean",
        f"var_pop(CASE WHEN {number} THEN d END) AS variance",
        f"percentile_approx(CASE WHEN {number} THEN d END, {_grid(FINE)}, {ACCURACY}) AS d_q",
    ]


def _invalid_utf8(spark_version: str) -> str:
    """SQL: whether the bytes ``s`` are not UTF-8. Spark 4 has ``is_valid_utf8``; Spark 3.5's
    ``decode`` puts U+FFFD for what is not UTF-8, so that the bytes do not come back."""
    if int(spark_version.split(".")[0]) >= 4:
        return "NOT is_valid_utf8(CAST(s AS STRING))"
    return "encode(decode(s, 'UTF-8'), 'UTF-8') != s"


def _query(df: DataFrame, columns: list[tuple[str, int, str, bool]]) -> DataFrame:
    """The one query: a row per column of its aggregates, and a row per top string value."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    entries = df.selectExpr(_entries(columns)).select("e.*")
    numbers = entries.where("k < 2").groupBy("f").agg(*[F.expr(a) for a in _per_column()])
    strings = entries.where("k = 2").groupBy("f", "s").agg(F.count(F.lit(1)).alias("c"))
    everything = Window.partitionBy("f")
    ranked = Window.partitionBy("f").orderBy(F.col("c").desc(), F.col("s").desc())
    version = df.sparkSession.version
    strings = (
        strings.withColumn("rank", F.row_number().over(ranked))
        .withColumn("unique", F.count(F.lit(1)).over(everything))
        .withColumn("length", F.sum(F.expr("CAST(length(s) AS BIGINT) * c")).over(everything))
        .withColumn(
            "invalid",
            F.sum(F.expr(f"CASE WHEN {_invalid_utf8(version)} THEN c ELSE 0 END")).over(everything),
        )
        .where(f"rank <= {max(TOP_VALUES, RANK_BUCKETS)}")
    )
    return numbers.unionByName(strings, allowMissingColumns=True)


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
    nan = int(row["nan"])
    total = int(row["values"]) - nan
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
    by_column = {int(r["f"]): r for r in rows if r.get("present") is not None}
    tops: dict[int, list[dict[str, Any]]] = {}
    for r in rows:
        if r.get("present") is None:
            tops.setdefault(int(r["f"]), []).append(r)
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
