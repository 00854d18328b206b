"""The ``spark-tfrecord`` command: a thin layer over :mod:`spark_tfrecord`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

_EPILOG = """\
examples:
  spark-tfrecord convert people.csv out/people            CSV (with header) to TFRecord
  spark-tfrecord convert data.parquet out/tf --partition-by day --mode overwrite
  spark-tfrecord convert out/tf back.parquet --to parquet  TFRecord back to Parquet
  spark-tfrecord inspect out/people -n 5                   schema, counts and the first records
"""

_INPUT_FORMATS = ("tfrecord", "parquet", "csv", "json", "orc", "avro", "text")


def _guess_format(path: str) -> str:
    name = path.rstrip("/").lower()
    for ext, fmt in (
        (".csv", "csv"),
        (".json", "json"),
        (".jsonl", "json"),
        (".parquet", "parquet"),
        (".orc", "orc"),
        (".avro", "avro"),
        (".txt", "text"),
    ):
        if name.endswith(ext):
            return fmt
    return "tfrecord"


def _session(master: str, conf: list[str]) -> SparkSession:
    from pyspark.sql import SparkSession

    from spark_tfrecord import configure

    builder = SparkSession.builder.appName("spark-tfrecord").master(master)
    for item in conf:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"spark-tfrecord: --conf takes key=value, got {item!r}")
        builder = builder.config(key, value)
    return configure(builder).getOrCreate()


def _load(spark: SparkSession, path: str, fmt: str, record_type: str) -> DataFrame:
    reader = spark.read.format(fmt)
    if fmt == "tfrecord":
        reader = reader.option("recordType", record_type)
    elif fmt == "csv":
        reader = reader.option("header", "true").option("inferSchema", "true")
    return reader.load(path)


def _convert(args: argparse.Namespace) -> int:
    spark = _session(args.master, args.conf)
    source_format = args.source_format or _guess_format(args.src)
    df = _load(spark, args.src, source_format, args.record_type)
    writer = df.write.format(args.to).mode(args.mode)
    if args.to == "tfrecord":
        writer = writer.option("recordType", args.record_type)
    if args.partition_by:
        writer = writer.partitionBy(*args.partition_by.split(","))
    writer.save(args.dst)
    print(f"wrote {args.dst} ({args.to}) from {args.src} ({source_format})")
    return 0


def _inspect(args: argparse.Namespace) -> int:
    spark = _session(args.master, args.conf)
    df = _load(spark, args.path, "tfrecord", args.record_type)
    df.printSchema()
    print(f"records: {df.count()}")
    df.show(args.n, truncate=False)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="spark-tfrecord",
        description="Convert data to and from TensorFlow TFRecord files with Spark, "
        "and look inside them.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
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

    convert = sub.add_parser(
        "convert",
        parents=[common],
        help="convert SRC to DST",
        description="Read SRC with Spark and write it to DST.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    convert.add_argument("src", help="input file or directory")
    convert.add_argument("dst", help="output directory")
    convert.add_argument(
        "--from",
        dest="source_format",
        choices=_INPUT_FORMATS,
        help="input format (default: from the extension, else tfrecord)",
    )
    convert.add_argument(
        "--to", default="tfrecord", choices=_INPUT_FORMATS, help="output format (default tfrecord)"
    )
    convert.add_argument("--partition-by", help="comma-separated partition columns")
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
        help="schema, count and first records",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    inspect.add_argument("path", help="TFRecord file or directory")
    inspect.add_argument("-n", type=int, default=10, help="records to show (default 10)")
    inspect.set_defaults(run=_inspect)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    result: int = args.run(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
