"""Spark sessions: the data sources and jars they hold."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .data import PARTITIONS

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

OURS = "io.github.sparktfrecord.TFRecordFileFormat"
LINKEDIN = "com.linkedin.spark.datasources.tfrecord.DefaultSource"
LINKEDIN_PACKAGE = "com.linkedin.sparktfrecord:spark-tfrecord_2.12:0.7.0"


def snapshot_jar(out: Path, given: str | None) -> str:
    """A copy of our jar (the installed wheel's unless given; of a folder of jars, as
    ``ci/sbt stageJars`` leaves them, the one for this pyspark): rebuilding or reinstalling
    mid-run cannot change what is measured."""
    import shutil
    import zipfile

    import spark_tfrecord

    installed = Path(given or spark_tfrecord.jar_path())
    if installed.is_dir():
        # The bundled jar's name for this pyspark, of any version of ours.
        line = Path(spark_tfrecord.jar_path()).name.rsplit("-", 1)[0]
        found = sorted(installed.glob(f"{line}-*.jar"))
        if len(found) != 1:
            raise SystemExit(f"{installed} holds {len(found)} jars named {line}-*.jar, not one")
        installed = found[0]
    copy = out / "jars" / installed.name
    copy.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(installed, copy)
    with zipfile.ZipFile(copy) as jar:
        bad = jar.testzip()
    if bad is not None:
        raise SystemExit(f"{installed} is damaged at {bad} (being reinstalled?); run again.")
    return str(copy)


def sha256(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:12]


def session(
    *,
    ours: str,
    cores: int,
    memory: str,
    linkedin: str | None,
    linkedin_jar: str | None,
    java_options: str = "",
    conf: dict[str, str] | None = None,
) -> SparkSession:
    """A local session with our jar and, unless ``linkedin`` is None, linkedin's, and ``conf``."""
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master(f"local[{cores}]")
        .appName("spark-tfrecord-benchmarks")
        .config("spark.driver.memory", memory)
        .config("spark.driver.extraJavaOptions", java_options)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(PARTITIONS))
    )
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    builder = builder.config("spark.jars", ",".join(j for j in (ours, linkedin_jar) if j))
    if linkedin is not None and linkedin_jar is None:
        builder = builder.config("spark.jars.packages", linkedin)
    try:
        spark = builder.getOrCreate()
    except Exception as e:
        if linkedin is None and linkedin_jar is None:
            raise
        raise SystemExit(
            f"Spark did not start with linkedin spark-tfrecord ({linkedin_jar or linkedin}):"
            f" {e}\n"
            "When Spark cannot resolve the package (see the Ivy report above), pass its jar "
            "with --linkedin-jar, or run with --skip-linkedin."
        ) from e
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def package_session(memory: str) -> SparkSession:
    """A local[2] session set up by the installed package (``configure()``: its jar and the
    nested pruning extension), for the benchmarks that compare layouts with one jar."""
    from pyspark.sql import SparkSession

    import spark_tfrecord

    builder = (
        SparkSession.builder.master("local[2]")
        .config("spark.driver.memory", memory)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
    )
    spark = spark_tfrecord.configure(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def jvm(spark: SparkSession) -> Any:
    """The py4j view of the driver JVM (untyped)."""
    return spark._jvm


def gc(spark: SparkSession) -> None:
    jvm(spark).java.lang.System.gc()


def load(spark: SparkSession, fmt: str, ddl: str | None, path: str | Path) -> DataFrame:
    """``path`` read by the data source ``fmt``, with the schema ``ddl`` or (None) inferred."""
    reader = spark.read.format(fmt)  # a new reader each time: readers are mutable
    return (reader.schema(ddl) if ddl else reader).load(str(path))


def noop(df: DataFrame) -> None:
    df.write.format("noop").mode("overwrite").save()


def short(fmt: str) -> str:
    return {OURS: "ours", LINKEDIN: "linkedin"}.get(fmt, fmt)
