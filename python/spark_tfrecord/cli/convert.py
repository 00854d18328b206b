"""``spark-tfrecord convert``: any Spark input to TFRecord (or TFDS), or TFRecord to any output."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, get_args

from spark_tfrecord._format.files.files import is_url, local_path
from spark_tfrecord._spark.io import Compression, SaveMode
from spark_tfrecord.cli.common import (
    EXIT_EXISTS,
    EXIT_NOT_FOUND,
    EXIT_USAGE,
    CliError,
    first_line,
    load,
    session,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

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


def _guess_format(path: str) -> str:
    name = path.rstrip("/").lower()
    return next((fmt for ext, fmt in _EXTENSIONS.items() if name.endswith(ext)), "tfrecord")


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
    """``df`` with ``column`` cast to ``type_name`` by Spark SQL's CAST, except that a date or
    timestamp to an integer is days or microseconds since 1970-01-01 (UTC), as TFRecord stores it.
    """
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
            f"--cast {column}:{type_name}: {first_line(str(e))}",
            "a Spark SQL type such as string, bigint, double, array<float>",
            EXIT_USAGE,
        ) from None


def _tfds_mapped(df: DataFrame) -> tuple[DataFrame, list[str]]:
    """``df`` with date and timestamp columns (or arrays of them) as int64, and notes saying so."""
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
    if is_url(args.dst):
        return  # Spark refuses it (PATH_ALREADY_EXISTS), reported the same way by _explain
    dst = Path(local_path(args.dst))
    if args.tfds is not None:
        info = dst / args.tfds / "1.0.0" / "dataset_info.json"
        if args.mode != "overwrite" and info.is_file():
            try:
                splits = [s.get("name") for s in json.loads(info.read_text()).get("splits", [])]
            except ValueError:
                return  # the write reports what is wrong with it
            if args.split in splits:
                raise CliError(
                    f"the TFDS dataset {info.parent} already has the split {args.split!r}",
                    "use --mode overwrite to replace it, or another --split",
                    EXIT_EXISTS,
                )
    elif args.mode in ("error", "errorifexists") and dst.exists():
        raise CliError(
            f"{args.dst} already exists", "use --mode overwrite or --mode append", EXIT_EXISTS
        )


def run(args: argparse.Namespace) -> int:
    from spark_tfrecord import write, write_tfds

    given = {"--split": args.split, "--shards": args.shards, "--features": args.features}
    tfds_only = [flag for flag, value in given.items() if value]
    if args.tfds is None and tfds_only:
        raise CliError(
            f"{' and '.join(tfds_only)} need --tfds NAME",
            "spark-tfrecord convert SRC DATA_DIR --tfds NAME --split train [--shards N]",
            EXIT_USAGE,
        )
    if args.tfds is not None:
        refusing = {
            "--to": args.to != "tfrecord",
            "--partition-by": args.partition_by,
            "--compression": args.compression,
            "--record-type": args.record_type != "Example",
        }
        refused = [flag for flag, value in refusing.items() if value]
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
    spark = session(args.master, args.conf)
    source_format = args.source_format or _guess_format(args.src)
    df = load(spark, args.src, source_format, args)
    for column, type_name in casts:
        df = _cast(df, column, type_name)
    partition_by = args.partition_by.split(",") if args.partition_by else None
    if args.tfds is not None:
        df, notes = _tfds_mapped(df)
        folder = write_tfds(
            df,
            args.dst,
            args.tfds,
            args.split,
            num_shards=args.shards,
            features=features,
            mode="overwrite" if args.mode == "overwrite" else "error",
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


HELP = "convert SRC to DST"
DESCRIPTION = (
    "Read SRC with Spark and write it to DST: any Spark input to TFRecord, "
    "or TFRecord to any Spark output (--to)."
)


def add_arguments(convert: argparse.ArgumentParser) -> None:
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
