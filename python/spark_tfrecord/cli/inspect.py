"""``spark-tfrecord inspect``: a TFRecord folder's files, record count, schema, first records."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, cast, get_args

from spark_tfrecord._format.files.files import Files, glob_root, is_glob, is_url, local_path
from spark_tfrecord._format.files.names import Compression, RecordType
from spark_tfrecord._format.frames.manifest import MANIFEST_NAME, DatasetInfo, read_manifest
from spark_tfrecord.cli.common import (
    EXIT_NOT_FOUND,
    EXIT_USAGE,
    CliError,
    fsspec_files,
    load,
    print_schema,
    session,
)


def _partition_values(
    root: str, file: str, relative: dict[str, str] | None = None
) -> dict[str, str]:
    """``name=value`` directories between ``root`` and ``file`` (or in ``relative[file]``, the path
    in ``root`` an object store listed), as Spark discovers them."""
    if relative is not None:
        dirs = relative.get(file, "").split("/")[:-1]
    else:
        root_parts = Path(local_path(glob_root(root))).resolve().parts
        dirs = list(Path(local_path(file)).parent.parts[len(root_parts) :])
    return dict(d.split("=", 1) for d in dirs if "=" in d)


def _count(paths: list[str], compression: str | None, files: Files | None) -> int:
    """Records in the files, with a progress bar on stderr when it is a terminal."""
    from spark_tfrecord._format.datasets.folders import count

    if len(paths) < 8 or not sys.stderr.isatty():
        return sum(count(p, compression, files) for p in paths)
    from rich.console import Console
    from rich.progress import Progress

    total = 0
    with Progress(console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("counting records", total=len(paths))
        for path in paths:
            total += count(path, compression, files)
            progress.advance(task)
    return total


def _show_rows(
    args: argparse.Namespace,
    files: list[str],
    schema: dict[str, Any],
    relative: dict[str, str] | None = None,
) -> None:
    """The first records, read in plain Python as the jar's inspector reads them."""
    from spark_tfrecord._format.datasets import json_rows

    partitions = [f["name"] for f in schema["fields"] if f.get("partition")]
    data_schema = {**schema, "fields": [f for f in schema["fields"] if not f.get("partition")]}
    options = {"compression": args.compression} if args.compression else {}
    rows = json_rows.head_of_files(
        files, data_schema, args.n, record_type=args.record_type, options=options, files=args.files
    )
    for path, row in rows:
        if partitions:
            row.update(_partition_values(args.path, path, relative))
        print(json.dumps(row, ensure_ascii=False))


def _infer(
    args: argparse.Namespace, paths: list[str], record_type: str, partitions: Iterable[str]
) -> dict[str, Any]:
    """The schema the data source infers (with the general decoder), then partition columns."""
    from spark_tfrecord._format.datasets.inference import infer_schema

    options = {"decoder": "interpreted"}
    if args.compression:
        options["compression"] = args.compression
    schema = infer_schema(paths, {**options, "recordType": record_type}, files=args.files)
    return _with_partitions(schema, partitions)


def _with_partitions(schema: dict[str, Any], names: Iterable[str]) -> dict[str, Any]:
    for name in names:
        schema["fields"].append(
            {"name": name, "type": "string", "nullable": True, "metadata": {}, "partition": True}
        )
    return schema


def _inspect_manifest(args: argparse.Namespace, info: DatasetInfo) -> int:
    """A folder with a valid manifest: counts and schema from it, no file read, no JVM."""
    print(f"files: {len(info.files)}, {info.num_bytes:,} bytes")
    print(f"records: {info.num_records:,} ({MANIFEST_NAME})")
    root = os.path.join(args.path, "")
    for f in info.files:
        print(f"{f.num_records:>12,} records {f.num_bytes:>16,} bytes  {f.path.removeprefix(root)}")
    # --record-type left at its default: the manifest's.
    record_type: RecordType = args.record_type
    if record_type == "Example" and info.record_type in get_args(RecordType):
        record_type = cast(RecordType, info.record_type)
    if record_type == info.record_type and info.schema_json is not None:
        schema = _with_partitions(json.loads(json.dumps(info.schema_json)), info.partition_columns)
    else:
        schema = _infer(args, [f.path for f in info.files], record_type, info.partition_columns)
    print_schema(schema)
    if args.n > 0:
        args.record_type = record_type
        _show_rows(args, [f.path for f in info.files if f.num_records > 0], schema)
    return 0


def _inspect_local(args: argparse.Namespace) -> int:
    path = local_path(args.path)
    if (
        not args.split
        and os.path.isdir(path)
        and not os.path.exists(os.path.join(path, "dataset_info.json"))
    ):
        info = read_manifest(path)
        if info is not None:
            args.path = path
            return _inspect_manifest(args, info)
    from spark_tfrecord._format.datasets import folders

    folder = folders.tfds_folder(path) if not is_glob(args.path) else None
    if folder is not None:
        return _inspect_tfds(args, folder)
    if args.split:
        raise CliError(
            f"--split reads a TensorFlow Datasets folder, and {args.path} is not one "
            "(no dataset_info.json in it or in its one version folder)",
            "inspect a TFDS dataset as DATA_DIR/NAME or DATA_DIR/NAME/VERSION",
            EXIT_USAGE,
        )
    files = folders.list_files(path)
    return _inspect_files(args, [(f.path, f.size) for f in files])


