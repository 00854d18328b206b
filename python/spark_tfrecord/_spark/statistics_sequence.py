"""TFDV's statistics of ``SequenceExample`` records as TFX computes them, for :mod:`statistics`."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from spark_tfrecord._format.datasets import statistics_histograms as hist
from spark_tfrecord._format.datasets.statistics_proto import (
    STRING,
    STRUCT,
    Common,
    DatasetStatistics,
    Feature,
    Presence,
    Strings,
    WeightedCommon,
)
from spark_tfrecord._spark.statistics_features import leaf_sql, quote

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

#: The STRUCT feature TFDV puts the feature lists under (tfx_bsl's sequence feature column).
SEQUENCE = "##SEQUENCE##"
#: The prefix of the column of a feature list's steps' lengths (a feature named so is refused).
STEPS = "##STEPS##/"
#: TFDV's custom histograms of the second level (values per step).
LEVEL_2 = "level_2_value_list_length_"


def is_steps(name: str) -> bool:
    """Whether the column ``name`` is a feature list's steps' lengths."""
    return name.startswith(STEPS)


def sequence_features(df: DataFrame, separator: str) -> tuple[DataFrame, dict[str, str], list[str]]:
    """``df`` as columns to aggregate (a list: values, steps' lengths), their sources, the lists."""
    from spark_tfrecord._format.columns.feature_paths import SEQUENCE_EXAMPLE, leaves
    from spark_tfrecord._format.columns.schema import depth, is_array
    from spark_tfrecord._format.columns.type_table import simple_string

    schema = df.schema.jsonValue()
    selected, of, lists = [], {}, []
    for leaf in leaves(schema, SEQUENCE_EXAMPLE, separator):
        x, levels = leaf_sql(schema, leaf), depth(leaf.data_type)
        if is_steps(leaf.name):
            raise ValueError(f"statistics: feature {leaf.name!r}: {STEPS!r} names its own columns")
        if levels > 2:
            raise ValueError(
                f"statistics: column {leaf.column!r} has type {simple_string(leaf.leaf_type)}, "
                "which recordType SequenceExample cannot hold (a feature list is two levels: "
                "steps of values). Deeper lists are written ragged with recordType Example."
            )
        of[leaf.name] = leaf.column
        if levels < 2:
            selected.append(f"{x} AS {quote(leaf.name)}")
            continue
        if leaf.in_array_of_structs and not is_array(leaf.leaf_type):
            x = f"transform({x}, v -> array(v))"  # an element's single value: a step of one
        lists.append(leaf.name)
        of[STEPS + leaf.name] = leaf.column
        selected.append(f"flatten({x}) AS {quote(leaf.name)}")
        steps = f"transform({x}, v -> CAST(size(v) AS BIGINT))"
        selected.append(f"{steps} AS {quote(STEPS + leaf.name)}")
    return df.selectExpr(*selected), of, lists


def _levels(values: Feature, steps: Feature, row: dict[str, Any]) -> list[Presence]:
    """The presence of a feature list's two levels: steps per example, values per step."""
    s = steps.common
    outer = Presence(s.num_non_missing, s.num_missing, 0, 0, s.tot_num_values)
    inner = Presence(s.tot_num_values)
    if s.num_non_missing:
        outer.min_num_values, outer.max_num_values = s.min_num_values, s.max_num_values
    if s.tot_num_values:
        inner.min_num_values, inner.max_num_values = int(row["d_min"]), int(row["d_max"])
        inner.tot_num_values = values.common.tot_num_values
    return [outer, inner]


def _weighted_levels(values: Feature, steps: Feature) -> list[WeightedCommon]:
    """The weighted levels: each step counted by its example's weight."""
    outer, tot = steps.common.weighted, values.common.weighted
    if outer is None or tot is None:
        return []
    steps_weight, values_weight = outer.tot_num_values, tot.tot_num_values
    avg = values_weight / steps_weight if steps_weight else 0.0
    return [outer, WeightedCommon(steps_weight, 0.0, avg, values_weight)]


def _feature_list(
    values: Feature, steps: Feature, row: dict[str, Any], buckets: int, fine: int
) -> Feature:
    """TFDV's feature of a feature list from its two columns' (``row``: its steps' aggregates)."""
    feature = replace(values, path=[SEQUENCE, values.path[0]])
    feature.common = replace(values.common)
    feature.common.presence = _levels(values, steps, row)
    feature.common.weighted_presence = _weighted_levels(values, steps)
    total = steps.common.tot_num_values
    if not total:
        # No step anywhere: TFDV gives a STRING feature with no values nor level-2 histograms.
        feature.type, feature.numeric, feature.strings = STRING, None, Strings()
        return feature
    # Lengths repeat: TFDV's histograms take the counts up to each quantile, from finer ones.
    fine_q = [float(v) for v in row["d_q"]]
    q, counts = hist.rebin(fine_q, hist.cumulative(fine_q, total), fine // buckets)
    inner = feature.common.presence[1]
    low, high = inner.min_num_values, inner.max_num_values
    feature.custom = [
        (LEVEL_2 + "quantiles", hist.quantiles_histogram(q, counts)),
        (LEVEL_2 + "standard", hist.equi_width_histogram(q, counts, low, high, buckets, 0)),
    ]
    return feature


def _sequence_struct(dataset: DatasetStatistics, buckets: int) -> Feature:
    """The STRUCT feature ``##SEQUENCE##``: one value in every example."""
    n = dataset.num_examples
    ones = [1.0] * (buckets + 1)
    histogram = hist.quantiles_histogram(ones, hist.cumulative(ones, n))
    common = Common(n, 0, 1, 1, 1.0, n, histogram)
    if dataset.weighted_num_examples is not None:
        w = dataset.weighted_num_examples
        common.weighted = WeightedCommon(w, 0.0, 1.0, w)
    return Feature([SEQUENCE], STRUCT, common)


def nest(
    dataset: DatasetStatistics,
    lists: list[str],
    rows: dict[str, dict[str, Any]],
    num_values_buckets: int,
    histogram_buckets: int,
    fine: int,
) -> None:
    """Make each feature list's two columns one TFDV feature under ``##SEQUENCE##``, in place."""
    by_name = {f.path[0]: f for f in dataset.features}
    named = set(lists)
    kept = [f for f in dataset.features if f.path[0] not in named and not is_steps(f.path[0])]
    nested = [
        _feature_list(by_name[n], by_name[STEPS + n], rows[STEPS + n], histogram_buckets, fine)
        for n in lists
        if n in by_name  # a feature list null in every row is in no record
    ]
    if nested:
        kept += [_sequence_struct(dataset, num_values_buckets), *nested]
    dataset.features = kept
