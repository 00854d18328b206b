"""spark_tfrecord.statistics(record_type="SequenceExample") (issue 59) held against TensorFlow Data
Validation itself, as TFX computes the statistics of SequenceExample files: the jar writes a
DataFrame's SequenceExample records, and support/tfdv_check.py, in TFDV's environment, reads them
with tfx_bsl's TFSequenceExampleRecord into tfdv.GenerateStatistics and compares every figure of
every feature with ours: the context features, the STRUCT feature ##SEQUENCE## and each feature
list under it, with its two levels (steps per example, values per step, weighted too) and its
custom histograms of the values per step, and the schemas tfdv.infer_schema makes of both."""

from __future__ import annotations

import datetime
import math
from pathlib import Path

import pytest

import spark_tfrecord
from support.tfdv_worker import TFDVWorker
from test_statistics import ENGINES, _engine, _engines, scala_statistics

ROWS = 1500
SCHEMA = (
    "id long, w float, label string, i64 long, frames array<array<float>>, "
    "tokens array<array<long>>, words array<array<binary>>, flags array<array<boolean>>, "
    "when array<array<timestamp>>, boxes array<struct<score double, tags array<string>>>, "
    "p struct<days array<array<date>>, kind string>, nosteps array<array<float>>, "
    "nothing array<array<int>>"
)
#: The features of the records, as TFDV names them (a feature list under ##SEQUENCE##).
FEATURE_LISTS = ("frames", "tokens", "words", "flags", "when", "boxes/score", "boxes/tags")
FEATURE_LISTS += ("p/days", "nosteps")
FEATURES = sorted(
    [[c] for c in ("id", "w", "label", "i64", "p/kind", "##SEQUENCE##")]
    + [["##SEQUENCE##", name] for name in FEATURE_LISTS]
)


def _steps(i: int, values: list) -> list | None:
    """Steps of awkward shapes: none (null, every 7th), no steps, empty steps among others."""
    if i % 7 == 0:
        return None
    return [values[: (i + k) % (len(values) + 1)] for k in range(i % 4)]


def _row(i: int) -> tuple:
    nan, inf = math.nan, math.inf
    floats = [nan, inf, -inf, -0.0, 1.5, (i % 50) / 3]
    # A feature list's int64 values within 32 bits, which tfx_bsl decodes whole (its low 32
    # bits alone: test_feature_lists_int64_values_are_whole); the context's of 64 (i64).
    extremes = [2**31 - 1, -(2**31), 65537, 123456789, -i, i]
    words = [bytes([0xFF, i % 256]), b"", f"w{i % 30}".encode(), "é".encode()]
    t0 = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
    times = [t0 + datetime.timedelta(seconds=i * 1.25 - 900 + k) for k in range(3)]
    boxes = None if i % 11 == 0 else [((i + j) / 7, ["a", "b", "c"][: j % 3]) for j in range(i % 3)]
    days = [datetime.date(1969, 12, 31), datetime.date(2024, 2, 29)]
    every = i % 97 != 0  # every 97th record holds no feature list at all
    return (
        i,
        float((i % 5) * 0.5 + (30 if i % 89 == 0 else 0)),
        None if i % 3 == 0 else ["x", "y", "z"][i % 2],
        [2**63 - 1, -(2**63), 0, i][i % 4],
        _steps(i, floats) if every else None,
        _steps(i + 1, extremes) if every else None,
        _steps(i + 2, words) if every else None,
        _steps(i + 3, [True, False]) if every else None,
        _steps(i + 4, times) if every else None,
        boxes if every else None,
        None if i % 13 == 0 else (_steps(i + 5, days) if every else None, f"k{i % 4}"),
        [] if i % 2 and every else None,
        None,
    )


def _frame(spark):
    return spark.createDataFrame([_row(i) for i in range(ROWS)], SCHEMA).repartition(3)


def test_sequence_statistics_are_tfdvs(
    spark, tmp_path: Path, monkeypatch, tfdv: TFDVWorker
) -> None:
    """Every figure of every feature of the SequenceExample records against TFDV's, by each
    engine: the default's (the jar's, in this session) written by
    write(record_type="SequenceExample", statistics=...), the sql and arrow engines' computed;
    the schema our infer_schema infers from each is TFDV's from its own."""
    df = _frame(spark)
    examples = str(tmp_path / "examples")
    ours = tmp_path / "jar.pb"
    spark_tfrecord.write(df, examples, record_type="SequenceExample", statistics=str(ours))

    def compute(engine: str) -> dict[str, str]:
        stats = spark_tfrecord.statistics(df, engine=engine, record_type="SequenceExample")
        if engine == "jar":  # the same bytes as the write's, whatever order its tasks ended in
            assert ours.read_bytes() == stats
        else:
            (tmp_path / f"{engine}.pb").write_bytes(stats)
        schema = tmp_path / f"{engine}-schema.pbtxt"
        schema.write_text(spark_tfrecord.infer_schema(stats))
        return {"ours": str(tmp_path / f"{engine}.pb"), "schema": str(schema)}

    runs = _engines(spark, monkeypatch, compute)
    job = {
        "ours": {engine: run["ours"] for engine, run in runs.items()},
        "data": examples + "/*.tfrecord",
        "record_type": "SequenceExample",
        # our infer_schema's: tfdv.infer_schema's of TFDV's statistics
        "schema": {engine: run["schema"] for engine, run in runs.items()},
    }
    report, returncode = tfdv.check(job)
    assert report["problems"] == []
    print("largest differences:", {e: report["runs"][e]["largest"] for e in ENGINES})
    for engine in ENGINES:
        run = report["runs"][engine]
        assert sorted(run["features"]) == FEATURES, engine
        # The levels (and custom histograms, but of nosteps, which has no step) of every
        # feature list.
        assert sorted(run["levels"]) == sorted(f"##SEQUENCE##/{n}" for n in FEATURE_LISTS)
    assert returncode == 0


