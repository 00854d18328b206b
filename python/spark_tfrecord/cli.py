"""The ``spark-tfrecord`` command: a thin layer over :mod:`spark_tfrecord`."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

from spark_tfrecord import errors
from spark_tfrecord._io import Compression, RecordType, SaveMode
from spark_tfrecord._tfds import TfdsMode

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

_EPILOG = """\
examples:
  spark-tfrecord convert people.csv out/people                 CSV (with a header) to TFRecord
  spark-tfrecord convert data.parquet out/tf --partition-by day --compression gzip
  spark-tfrecord convert out/tf back.parquet --to parquet       TFRecord back to Parquet
  spark-tfrecord convert data.parquet /data/tfds --tfds my_ds --split train --shards 8
                                            a TensorFlow Datasets dataset (/data/tfds/my_ds/1.0.0)
  spark-tfrecord convert in/ out/ --from json --conf spark.sql.shuffle.partitions=8
  spark-tfrecord inspect out/people -n 5                        schema, counts, first records
  spark-tfrecord inspect s3a://bucket/tf --spark                the same through Spark
  spark-tfrecord index out/tf                                   index files for PyTorch and DALI

exit status: 0 done, 2 bad arguments (or columns TFRecord cannot hold), 3 input not found,
             4 corrupt or malformed data, 5 Spark or Java failure
