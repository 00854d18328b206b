"""The ``spark-tfrecord`` command: a thin layer over :mod:`spark_tfrecord`."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, cast, get_args

from spark_tfrecord import errors
from spark_tfrecord._format.manifest import MANIFEST_NAME, DatasetInfo, read_manifest
from spark_tfrecord._spark.io import Compression, RecordType, SaveMode
from spark_tfrecord._spark.tfds import TfdsMode

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

_EPILOG = """\
examples:
  spark-tfrecord convert people.csv out/people                 CSV (with a header) to TFRecord
  spark-tfrecord convert data.parquet out/tf --partition-by day --compression gzip
  spark-tfrecord convert out/tf back.parquet --to parquet       TFRecord back to Parquet
  spark-tfrecord convert data.parquet /data/tfds --tfds my_ds --split train --shards 8
                                            a TensorFlow Datasets dataset (/data/tfds/my_ds/1.0.0)
  spark-tfrecord convert people.csv /data/tfds --tfds people_ds --split train \\
      --cast signup_day:string                                  a date column as TFDS Text
  spark-tfrecord convert data.parquet /data/tfds --tfds my_ds --split test \\
      --features /data/tfds/other_ds/1.0.0/features.json        TFDS features of your own
  spark-tfrecord convert in/ out/ --from json --conf spark.sql.shuffle.partitions=8
  spark-tfrecord inspect out/people -n 5                        schema, counts, first records
  spark-tfrecord inspect /data/tfds/my_ds --split train         a TFDS dataset (counts from its
                                                                dataset_info.json)
  spark-tfrecord inspect 'out/tf/*.tfrecord-*' --compression gzip   a glob; gzip without .gz
  spark-tfrecord inspect s3a://bucket/tf --spark                the same through Spark
  spark-tfrecord index out/tf                                   index files for PyTorch and DALI

exit status: 0 done, 2 bad arguments (or columns TFRecord cannot hold), 3 input not found,
             4 corrupt or malformed data, 5 Spark or Java failure,
             6 the destination exists (give --mode overwrite or --mode append)
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

EXIT_USAGE, EXIT_NOT_FOUND, EXIT_BAD_DATA, EXIT_FAILURE, EXIT_EXISTS = 2, 3, 4, 5, 6

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
        ),
        EXIT_USAGE,
        "see spark-tfrecord --help, docs/options.md and docs/types.md",
    ),
    (
        (errors.TFDS_FEATURES,),
        EXIT_USAGE,
        "give --cast COLUMN:TYPE or --features FILE; see docs/tfds.md",
    ),
    ((errors.DATASET_FOLDER,), EXIT_USAGE, "see docs/tfds.md"),
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


def _load(spark: SparkSession, path: str, fmt: str, args: argparse.Namespace) -> DataFrame:
    from spark_tfrecord import read

    if fmt == "tfrecord":
        options = {"compression": args.compression} if args.compression else {}
        return read(spark, path, record_type=args.record_type, schema=args.schema, **options)
    reader = spark.read.format(fmt)
    if fmt == "csv":
        reader = reader.option("header", "true").option("inferSchema", "true")
    return reader.load(path)


def _casts(items: list[str]) -> list[tuple[str, str]]:
    """``--cast COLUMN:TYPE`` items as (column, type), checked before Spark starts."""
    casts = []
    for item in items:
        column, sep, type_name = item.partition(":")
        if not (sep and column and type_name.strip()):
            raise CliError(
                f"--cast takes COLUMN:TYPE, got {item!r}",
                "a Spark SQL type: --cast signup_day:string, --cast price:double",
                EXIT_USAGE,
            )
        casts.append((column, type_name.strip()))
    return casts


#: Integer types that ``--cast`` turns a date or timestamp into as TFRecord stores them.
_INTEGERS = ("bigint", "long", "int", "integer")


