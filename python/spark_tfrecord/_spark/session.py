"""The jars bundled in the wheel, and how a Spark session gets one."""

from __future__ import annotations

import importlib.util
import os
import re
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

from spark_tfrecord._spark import no_spark
from spark_tfrecord._version import __version__

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.connect.session import SparkSession as ConnectSparkSession

    Builder = TypeVar("Builder", SparkSession.Builder, ConnectSparkSession.Builder)

ScalaVersion = Literal["2.12", "2.13"]

#: Spark lines with a bundled jar, and the Scala version each is built for by default.
SUPPORTED_SPARK: dict[str, ScalaVersion] = {"3.5": "2.12", "4": "2.13"}
_SCALA_BUILDS: dict[str, tuple[ScalaVersion, ...]] = {"3.5": ("2.12", "2.13"), "4": ("2.13",)}

_JAR_DIR = Path(__file__).resolve().parent.parent / "jars"

#: The jar's session extensions (nested column pruning), which :func:`configure` enables.
EXTENSIONS = "io.github.sparktfrecord.TFRecordExtensions"


def install_exception_handler() -> None:
    """Make a classic session's errors start with our condition and message (done once).

    :func:`configure` and :func:`add_jar` call it; call it when the jar arrives otherwise.
    """
    try:  # it wraps Py4J
        from spark_tfrecord._spark import errors as java_errors
    except ImportError:  # no py4j: a pyspark for Spark Connect only
        return
    java_errors.install()


def _spark_line(spark_version: str) -> str:
    match = re.match(r"(\d+)\.(\d+)", spark_version)
    if match is None:
        raise ValueError(f"Not a Spark version: {spark_version!r} (expected for example '3.5.1').")
    line = "4" if match.group(1) == "4" else ".".join(match.groups())
    if line not in SUPPORTED_SPARK:
        raise ValueError(
            f"spark-tfrecord has no jar for Spark {spark_version}: it supports Spark 3.5.x "
            "(Scala 2.12 and 2.13) and Spark 4.x (Scala 2.13)."
        )
    return line


def jar_path(spark_version: str | None = None, *, scala_version: ScalaVersion | None = None) -> str:
    """Return the path of the bundled jar for a Spark version.

    ``spark_version`` defaults to the importable ``pyspark``'s, ``scala_version`` to that line's
    default (2.12 for 3.5, 2.13 for 4.x). ValueError for a version without a jar;
    FileNotFoundError when the jars were not built (``ci/sbt stageJars``).

    >>> jar_path("3.5.2")  # doctest: +ELLIPSIS
    '.../spark_tfrecord/jars/spark-tfrecord-spark3.5_2.12-...jar'
    >>> jar_path("3.5.2", scala_version="2.13")  # doctest: +ELLIPSIS
    '.../spark_tfrecord/jars/spark-tfrecord-spark3.5_2.13-...jar'
    """
    if spark_version is None:
        # The module, not the distribution: other clients install a pyspark package too.
        try:
            import pyspark
        except ModuleNotFoundError:
            also = " Or pass spark_version, for example jar_path('3.5.1')."
            raise no_spark("jar_path", also) from None
        spark_version = pyspark.__version__
    line = _spark_line(spark_version)
    scala = scala_version or SUPPORTED_SPARK[line]
    if scala not in _SCALA_BUILDS[line]:
        raise ValueError(
            f"No jar for Spark {line} with Scala {scala}: the jars for Spark {line} are built "
            f"for Scala {' and '.join(_SCALA_BUILDS[line])}."
        )
    jar = _JAR_DIR / f"spark-tfrecord-spark{line}_{scala}-{__version__}.jar"
    if not jar.is_file():
        raise FileNotFoundError(
            f"{jar} is missing. In a source checkout, build the jars with 'ci/sbt stageJars' "
            "(or install the wheel)."
        )
    return str(jar)


def configure(
    builder: Builder,
    *,
    spark_version: str | None = None,
    scala_version: ScalaVersion | None = None,
) -> Builder:
    """Add the matching jar to ``spark.jars`` of a session builder and return the builder.

    Also adds the jar's session extensions and calls :func:`install_exception_handler`. The jar
    is :func:`jar_path`'s. Call it before the session starts. ValueError for a Connect server
    that runs elsewhere: start it with the jar, or use :func:`add_jar`.

    >>> from pyspark.sql import SparkSession
    >>> spark = configure(SparkSession.builder.master("local[1]")).getOrCreate()
    >>> builder = configure(SparkSession.builder, scala_version="2.13")  # for Scala 2.13
    """
    if spark_version is None and importlib.util.find_spec("pyspark") is None:
        raise no_spark("configure")
    jar = jar_path(spark_version, scala_version=scala_version)
    options: dict[str, str] = getattr(builder, "_options", {})
    url = options.get("spark.remote", os.environ.get("SPARK_REMOTE", ""))
    if type(builder).__module__.startswith("pyspark.sql.connect") or url.startswith("sc://"):
        remote = url.split("/;")[0] or "the builder's channel"  # the parameters may hold a token
        raise ValueError(
            f"configure() cannot add the tfrecord jar to the Spark Connect server at {remote}: "
            "spark.jars of a client's builder does not reach a server that runs elsewhere. "
            f"Start the server with the jar (start-connect-server.sh --jars {jar}, or "
            "spark.jars in its spark-defaults.conf), or create the session without configure() "
            "and call spark_tfrecord.add_jar(spark), which uploads the jar to that session."
        )
    mode = options.get("spark.api.mode", os.environ.get("SPARK_API_MODE", ""))
    local_server = url.startswith("local") or mode.lower() == "connect"  # Connect, in-process
    install_exception_handler()
    for key, added in (("spark.jars", jar), ("spark.sql.extensions", EXTENSIONS)):
        values: list[str] = [v for v in options.get(key, "").split(",") if v.strip()]
        value = ",".join(values if added in values else [*values, added])
        if local_server:  # pyspark 4 sets it again on the server it starts: hide its warning
            warnings.filterwarnings(
                "ignore",
                message=re.escape(f"Failed to set {key} to Some({value}) due to [CANNOT_MODIFY_"),
                category=UserWarning,
                module=r"pyspark\.sql\.connect\.",
            )
        builder = builder.config(key, value)
    return builder


def add_jar(
    spark: SparkSession | ConnectSparkSession, *, scala_version: ScalaVersion | None = None
) -> str:
    """Add the bundled jar to a session that is already running; return the jar's path.

    For when :func:`configure` comes too late; adding it twice does no harm. The jar matches
    the session's Spark version; also calls :func:`install_exception_handler`.

    >>> add_jar(spark)  # doctest: +ELLIPSIS
    '.../spark_tfrecord/jars/spark-tfrecord-spark...jar'
    """
    jar = jar_path(spark.version, scala_version=scala_version)
    install_exception_handler()
    if type(spark).__module__.startswith("pyspark.sql.connect"):
        cast(Any, spark).addArtifacts(jar)  # not on pyspark 3.5's classic session type
    else:
        spark.sql("ADD JAR '" + jar.replace("\\", "\\\\").replace("'", "\\'") + "'")
    return jar