"""

#: Spark's built-in file formats (Avro is an external module that pyspark does not ship).
_FORMATS = ("tfrecord", "parquet", "csv", "json", "orc", "text")
_EXTENSIONS = {
    ".csv": "csv",
    ".json": "json",
    ".jsonl": "json",
    ".parquet": "parquet",
    ".orc": "orc",
    ".txt": "text",
}

EXIT_USAGE, EXIT_NOT_FOUND, EXIT_BAD_DATA, EXIT_FAILURE = 2, 3, 4, 5

#: Exit statuses by the condition of our error (docs/errors.md lists them), the first that
#: matches, with the hint shown under the message.
_CONDITIONS = (
    (
        (errors.CORRUPT_RECORD, errors.MALFORMED_RECORD, errors.RECORD_TOO_LARGE),
        EXIT_BAD_DATA,
        "the file is damaged or not TFRecord; see docs/errors.md",
    ),
    (
        (errors.DATA_MISMATCH,),
        EXIT_BAD_DATA,
        "a value does not fit its column; see docs/errors.md and docs/types.md",
    ),
    (
        (
            errors.INVALID_OPTION,
            errors.UNSUPPORTED_TYPE,
            errors.INVALID_SCHEMA,
            errors.CANNOT_INFER_SCHEMA,
            errors.TFDS_FEATURES,
            errors.DATASET_FOLDER,
        ),
        EXIT_USAGE,
        "see spark-tfrecord --help, docs/options.md and docs/types.md",
    ),
)
#: For errors of Spark or the JVM without a condition of ours: exit statuses by the class of
#: the Java exception or of one of its causes (or a subclass).
_JAVA_FAILURES = (
    (("java.io.FileNotFoundException",), EXIT_NOT_FOUND, "check the path"),
    (
        ("java.lang.IllegalArgumentException", "org.apache.spark.sql.AnalysisException"),
        EXIT_USAGE,
        "see spark-tfrecord --help, docs/options.md and docs/types.md",
    ),
)
_DEBUG_HINT = "run with SPARK_TFRECORD_DEBUG=1 for the full trace"


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
    from spark_tfrecord import read

    if fmt == "tfrecord":
        return read(spark, path, record_type=args.record_type, schema=args.schema)
    reader = spark.read.format(fmt)
    if fmt == "csv":
        reader = reader.option("header", "true").option("inferSchema", "true")
    return reader.load(path)


def _convert(args: argparse.Namespace) -> int:
    from spark_tfrecord import write, write_tfds

    tfds_only = [
        flag for flag, given in (("--split", args.split), ("--shards", args.shards)) if given
    ]
    if args.tfds is None and tfds_only:
        raise CliError(
            f"{' and '.join(tfds_only)} need --tfds NAME",
            "spark-tfrecord convert SRC DATA_DIR --tfds NAME --split train [--shards N]",
            EXIT_USAGE,
        )
    if args.tfds is not None:
        refused = [
            flag
            for flag, given in (
                ("--to", args.to != "tfrecord"),
                ("--partition-by", args.partition_by),
                ("--compression", args.compression),
                ("--record-type", args.record_type != "Example"),
            )
            if given
        ]
        if refused or not args.split:
            raise CliError(
                f"--tfds {'takes --split' if not args.split else 'refuses ' + ', '.join(refused)}",
                "a TFDS dataset is uncompressed tf.train.Example shards of one folder: "
                "see docs/tfds.md",
                EXIT_USAGE,
            )
    if args.compression and args.to != "tfrecord":
        raise CliError(
            f"--compression is for --to tfrecord, not --to {args.to}",
            "Parquet and ORC take their codec from --conf spark.sql.parquet.compression.codec=... "
            "or spark.sql.orc.compression.codec=...",
            EXIT_USAGE,
        )
    spark = _session(args.master, args.conf)
    source_format = args.source_format or _guess_format(args.src)
    df = _load(spark, args.src, source_format, args)
    partition_by = args.partition_by.split(",") if args.partition_by else None
    if args.tfds is not None:
        mode: TfdsMode = "overwrite" if args.mode == "overwrite" else "error"
        folder = write_tfds(df, args.dst, args.tfds, args.split, num_shards=args.shards, mode=mode)
        print(f"wrote split {args.split} of the TFDS dataset {folder} from {args.src}")
        return 0
    if args.to == "tfrecord":
        options = {"compression": args.compression} if args.compression else {}
        write(
            df,
            args.dst,
            record_type=args.record_type,
            mode=args.mode,
            partition_by=partition_by,
            **options,
        )
    else:
        writer = df.write.format(args.to).mode(args.mode)
        if partition_by:
            writer = writer.partitionBy(*partition_by)
        writer.save(args.dst)
    print(f"wrote {args.dst} ({args.to}) from {args.src} ({source_format})")
    return 0


def _is_local(path: str) -> bool:
    return "://" not in path or path.startswith("file:")


def _print_schema(schema: dict[str, Any]) -> None:
    def type_name(t: Any) -> str:
        if isinstance(t, str):
            return t
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
    schema = local.infer_schema([f.path for f in files], record_type=args.record_type)
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
        for row in local.head([f.path], data_schema, args.n - shown, record_type=args.record_type):
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


def _index(args: argparse.Namespace) -> int:
    spark = _session(args.master, args.conf)
    options = {"compression": args.compression} if args.compression else {}
    jvm: Any = spark._jvm
    start = time.perf_counter()
    lines = jvm.io.github.sparktfrecord.TFRecordIndex.indexFiles(
        spark._jsparkSession, list(args.paths), options
    )
    seconds = time.perf_counter() - start
    if len(lines) == 0:
        raise CliError(
            f"no TFRecord files under {', '.join(args.paths)}",
            "is it the right path?",
            EXIT_NOT_FOUND,
        )
    from spark_tfrecord import index_path

    records = total = nanos = 0
    for line in lines:
        count, size, took, path = str(line).split("\t", 3)
        records += int(count)
        total += int(size)
        nanos += int(took)
        print(f"{int(count):>12,} records {int(size):>16,} bytes  {index_path(path)}")
    print(
        f"indexed {len(lines)} files: {records:,} records, {total:,} bytes in {seconds:.1f} s "
        f"({total / 1e6 / max(seconds, 1e-9):,.1f} MB/s; "
        f"{total / 1e6 / max(nanos / 1e9, 1e-9):,.1f} MB/s per task)"
    )
    return 0


def _record_type(value: str) -> str:
    """The record type's own spelling for any case of it; argparse rejects anything else."""
    names: dict[str, str] = {name.lower(): name for name in get_args(RecordType)}
    return names.get(value.lower(), value)


