"""The ``spark-tfrecord`` command: each command a module, imported only when it runs."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import warnings
from collections.abc import Sequence
from typing import NoReturn, get_args

from spark_tfrecord import errors
from spark_tfrecord._format.files.names import RecordType
from spark_tfrecord.cli.common import EXIT_USAGE, CliError

__all__ = ["build_parser", "main"]

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


def _record_type(value: str) -> str:
    """The record type's own spelling for any case of it; argparse rejects anything else."""
    names: dict[str, str] = {name.lower(): name for name in get_args(RecordType)}
    return names.get(value.lower(), value)


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line on stderr, as the command's others."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"spark-tfrecord: error: {message} (see {self.prog} --help)\n")
        sys.exit(EXIT_USAGE)


#: The commands, in the order --help lists them: each the module of this package of that name.
COMMANDS = ("convert", "inspect", "index")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser: of every command, or of ``command`` only (importing only it)."""
    parser = _Parser(
        prog="spark-tfrecord",
        description="Convert data to and from TensorFlow TFRecord files with Spark, "
        "and look inside them.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
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

    parents = {"convert": [common], "inspect": [common], "index": [session]}
    for name in COMMANDS:
        if command is None or name == command:
            module = importlib.import_module(f"spark_tfrecord.cli.{name}")
            parser_of = sub.add_parser(
                name,
                parents=parents[name],
                help=module.HELP,
                description=module.DESCRIPTION,
                epilog=_EPILOG,
                formatter_class=argparse.RawDescriptionHelpFormatter,
            )
            module.add_arguments(parser_of)
            parser_of.set_defaults(run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command and return its exit status; a failure is one line on stderr."""
    # pyspark 4.x warns on import about pandas 3, which the command does not use.
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message="PySpark does not yet fully support pandas", category=FutureWarning
        )
        return _run(argv)


def _run(argv: Sequence[str] | None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    command = words[0] if words and words[0] in COMMANDS else None
    args = build_parser(command).parse_args(words)
    try:
        result: int = args.run(args)
        return result
    except CliError as e:
        error = e
    except Exception as e:  # reported as one line below
        if os.environ.get("SPARK_TFRECORD_DEBUG"):
            raise
        from spark_tfrecord.cli.explain import explain, explain_python

        ours = (errors.CorruptFileError, errors.ArgumentError, FileNotFoundError)
        error = explain_python(e) if isinstance(e, ours) else explain(e)
    print(f"spark-tfrecord: error: {error} ({error.hint})", file=sys.stderr)
    return error.status
