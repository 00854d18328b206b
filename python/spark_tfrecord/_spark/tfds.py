"""TensorFlow Datasets folders, written and read through ``tfrecord`` format options only."""

from __future__ import annotations

import importlib
import json
from typing import TYPE_CHECKING, Any, Literal, Union, overload

from spark_tfrecord._spark.shards import arrange

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.connect.dataframe import DataFrame as ConnectDataFrame
    from pyspark.sql.connect.session import SparkSession as ConnectSparkSession

#: What ``write_tfds`` does with a split that the dataset already has.
TfdsMode = Literal["error", "overwrite"]
#: A TFDS feature connector (anything with ``to_json()``), or its JSON as a dict or a string.
Features = Union[Any, dict[str, Any], str]


def _features_json(features: Features) -> str:
    if isinstance(features, str):
        return features
    if isinstance(features, dict):
        return json.dumps(features)
    to_proto = getattr(features, "to_proto", None)
    if to_proto is not None:
        # features.json as TFDS writes it (FeatureConnector.save_config).
        json_format = importlib.import_module("google.protobuf.json_format")
        return json.dumps(json_format.MessageToDict(to_proto()))
    to_json = getattr(features, "to_json", None)
    if to_json is None:
        raise TypeError(
            "features must be a TFDS feature connector (with to_json()), or its JSON as a dict "
            f"or a string, not {type(features).__name__}"
        )
    return json.dumps(to_json())


def _class_names(feature: Any, path: str = "") -> dict[str, list[str]]:
    """The class names of the ClassLabels of a TFDS connector that has them, by feature path."""
    kind = type(feature).__name__
    if kind == "FeaturesDict":
        found: dict[str, list[str]] = {}
        for key, child in feature.items():
            found.update(_class_names(child, f"{path}/{key}" if path else key))
        return found
    if kind in ("Sequence", "Dataset"):
        return _class_names(feature.feature, path)
    if kind == "ClassLabel" and getattr(feature, "_str2int", None) is not None:
        return {path: list(feature.names)}
    return {}


def _merged_shards(df: DataFrame | ConnectDataFrame) -> int:
    """TFDS.mergedShards on a classic session; 0 (none) on Spark Connect (no plan statistics)."""
    jdf = getattr(df, "_jdf", None)
    jvm = getattr(df.sparkSession, "_jvm", None)
    if jdf is None or jvm is None:
        return 0
    return int(jvm.io.github.sparktfrecord.TFDS.mergedShards(jdf))


def write_tfds(
    df: DataFrame | ConnectDataFrame,
    data_dir: str,
    name: str,
    split: str,
    *,
    version: str = "1.0.0",
    num_shards: int | None = None,
    shuffle_seed: int | None = None,
    features: Features | None = None,
    mode: TfdsMode = "error",
) -> str:
    """Write ``df`` as split ``split`` of the TFDS dataset ``name``; return its folder.

    ``num_shards``, ``shuffle_seed``: as for :func:`spark_tfrecord.write`; without them, a classic
    session's partitions are merged, unshuffled, into shards of about 64 MiB. ``features``: a
    TFDS feature connector or its JSON (default: the folder's, else from the schema). An existing
    split is refused unless ``mode="overwrite"``.

    >>> import json, os, tempfile
    >>> df = spark.createDataFrame([(1, "a"), (2, "b")], "id long, text string")
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     folder = write_tfds(df, tmp, "my_dataset", "train", num_shards=2)
    ...     sorted(f for f in os.listdir(folder) if f.startswith("my_dataset"))
    ...     with open(os.path.join(folder, "dataset_info.json")) as f:
    ...         splits = json.load(f)["splits"]
    ...     [(s["name"], sum(int(n) for n in s["shardLengths"])) for s in splits]
    ...     read_tfds(spark, folder, "train").orderBy("id").collect()
    ['my_dataset-train.tfrecord-00000-of-00002', 'my_dataset-train.tfrecord-00001-of-00002']
    [('train', 2)]
    [Row(id=1, text='a'), Row(id=2, text='b')]
    """
    folder = f"{data_dir.rstrip('/')}/{name}/{version}"
    options = {"tfds": name, "split": split, "tfdsVersion": version, "tfdsMode": mode}
    if num_shards is not None:
        data = arrange(df, num_shards, shuffle_seed)
        options["numShards"] = str(num_shards)
    elif shuffle_seed is not None:
        raise ValueError("shuffle_seed orders the rows of num_shards files: give num_shards too")
    else:
        merged = _merged_shards(df)  # coalesce never makes more partitions than there are
        data = df.coalesce(merged) if merged > 0 else df
    if features is not None:
        options["tfdsFeatures"] = _features_json(features)
        names = _class_names(features)
        if names:
            options["tfdsClassNames"] = json.dumps(names)
    data.write.format("tfrecord").mode("append").options(**options).save(folder)
    return folder


@overload
def read_tfds(spark: SparkSession, folder: str, split: str) -> DataFrame: ...


@overload
def read_tfds(spark: ConnectSparkSession, folder: str, split: str) -> ConnectDataFrame: ...


def read_tfds(
    spark: SparkSession | ConnectSparkSession, folder: str, split: str
) -> DataFrame | ConnectDataFrame:
    """Read split ``split`` of the TFDS dataset folder ``folder`` (``<data_dir>/<name>/<version>``).

    The schema comes from ``features.json`` (docs/tfds.md).
    """
    return spark.read.format("tfrecord").option("split", split).load(folder)