def test_weighted_sequence_statistics_are_tfdvs(spark, tmp_path: Path, tfdv: TFDVWorker) -> None:
    """StatsOptions(weight_feature="w") on the SequenceExample files: the weighted figures of
    the context features and of the feature lists, with their weighted levels."""
    df = _frame(spark)
    spark_tfrecord.write(df, str(tmp_path / "examples"), record_type="SequenceExample")
    ours = tmp_path / "weighted.pb"
    spark_tfrecord.statistics(df, str(ours), weight="w", record_type="SequenceExample")
    job = {
        "ours": str(ours),
        "data": str(tmp_path / "examples" / "*.tfrecord"),
        "record_type": "SequenceExample",
        "weight": "w",
    }
    report, returncode = tfdv.check(job)
    assert report["problems"] == []
    assert sorted(report["weighted"]) == sorted("/".join(f) for f in FEATURES)
    assert returncode == 0
    with pytest.raises(ValueError, match="weight column 'frames' holds lists"):
        spark_tfrecord.statistics(df, weight="frames", record_type="SequenceExample")


def test_scalas_sequence_statistics_are_pythons_byte_for_byte(spark) -> None:
    """TFRecordStatistics.statistics with recordType SequenceExample, as a Scala user calls it:
    the Python side's bytes from the same figures, unweighted and weighted (the feature lists
    under ##SEQUENCE##, their levels and level-2 histograms, the context's features); refused,
    naming the column, a list too deep for a feature list and a weight that is one."""
    df = _frame(spark)
    for weight in ({}, {"weight": "w"}):
        ours = scala_statistics(spark, df, "s", recordType="sequenceexample", **weight)
        python = spark_tfrecord.statistics(
            df, name="s", engine="jar", record_type="SequenceExample", **weight
        )
        assert ours == python and b"level_2_value_list_length_standard" in ours
    deep = spark.createDataFrame([(1, [[[1]]])], "id long, d array<array<array<int>>>")
    with pytest.raises(Exception, match="column 'd' has type array<array<array<int>>>"):
        scala_statistics(spark, deep, recordType="SequenceExample")
    assert b"d/ragged_flat_values" in scala_statistics(spark, deep)
    with pytest.raises(Exception, match="weight column 'frames' holds lists"):
        scala_statistics(spark, df, recordType="SequenceExample", weight="frames")


def test_what_a_sequence_example_cannot_hold_is_refused(spark, tmp_path: Path) -> None:
    deep = spark.createDataFrame([(1, [[[1]]])], "id long, d array<array<array<int>>>")
    with pytest.raises(ValueError, match="column 'd' has type array<array<array<int>>>"):
        spark_tfrecord.statistics(deep, record_type="SequenceExample")
    # recordType Example writes it ragged
    assert b"d/ragged_flat_values" in spark_tfrecord.statistics(deep)
    with pytest.raises(ValueError, match="record_type is 'Example' or 'SequenceExample'"):
        spark_tfrecord.statistics(deep, record_type="ByteArray")
    # The recordType option of a write is its record type too.
    flat = spark.createDataFrame([(1, [[2, 3], []])], "id long, s array<array<int>>")
    written = tmp_path / "s.pb"
    spark_tfrecord.write(
        flat, str(tmp_path / "x"), statistics=str(written), recordType="SequenceExample"
    )
    assert written.read_bytes() == spark_tfrecord.statistics(flat, record_type="SequenceExample")
    assert b"##SEQUENCE##" in written.read_bytes()


def test_feature_lists_int64_values_are_whole(spark, monkeypatch) -> None:
    """A feature list's int64 values (and a timestamp's microseconds) beyond 32 bits: the
    statistics are of the values the records hold, by every engine (tfx_bsl 1.16.1 keeps
    their low 32 bits: docs/statistics.md)."""
    from spark_tfrecord._format.datasets.statistics_proto import decode

    big = [2**63 - 1, -(2**63), 2**53 + 1, 12345678901234567, -5, 7]
    t0 = datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)
    times = [t0 + datetime.timedelta(seconds=977.25 * k) for k in range(4)]
    df = spark.createDataFrame(
        [(k, [big[:k], big[k:]], [times[: k % 4 + 1]]) for k in range(6)],
        "id long, tokens array<array<long>>, when array<array<timestamp>>",
    )
    micros = [
        int((t - datetime.datetime(1970, 1, 1, tzinfo=t.tzinfo)).total_seconds() * 10**6)
        for t in times
    ]
    when = [m for k in range(6) for m in micros[: k % 4 + 1]]
    tokens = big * 6
    for engine in ("sql", "arrow", "jar"):
        _engine(spark, monkeypatch, engine)
        stats = decode(spark_tfrecord.statistics(df, engine=engine, record_type="SequenceExample"))
        features = {"/".join(f.path): f for f in stats[0].features}
        for name, values in (("tokens", tokens), ("when", when)):
            got = features[f"##SEQUENCE##/{name}"]
            assert got.numeric is not None, (engine, name)
            low, high = float(min(values)), float(max(values))
            assert (got.numeric.min, got.numeric.max) == (low, high), (engine, name)
            assert got.common.tot_num_values == len(values), (engine, name)
            mean = sum(map(float, values)) / len(values)
            assert math.isclose(got.numeric.mean, mean, rel_tol=1e-12), (engine, name)
