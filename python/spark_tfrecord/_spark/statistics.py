"""TFDV's statistics of a DataFrame, computed by Spark in one query: :func:`statistics`."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Literal, cast

from spark_tfrecord._format.datasets import statistics_histograms as hist
from spark_tfrecord._format.datasets.statistics_proto import (
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
from spark_tfrecord._spark import statistics_jar as jar
from spark_tfrecord._spark import statistics_sequence as sequence
from spark_tfrecord._spark import statistics_weighted as weighted
from spark_tfrecord._spark.statistics_features import Column, feature_column, flat_features
from spark_tfrecord._spark.statistics_partials import merged, merged_strings
from spark_tfrecord._spark.statistics_query import (
    FINE,
    HISTOGRAM_BUCKETS,
    NUM_VALUES_BUCKETS,
    RANK_BUCKETS,
    TOP_VALUES,
    Engine,
    query,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.connect.dataframe import DataFrame as ConnectDataFrame

#: The records whose statistics are computed: those the jar writes with this ``recordType``.
StatisticsRecordType = Literal["Example", "SequenceExample"]


def _common(row: dict[str, Any], num_examples: int) -> Common:
    present = int(row["present"])
    common = Common(num_non_missing=present, num_missing=num_examples - present)
    if present:
        common.min_num_values = int(row["n_min"])
        common.max_num_values = int(row["n_max"])
        common.tot_num_values = int(row["n_tot"])
        common.avg_num_values = common.tot_num_values / present
        q = [float(v) for v in row["n_q"]]
        common.num_values_histogram = hist.quantiles_histogram(q, hist.cumulative(q, present))
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
    # none where every number is an infinity (the query's nulls are left out of ``row``)
    finite_min = math.inf if row.get("finite_min") is None else float(row["finite_min"])
    finite_max = -math.inf if row.get("finite_max") is None else float(row["finite_max"])
    q = [float(v) for v in row["d_q"]]
    numeric.median, numeric.histograms = hist.numeric_histograms(
        q, total, (finite_min, finite_max), int(row["pos_inf"]), nan, HISTOGRAM_BUCKETS
    )
    return numeric


def _label(value: bytes) -> str:
    """A top value as TFDV labels it: its text, or ``__BYTES_VALUE__`` if it is not UTF-8."""
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return "__BYTES_VALUE__"


def _strings(top: list[dict[str, Any]], row: dict[str, Any], total_values: int) -> Strings:
    top = sorted(top, key=lambda r: int(r["rank"]))
    counted = [(_label(bytes(r["s"])), float(r["c"])) for r in top]
    strings = Strings(top_values=counted[:TOP_VALUES], rank=counted[:RANK_BUCKETS])
    if total_values:
        strings.unique = int(row["unique"])
        strings.invalid_utf8_count = int(row["invalid"])
        strings.avg_length = int(row["length"]) / total_values
    return strings


#: The kinds of query rows that come several per column, by the field that marks them.
MANY = ("s", "partial", "strings", "wq", "wtop")


def _grids() -> tuple[list[float], list[float]]:
    """The ranks (fractions) of the numbers' fine quantiles and of the numbers of values'."""
    fine = [k / FINE for k in range(FINE + 1)]
    return fine, [k / NUM_VALUES_BUCKETS for k in range(NUM_VALUES_BUCKETS + 1)]


def _sorted(rows: list[dict[str, Any]]) -> tuple[dict[int, dict[str, Any]], dict[str, Any]]:
    """The query's rows: aggregates per column, and per kind of MANY its rows by column."""
    by_column: dict[int, dict[str, Any]] = {}
    many: dict[str, dict[int, list[dict[str, Any]]]] = {k: {} for k in MANY}
    for r in rows:
        kind = next((k for k in MANY if r.get(k) is not None), None)
        if kind is not None:
            many[kind].setdefault(int(r["f"]), []).append(r)
        else:  # a column's aggregates, in rows of their own by part
            mine = by_column.setdefault(int(r["f"]), {})
            mine.update({k: v for k, v in r.items() if k != "f" and v is not None})
    grid, sizes_grid = _grids()
    for i, found in many["partial"].items():
        payloads = [bytes(r["partial"]) for r in found]
        by_column.setdefault(i, {}).update(merged(payloads, grid, sizes_grid))
    top = max(TOP_VALUES, RANK_BUCKETS)
    for i, found in many["strings"].items():
        figures, many["s"][i] = merged_strings([bytes(r["strings"]) for r in found], top)
        by_column[i].update(figures)
    return by_column, many


