"""What the command's modules share: :class:`CliError`, exit statuses, the session, I/O helpers."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from spark_tfrecord._format.columns.schema import type_string
from spark_tfrecord._format.files.files import Files

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

EXIT_USAGE, EXIT_NOT_FOUND, EXIT_BAD_DATA, EXIT_FAILURE, EXIT_EXISTS = 2, 3, 4, 5, 6


class CliError(Exception):
    """A failure to report as one line, a hint, and an exit status."""

    def __init__(self, message: str, hint: str, status: int) -> None:
        super().__init__(message)
        self.hint = hint
        self.status = status


def session(master: str, conf: list[str]) -> SparkSession:
    from pyspark.sql import SparkSession

    from spark_tfrecord import configure

    quiet = Path(__file__).resolve().parent.parent / "log4j2-cli.properties"
    builder = (
        SparkSession.builder.appName("spark-tfrecord")
        .master(master)
        .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={quiet.as_uri()}")
        # Spark's progress bar goes to stderr: for people at a terminal, not for pipes and logs.
        .config("spark.ui.showConsoleProgress", str(sys.stderr.isatty()).lower())
    )
    for item in conf:
        key, sep, value = item.partition("=")
        if not sep:
            raise CliError(f"--conf takes KEY=VALUE, got {item!r}", "see --help", EXIT_USAGE)
        builder = builder.config(key, value)
    return configure(builder).getOrCreate()


def load(spark: SparkSession, path: str, fmt: str, args: argparse.Namespace) -> DataFrame:
    from spark_tfrecord import read

    if fmt == "tfrecord":
        options = {"compression": args.compression} if args.compression else {}
        return read(spark, path, record_type=args.record_type, schema=args.schema, **options)
    reader = spark.read.format(fmt)
    if fmt == "csv":
        reader = reader.option("header", "true").option("inferSchema", "true")
    return reader.load(path)


def fsspec_files(url: str) -> Files | None:
    """``url``'s fsspec file system, or None without fsspec or its scheme's package."""
    from spark_tfrecord._format.files.files import FsspecFiles

    try:
        import fsspec  # type: ignore[import-untyped,import-not-found,unused-ignore]

        fsspec.get_filesystem_class(url.split("://", 1)[0])
    except (ImportError, ValueError):
        return None
    return FsspecFiles(url, None)


def print_schema(schema: dict[str, Any]) -> None:
    """Print the schema as ``printSchema`` does."""
    print("root")
    for field in schema["fields"]:
        print(
            f" |-- {field['name']}: {type_string(field['type'], simple=False)} (nullable = "
            f"{str(field['nullable']).lower()})"
        )


def first_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0] if lines else ""
