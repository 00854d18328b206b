"""Typed helpers over ``spark.read.format("tfrecord")`` and ``df.write.format("tfrecord")``."""

from __future__ import annotations

import difflib
import inspect
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, Union, overload

from spark_tfrecord._format.files.names import Compression as Compression
from spark_tfrecord._format.files.names import RecordType as RecordType
from spark_tfrecord._spark.shards import arrange

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.connect.dataframe import DataFrame as ConnectDataFrame
    from pyspark.sql.connect.session import SparkSession as ConnectSparkSession
    from pyspark.sql.types import StructType

SaveMode = Literal["append", "overwrite", "ignore", "error", "errorifexists"]
#: How a write lays out Spark ML vector columns (the ``vectorLayout`` option).
VectorLayout = Literal["dense", "sparse"]
OptionValue = Union[str, int, float, bool]

#: The ``tfrecord`` format's options (docs/options.md has one row each; a test checks).
OPTIONS = (
    "recordType", "compression", "codec", "allowNonTensorFlowCodec", "mode",
    "columnNameOfCorruptRecord", "inferSchemaMaxFiles", "inferSchemaMaxRecords",
    "verifyChecksums", "maxRecordBytes", "splitFiles", "ignoreCorruptFiles",
    "ignoreMissingFiles", "writeIndex", "pathSeparator", "inferNesting", "split", "tfds",
    "tfdsVersion", "tfdsFeatures", "tfdsClassNames", "tfdsMode", "numShards", "shuffleSeed",
    "shardPrefix", "decoder", "vectorLayout", "tfxSplit",
)  # fmt: skip
#: Spark's options of every file source (docs/options.md, "Other options that apply").
SPARK_FILE_OPTIONS = (
    "pathGlobFilter", "recursiveFileLookup", "modifiedBefore", "modifiedAfter", "basePath",
    "maxRecordsPerFile",
)  # fmt: skip


def _option_strings(
    options: dict[str, OptionValue], function: Callable[..., Any]
) -> dict[str, str]:
    """The options as Spark takes them; TypeError for an unknown one (hints: ``function``'s too)."""
    known = {name.lower(): name for name in (*OPTIONS, *SPARK_FILE_OPTIONS)}
    for key in options:
        if key.lower() not in known:
            kinds = inspect.signature(function).parameters.values()
            parameters = [p.name for p in kinds if p.kind is p.KEYWORD_ONLY]
            candidates = [*parameters, *known.values()]
            close = difflib.get_close_matches(key, candidates, n=1, cutoff=0.6)
            if not close:
                spelled = {c.lower().replace("_", ""): c for c in candidates}
                match = spelled.get(key.lower().replace("_", ""))
                close = [match] if match else []
            hint = f"; did you mean {close[0]!r}?" if close else "."
            raise TypeError(
                f"unknown option {key!r}{hint} The options are the parameters, those of the "
                "tfrecord format (docs/options.md) and Spark's file-source options."
            )
    return {k: (str(v).lower() if isinstance(v, bool) else str(v)) for k, v in options.items()}


@overload
def read(
    spark: SparkSession,
    path: str | list[str],
    *,
    record_type: RecordType = ...,
    schema: StructType | str | None = ...,
    **options: OptionValue,
) -> DataFrame: ...


@overload
def read(
    spark: ConnectSparkSession,
    path: str | list[str],
    *,
    record_type: RecordType = ...,
    schema: StructType | str | None = ...,
    **options: OptionValue,
) -> ConnectDataFrame: ...


def read(
    spark: SparkSession | ConnectSparkSession,
    path: str | list[str],
    *,
    record_type: RecordType = "Example",
    schema: StructType | str | None = None,
    **options: OptionValue,
) -> DataFrame | ConnectDataFrame:
    """Read TFRecord files (a file, a directory, a glob, or a list of them) into a DataFrame.

    Without ``schema`` it is inferred from a sample; ``options`` are the ``tfrecord`` format's.

    >>> import tempfile
    >>> df = spark.createDataFrame([(7, [0.5, 1.5])], "label long, pixels array<float>")
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     write(df, tmp + "/train")
    ...     read(spark, tmp + "/train", schema="label long, pixels array<float>").collect()
    [Row(label=7, pixels=[0.5, 1.5])]
    """
    reader = spark.read.format("tfrecord").option("recordType", record_type)
    reader = reader.options(**_option_strings(options, read))
    if schema is not None:
        reader = reader.schema(schema)
    paths = [path] if isinstance(path, str) else list(path)
    return reader.load(paths[0]) if len(paths) == 1 else reader.load(paths)


