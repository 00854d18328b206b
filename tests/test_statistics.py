"""spark_tfrecord.statistics and infer_schema (issue 59), held against TensorFlow Data
Validation itself: Spark computes the statistics of a DataFrame, the jar writes the same
DataFrame as TFRecord files, and support/tfdv_check.py, in TFDV's own environment (TFDV pins
TensorFlow 2.16, pyarrow < 11 and Beam: ci/test makes it, .cache/venv/tfdv, and names its python
in SPARK_TFRECORD_TFDV_PYTHON), reads ours with ``tfdv.load_stats_binary``, computes TFDV's of
the files, and compares every figure, the inferred schemas, and what validation finds. One TFDV
process checks them all (support/tfdv_worker.py, the ``tfdv`` fixture), and each engine's
statistics of a DataFrame are held against one computation of TFDV's."""

from __future__ import annotations

import doctest
import importlib
import math
import pickle
import sys
from pathlib import Path

import pytest

import spark_tfrecord
from support.tfdv_worker import TFDVWorker
from support.tfrecord_bytes import entry, example, feature, frame, int64_list_packed

ROWS = 3000
#: The engines of spark_tfrecord.statistics, each held against TFDV.
ENGINES = ("sql", "arrow", "jar")


SCHEMA = (
    "id long, i64 long, f float, d double, s string, drift string, b binary, ints array<int>, "
    "floats array<float>, strs array<string>, flag boolean, empty array<bigint>, nothing string, "
    "day date, only_nan float, bools array<string>, numbers string, ts timestamp, "
    "days array<date>"
)


def _row(i: int, planted: bool = False) -> tuple:
    import datetime

    nan, inf = math.nan, math.inf
    special = {17: nan, 23: inf, 29: -inf, 31: -0.0}
    f = next((v for k, v in special.items() if i % k == 0), (i % 100) / 7)
    s = ["red", "green", "blue"][i % 3] if i % 11 else None
    if planted and i % 50 == 0:
        s = "purple"  # a value the schema's domain has not
    b = bytes([0xFF, i % 256]) if i % 13 == 0 else b"" if i % 7 == 0 else f"v{i % 50}".encode()
    return (
        i,
        [2**63 - 1, -(2**63), 0, i, -i][i % 5],
        f,
        i * 1.1,
        s,
        ("b" if i % 10 else "a") if planted else ("a" if i % 10 else "b"),
        b,
        None if i % 9 == 0 else list(range(i % 4)),
        [nan, inf, 1.5, -2.0, 0.0][: i % 6],
        ["x", "y", "z"][: i % 3],
        i % 3 == 0,
        [],
        None,
        datetime.date(2024, 1, 1) + datetime.timedelta(days=i % 400),
        nan,
        ["true", "false"][: i % 3],
        str(i % 40 - 20),
        datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)
        + datetime.timedelta(seconds=i * 3601.5),
        [datetime.date(1969, 12, 31), datetime.date(2024, 2, 29)][: i % 3],
    )


def _frame(spark, planted: bool = False):
    rows = [_row(i, planted) for i in range(ROWS)]
    df = spark.createDataFrame(rows, SCHEMA).repartition(4)
    return df.drop("d") if planted else df  # planted: a feature gone


def _engine(spark, monkeypatch, engine: str) -> list[int]:
    """Readies ``engine``; the list it gives grows when the partitions' partials are merged in
    Python (the arrow engine ran) or the jar builds the message (the jar engine ran)."""
    from spark_tfrecord._spark import statistics as module

    if engine == "arrow":
        # mapInArrow's workers need pyarrow and spark_tfrecord: this environment's python.
        monkeypatch.setattr(spark.sparkContext, "pythonExec", sys.executable)
    merges: list[int] = []
    merged, built = module.merged, module.jar.statistics
    monkeypatch.setattr(module, "merged", lambda *a: merges.append(1) or merged(*a))
    monkeypatch.setattr(module.jar, "statistics", lambda *a: merges.append(2) or built(*a))
    return merges


