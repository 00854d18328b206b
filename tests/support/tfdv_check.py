"""Holds our statistics against TensorFlow Data Validation's own, in TFDV's environment (run by
test_statistics.py with SPARK_TFRECORD_TFDV_PYTHON: TFDV pins TensorFlow 2.16, pyarrow < 11 and
Beam, which the Spark environments cannot hold).

    python tfdv_check.py JOB.json      one job: its report printed, exit 1 on a disagreement
    python tfdv_check.py --serve       a job path per line of standard input (serve): what the
                                       tests run, importing TensorFlow, TFDV and Beam once

JOB.json: ``ours`` (our FeatureStats.pb; or a dict of them by run, such as each engine's of the
same DataFrame, all held against one computation of TFDV's), ``data`` (the glob of the TFRecord
files the jar wrote from the same DataFrame), optionally ``weight`` (TFDV's
``StatsOptions(weight_feature=...)``) and ``record_type`` (``SequenceExample``: TFDV's
statistics as TFX's of such files, by tfdv_sequence, the feature lists' levels compared too),
``schema`` (our infer_schema's schema.pbtxt, compared with TFDV's), and ``planted`` (our
statistics of data with a drifted feature, a missing one and a new string value: TFDV's
validation must find them, with the ``drift`` thresholds and ``expected_anomalies``) and
``wrong`` (statistics that must differ from TFDV's of the files: the report's ``wrong``, the
differences found); each of these a path, or a dict by run as ``ours``.
TFDV computes its statistics of the files (``generate_statistics_from_tfrecord``, the
DirectRunner); the exact figures must be equal (to the float tolerances of TOLERANCE), the
approximate ones within TFDV's bound: a quantile of rank p within ``EPSILON`` of the values'
count of p, checked against the values themselves (read from the files). The report (JSON):
the features and figures compared, the largest difference of each kind, and each disagreement
(``problems``).
"""

from __future__ import annotations

import glob
import json
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import tensorflow as tf
import tensorflow_data_validation as tfdv
import tfdv_sequence
from google.protobuf import text_format
from tensorflow_data_validation.utils import display_util
from tensorflow_metadata.proto.v0 import anomalies_pb2, schema_pb2, statistics_pb2

#: TFDV's quantiles' rank error (its ``StatsOptions.epsilon``).
EPSILON = 0.01
#: Relative tolerance per exact figure: a float field of the message (float32) or a sum taken in
#: another order.
TOLERANCE = {"float32": 1e-6, "double": 1e-9, "moment": 1e-7}

problems: list[str] = []
largest: dict[str, float] = {}
#: The features whose weighted figures were compared.
weighed: list[str] = []
#: The feature lists whose levels and custom histograms were compared (tfdv_sequence).
custom: list[str] = []


def close(what: str, ours: float, theirs: float, kind: str, scale: float = 0.0) -> None:
    """Equal within TOLERANCE[kind] of the larger of |theirs| and ``scale`` (a sum's error
    grows with its terms, not its result: the mean of 2^63 and -2^63)."""
    if (math.isnan(ours) and math.isnan(theirs)) or ours == theirs:
        largest.setdefault(kind, 0.0)
        return
    diff = abs(ours - theirs) / max(abs(theirs), scale, 1e-300)
    largest[kind] = max(largest.get(kind, 0.0), diff)
    if not diff <= TOLERANCE[kind]:
        problems.append(f"{what}: ours {ours!r}, TFDV's {theirs!r}")


def equal(what: str, ours: Any, theirs: Any) -> None:
    if ours != theirs:
        problems.append(f"{what}: ours {ours!r}, TFDV's {theirs!r}")


def values_of(files: list[str]) -> tuple[int, dict[str, list[Any]], dict[str, list[int]]]:
    """The number of records, each feature's list of values per record that holds it, and the
    number of each such record."""
    lists: dict[str, list[Any]] = {}
    holders: dict[str, list[int]] = {}
    n = 0
    gzip = "GZIP" if files[0].endswith(".gz") else ""
    for record in tf.data.TFRecordDataset(files, compression_type=gzip):
        example = tf.train.Example.FromString(record.numpy())
        for name, feature in example.features.feature.items():
            kind = feature.WhichOneof("kind")
            values = list(getattr(feature, kind).value) if kind else []
            lists.setdefault(name, []).append(values)
            holders.setdefault(name, []).append(n)
        n += 1
    return n, lists, holders