def _features(
    df: DataFrame, separator: str, weight: str | None, record_type: StatisticsRecordType
) -> tuple[DataFrame, list[Column], list[str], str | None]:
    """The features of ``df`` as the records hold them, their columns, the feature lists'
    names and the weight's SQL: a ValueError naming a column no record holds, before any job."""
    lists: list[str] = []
    if record_type == "SequenceExample":
        df, of, lists = sequence.sequence_features(df, separator)
    else:
        df, of = flat_features(df, separator)
    columns = [feature_column(f.name, f.dataType, of[f.name]) for f in df.schema.fields]
    w = None if weight is None else weighted.weight_sql(columns, weight)
    return df, columns, lists, w


def dataset_statistics(
    df: DataFrame,
    name: str = "",
    engine: Literal["sql", "arrow"] = "sql",
    separator: str = "/",
    weight: str | None = None,
    record_type: StatisticsRecordType = "Example",
) -> DatasetStatistics:
    """The statistics of ``df`` (one Spark action), weighted by the column ``weight`` too."""
    df, columns, lists, w = _features(df, separator, weight, record_type)
    by_column, many = _sorted([r.asDict() for r in query(df, columns, engine, w).collect()])
    num_examples = int(by_column[-1]["present"])
    dataset = DatasetStatistics(num_examples, [], name)
    if weight is not None:
        if int(by_column[-1]["w_count"]) != num_examples:
            raise ValueError(
                f"statistics: weight column {weight!r} is null in some rows; TFDV's weight "
                "feature holds exactly one number in every example"
            )
        dataset.weighted_num_examples = float(by_column[-1].get("w_present") or 0.0)
        _refuse_unweighable(columns, by_column, many["wq"], weight)
    for i, column in enumerate(columns):
        row = by_column[i]
        if not int(row["present"]):
            continue  # the jar writes no feature of a column that is null in every row
        feature = Feature([column.name], column.kind, _common(row, num_examples))
        if column.kind == STRING:
            feature.strings = _strings(many["s"].get(i, []), row, feature.common.tot_num_values)
        else:
            feature.numeric = _numeric(row)
        if w is not None:
            _weigh(feature, row, many["wq"].get(i, []), many["wtop"].get(i, []), dataset)
        dataset.features.append(feature)
    if lists:
        rows = {c.name: by_column[i] for i, c in enumerate(columns)}
        sequence.nest(dataset, lists, rows, NUM_VALUES_BUCKETS, HISTOGRAM_BUCKETS, FINE)
    return dataset


def _refuse_unweighable(
    columns: list[Column],
    by_column: dict[int, dict[str, Any]],
    quantiles: dict[int, list[dict[str, Any]]],
    weight: str,
) -> None:
    """ValueError for a numeric column with no value weighing > 0: TFDV 1.16.1 fails on it."""
    for i in sorted(range(len(columns)), key=lambda i: columns[i].name != weight):
        row, name = by_column[i], columns[i].name
        numbers = int(row.get("values") or 0) > int(row.get("nan") or 0)
        if columns[i].kind == STRING or not numbers or i in quantiles or sequence.is_steps(name):
            continue  # (a feature list's steps' lengths: no feature of TFDV's)
        if name == weight:
            raise ValueError(
                f"statistics: weight column {weight!r} is 0 or less in every row; TFDV's "
                "weighted median and histograms are undefined then (TFDV 1.16.1 fails)"
            )
        raise ValueError(
            f"statistics: no value of column {name!r} weighs more than 0 (weight column "
            f"{weight!r}); TFDV's weighted median and histograms of it are undefined "
            "(TFDV 1.16.1 fails)"
        )