def _engines(spark, monkeypatch, compute) -> dict[str, object]:
    """``compute(engine)`` by each engine, checking that the engine ran (_engine's merges)."""
    merges = _engine(spark, monkeypatch, "arrow")  # readies the arrow engine's workers
    results = {}
    for engine in ENGINES:
        merges.clear()
        results[engine] = compute(engine)
        assert set(merges) == {"sql": set(), "arrow": {1}, "jar": {2}}[engine], engine
    return results


def test_tfdv_reads_ours_and_agrees(spark, tmp_path: Path, monkeypatch, tfdv: TFDVWorker) -> None:
    """Every engine's statistics of the DataFrame, written as a TFX artifact, against TFDV's of
    the files the jar wrote; the schema our infer_schema infers from each is TFDV's; TFDV's
    validation finds none in them and the planted anomalies in each engine's statistics of a
    changed DataFrame."""
    df = _frame(spark)
    spark_tfrecord.write(df, str(tmp_path / "examples"), tfx_split="train")
    planted_df = _frame(spark, planted=True)

    def compute(engine: str) -> dict[str, str]:
        artifact = tmp_path / engine / "statistics"
        ours = spark_tfrecord.statistics(
            df, str(artifact), tfx_split="train", name="train", engine=engine
        )
        assert (artifact / "Split-train" / "FeatureStats.pb").read_bytes() == ours
        schema = tmp_path / engine / "schema.pbtxt"
        schema.write_text(spark_tfrecord.infer_schema(ours))
        planted = tmp_path / engine / "planted.pb"
        assert spark_tfrecord.statistics(planted_df, str(planted), engine=engine) == (
            planted.read_bytes()
        )
        paths = (artifact / "Split-train" / "FeatureStats.pb", schema, planted)
        return dict(zip(("ours", "schema", "planted"), map(str, paths)))

    runs = _engines(spark, monkeypatch, compute)
    job = {
        **{key: {engine: run[key] for engine, run in runs.items()} for key in runs["sql"]},
        "data": str(tmp_path / "examples" / "Split-train" / "*"),
        "wrong": {engine: run["planted"] for engine, run in runs.items()},
        "drift": {"drift": 0.1},
        "expected_anomalies": {
            "d": ["SCHEMA_MISSING_COLUMN"],
            "s": ["ENUM_TYPE_UNEXPECTED_STRING_VALUES"],
            "drift": ["COMPARATOR_L_INFTY_HIGH"],
        },
    }
    report, returncode = tfdv.check(job)
    assert report["problems"] == []
    # (what closing notes quote, with -s: each engine's largest difference from TFDV's per kind)
    print("largest differences:", {e: report["runs"][e]["largest"] for e in ENGINES})
    # Every column but the one null in every row (the jar writes no feature of it).
    columns = [c for c in df.columns if c != "nothing"]
    for engine in ENGINES:
        run = report["runs"][engine]
        # The same comparison of other statistics (the planted ones) finds what differs.
        wrong = "\n".join(run["wrong"])
        for difference in ("features:", "s top_values:", "drift top_values:", "s unique:"):
            assert difference in wrong, (engine, wrong)
        assert sorted(run["features"]) == sorted([c] for c in columns), engine
    assert returncode == 0