def within_rank(
    what: str, boundary: float, p: float, sorted_values: np.ndarray, cum: Any = None
) -> None:
    """A quantile of rank p: at most p·n + ε·n values below it, at least p·n - ε·n up to it;
    with ``cum`` (the values' cumulative weights), weights in place of counts."""
    below = np.searchsorted(sorted_values, boundary, side="left")
    upto = np.searchsorted(sorted_values, boundary, side="right")
    if cum is not None:
        n = float(cum[-1]) if len(cum) else 0.0
        below = float(cum[below - 1]) if below else 0.0
        upto = float(cum[upto - 1]) if upto else 0.0
    else:
        n = len(sorted_values)
    off = max(0.0, below - p * n, p * n - upto) / n
    largest["rank"] = max(largest.get("rank", 0.0), off)
    if off > EPSILON + 1e-12:
        problems.append(f"{what}: {boundary!r} is {off:.4f} of the values off rank {p}")


def check_histogram(what: str, ours: Any, theirs: Any, values: np.ndarray, cum: Any = None) -> None:
    """With ``cum``, the cumulative weights of the (sorted) ``values``: a weighted one."""
    equal(f"{what} type", ours.type, theirs.type)
    equal(f"{what} num_nan", ours.num_nan, theirs.num_nan)
    total = sum(b.sample_count for b in ours.buckets)
    close(f"{what} total", total, sum(b.sample_count for b in theirs.buckets), "double")
    if ours.type == statistics_pb2.Histogram.QUANTILES:
        k = len(ours.buckets)
        for i, b in enumerate(ours.buckets):
            within_rank(f"{what} bucket {i} low", b.low_value, i / k, values, cum)
        if k:
            within_rank(f"{what} high", ours.buckets[-1].high_value, 1.0, values, cum)
        return
    equal(f"{what} buckets", len(ours.buckets), len(theirs.buckets))
    n = len(values) if cum is None else float(cum[-1])
    # the most a value weighs: one value's share of the total, for each edge
    heaviest = 1.0 if cum is None else float(np.diff(cum, prepend=0.0).max())
    for i, (a, b) in enumerate(zip(ours.buckets, theirs.buckets)):
        close(f"{what} bucket {i} low", a.low_value, b.low_value, "double")
        close(f"{what} bucket {i} high", a.high_value, b.high_value, "double")
        # Each side interpolates within quantile buckets: 2ε of the values at each edge.
        off = abs(a.sample_count - b.sample_count) / n
        largest["standard bucket"] = max(largest.get("standard bucket", 0.0), off)
        if off > 4 * EPSILON + 2 * heaviest / n:
            problems.append(f"{what} bucket {i}: {a.sample_count} against {b.sample_count}")


def check_common(what: str, ours: Any, theirs: Any, lengths: np.ndarray) -> None:
    for name in ("num_non_missing", "num_missing", "min_num_values", "max_num_values"):
        equal(f"{what} {name}", getattr(ours, name), getattr(theirs, name))
    equal(f"{what} tot_num_values", ours.tot_num_values, theirs.tot_num_values)
    close(f"{what} avg_num_values", ours.avg_num_values, theirs.avg_num_values, "float32")
    if len(lengths):
        check_histogram(
            f"{what} num_values_histogram",
            ours.num_values_histogram,
            theirs.num_values_histogram,
            np.sort(lengths),
        )


def check_numeric(what: str, ours: Any, theirs: Any, values: np.ndarray) -> None:
    for name in ("num_zeros",):
        equal(f"{what} {name}", getattr(ours, name), getattr(theirs, name))
    for name in ("min", "max"):
        close(f"{what} {name}", getattr(ours, name), getattr(theirs, name), "double")
    numbers = np.sort(values[~np.isnan(values)])
    finite = numbers[np.isfinite(numbers)]
    scale = float(np.abs(finite).max()) if len(finite) else 0.0
    close(f"{what} mean", ours.mean, theirs.mean, "moment", scale)
    close(f"{what} std_dev", ours.std_dev, theirs.std_dev, "moment", scale)
    if len(numbers):
        within_rank(f"{what} median", ours.median, 0.5, numbers)
    equal(f"{what} histograms", len(ours.histograms), len(theirs.histograms))
    for i, (a, b) in enumerate(zip(ours.histograms, theirs.histograms)):
        check_histogram(f"{what} histogram {i}", a, b, numbers)