def _weigh(
    feature: Feature,
    row: dict[str, Any],
    quantiles: list[dict[str, Any]],
    top: list[dict[str, Any]],
    dataset: DatasetStatistics,
) -> None:
    """Adds the weighted figures to ``feature``."""
    feature.common.weighted = weighted.weighted_common(row, dataset.weighted_num_examples or 0.0)
    if feature.strings is not None:
        feature.strings.weighted = weighted.weighted_top(top, _label, TOP_VALUES, RANK_BUCKETS)
    elif feature.numeric is not None and int(row.get("values") or 0) > int(row.get("nan") or 0):
        # TFDV weighs the numbers of a feature that has some besides NaN
        feature.numeric.weighted = weighted.weighted_numeric(
            row, quantiles, HISTOGRAM_BUCKETS, FINE
        )


def statistics(
    df: DataFrame | ConnectDataFrame,
    path: str | None = None,
    *,
    tfx_split: str | None = None,
    name: str = "",
    engine: Engine = "auto",
    path_separator: str = "/",
    weight: str | None = None,
    record_type: StatisticsRecordType = "Example",
) -> bytes:
    """TFDV's statistics of the records the jar writes from ``df``: a binary message.

    A ``DatasetFeatureStatisticsList`` as ``generate_statistics_from_tfrecord`` computes it with
    default options; quantiles within 1/1000 of the ranks (1/4000 with ``engine="arrow"``; with
    ``engine="jar"``, (2 + L + D)/4096 for 2^D tasks of 2^L chunks of 262,144 numbers), the rest
    exact.
    ``path``: also write them there (with ``tfx_split``, into an ExampleStatistics folder).
    ``weight``: a numeric column, null in no row, for TFDV's weighted statistics (with
    ``engine="jar"``, by Spark SQL in a second job). ``engine="arrow"`` aggregates in Spark's
    Python workers: they need pyarrow and NumPy. ``engine="jar"`` aggregates in the session's
    JVM (a classic session with the jar; the fastest). ``engine="sql"``: Spark SQL alone, which
    any session runs. The default, ``"auto"``, is the jar where the session can call it (a
    classic session with the jar), else Spark SQL.

    >>> import spark_tfrecord
    >>> df = spark.createDataFrame([(1, "a"), (2, "b"), (3, "a")], "id long, s string")
    >>> stats = spark_tfrecord.statistics(df)
    >>> print(spark_tfrecord.infer_schema(stats).splitlines()[:2])
    ['feature {', '  name: "id"']
    """
    if engine not in ("auto", "sql", "arrow", "jar"):
        raise ValueError(f"engine is 'auto', 'sql', 'arrow' or 'jar', not {engine!r}")
    if record_type not in ("Example", "SequenceExample"):
        raise ValueError(f"record_type is 'Example' or 'SequenceExample', not {record_type!r}")
    if path is None and tfx_split is not None:
        raise ValueError("tfx_split names the split of an artifact written to path: give path")
    # A Connect DataFrame has the API the query uses; pyspark 3.5's types do not relate them.
    classic: DataFrame = cast(Any, df)
    if engine == "auto":
        engine = "jar" if jar.available(classic) else "sql"
    if engine == "jar":
        _features(classic, path_separator, weight, record_type)  # its refusals, as the others'
        data = jar.statistics(classic, name, path_separator, weight, record_type)
    else:
        dataset = dataset_statistics(classic, name, engine, path_separator, weight, record_type)
        data = encode([dataset])
    if path is not None:
        write_statistics(data, path, tfx_split)
    return data


def write_statistics(data: bytes, path: str, tfx_split: str | None) -> str:
    """Write to ``path`` (with ``tfx_split``: ``Split-<tfx_split>/FeatureStats.pb`` in it)."""
    import os

    from spark_tfrecord._format.files.files import LocalFiles, file_system

    files, where = file_system(path)
    if tfx_split is not None:
        where = files.join(where, f"Split-{tfx_split}/FeatureStats.pb")
    if isinstance(files, LocalFiles):
        os.makedirs(os.path.dirname(os.path.abspath(where)), exist_ok=True)
    files.write_whole(where, data)
    return where