def _cast(df: DataFrame, column: str, type_name: str) -> DataFrame:
    """``df`` with ``column`` cast to ``type_name``: Spark SQL's CAST, but a date or timestamp to
    bigint is days or microseconds since 1970-01-01 (UTC), as TFRecord stores them (CAST
    refuses a date, and truncates a timestamp to seconds)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import DateType, TimestampType

    fields = {f.name: f.dataType for f in df.schema.fields}
    if column not in fields:
        raise CliError(
            f"--cast {column}:{type_name}: no column {column!r} (the columns: {', '.join(fields)})",
            "see spark-tfrecord convert --help",
            EXIT_USAGE,
        )
    source = fields[column]
    quoted = "`" + column.replace("`", "``") + "`"
    if isinstance(source, (DateType, TimestampType)) and type_name.lower() in _INTEGERS:
        unit = "unix_date" if isinstance(source, DateType) else "unix_micros"
        value = F.expr(f"{unit}({quoted})")
        return df.withColumn(
            column, value if type_name.lower() in ("bigint", "long") else value.cast(type_name)
        )
    try:
        return df.withColumn(column, F.col(quoted).cast(type_name))
    except Exception as e:  # a type Spark cannot parse, or a cast it refuses
        raise CliError(
            f"--cast {column}:{type_name}: {_first_line(str(e))}",
            "a Spark SQL type such as string, bigint, double, array<float>",
            EXIT_USAGE,
        ) from None


def _tfds_mapped(df: DataFrame) -> tuple[DataFrame, list[str]]:
    """``df`` with each date and timestamp column (or array of them) as int64, as TFRecord stores
    them: exact, and the one way TFDS can hold them. Returns the notes that say so."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType, DateType, TimestampType

    notes = []
    for field in df.schema.fields:
        t = field.dataType
        element = t.elementType if isinstance(t, ArrayType) else t
        if isinstance(element, DateType):
            function, unit = "unix_date", "days"
        elif type(element) is TimestampType:  # not timestamp_ntz: no time zone says which day
            function, unit = "unix_micros", "microseconds"
        else:
            continue
        quoted = "`" + field.name.replace("`", "``") + "`"
        expression = (
            f"transform({quoted}, x -> {function}(x))"
            if isinstance(t, ArrayType)
            else f"{function}({quoted})"
        )
        df = df.withColumn(field.name, F.expr(expression))
        notes.append(f"{field.name}: {t.simpleString()} as int64 {unit} since 1970-01-01")
    return df, notes


def _features_file(path: str) -> str:
    """The TFDS features in ``path`` (a features.json, or the JSON ``features=`` takes)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
        json.loads(text)
    except OSError as e:
        raise CliError(
            f"--features {path}: {e.strerror}", "give a features.json file", EXIT_NOT_FOUND
        ) from None
    except ValueError as e:
        raise CliError(
            f"--features {path} is not JSON: {e}",
            "give a features.json as TFDS writes it, or the JSON of a FeaturesDict",
            EXIT_USAGE,
        ) from None
    return text


def _refuse_existing(args: argparse.Namespace) -> None:
    """Refuse, before Spark starts, a local destination that the save mode would refuse."""
    if not _is_local(args.dst):
        return  # Spark refuses it (PATH_ALREADY_EXISTS), reported the same way by _explain
    dst = Path(args.dst.removeprefix("file:"))
    if args.tfds is not None:
        info = dst / args.tfds / "1.0.0" / "dataset_info.json"
        if args.mode != "overwrite" and info.is_file():
            try:
                splits = [s.get("name") for s in json.loads(info.read_text()).get("splits", [])]
            except ValueError:
                return  # the write reports what is wrong with it
            if args.split in splits:
                raise _split_exists(str(info.parent), args.split)
    elif args.mode in ("error", "errorifexists") and dst.exists():
        raise _exists(args.dst)


def _exists(dst: str) -> CliError:
    return CliError(f"{dst} already exists", "use --mode overwrite or --mode append", EXIT_EXISTS)


def _split_exists(folder: str, split: str) -> CliError:
    return CliError(
        f"the TFDS dataset {folder} already has the split {split!r}",
        "use --mode overwrite to replace it, or another --split",
        EXIT_EXISTS,
    )


def _convert(args: argparse.Namespace) -> int:
    from spark_tfrecord import write, write_tfds

    tfds_only = [
        flag
        for flag, given in (
            ("--split", args.split),
            ("--shards", args.shards),
            ("--features", args.features),
        )
        if given
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
    casts = _casts(args.cast)
    features = _features_file(args.features) if args.features else None
    _refuse_existing(args)
    spark = _session(args.master, args.conf)
    source_format = args.source_format or _guess_format(args.src)
    df = _load(spark, args.src, source_format, args)
    for column, type_name in casts:
        df = _cast(df, column, type_name)
    partition_by = args.partition_by.split(",") if args.partition_by else None
    if args.tfds is not None:
        df, notes = _tfds_mapped(df)
        mode: TfdsMode = "overwrite" if args.mode == "overwrite" else "error"
        folder = write_tfds(
            df,
            args.dst,
            args.tfds,
            args.split,
            num_shards=args.shards,
            features=features,
            mode=mode,
        )
        mapped = f" ({'; '.join(notes)})" if notes else ""
        print(f"wrote split {args.split} of the TFDS dataset {folder} from {args.src}{mapped}")
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
        if t.get("type") == "struct":
            fields = ",".join(f"{f['name']}:{type_name(f['type'])}" for f in t["fields"])
            return f"struct<{fields}>"
        return str(t.get("type"))

    print("root")
    for field in schema["fields"]:
        print(
            f" |-- {field['name']}: {type_name(field['type'])} (nullable = "
            f"{str(field['nullable']).lower()})"
        )


def _glob_root(path: str) -> str:
    """The folder above the first glob character of ``path`` (``path`` itself without one)."""
    first = min((i for i, c in enumerate(path) if c in "*?[{"), default=-1)
    return path if first < 0 else path[: path.rfind("/", 0, first) + 1] or "."


def _partition_values(root: str, file: str) -> dict[str, str]:
    """``name=value`` directories between ``root`` and ``file``, as Spark discovers them."""
    root_parts = Path(_glob_root(root).removeprefix("file:")).resolve().parts
    dirs = Path(file.removeprefix("file:")).parent.parts[len(root_parts) :]
    return dict(d.split("=", 1) for d in dirs if "=" in d)


def _local_options(args: argparse.Namespace) -> dict[str, str]:
    """The inspector's options: the general decoder only (a few records do not pay for the fast
    path's trial), and the compression when given."""
    options = {"decoder": "interpreted"}
    if args.compression:
        options["compression"] = args.compression
    return options