def check_strings(what: str, ours: Any, theirs: Any) -> None:
    equal(f"{what} unique", ours.unique, theirs.unique)
    equal(f"{what} invalid_utf8_count", ours.invalid_utf8_count, theirs.invalid_utf8_count)
    close(f"{what} avg_length", ours.avg_length, theirs.avg_length, "float32")
    top = [(v.value, v.frequency) for v in ours.top_values]
    equal(f"{what} top_values", top, [(v.value, v.frequency) for v in theirs.top_values])
    rank = [(b.label, b.sample_count, b.low_rank) for b in ours.rank_histogram.buckets]
    theirs_rank = [(b.label, b.sample_count, b.low_rank) for b in theirs.rank_histogram.buckets]
    equal(f"{what} rank_histogram", rank, theirs_rank)


def check_weighted(what: str, f: Any, g: Any, records: list[Any], weights: np.ndarray) -> None:
    """The weighted figures of the feature ``f`` (ours) and ``g`` (TFDV's): ``records`` its
    values per record, ``weights`` the weight of each of those records."""
    stats = f.WhichOneof("stats")
    a, b = getattr(f, stats), getattr(g, stats)
    weighed.append(what)
    wa, wb = a.common_stats.weighted_common_stats, b.common_stats.weighted_common_stats
    for name in ("num_non_missing", "num_missing", "avg_num_values", "tot_num_values"):
        close(f"{what} weighted {name}", getattr(wa, name), getattr(wb, name), "double")
    if stats == "struct_stats":
        return
    if stats == "string_stats":
        equal(
            f"{what} has weighted_string_stats",
            a.HasField("weighted_string_stats"),
            b.HasField("weighted_string_stats"),
        )
        top = [(v.value, v.frequency) for v in a.weighted_string_stats.top_values]
        theirs = [(v.value, v.frequency) for v in b.weighted_string_stats.top_values]
        equal(f"{what} weighted top_values", top, theirs)
        rank = [(x.label, x.sample_count) for x in a.weighted_string_stats.rank_histogram.buckets]
        theirs = [(x.label, x.sample_count) for x in b.weighted_string_stats.rank_histogram.buckets]
        equal(f"{what} weighted rank_histogram", rank, theirs)
        return
    equal(
        f"{what} has weighted_numeric_stats",
        a.HasField("weighted_numeric_stats"),
        b.HasField("weighted_numeric_stats"),
    )
    na, nb = a.weighted_numeric_stats, b.weighted_numeric_stats
    values = np.array([x for v in records for x in v], dtype=np.float64)
    each = np.array([w for v, w in zip(records, weights) for _ in v], dtype=np.float64)
    # TFDV's weighted quantiles (median, histograms) take the values weighing more than 0 alone
    keep = ~np.isnan(values) & (each > 0)
    values, each = values[keep], each[keep]
    order = np.argsort(values, kind="stable")
    values, cum = values[order], np.cumsum(each[order])
    finite = values[np.isfinite(values)]
    scale = float(np.abs(finite).max()) if len(finite) else 0.0
    close(f"{what} weighted mean", na.mean, nb.mean, "moment", scale)
    close(f"{what} weighted std_dev", na.std_dev, nb.std_dev, "moment", scale)
    if len(values) and cum[-1] > 0:
        within_rank(f"{what} weighted median", na.median, 0.5, values, cum)
    equal(f"{what} weighted histograms", len(na.histograms), len(nb.histograms))
    for i, (x, y) in enumerate(zip(na.histograms, nb.histograms)):
        check_histogram(f"{what} weighted histogram {i}", x, y, values, cum)


#: The values of the files read so far, by their names: a job's runs compare with the same.
_READ: dict[tuple[tuple[str, ...], bool], tuple[Any, Any, Any]] = {}