def write(
    df: DataFrame | ConnectDataFrame,
    path: str,
    *,
    record_type: RecordType = "Example",
    mode: SaveMode = "errorifexists",
    partition_by: str | list[str] | None = None,
    write_index: bool = False,
    shard_prefix: str | None = None,
    num_shards: int | None = None,
    shuffle_seed: int | None = None,
    vector_layout: VectorLayout = "dense",
    tfx_split: str | None = None,
    statistics: str | None = None,
    **options: OptionValue,
) -> None:
    """Write a DataFrame as TFRecord files (``part-*.tfrecord``) under ``path``.

    ``num_shards``: exactly that many files, record counts within one, rows in input order or
    in an order fixed by ``shuffle_seed`` and the rows (same bytes however partitioned); costs a
    count job and a shuffle; not with ``partition_by``. ``shard_prefix``: files named
    ``<prefix>-00000-of-00016``. ``tfx_split="train"``: write that split of a TFX Examples
    artifact at ``path`` (later splits with ``mode="append"``). ``statistics``: also write TFDV
    statistics (:func:`statistics`) of the rows to that file, or with ``tfx_split`` to
    ``<statistics>/Split-<tfx_split>/FeatureStats.pb``. ``partition_by`` columns become
    ``name=value`` directories. ``write_index``: also write each file's index ``_<name>.idx``.
    ``vector_layout="sparse"``: ML vectors as ``c/indices``, ``c/values``, ``c/size``.

    >>> import os, tempfile
    >>> df = spark.createDataFrame([(1, "2024-05-01"), (2, "2024-05-02")], "id long, day string")
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     write(df, tmp + "/train", mode="overwrite", partition_by="day", compression="gzip")
    ...     sorted(name for name in os.listdir(tmp + "/train") if name.startswith("day="))
    ['day=2024-05-01', 'day=2024-05-02']

    >>> from pyspark.sql.functions import input_file_name
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     write(spark.range(10), tmp + "/shards", num_shards=3, shuffle_seed=1)
    ...     files = read(spark, tmp + "/shards").groupBy(input_file_name()).count()
    ...     sorted(row["count"] for row in files.collect())
    [3, 3, 4]
    """
    stats = None
    if statistics is not None:
        stats = _statistics_of(df, path, statistics, tfx_split, record_type, partition_by, options)
    # Spark Connect's client knows the mode "errorifexists" only by its other name, "error".
    save_mode = "error" if mode == "errorifexists" else mode
    if num_shards is not None:
        if partition_by is not None:
            raise ValueError(
                "num_shards makes one sequence of files in one folder: not with partition_by"
            )
        df = arrange(df, num_shards, shuffle_seed)
    elif shuffle_seed is not None:
        raise ValueError("shuffle_seed orders the rows of num_shards files: give num_shards too")
    ours = {
        "numShards": num_shards,
        "shardPrefix": shard_prefix,
        "tfxSplit": tfx_split,
        "vectorLayout": None if vector_layout == "dense" else vector_layout,
        "writeIndex": write_index or None,
    }
    options = {**options, **{k: v for k, v in ours.items() if v is not None}}
    writer = df.write.format("tfrecord").option("recordType", record_type).mode(save_mode)
    writer = writer.options(**_option_strings(options, write))
    if partition_by is not None:
        writer = writer.partitionBy(partition_by)  # a name or a list of them
    writer.save(path)
    if stats is not None and statistics is not None:
        from spark_tfrecord._spark.statistics import write_statistics

        write_statistics(stats, statistics, tfx_split)


def _statistics_of(
    df: DataFrame | ConnectDataFrame,
    path: str,
    statistics: str,
    tfx_split: str | None,
    record_type: RecordType,
    partition_by: str | list[str] | None,
    options: dict[str, OptionValue],
) -> bytes:
    """The statistics a write's ``statistics`` writes, without the ``partition_by`` columns."""
    from spark_tfrecord._spark import statistics as stats

    if tfx_split is not None and os.path.normpath(statistics) == os.path.normpath(path):
        raise ValueError(
            "statistics is the folder of the ExampleStatistics artifact, not the Examples "
            f"artifact's ({path!r}): ExampleGen's split folders hold only the records"
        )
    lowered = {k.lower(): v for k, v in options.items()}
    records = str(lowered.get("recordtype", record_type))  # the option, as the jar takes it
    if records not in ("Example", "SequenceExample"):
        raise ValueError(
            "statistics are TFDV's of Example or SequenceExample records; record_type is "
            f"{records!r}"
        )
    dropped = [partition_by] if isinstance(partition_by, str) else list(partition_by or [])
    separator = str(lowered.get("pathseparator", "/"))
    kind: stats.StatisticsRecordType = "Example" if records == "Example" else "SequenceExample"
    return stats.statistics(df.drop(*dropped), path_separator=separator, record_type=kind)