def build_parser() -> argparse.ArgumentParser:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(
        prog="spark-tfrecord",
        description="Convert data to and from TensorFlow TFRecord files with Spark, "
        "and look inside them.",
        epilog=_EPILOG,
        formatter_class=formatter,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="{convert,inspect,index}")
    session = argparse.ArgumentParser(add_help=False)
    session.add_argument("--master", default="local[*]", help="Spark master (default local[*])")
    session.add_argument(
        "--conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Spark setting, repeatable",
    )
    common = argparse.ArgumentParser(add_help=False, parents=[session])
    common.add_argument(
        "--record-type",
        default="Example",
        type=_record_type,
        choices=get_args(RecordType),
        help="what each TFRecord holds, in any case (default Example)",
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
        choices=get_args(Compression),
        help="TFRecord compression (TensorFlow's GZIP / ZLIB), with --to tfrecord only",
    )
    convert.add_argument(
        "--mode",
        default="errorifexists",
        choices=get_args(SaveMode),
        help="what to do when DST exists (default errorifexists)",
    )
    convert.add_argument(
        "--tfds",
        metavar="NAME",
        help="write a TensorFlow Datasets dataset NAME into DST (DST/NAME/1.0.0), with --split",
    )
    convert.add_argument("--split", help="with --tfds: the split to write (train, test, ...)")
    convert.add_argument(
        "--shards",
        type=int,
        metavar="N",
        help="with --tfds: exactly N shard files (default: from the data's size)",
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

    index = sub.add_parser(
        "index",
        parents=[session],
        help="write index files for PyTorch and DALI",
        description="Write beside each TFRecord file under PATH its index _<name>.idx (one line "
        "per record: offset and framed size), as the tfrecord package (PyTorch) and NVIDIA DALI "
        "read it; what the writeIndex option writes. One Spark task per file, both CRCs of every "
        "record checked. Files are found as Spark finds them (directories, globs, partitions).",
        epilog=_EPILOG,
        formatter_class=formatter,
    )
    index.add_argument("paths", nargs="+", metavar="PATH", help="TFRecord file, directory or glob")
    index.add_argument(
        "--compression",
        choices=("none", "gzip"),
        help="for files without a .gz extension (TensorFlow's GZIP shards): offsets are then "
        "in the uncompressed stream, as the tfrecord package's compression_type='gzip' reads",
    )
    index.set_defaults(run=_index)
    return parser


def _explain(exc: Exception) -> CliError:
    """One line, a hint and an exit status for a failure deep in Spark or the JVM.

    The status follows our error's condition (:mod:`spark_tfrecord.errors` finds it among the
    causes); Spark's ``PATH_NOT_FOUND`` is a missing input; other errors go by the class of the
    Java exception or of one of its causes.
    """
    chain = errors.java_chain(exc)
    ours = errors.condition(exc)
    if ours is not None:
        for conditions, status, hint in _CONDITIONS:
            if any(errors.matches(exc, c) for c in conditions):
                java = [j for j in chain if errors.from_java(j) is not None]
                return CliError(_describe(exc, java[:1] or chain[-1:]), hint, status)
    if _error_condition(exc) == "PATH_NOT_FOUND":
        return CliError(_describe(exc, chain[:1]), "check the path", EXIT_NOT_FOUND)
    for class_names, status, hint in _JAVA_FAILURES:
        for java in chain:
            if _java_classes(java).intersection(class_names):
                return CliError(_describe(exc, [java]), hint, status)
    # Otherwise the innermost cause says best what went wrong.
    return CliError(_describe(exc, chain[-1:]), _DEBUG_HINT, EXIT_FAILURE)


def _java_classes(java: Any) -> set[str]:
    """The names of a Java object's class and of all its superclasses."""
    names = set()
    cls = java.getClass()
    while cls is not None:
        names.add(str(cls.getName()))
        cls = cls.getSuperclass()
    return names


def _error_condition(exc: Exception) -> str | None:
    """Spark's error condition of a pyspark exception, such as ``PATH_NOT_FOUND``.

    pyspark 4.x has ``getCondition`` (and ``getErrorClass``, deprecated); 3.5 has only
    ``getErrorClass``.
    """
    get = getattr(exc, "getCondition", None) or getattr(exc, "getErrorClass", None)
    condition = get() if get is not None else None
    return None if condition is None else str(condition)


def _describe(exc: Exception, java: list[Any]) -> str:
    """``ClassName: first line of the message`` of the Java exception if given, else of ``exc``."""
    if java:
        name, message = java[0].getClass().getSimpleName(), java[0].getMessage()
    else:
        name, message = type(exc).__name__, str(exc)
    lines = str(message or "").strip().splitlines()
    return f"{name}: {lines[0] if lines else ''}"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; return its exit status."""
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