def read(files: list[str], sequence: bool) -> tuple[Any, Any, Any]:
    """``values_of`` the files (``tfdv_sequence.values_of`` of SequenceExample files, with their
    steps): their values, holders and steps, read once for the job (the worker forgets the
    files of the job before)."""
    key = (tuple(files), sequence)
    if key not in _READ:
        _READ.clear()
        if sequence:
            _, lists, holders, steps = tfdv_sequence.values_of(files)
        else:
            (_, lists, holders), steps = values_of(files), {}
        _READ[key] = (lists, holders, steps)
    return _READ[key]


def compare(
    ours: Any, theirs: Any, files: list[str], weight: str | None = None, sequence: bool = False
) -> list[str]:
    """With ``sequence``, of SequenceExample files: the feature lists' levels too."""
    (a,), (b,) = ours.datasets, theirs.datasets
    equal("num_examples", a.num_examples, b.num_examples)
    mine = {tuple(f.path.step): f for f in a.features}
    tfdvs = {tuple(f.path.step): f for f in b.features}
    equal("features", sorted(mine), sorted(tfdvs))
    lists, holders, steps = read(files, sequence)
    if weight is not None:
        close("weighted_num_examples", a.weighted_num_examples, b.weighted_num_examples, "double")
        by_record = np.array([v[0] for v in lists[weight]], dtype=np.float64)
    for path in sorted(set(mine) & set(tfdvs)):
        f, g = mine[path], tfdvs[path]
        what = "/".join(path)
        equal(f"{what} type", f.type, g.type)
        equal(f"{what} stats", f.WhichOneof("stats"), g.WhichOneof("stats"))
        records = lists["/".join(path)]
        lengths = np.array([len(v) for v in records])
        flat = [x for v in records for x in v]
        if f.HasField("num_stats") and g.HasField("num_stats"):
            values = np.array(flat, dtype=np.float64)
            check_common(what, f.num_stats.common_stats, g.num_stats.common_stats, lengths)
            check_numeric(what, f.num_stats, g.num_stats, values)
        elif f.HasField("string_stats") and g.HasField("string_stats"):
            check_common(what, f.string_stats.common_stats, g.string_stats.common_stats, lengths)
            check_strings(what, f.string_stats, g.string_stats)
        elif f.HasField("struct_stats") and g.HasField("struct_stats"):
            check_common(what, f.struct_stats.common_stats, g.struct_stats.common_stats, lengths)
        if what in steps and f.WhichOneof("stats") == g.WhichOneof("stats"):
            tfdv_sequence.check_levels(what, f, g, steps[what], sys.modules[__name__])
        if weight is not None and f.WhichOneof("stats") == g.WhichOneof("stats"):
            check_weighted(what, f, g, records, by_record[holders["/".join(path)]])
    return sorted(mine)


def anomalies(stats: Any, schema: Any, previous: Any = None) -> dict[str, list[str]]:
    """The anomalies TFDV finds, by feature: the names of their types."""
    found = tfdv.validate_statistics(stats, schema, previous_statistics=previous)
    kind = anomalies_pb2.AnomalyInfo.Type.Name
    return {
        name: sorted(kind(r.type) for r in info.reason) for name, info in found.anomaly_info.items()
    }


def ordered(schema: Any) -> str:
    """The schema's text with its features and string domains in name order (TFDV keeps the
    statistics' order of features, which differs between two computations)."""
    copy = schema_pb2.Schema()
    copy.CopyFrom(schema)

    def by_name(message: Any, field: str) -> None:
        items = sorted(getattr(message, field), key=lambda x: x.name)
        kept = [type(items[0])() for _ in items] if items else []
        for new, old in zip(kept, items):
            new.CopyFrom(old)
        message.ClearField(field)
        getattr(message, field).extend(kept)

    for field in ("feature", "string_domain"):
        by_name(copy, field)
    for feature in copy.feature:  # a STRUCT's features (a SequenceExample's feature lists)
        if feature.HasField("struct_domain"):
            by_name(feature.struct_domain, "feature")
    return str(copy)


def _reset() -> None:
    """Empties the findings of the last check (a worker checks one job after another)."""
    problems.clear()
    largest.clear()
    weighed.clear()
    custom.clear()


def _of(job: dict[str, Any], key: str, label: str) -> Any:
    """The job's ``key`` for the run ``label``: a dict gives one per run, a string all of them."""
    value = job[key]
    return value[label] if isinstance(value, dict) else value