def _count(paths: list[str], options: dict[str, str]) -> int:
    """Records in the files, with a progress bar on stderr when it is a terminal."""
    from spark_tfrecord import local

    if len(paths) < 8 or not sys.stderr.isatty():
        return sum(local.count_records(p, **options) for p in paths)
    from rich.console import Console
    from rich.progress import Progress

    total = 0
    with Progress(console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("counting records", total=len(paths))
        for path in paths:
            total += local.count_records(path, **options)
            progress.advance(task)
    return total


def _show_rows(args: argparse.Namespace, files: list[str], schema: dict[str, Any]) -> None:
    from spark_tfrecord import local

    partitions = [f["name"] for f in schema["fields"] if f.get("partition")]
    data_schema = {**schema, "fields": [f for f in schema["fields"] if not f.get("partition")]}
    options = _local_options(args)
    shown = 0
    for path in files:
        if shown >= args.n:
            break
        rows = local.head(
            [path], data_schema, args.n - shown, record_type=args.record_type, **options
        )
        for row in rows:
            if partitions:
                row.update(_partition_values(args.path, path))
            print(json.dumps(row, ensure_ascii=False))
            shown += 1


def _inspect_manifest(args: argparse.Namespace, info: DatasetInfo) -> int:
    """A folder with a valid manifest: the counts from it, without reading a file or starting
    the JVM; the schema written; the first records (the JVM) unless ``-n 0``."""
    from spark_tfrecord import local

    print(f"files: {len(info.files)}, {info.num_bytes:,} bytes")
    print(f"records: {info.num_records:,} ({MANIFEST_NAME})")
    root = os.path.join(args.path, "")
    for f in info.files:
        print(f"{f.num_records:>12,} records {f.num_bytes:>16,} bytes  {f.path.removeprefix(root)}")
    # --record-type left at its default: the manifest's.
    record_type: RecordType = args.record_type
    if record_type == "Example" and info.record_type in get_args(RecordType):
        record_type = cast(RecordType, info.record_type)
    paths = [f.path for f in info.files]
    options = _local_options(args)
    if record_type == info.record_type and info.schema_json is not None:
        schema = json.loads(json.dumps(info.schema_json))
    else:
        schema = local.infer_schema(paths, record_type=record_type, **options)
    for name in info.partition_columns:
        schema["fields"].append(
            {"name": name, "type": "string", "nullable": True, "metadata": {}, "partition": True}
        )
    _print_schema(schema)
    if args.n > 0:
        args.record_type = record_type
        _show_rows(args, [f.path for f in info.files if f.num_records > 0], schema)
    return 0


def _inspect_local(args: argparse.Namespace) -> int:
    from spark_tfrecord import local

    path = _local_path(args.path)
    if (
        not args.split
        and os.path.isdir(path)
        and not os.path.exists(os.path.join(path, "dataset_info.json"))
    ):
        info = read_manifest(path)
        if info is not None:
            args.path = path
            return _inspect_manifest(args, info)
    folder = local.tfds_folder(args.path) if not _has_glob(args.path) else None
    if folder is not None:
        return _inspect_tfds(args, folder)
    if args.split:
        raise CliError(
            f"--split reads a TensorFlow Datasets folder, and {args.path} is not one "
            "(no dataset_info.json in it or in its one version folder)",
            "inspect a TFDS dataset as DATA_DIR/NAME or DATA_DIR/NAME/VERSION",
            EXIT_USAGE,
        )
    files = local.list_files(args.path)
    if not files:
        raise CliError(f"no data files under {args.path}", "is it the right path?", EXIT_NOT_FOUND)
    paths = [f.path for f in files]
    options = _local_options(args)
    schema = local.infer_schema(paths, record_type=args.record_type, **options)
    for name in _partition_values(args.path, files[0].path):
        schema["fields"].append(
            {"name": name, "type": "string", "nullable": True, "metadata": {}, "partition": True}
        )
    print(f"files: {len(files)}, {sum(f.size for f in files):,} bytes")
    print(f"records: {_count(paths, options):,}")
    _print_schema(schema)
    _show_rows(args, paths, schema)
    return 0


def _local_path(path: str) -> str:
    """A local path as the user writes it (Hadoop prints ``file:/tmp/x``)."""
    return path.removeprefix("file:") if path.startswith("file:/") else path


def _has_glob(path: str) -> bool:
    return any(c in path for c in "*?[{")


def _inspect_tfds(args: argparse.Namespace, folder: str) -> int:
    from spark_tfrecord import local

    if args.record_type != "Example" or args.compression:
        raise CliError(
            f"{folder} is a TensorFlow Datasets folder: uncompressed tf.train.Example shards",
            "leave out --record-type and --compression",
            EXIT_USAGE,
        )
    name, version, shards = local.tfds_shards(folder)
    splits = list(dict.fromkeys(s.split for s in shards))
    if args.split is not None:
        if args.split not in splits:
            raise CliError(
                f"the TFDS dataset {_local_path(folder)} has no split {args.split!r} "
                f"(its splits: {', '.join(splits) or 'none'})",
                "give one of them to --split, or leave --split out for all",
                EXIT_USAGE,
            )
        splits = [args.split]
    chosen = [s for s in shards if s.split in splits]
    print(f"tfds: {name} {version}, {_local_path(folder)}")
    for split in splits:
        of = [s for s in chosen if s.split == split]
        print(
            f"split {split}: files: {len(of)}, {sum(s.size for s in of):,} bytes, "
            f"records: {sum(s.records for s in of):,} (dataset_info.json)"
        )
    print(f"records: {sum(s.records for s in chosen):,}")
    schema = local.tfds_schema(folder)
    _print_schema(schema)
    _show_rows(args, [s.path for s in chosen if s.records > 0], schema)
    return 0


def _inspect_spark(args: argparse.Namespace) -> int:
    spark = _session(args.master, args.conf)
    if args.split:
        df = spark.read.format("tfrecord").option("split", args.split).load(args.path)
    else:
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
    lines = jvm.io.github.sparktfrecord.tools.TFRecordIndex.indexFiles(
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


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line on stderr, as the command's others."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"spark-tfrecord: error: {message} (see {self.prog} --help)\n")
        sys.exit(EXIT_USAGE)


def build_parser() -> argparse.ArgumentParser:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = _Parser(
        prog="spark-tfrecord",
        description="Convert data to and from TensorFlow TFRecord files with Spark, "
        "and look inside them.",
        epilog=_EPILOG,
        formatter_class=formatter,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="{convert,inspect,index}")
    session = _Parser(add_help=False)
    session.add_argument("--master", default="local[*]", help="Spark master (default local[*])")
    session.add_argument(
        "--conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Spark setting, repeatable",
    )
    common = _Parser(add_help=False, parents=[session])
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
    convert.add_argument(
        "--features",
        metavar="FILE",
        help="with --tfds: the TFDS features, a features.json as TFDS writes it (or the JSON of "
        "a FeaturesDict's to_json()); default: derived from the columns (docs/tfds.md)",
    )
    convert.add_argument(
        "--cast",
        action="append",
        default=[],
        metavar="COLUMN:TYPE",
        help="cast a column to a Spark SQL type before writing, repeatable: --cast "
        "signup_day:string, --cast price:double. A date or timestamp to bigint is days or "
        "microseconds since 1970-01-01. With --tfds, date and timestamp columns not cast are "
        "written so, as int64",
    )
    convert.set_defaults(run=_convert)

    inspect = sub.add_parser(
        "inspect",
        parents=[common],
        help="schema, counts and first records",
        description="Show files, record count, inferred schema and the first records. Local "
        "paths are read without Spark, by the bundled decoder in a small JVM: for a small "
        "folder about 2 s of CPU, mostly the JVM's start and its loading of Hadoop's and "
        "Spark's classes (docs/getting-started.md has the figures); other paths, --schema and "
        "--spark go through Spark. A folder written by spark-tfrecord, whose "
        "_tfrecord_manifest.json matches its files, shows the counts (in all and per file) "
        "and the schema from the manifest, without reading a file; the JVM starts only for "
        "the first records (none with -n 0). A TensorFlow Datasets folder "
        "(DATA_DIR/NAME/VERSION, or DATA_DIR/NAME with one version) shows each split, "
        "counted by its dataset_info.json, and its features.json's schema.",
        epilog=_EPILOG,
        formatter_class=formatter,
    )
    inspect.add_argument(
        "path", help="TFRecord file, directory, glob (quoted) or TensorFlow Datasets folder"
    )
    inspect.add_argument(
        "--split",
        metavar="NAME",
        help="of a TensorFlow Datasets folder: this split only (default: every split)",
    )
    inspect.add_argument(
        "--compression",
        choices=get_args(Compression),
        help="for files without a .gz or .deflate extension (TensorFlow's GZIP / ZLIB shards): "
        "the data source's compression option",
    )
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
                message = _describe(exc, java[:1] or chain[-1:])
                if errors.matches(exc, errors.TFDS_FEATURES):
                    message = _command_line_words(message)
                message = message.replace("with the option 'split'", "with --split NAME")
                if (
                    errors.matches(exc, errors.DATASET_FOLDER)
                    and "already has the split" in message
                ):
                    return CliError(
                        message.split(" Write it with mode overwrite")[0],
                        "use --mode overwrite to replace it, or another --split",
                        EXIT_EXISTS,
                    )
                return CliError(message, hint, status)
    if _error_condition(exc) == "PATH_ALREADY_EXISTS":
        return CliError(
            _describe(exc, chain[:1]), "use --mode overwrite or --mode append", EXIT_EXISTS
        )
    if _error_condition(exc) == "PATH_NOT_FOUND":
        return CliError(_describe(exc, chain[:1]), "check the path", EXIT_NOT_FOUND)
    for class_names, status, hint in _JAVA_FAILURES:
        for java in chain:
            if _java_classes(java).intersection(class_names):
                return CliError(_describe(exc, [java]), hint, status)
    # Otherwise the innermost cause says best what went wrong.
    return CliError(_describe(exc, chain[-1:]), _DEBUG_HINT, EXIT_FAILURE)


def _command_line_words(message: str) -> str:
    """A TFDS features error as the command line says it: its flags, not write_tfds's
    ``features=``."""
    column = re.search(r"Column '([^']+)'", message)
    flag = f"--cast {column.group(1)}:" if column else "--cast COLUMN:"
    message = message.replace(
        "Cast it (to bigint, double or string)", f"Cast it ({flag}bigint, double or string)"
    )
    return message.replace("give features=", "give --features FILE").replace(
        "Give features=", "Give --features FILE"
    )


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


def _first_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0] if lines else ""


def _describe(exc: Exception, java: list[Any]) -> str:
    """``ClassName: first line of the message`` of the Java exception if given, else of ``exc``."""
    if java:
        name, message = java[0].getClass().getSimpleName(), java[0].getMessage()
    else:
        name, message = type(exc).__name__, str(exc)
    return f"{name}: {_first_line(str(message or ''))}"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; return its exit status.

    Its answer is all it prints on stdout; a failure is one line on stderr,
    ``spark-tfrecord: error: <message> (<hint>)``, and an exit status (the epilog lists them).
    """
    # pyspark 4.x warns on import that it does not yet fully support pandas 3, which the
    # command does not use; only this warning, only while the command runs.
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message="PySpark does not yet fully support pandas", category=FutureWarning
        )
        return _run(argv)


def _run(argv: Sequence[str] | None) -> int:
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
    print(f"spark-tfrecord: error: {error} ({error.hint})", file=sys.stderr)
    return error.status