def _inspect_files(
    args: argparse.Namespace, found: list[tuple[str, int]], relative: dict[str, str] | None = None
) -> int:
    """Files found by listing: the schema inferred, the records counted, the first shown."""
    if not found:
        raise CliError(f"no data files under {args.path}", "is it the right path?", EXIT_NOT_FOUND)
    paths = [p for p, _ in found]
    partitions = _partition_values(args.path, paths[0], relative)
    schema = _infer(args, paths, args.record_type, partitions)
    print(f"files: {len(found)}, {sum(size for _, size in found):,} bytes")
    print(f"records: {_count(paths, args.compression, args.files):,}")
    print_schema(schema)
    _show_rows(args, paths, schema, relative)
    return 0


def _inspect_tfds(args: argparse.Namespace, folder: str) -> int:
    from spark_tfrecord._format.datasets import folders, tfds_dataset

    if args.record_type != "Example" or args.compression:
        raise CliError(
            f"{folder} is a TensorFlow Datasets folder: uncompressed tf.train.Example shards",
            "leave out --record-type and --compression",
            EXIT_USAGE,
        )
    name, version, shards = folders.tfds_shards(folder)
    splits = list(dict.fromkeys(s.split for s in shards))
    if args.split is not None:
        if args.split not in splits:
            raise CliError(
                f"the TFDS dataset {local_path(folder)} has no split {args.split!r} "
                f"(its splits: {', '.join(splits) or 'none'})",
                "give one of them to --split, or leave --split out for all",
                EXIT_USAGE,
            )
        splits = [args.split]
    chosen = [s for s in shards if s.split in splits]
    print(f"tfds: {name} {version}, {local_path(folder)}")
    for split in splits:
        of = [s for s in chosen if s.split == split]
        print(
            f"split {split}: files: {len(of)}, {sum(s.size for s in of):,} bytes, "
            f"records: {sum(s.records for s in of):,} (dataset_info.json)"
        )
    print(f"records: {sum(s.records for s in chosen):,}")
    schema = tfds_dataset.folder_schema(folder)
    print_schema(schema)
    _show_rows(args, [s.path for s in chosen if s.records > 0], schema)
    return 0


def _inspect_spark(args: argparse.Namespace) -> int:
    spark = session(args.master, args.conf)
    if args.split:
        df = spark.read.format("tfrecord").option("split", args.split).load(args.path)
    else:
        df = load(spark, args.path, "tfrecord", args)
    print(f"files: {len(df.inputFiles())}")
    print(f"records: {df.count():,}")
    df.printSchema()
    df.show(args.n, truncate=False)
    return 0


def run(args: argparse.Namespace) -> int:
    args.files = None
    if args.spark or args.schema:
        return _inspect_spark(args)
    if is_url(args.path):
        files = fsspec_files(args.path)
        if files is None:
            return _inspect_spark(args)
        args.files = files
        return _inspect_url(args, files)
    return _inspect_local(args)


def _inspect_url(args: argparse.Namespace, fs: Files) -> int:
    """An object store path (fsspec) in plain Python, as a local path; a TFDS folder via Spark."""
    path = args.path.rstrip("/")
    if fs.isfile(fs.join(path, "dataset_info.json")) or args.split:
        return _inspect_spark(args)
    if fs.isdir(path):
        info = read_manifest(path, fs)
        if info is not None:
            args.path = path
            return _inspect_manifest(args, info)
        listed = fs.list_data(path)
        found = [(fs.join(path, rel), size) for rel, size in listed]
        return _inspect_files(args, found, {p: rel for (p, _), (rel, _) in zip(found, listed)})
    if is_glob(path):
        return _inspect_files(args, [(m, fs.size(m)) for m in fs.glob(path) if fs.isfile(m)], {})
    if fs.isfile(path):
        return _inspect_files(args, [(path, fs.size(path))], {})
    raise FileNotFoundError(f"File {path} does not exist")


HELP = "schema, counts and first records"
DESCRIPTION = (
    "Show files, record count, inferred schema and the first records. Local "
    "paths and fsspec URLs (s3://, gs://) are read without Spark and without a JVM (no "
    "Java needed), in plain Python, with the schema the data source would infer "
    "(docs/getting-started.md has what it costs); other URLs, --schema and --spark go "
    "through Spark. A folder written by spark-tfrecord, whose _tfrecord_manifest.json "
    "matches its files, shows the counts (in all and per file) and the schema from the "
    "manifest, reading only the first records (none with -n 0). A TensorFlow Datasets "
    "folder (DATA_DIR/NAME/VERSION, or DATA_DIR/NAME with one version) shows each split, "
    "counted by its dataset_info.json, and its features.json's schema."
)


def add_arguments(inspect: argparse.ArgumentParser) -> None:
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