def _run(job: dict[str, Any], label: str, theirs: Any, files: list[str]) -> dict[str, Any]:
    """One run's report: the statistics ``_of(job, "ours", label)`` against TFDV's ``theirs``."""
    _reset()
    ours = tfdv.load_stats_binary(_of(job, "ours", label))
    sequence = job.get("record_type") == "SequenceExample"
    features = compare(ours, theirs, files, job.get("weight"), sequence)
    schema_ours, schema_theirs = tfdv.infer_schema(ours), tfdv.infer_schema(theirs)
    equal("tfdv.infer_schema", ordered(schema_ours), ordered(schema_theirs))
    report = {"features": features, "weighted": sorted(set(weighed)), "levels": list(custom)}
    if "schema" in job:
        given = text_format.Parse(Path(_of(job, "schema", label)).read_text(), schema_pb2.Schema())
        equal("our infer_schema", ordered(given), ordered(schema_ours))
    if "planted" in job:
        # Validation: none on the data; the planted ones on the other data.
        equal("anomalies of the data", anomalies(ours, schema_theirs), {})
        planted = tfdv.load_stats_binary(_of(job, "planted", label))
        for name, threshold in job["drift"].items():
            feature = tfdv.get_feature(schema_theirs, name)
            feature.drift_comparator.infinity_norm.threshold = threshold
        found = anomalies(planted, schema_theirs, previous=ours)
        print(json.dumps({"anomalies": found}), file=sys.stderr)
        for name, kinds in job["expected_anomalies"].items():
            missing = set(kinds) - set(found.get(name, []))
            equal(f"planted anomalies of {name} not found", sorted(missing), [])
        # What tfdv.visualize_statistics shows (Facets Overview): the page of ours renders them.
        html = display_util.get_statistics_html(ours)
        equal("Facets' page", "facets-overview" in html and len(html) > 1000, True)
        # The comparison finds differences where there are some: other statistics against
        # TFDV's (the findings of that comparison are the report's ``wrong``).
        kept, kept_largest = list(problems), dict(largest)
        problems.clear()
        compare(tfdv.load_stats_binary(_of(job, "wrong", label)), theirs, files)
        report["wrong"] = list(problems)
        problems[:] = kept
        largest.clear()
        largest.update(kept_largest)
    return {**report, "largest": dict(largest), "problems": list(problems)}


def check(job: dict[str, Any]) -> dict[str, Any]:
    """The report on ``job``: TFDV's statistics of the files computed once, and each run's
    statistics (``ours``: a path, or a dict of paths by run, ``schema``, ``planted`` and
    ``wrong`` alike) held against them. With one path, that run's report; with a dict, the
    runs' reports by label (``runs``) and their problems, each named by its run."""
    files = sorted(glob.glob(job["data"]))
    options = tfdv.StatsOptions(weight_feature=job.get("weight"))
    if job.get("record_type") == "SequenceExample":
        theirs = tfdv_sequence.statistics(job["data"], options)
    else:
        theirs = tfdv.generate_statistics_from_tfrecord(job["data"], stats_options=options)
    if not isinstance(job["ours"], dict):
        return _run(job, "", theirs, files)
    runs = {label: _run(job, label, theirs, files) for label in job["ours"]}
    named = [f"{label}: {p}" for label, run in runs.items() for p in run["problems"]]
    return {"runs": runs, "problems": named}


def serve() -> int:
    """Checks the job of each path read from standard input, one at a time, in this one process
    (TensorFlow, TFDV and Beam imported once): each report printed on a line of its own after
    REPORT, with ``status`` (1: problems found); a job that raised reports its error."""
    for line in sys.stdin:
        try:
            report = check(json.loads(Path(line.strip()).read_text()))
            report["status"] = 1 if report["problems"] else 0
        except Exception as e:  # the test that sent the job fails with it
            import traceback

            report = {"status": 2, "problems": [f"{type(e).__name__}: {e}"],
                      "error": traceback.format_exc()}  # fmt: skip
        print("REPORT " + json.dumps(report), flush=True)
    return 0


def main(job_path: str) -> int:
    report = check(json.loads(Path(job_path).read_text()))
    print(json.dumps(report))
    return 1 if report["problems"] else 0


if __name__ == "__main__":
    sys.exit(serve() if sys.argv[1:] == ["--serve"] else main(sys.argv[1]))
