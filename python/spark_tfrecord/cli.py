"""The ``spark-tfrecord`` command: a thin layer over :mod:`spark_tfrecord`."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

_EPILOG = """\
examples:
  spark-tfrecord convert people.csv out/people                 CSV (with a header) to TFRecord
  spark-tfrecord convert data.parquet out/tf --partition-by day --compression gzip
  spark-tfrecord convert out/tf back.parquet --to parquet       TFRecord back to Parquet
  spark-tfrecord convert in/ out/ --from json --conf spark.sql.shuffle.partitions=8
  spark-tfrecord inspect out/people -n 5                        schema, counts, first records
  spark-tfrecord inspect s3a://bucket/tf --spark                the same through Spark

exit status: 0 done, 2 bad arguments, 3 input not found, 4 corrupt or malformed data,
             5 Spark or Java failure
"""

_FORMATS = ("tfrecord", "parquet", "csv", "json", "orc", "avro", "text")
_EXTENSIONS = {
    ".csv": "csv",
    ".json": "json",
    ".jsonl": "json",
    ".parquet": "parquet",
    ".orc": "orc",
    ".avro": "avro",
    ".txt": "text",
}

EXIT_USAGE, EXIT_NOT_FOUND, EXIT_BAD_DATA, EXIT_FAILURE = 2, 3, 4, 5


class CliError(Exception):
    """A failure to report as one line, a hint, and an exit status."""

    def __init__(self, message: str, hint: str, status: int) -> None:
        super().__init__(message)
        self.hint = hint
        self.status = status


def _guess_format(path: str) -> str:
    name = path.rstrip("/").lower()
    for ext, fmt in _EXTENSIONS.items():
        if name.endswith(ext):
            return fmt
    return "tfrecord"


def _session(master: str, conf: list[str]) -> SparkSession:
    from pyspark.sql import SparkSession

    from spark_tfrecord import configure

    quiet = Path(__file__).resolve().parent / "log4j2-cli.properties"
    builder = (
        SparkSession.builder.appName("spark-tfrecord")
        .master(master)
        .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={quiet.as_uri()}")
        .config("spark.ui.showConsoleProgress", "true")
    )
    for item in conf:
        key, sep, value = item.partition("=")
        if not sep:
            raise CliError(f"--conf takes KEY=VALUE, got {item!r}", "see --help", EXIT_USAGE)
        builder = builder.config(key, value)
    return configure(builder).getOrCreate()


def _load(spark: SparkSession, path: str, fmt: str, args: argparse.Namespace) -> DataFrame:
    reader = spark.read.format(fmt)
    if fmt == "tfrecord":
        reader = reader.option("recordType", args.record_type)
        if getattr(args, "schema", None):
            reader = reader.schema(args.schema)
    elif fmt == "csv":
        reader = reader.option("header", "true").option("inferSchema", "true")
    return reader.load(path)


def _convert(args: argparse.Namespace) -> int:
    spark = _session(args.master, args.conf)
    source_format = args.source_format or _guess_format(args.src)
    df = _load(spark, args.src, source_format, args)
    writer = df.write.format(args.to).mode(args.mode)
    if args.to == "tfrecord":
        writer = writer.option("recordType", args.record_type)
    if args.compression:
        writer = writer.option("compression", args.compression)
    if args.partition_by:
        writer = writer.partitionBy(*args.partition_by.split(","))
    writer.save(args.dst)
    print(f"wrote {args.dst} ({args.to}) from {args.src} ({source_format})")
    return 0


def _is_local(path: str) -> bool:
    return "://" not in path or path.startswith("file:")


def _print_schema(schema: dict[str, Any]) -> None:
    def type_name(t: Any) -> str:
        if isinstance(t, str):
            return {"long": "long", "integer": "int"}.get(t, t)
        if t.get("type") == "array":
            return f"array<{type_name(t['elementType'])}>"
        return str(t.get("type"))

    print("root")
    for field in schema["fields"]:
        print(
            f" |-- {field['name']}: {type_name(field['type'])} (nullable = "
            f"{str(field['nullable']).lower()})"
        )


def _partition_values(root: str, file: str) -> dict[str, str]:
    """``name=value`` directories between ``root`` and ``file``, as Spark discovers them."""
    root_parts = Path(root.removeprefix("file:")).resolve().parts
    dirs = Path(file.removeprefix("file:")).parent.parts[len(root_parts) :]
    return dict(d.split("=", 1) for d in dirs if "=" in d)


def _inspect_local(args: argparse.Namespace) -> int:
    from rich.progress import Progress

    from spark_tfrecord import local

    files = local.list_files(args.path)
    if not files:
        raise CliError(f"no data files under {args.path}", "is it the right path?", EXIT_NOT_FOUND)
    options = {"recordType": args.record_type}
    schema = local.infer_schema([f.path for f in files], **options)
    partitions = _partition_values(args.path, files[0].path)
    for name in partitions:
        schema["fields"].append({"name": name, "type": "string", "nullable": True, "metadata": {}})
    print(f"files: {len(files)}, {sum(f.size for f in files):,} bytes")
    total = 0
    with Progress(transient=True, disable=len(files) < 8) as progress:
        task = progress.add_task("counting records", total=len(files))
        for f in files:
            total += local.count_records(f.path)
            progress.advance(task)
    print(f"records: {total:,}")
    _print_schema(schema)
    data_schema = {**schema, "fields": schema["fields"][: len(schema["fields"]) - len(partitions)]}
    shown = 0
    for f in files:
        if shown >= args.n:
            break
        for row in local.head([f.path], data_schema, args.n - shown, **options):
            row.update(_partition_values(args.path, f.path))
            print(json.dumps(row, ensure_ascii=False))
            shown += 1
    return 0


def _inspect_spark(args: argparse.Namespace) -> int:
    spark = _session(args.master, args.conf)
    df = _load(spark, args.path, "tfrecord", args)
    files = df.inputFiles()
    print(f"files: {len(files)}")
    print(f"records: {df.count():,}")
    df.printSchema()
    df.show(args.n, truncate=False)
    return 0


def _inspect(args: argparse.Namespace) -> int:
    if args.spark or not _is_local(args.path) or args.schema:
        return _inspect_spark(args)
    return _inspect_local(args)


def build_parser() -> argparse.ArgumentParser:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(
        prog="spark-tfrecord",
        description="Convert data to and from TensorFlow TFRecord files with Spark, "
        "and look inside them.",
        epilog=_EPILOG,
        formatter_class=formatter,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="{convert,inspect}")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--master", default="local[*]", help="Spark master (default local[*])")
    common.add_argument(
        "--conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Spark setting, repeatable",
    )
    common.add_argument(
        "--record-type",
        default="Example",
        choices=["Example", "SequenceExample", "ByteArray"],
        help="what each TFRecord holds (default Example)",
    )
    common.add_argument(
        "--schema", metavar="DDL", help="read TFRecords with this schema instead of inferring"
    )

    convert = sub.add_parser(
        "convert",
        parents=[common],
        help="convert SRC to DST",
        description="Read SRC with Spark and write it to DST: any Spark input to TFRecord, "
        "or TFRecord to any Spark output (--to).",
        epilog=_EPILOG,
        formatter_class=formatter,
    )
    convert.add_argument("src", help="input file or directory")
    convert.add_argument("dst", help="output directory")
    convert.add_argument(
        "--from",
        dest="source_format",
        choices=_FORMATS,
        help="input format (default: from the extension, else tfrecord)",
    )
    convert.add_argument(
        "--to", default="tfrecord", choices=_FORMATS, help="output format (default tfrecord)"
    )
    convert.add_argument("--partition-by", metavar="COLS", help="comma-separated partition columns")
    convert.add_argument(
        "--compression",
        choices=["none", "gzip", "deflate"],
        help="TFRecord compression (TensorFlow's GZIP / ZLIB)",
    )
    convert.add_argument(
        "--mode",
        default="errorifexists",
        choices=["append", "overwrite", "ignore", "errorifexists"],
        help="what to do when DST exists (default errorifexists)",
    )
    convert.set_defaults(run=_convert)

    inspect = sub.add_parser(
        "inspect",
        parents=[common],
        help="schema, counts and first records",
        description="Show files, record count, inferred schema and the first records. Local "
        "paths are read without Spark (the bundled decoder in a JVM, about a second); other "
        "paths, --schema and --spark go through Spark.",
        epilog=_EPILOG,
        formatter_class=formatter,
    )
    inspect.add_argument("path", help="TFRecord file or directory")
    inspect.add_argument("-n", type=int, default=10, help="records to show (default 10)")
    inspect.add_argument("--spark", action="store_true", help="use Spark even for local paths")
    inspect.set_defaults(run=_inspect)
    return parser


def _explain(exc: BaseException) -> CliError:
    """One readable line for a failure deep in Spark or the JVM, with an exit status."""
    text = _root_message(exc)
    if "does not exist" in text or "FileNotFound" in text or "No such file" in text:
        return CliError(text, "check the path", EXIT_NOT_FOUND)
    bad_data = (
        "TFRecordCorruptException",
        "TFRecordDataException",
        "Truncated TFRecord",
        "Corrupt TFRecord",
        "Malformed tf.train",
    )
    if any(marker in text for marker in bad_data):
        return CliError(
            text, "the file is damaged or not TFRecord; see docs/errors.md", EXIT_BAD_DATA
        )
    if "Invalid value" in text or "cannot hold" in text or "Cannot infer" in text:
        return CliError(text, "see spark-tfrecord --help and docs/options.md", EXIT_USAGE)
    return CliError(text, "run with SPARK_TFRECORD_DEBUG=1 for the full trace", EXIT_FAILURE)


def _root_message(exc: BaseException) -> str:
    java = getattr(exc, "java_exception", None)
    if java is not None:  # py4j: the innermost Java cause says what went wrong
        while java.getCause() is not None:
            java = java.getCause()
        return f"{java.getClass().getSimpleName()}: {java.getMessage()}"
    if type(exc).__module__.startswith("jpype") or hasattr(exc, "getMessage"):
        cause = exc
        while getattr(cause, "getCause", lambda: None)() is not None:
            cause = cause.getCause()  # type: ignore[attr-defined]
        return f"{type(cause).__name__}: {cause.getMessage()}"  # type: ignore[attr-defined]
    message = str(exc).strip().splitlines()
    return message[0] if message else type(exc).__name__


def main(argv: Sequence[str] | None = None) -> int:
    import os

    args = build_parser().parse_args(argv)
    try:
        result: int = args.run(args)
        return result
    except CliError as e:
        error = e
    except Exception as e:  # reported as one line below
        if os.environ.get("SPARK_TFRECORD_DEBUG"):
            raise
        error = _explain(e)
    print(f"spark-tfrecord: error: {error}", file=sys.stderr)
    print(f"hint: {error.hint}", file=sys.stderr)
    return error.status


if __name__ == "__main__":
    sys.exit(main())