@pytest.mark.parametrize("engine", ["sql", "jar"])
def test_one_query_whatever_the_number_of_columns(spark, engine: str) -> None:
    """A DataFrame of 60 columns starts as many Spark jobs as one of 3: one query (with the jar
    engine, one job)."""
    from pyspark.sql import functions as F

    def jobs(width: int) -> int:
        df = spark.range(1000).select(
            *[(F.col("id") * k).alias(f"n{k}") for k in range(width // 3)],
            *[F.array(F.col("id") % 7, F.lit(k)).alias(f"a{k}") for k in range(width // 3)],
            *[(F.col("id") % (k + 2)).cast("string").alias(f"s{k}") for k in range(width // 3)],
        )
        group = f"statistics-{engine}-{width}"
        spark.sparkContext.setJobGroup(group, group)
        try:
            data = spark_tfrecord.statistics(df, engine=engine)
        finally:
            spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)
        assert len(spark_tfrecord.infer_schema(data).split("feature {")) == width + 1
        return len(spark.sparkContext.statusTracker().getJobIdsForGroup(group))

    narrow, wide = jobs(3), jobs(60)
    assert wide == narrow, (narrow, wide)
    if engine == "jar":
        assert narrow == 1


def test_the_default_engine_is_the_jars_where_the_session_can_call_it(spark, monkeypatch) -> None:
    """engine="auto", the default: the jar's one job and bytes in a classic session with the
    jar; Spark SQL's where there is no jar to call (as on a Connect client: test_connect)."""
    from spark_tfrecord._spark import statistics_jar

    df = spark.range(0, 3000, 1, 1).selectExpr(
        "id % 17 AS x", "CAST(id % 5 AS STRING) AS s", "array(id, 1.5) AS l"
    )
    group = "statistics-auto"
    spark.sparkContext.setJobGroup(group, group)
    try:
        default = spark_tfrecord.statistics(df)
    finally:
        spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)
    assert len(spark.sparkContext.statusTracker().getJobIdsForGroup(group)) == 1
    assert default == spark_tfrecord.statistics(df, engine="jar")
    monkeypatch.setattr(statistics_jar, "available", lambda df: False)
    assert spark_tfrecord.statistics(df) == spark_tfrecord.statistics(df, engine="sql")
    with pytest.raises(ValueError, match="engine is 'auto', 'sql', 'arrow' or 'jar', not 'java'"):
        spark_tfrecord.statistics(df, engine="java")  # type: ignore[arg-type]


def scala_statistics(spark, df, name: str = "", **options: str) -> bytes:
    """TFRecordStatistics.statistics, as a Scala user calls it, with ``options`` (a Map)."""
    scala = spark._jvm.io.github.sparktfrecord.TFRecordStatistics
    return bytes(scala.statistics(df._jdf, name, options))


def test_scalas_statistics_are_pythons_byte_for_byte(spark, tmp_path: Path) -> None:
    """TFRecordStatistics.statistics, what a Scala user calls, builds from the jar's figures the
    DatasetFeatureStatisticsList the Python side builds from them: the same bytes, on the
    awkward frame (NaN, ±inf, -0.0, int64 extremes, invalid UTF-8, empty lists, a column null in
    every row, one all NaN, dates, timestamps) with decimals, bytes and shorts, and lists of
    booleans and decimals, unweighted and weighted (weights of 0, and negative ones); on nested
    columns (struct leaves, an array of structs' leaves, lists of lists) with either separator;
    and refusals naming a column no record holds, an encoded tensor, a weight that is no
    feature, holds lists or is null in a row, an option that is none and a record type."""
    from pyspark.sql import functions as F

    df = _frame(spark).selectExpr(
        "*",
        "CAST(id AS DECIMAL(12, 2)) / 3 AS dec",
        "CAST(id % 200 - 100 AS TINYINT) AS tiny",
        "CAST(id * 7 AS SMALLINT) AS small",
        "IF(id % 4 = 0, NULL, array(flag, NOT flag, flag)) AS flags",
        "array(CAST(id AS DECIMAL(8, 1)), CAST(-id AS DECIMAL(8, 1))) AS decs",
    )
    ours = scala_statistics(spark, df, "train")
    assert ours == spark_tfrecord.statistics(df, name="train", engine="jar")
    # TFRecordStatistics.write: StatisticsGen's layout, the same bytes, no other file left
    scala = spark._jvm.io.github.sparktfrecord.TFRecordStatistics
    written = scala.write(df._jdf, str(tmp_path / "artifact"), "train", "train", {})
    assert written == (tmp_path / "artifact/Split-train/FeatureStats.pb").as_uri().replace(
        "file:///", "file:/"
    )
    left = sorted(p.name for p in (tmp_path / "artifact").rglob("*"))
    assert left == ["FeatureStats.pb", "Split-train"]  # (no temporary file beside it)
    assert (tmp_path / "artifact/Split-train/FeatureStats.pb").read_bytes() == ours
    assert b"__BYTES_VALUE__" in ours and b"train" in ours  # (the frame's awkward values there)
    weights = "CASE WHEN id % 7 = 0 THEN -2.5 WHEN id % 11 = 0 THEN 0 ELSE (id % 5) * 0.5 END"
    weighted = df.withColumn("w", F.expr(f"CAST({weights} AS FLOAT)"))
    ours = scala_statistics(spark, weighted, "w", WEIGHT="w")  # (option names in any case)
    assert ours == spark_tfrecord.statistics(weighted, name="w", engine="jar", weight="w")
    assert ours != scala_statistics(spark, weighted, "w")  # (the weighted figures there)
    nested = spark.createDataFrame([_nested_row(i) for i in range(300)], NESTED)
    for separator in ("/", "."):
        ours = scala_statistics(spark, nested, pathSeparator=separator)
        assert ours == spark_tfrecord.statistics(nested, engine="jar", path_separator=separator)
        assert f"boxes{separator}tokens{separator}ragged_row_lengths_0".encode() in ours
    with pytest.raises(Exception, match="column 'm' has type map<string,int>"):
        scala_statistics(spark, spark.range(1).selectExpr("map('a', 1) AS m"))
    with pytest.raises(Exception, match=r"column 'p\.m' has type map<string,int>"):
        scala_statistics(spark, spark.range(1).selectExpr("named_struct('m', map('a', 1)) AS p"))
    tensor = {"tfrecord.tensorEncoding": "bytes", "tfrecord.tensorDtype": "float32"}
    encoded = spark.range(1).selectExpr("array(array(1.0F)) AS t")
    encoded = encoded.select(F.col("t").alias("t", metadata=tensor))
    with pytest.raises(Exception, match="column 't' holds an encoded tensor"):
        scala_statistics(spark, encoded)
    with pytest.raises(Exception, match="weight 'v' is none of the features: 'id', 'f'"):
        scala_statistics(spark, df.select("id", "f"), weight="v")
    with pytest.raises(Exception, match="weight column 'ints' holds lists"):
        scala_statistics(spark, df, weight="ints")
    some_null = df.select("id", F.expr("IF(id = 3, NULL, 1.0)").alias("s"))
    with pytest.raises(Exception, match="weight column 's' is null in some rows"):
        scala_statistics(spark, some_null, weight="s")
    zero = weighted.select("id", "w", F.expr("IF(id % 11 = 0, 1.5, NULL)").alias("z"))
    with pytest.raises(Exception, match="no value of column 'z' weighs more than 0"):
        scala_statistics(spark, zero, weight="w")
    with pytest.raises(Exception, match="no option 'weights'; the options are recordType, "):
        scala_statistics(spark, df, weights="w")
    with pytest.raises(Exception, match=r"'ByteArray' for TFRecord option 'recordType'.*Example"):
        scala_statistics(spark, df, recordType="ByteArray")


def test_a_column_the_records_cannot_hold_flat_is_refused(spark) -> None:
    df = spark.createDataFrame([(1, {"a": 1})], "id long, m map<string,int>")
    with pytest.raises(ValueError, match="column 'm' has type map<string,int>"):
        spark_tfrecord.statistics(df)
    with pytest.raises(ValueError, match="give path"):
        spark_tfrecord.statistics(df.select("id"), tfx_split="train")
    # A struct's leaf is named by its column's path; an encoded tensor is refused by its name.
    nested = spark.createDataFrame([(1, ({"a": 1},))], "id long, p struct<m map<string,int>>")
    with pytest.raises(ValueError, match=r"column 'p\.m' has type map<string,int>"):
        spark_tfrecord.statistics(nested)
    from pyspark.sql import functions as F

    tensor = {"tfrecord.tensorEncoding": "bytes", "tfrecord.tensorDtype": "float32"}
    encoded = spark.createDataFrame([(1, [[1.0]])], "id long, t array<array<float>>")
    encoded = encoded.select("id", F.col("t").alias("t", metadata=tensor))
    with pytest.raises(ValueError, match="column 't' holds an encoded tensor"):
        spark_tfrecord.statistics(encoded)


@pytest.mark.parametrize(
    "module",
    ["spark_tfrecord._spark.statistics", "spark_tfrecord._format.datasets.schema_inference"],
)
def test_docstring_examples_run(spark, module: str) -> None:
    results = doctest.testmod(importlib.import_module(module), extraglobs={"spark": spark})
    assert results.failed == 0 and results.attempted >= 2, results


def _rank_error(got: dict, every, grid: list[float]) -> float:
    """Checks a column's exact figures against its values ``every`` (1 NaN, 1 +inf, 1 -inf
    among them); the largest distance of a quantile from its rank, a fraction of the values."""
    import numpy as np

    numbers = np.sort(every[~np.isnan(every)])
    n = len(numbers)
    assert (got["values"], got["nan"], got["pos_inf"]) == (len(every), 1, 1)
    assert (got["d_min"], got["d_max"]) == (-np.inf, np.inf)
    assert got["zeros"] == int((numbers == 0).sum())
    finite = numbers[np.isfinite(numbers)]
    assert (got["finite_min"], got["finite_max"]) == (finite[0], finite[-1])
    worst = 0.0
    for q, value in zip(grid, got["d_q"]):
        below = np.searchsorted(numbers, value, side="left")
        upto = np.searchsorted(numbers, value, side="right")
        worst = max(worst, max(0.0, below - q * n, q * n - upto) / n)
    return worst


def test_the_arrow_engines_quantiles_keep_their_bound() -> None:
    """Partitions' summaries merged (statistics_partials): each quantile within 1/SUMMARY of
    the values of its rank, on 300,000 values in partitions of unequal sizes with runs of equal
    values, ±inf and NaN; the exact figures exact."""
    import numpy as np

    from spark_tfrecord._spark import statistics_partials as p

    rng = np.random.default_rng(59)
    parts = [rng.normal(size=150_000), rng.integers(0, 50, 100_000) * 1.0, rng.random(50_000)]
    parts[2][:3] = [np.inf, -np.inf, np.nan]
    payloads = [pickle.dumps(p._partial(v)) for v in parts]
    grid = [k / 1000 for k in range(1001)]
    got = p.merged(payloads, grid)
    worst = _rank_error(got, np.concatenate(parts), grid)
    assert worst <= 1 / p.SUMMARY, worst
    # Means and variances of partitions combined: those of all the values.
    finite_parts = p.merged([pickle.dumps(p._partial(v)) for v in parts[:2]], grid)
    both = np.concatenate(parts[:2])
    assert math.isclose(finite_parts["mean"], both.mean(), rel_tol=1e-12, abs_tol=1e-12)
    assert math.isclose(finite_parts["variance"], both.var(), rel_tol=1e-12)


NESTED = (
    "id long, point struct<x double, y long, name string, inner struct<z int, "
    "tags array<string>>>, boxes array<struct<xmin float, label string, tokens array<long>>>, "
    "grid array<array<int>>"
)


def _nested_row(i: int) -> tuple:
    point = (
        None
        if i % 7 == 0
        else (i / 3, None if i % 5 == 0 else i, f"p{i % 4}", (i % 9, ["a", "b"][: i % 3]))
    )
    boxes = (
        None
        if i % 11 == 0
        else [(j * 0.5, f"l{(i + j) % 3}", list(range(j))) for j in range(i % 4)]
    )
    grid = None if i % 13 == 0 else [[k for k in range(j)] for j in range(i % 3)]
    return (i, point, boxes, grid)


def test_struct_leaves_by_their_path_as_tfdv_finds_them(
    spark, tmp_path: Path, tfdv: TFDVWorker
) -> None:
    """A struct's leaves (nested, null structs, a null leaf), an array of structs' leaves
    (parallel lists, a list leaf written ragged) and a list of lists (ragged): our statistics,
    written by write(statistics=...), are TFDV's of the files the same write made."""
    df = spark.createDataFrame([_nested_row(i) for i in range(600)], NESTED).repartition(3)
    artifact = tmp_path / "statistics"
    spark_tfrecord.write(
        df, str(tmp_path / "examples"), tfx_split="train", statistics=str(artifact)
    )
    written = artifact / "Split-train" / "FeatureStats.pb"
    assert written.read_bytes() == spark_tfrecord.statistics(df)
    assert not [p for p in (tmp_path / "examples" / "Split-train").iterdir() if "Feature" in p.name]
    job = {"ours": str(written), "data": str(tmp_path / "examples" / "Split-train" / "*")}
    report, returncode = tfdv.check(job)
    assert report["problems"] == []
    assert sorted(report["features"]) == sorted(
        [name]
        for name in (
            "id", "point/x", "point/y", "point/name", "point/inner/z", "point/inner/tags",
            "boxes/xmin", "boxes/label", "boxes/tokens/ragged_flat_values",
            "boxes/tokens/ragged_row_lengths_0", "grid/ragged_flat_values",
            "grid/ragged_row_lengths_0",
        )
    )  # fmt: skip
    assert returncode == 0


def test_write_statistics_refuses_what_it_cannot_write(spark, tmp_path: Path) -> None:
    df = spark.createDataFrame([(1, 2)], "a long, b long")
    with pytest.raises(ValueError, match="not the Examples artifact's"):
        spark_tfrecord.write(
            df, str(tmp_path / "x"), tfx_split="train", statistics=str(tmp_path / "x")
        )
    with pytest.raises(ValueError, match="SequenceExample records; record_type is 'ByteArray'"):
        spark_tfrecord.write(
            df, str(tmp_path / "y"), record_type="ByteArray", statistics=str(tmp_path / "s.pb")
        )
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()
    # Without tfx_split, a file; the partition columns are folder names, not features.
    spark_tfrecord.write(
        df, str(tmp_path / "z"), partition_by="b", statistics=str(tmp_path / "s.pb")
    )
    assert (tmp_path / "s.pb").read_bytes() == spark_tfrecord.statistics(df.select("a"))


def test_the_jar_engines_figures_keep_their_bound(spark) -> None:
    """The jar's figures (TFRecordStatistics.figures, under its messages) of 1,600,000
    numbers (four a row) in two tasks of more than three chunks (262,144: two numeric columns)
    each, spread, in runs of equal values, ±inf and NaN: the exact figures exact, each quantile
    within (2 + L + D)/4096 of the values of its rank (L = 2: four chunks a task; D = 1: two
    tasks' summaries merged in the driver); a list column's numbers of values and a string
    column's counts and top exact."""
    import numpy as np
    from pyspark.sql import types as t

    from spark_tfrecord._spark.statistics_features import feature_column
    from support.jar_figures import figures

    x = """CASE WHEN n < 800000 THEN (pmod(xxhash64(n), 2000001) - 1000000) / 1000.0
        WHEN n < 1200000 THEN CAST(pmod(xxhash64(n, 1), 50) AS DOUBLE)
        WHEN n = 1200000 THEN CAST('Infinity' AS DOUBLE)
        WHEN n = 1200001 THEN CAST('-Infinity' AS DOUBLE)
        WHEN n = 1200002 THEN CAST('NaN' AS DOUBLE) ELSE n / 7.0 END"""
    df = (
        spark.range(0, 400_000, 1, 2)
        .selectExpr(
            "transform(sequence(0, 3), k -> CAST(k AS LONG) * 400000 + id) AS ns",
            "id",
        )
        .selectExpr(
            f"transform(ns, n -> {x}) AS x",
            "slice(array(id % 5, id % 7, id % 11), 1, CAST(id % 4 AS INT)) AS l",
            "IF(id % 3 = 0, NULL, hex(pmod(xxhash64(id, 3), 20000))) AS s",
        )
    )
    columns = [
        feature_column("x", t.ArrayType(t.DoubleType())),
        feature_column("l", t.ArrayType(t.LongType())),
        feature_column("s", t.StringType()),
    ]
    grid = [k / 1000 for k in range(1001)]
    got, tops = figures(df, columns, 1000, grid, [k / 10 for k in range(11)])
    rows = df.collect()
    every = np.array([v for r in rows for v in r.x]).astype(np.float32).astype(np.float64)
    assert got[-1] == {"present": 400_000}
    worst = _rank_error(got[0], every, grid)
    assert worst <= (2 + 2 + 1) / 4096, worst
    sizes = np.bincount([len(r.l) for r in rows])
    assert (got[1]["present"], got[1]["n_tot"]) == (400_000, int((np.arange(4) * sizes).sum()))
    assert got[1]["values"] == got[1]["n_tot"] and got[1]["d_max"] == 10.0
    strings = [r.s.encode() for r in rows if r.s is not None]
    counts: dict[bytes, int] = {}
    for v in strings:
        counts[v] = counts.get(v, 0) + 1
    assert got[2]["present"] == len(strings) and got[2]["unique"] == len(counts)
    assert got[2]["length"] == sum(map(len, strings)) and got[2]["invalid"] == 0
    want = sorted(counts.items(), key=lambda p: (p[1], p[0]), reverse=True)[:1000]
    assert [(r["s"], r["c"], r["rank"]) for r in tops[2]] == [
        (s, c, k + 1) for k, (s, c) in enumerate(want)
    ]


def test_a_failing_task_fails_the_jar_engine_naming_the_file(spark, tmp_path: Path) -> None:
    """The jar engine merges each task's figures as it arrives, while the others run: a task
    that fails (a damaged record, in the second of three files) fails the call with Spark's
    error, naming the file and the byte offset, rather than waiting for figures that never
    come; and the good files alone give their figures."""
    good = frame(example(entry(b"x", feature("int64", int64_list_packed([7])))))
    bad = bytearray(good)
    bad[-1] ^= 0x01
    for name, data in (("a", good * 50), ("b", good * 3 + bytes(bad)), ("c", good * 50)):
        (tmp_path / f"{name}.tfrecord").write_bytes(data)
    df = spark_tfrecord.read(spark, str(tmp_path), schema="x long")
    damaged = rf"data checksum mismatch at byte offset {3 * len(good)} of \S*b\.tfrecord"
    with pytest.raises(Exception, match=damaged):
        spark_tfrecord.statistics(df, engine="jar")
    (tmp_path / "b.tfrecord").unlink()
    from spark_tfrecord._format.datasets.statistics_proto import decode

    again = spark_tfrecord.read(spark, str(tmp_path), schema="x long")
    (stats,) = decode(spark_tfrecord.statistics(again, engine="jar"))
    assert stats.num_examples == 100


def test_the_arrow_engines_top_values_are_exact() -> None:
    """Partitions' string figures merged (statistics_partials.top_strings, merged_strings): for
    two columns whose 5,000 values each are counted in one of three partitions, with runs of
    equal counts across the partitions' top lists, the unique count, total length, values not
    UTF-8 and the top 1,000 (ties: the larger value first) equal a sort of them all."""
    import numpy as np
    import pyarrow as pa

    from spark_tfrecord._spark import statistics_partials as p

    rng = np.random.default_rng(59)
    rows = []
    for f in (3, 8):
        for k in range(5000):
            value = bytes([0xFF]) * (k % 7 == 0) + f"v{k}".encode()
            rows.append((f, value, int(rng.integers(1, 40)), k % 7 == 0))
    parts = [rows[k::3] for k in range(3)]
    payloads: dict[int, list[bytes]] = {}
    for part in parts:
        f, s, c, bad = (list(x) for x in zip(*part))
        batch = pa.RecordBatch.from_arrays(
            [pa.array(f, pa.int32()), pa.array(s, pa.binary()), pa.array(c, pa.int64()),
             pa.array(bad)], ["f", "s", "c", "bad"]
        )  # fmt: skip
        for out in p.top_strings(1000)(iter([batch])):
            for place, payload in zip(out.column(0).to_pylist(), out.column(1).to_pylist()):
                payloads.setdefault(place, []).append(payload)
    assert list(p.top_strings(1000)(iter([]))) == []
    for f in (3, 8):
        mine = [r for r in rows if r[0] == f]
        figures, top = p.merged_strings(payloads[f], 1000)
        assert figures == {
            "unique": 5000,
            "length": sum(len(s) * c for _, s, c, _ in mine),
            "invalid": sum(c for _, _, c, bad in mine if bad),
        }
        expected = sorted(((c, s) for _, s, c, _ in mine), reverse=True)[:1000]
        assert [(r["c"], r["s"]) for r in top] == expected
        assert [r["rank"] for r in top] == list(range(1, 1001))


def test_weighted_statistics_are_tfdvs(
    spark, tmp_path: Path, monkeypatch, tfdv: TFDVWorker
) -> None:
    """statistics(weight="w") by each engine against TFDV's StatsOptions(weight_feature="w")
    on the files the jar wrote: the weighted presence and numbers of values of every feature
    (the weight's own too), the weighted mean, standard deviation, median and histograms of
    every feature of numbers with some, and the weighted top values and rank histograms of the
    strings; weights of 0 included."""
    from pyspark.sql import functions as F

    weights = F.expr("CAST((id % 5) * 0.5 + IF(id % 97 = 0, 30, 0) AS FLOAT)")
    df = _frame(spark).withColumn("w", weights)
    spark_tfrecord.write(df, str(tmp_path / "examples"))

    def compute(engine: str) -> str:
        ours = tmp_path / f"weighted-{engine}.pb"
        spark_tfrecord.statistics(df, str(ours), engine=engine, weight="w")
        return str(ours)

    ours = _engines(spark, monkeypatch, compute)
    job = {"ours": ours, "data": str(tmp_path / "examples" / "*.tfrecord"), "weight": "w"}
    report, returncode = tfdv.check(job)
    assert report["problems"] == []
    print("largest differences:", {e: report["runs"][e]["largest"] for e in ENGINES})
    for engine in ENGINES:
        # every feature but the one null in every row, the weight among them
        weighted = report["runs"][engine]["weighted"]
        assert len(weighted) == len(df.columns) - 1 and "w" in weighted, engine
    assert returncode == 0
    with pytest.raises(ValueError, match="weight 'v' is none of the features"):
        spark_tfrecord.statistics(df, weight="v")
    with pytest.raises(ValueError, match="weight column 'ints' holds lists"):
        spark_tfrecord.statistics(df, weight="ints")
    # (the refusals that take a pass over the data, on two of the columns: the same checks)
    some_null = df.select("id", F.expr("IF(id = 3, NULL, 1.0)").alias("s"))
    with pytest.raises(ValueError, match="weight column 's' is null in some rows"):
        spark_tfrecord.statistics(some_null, weight="s")


def test_negative_weights_are_tfdvs_and_no_weight_above_0_is_refused(
    spark, tmp_path: Path, tfdv: TFDVWorker
) -> None:
    """Negative weights against TFDV's: they count in the weighted presence, numbers of values,
    means and top values' weights (string features whose values all weigh less than 0, or 0,
    among them), while the weighted median and histograms take the values weighing more than 0
    alone. A feature of numbers none of which weighs more than 0, the weight's own (all weights
    0) first, is refused by its name: TFDV 1.16.1 fails on it."""
    from pyspark.sql import functions as F

    weights = "CASE WHEN id % 7 = 0 THEN -2.5 WHEN id % 11 = 0 THEN 0 ELSE (id % 5) * 0.5 END"
    df = (
        _frame(spark)
        .withColumn("w", F.expr(f"CAST({weights} AS FLOAT)"))
        .withColumn("negative", F.expr("IF(id % 7 = 0, 'below', NULL)"))
        .withColumn("weightless", F.expr("IF(id % 11 = 0 AND id % 7 != 0, 'nil', NULL)"))
    )
    spark_tfrecord.write(df, str(tmp_path / "examples"))
    ours = tmp_path / "weighted.pb"
    spark_tfrecord.statistics(df, str(ours), weight="w")
    job = {"ours": str(ours), "data": str(tmp_path / "examples" / "*.tfrecord"), "weight": "w"}
    report, returncode = tfdv.check(job)
    assert report["problems"] == []
    assert {"w", "negative", "weightless"} <= set(report["weighted"])
    assert returncode == 0
    # (on a few of the columns: each refusal takes a pass over the data)
    with pytest.raises(ValueError, match="weight column 'w' is 0 or less in every row"):
        spark_tfrecord.statistics(df.select("id", "f", F.lit(0.0).alias("w")), weight="w")
    zero = df.select("id", "f", "w", F.expr("IF(id % 11 = 0, 1.5, NULL)").alias("z"))
    with pytest.raises(ValueError, match="no value of column 'z' weighs more than 0"):
        spark_tfrecord.statistics(zero, weight="w")
