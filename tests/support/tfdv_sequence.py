"""TFDV's statistics of SequenceExample files, for tfdv_check.py (in TFDV's environment): as TFX
computes them (tfx_bsl's ``TFSequenceExampleRecord`` into ``tfdv.GenerateStatistics``, what
StatisticsGen runs for a SequenceExample payload), and the values TFDV sees in the files, decoded
by tfx_bsl's own SequenceExample decoder: the context features' lists per record, and per feature
list (``##SEQUENCE##/<name>``) its steps per record.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import apache_beam as beam
import numpy as np
import tensorflow as tf
import tensorflow_data_validation as tfdv
from tfx_bsl.coders import sequence_example_coder
from tfx_bsl.public import tfxio

SEQUENCE = "##SEQUENCE##"


def statistics(pattern: str, options: Any) -> Any:
    """TFDV's statistics of the SequenceExample files ``pattern``."""
    source = tfxio.TFSequenceExampleRecord(file_pattern=pattern, telemetry_descriptors=["tests"])
    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(tmp) / "stats.pb")
        with beam.Pipeline() as p:
            _ = (
                p
                | source.BeamSource()
                | tfdv.GenerateStatistics(options)
                | tfdv.WriteStatisticsToBinaryFile(out)
            )
        return tfdv.load_stats_binary(out)


def values_of(
    files: list[str],
) -> tuple[int, dict[str, list[Any]], dict[str, list[int]], dict[str, list[list[int]]]]:
    """The number of records; per feature (a feature list as ``##SEQUENCE##/<name>``) its values
    per record that holds it (a feature list's flattened) and those records' numbers; per
    feature list its steps' lengths per record that holds it."""
    decoder = sequence_example_coder.SequenceExamplesToRecordBatchDecoder(SEQUENCE)
    gzip = "GZIP" if files[0].endswith(".gz") else ""
    records = [r.numpy() for r in tf.data.TFRecordDataset(files, compression_type=gzip)]
    columns = decoder.DecodeBatch(records).to_pydict()
    lists: dict[str, list[Any]] = {}
    holders: dict[str, list[int]] = {}
    steps: dict[str, list[list[int]]] = {}
    for name, column in columns.items():
        if name == SEQUENCE:
            continue
        for n, values in enumerate(column):
            if values is not None:
                lists.setdefault(name, []).append(values)
                holders.setdefault(name, []).append(n)
    for n, sequence in enumerate(columns.get(SEQUENCE, [])):
        for name, found in (sequence or {}).items():
            if found is None:
                continue
            key = f"{SEQUENCE}/{name}"
            lists.setdefault(key, []).append([x for step in found for x in step])
            holders.setdefault(key, []).append(n)
            steps.setdefault(key, []).append([len(step) for step in found])
    if SEQUENCE in columns:
        lists[SEQUENCE] = [[1] for _ in records]
        holders[SEQUENCE] = list(range(len(records)))
    return len(records), lists, holders, steps


def check_levels(what: str, f: Any, g: Any, steps: list[list[int]], check: Any) -> None:
    """The levels of a feature list ``f`` (ours) against ``g`` (TFDV's): their presence and
    numbers of values, weighted too, and the custom histograms of the values per step
    (``steps``: its steps' lengths per record). ``check``: tfdv_check's module (its
    comparisons)."""
    stats = f.WhichOneof("stats")
    a, b = getattr(f, stats).common_stats, getattr(g, stats).common_stats
    levels = ("num_non_missing", "num_missing", "min_num_values", "max_num_values")
    check.equal(f"{what} levels", len(a.presence_and_valency_stats), 2)
    check.equal(f"{what} TFDV's levels", len(b.presence_and_valency_stats), 2)
    for k, (x, y) in enumerate(zip(a.presence_and_valency_stats, b.presence_and_valency_stats)):
        for name in (*levels, "tot_num_values"):
            check.equal(f"{what} level {k} {name}", getattr(x, name), getattr(y, name))
    pairs = zip(a.weighted_presence_and_valency_stats, b.weighted_presence_and_valency_stats)
    check.equal(
        f"{what} weighted levels",
        len(a.weighted_presence_and_valency_stats),
        len(b.weighted_presence_and_valency_stats),
    )
    for k, (x, y) in enumerate(pairs):
        for name in ("num_non_missing", "num_missing", "avg_num_values", "tot_num_values"):
            close = check.close
            close(f"{what} weighted level {k} {name}", getattr(x, name), getattr(y, name), "double")
    ours = {c.name: c.histogram for c in f.custom_stats}
    theirs = {c.name: c.histogram for c in g.custom_stats}
    check.equal(f"{what} custom_stats", sorted(ours), sorted(theirs))
    lengths = np.sort(np.array([n for record in steps for n in record], dtype=np.float64))
    for name in sorted(set(ours) & set(theirs)):
        check.check_histogram(f"{what} {name}", ours[name], theirs[name], lengths)
    check.custom.append(what)
