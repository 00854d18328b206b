"""A TensorFlow Datasets version folder in plain Python: ``dataset_info.json``, shards, schema."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from spark_tfrecord import errors
from spark_tfrecord._format.datasets.tfds_features import (
    FeaturesDict,
    class_labels,
    json_text,
    labels_file,
    parse,
    schema,
)
from spark_tfrecord._format.files.files import Files, LocalFiles

INFO_FILE, FEATURES_FILE = "dataset_info.json", "features.json"
FILE_FORMAT = "tfrecord"
DEFAULT_TEMPLATE = "{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}"


@dataclass(frozen=True)
class Split:
    """A split of ``dataset_info.json``: its name, the records of each shard, its bytes."""

    name: str
    shard_lengths: tuple[int, ...]
    num_bytes: int
    template: str


@dataclass(frozen=True)
class DatasetInfo:
    """A TFDS version folder's ``dataset_info.json``: what reading it needs."""

    name: str
    version: str
    file_format: str
    splits: tuple[Split, ...]

    def shard_names(self, split: Split) -> list[str]:
        """The shard file names of a split, in order: TFDS's template filled in."""
        n = len(split.shard_lengths)
        return [
            split.template.replace("{DATASET}", self.name)
            .replace("{SPLIT}", split.name)
            .replace("{FILEFORMAT}", self.file_format)
            .replace("{SHARD_X_OF_Y}", f"{i:05d}-of-{n:05d}")
            .replace("{SHARD_INDEX}", f"{i:05d}")
            .replace("{NUM_SHARDS}", f"{n:05d}")
            for i in range(n)
        ]


def _folder_error(reason: str) -> errors.ArgumentError:
    return errors.ArgumentError(errors.DATASET_FOLDER, reason)


def _read_text(files: Files | None, folder: str, name: str) -> str | None:
    fs = files if files is not None else LocalFiles()
    try:
        return fs.read_bytes(fs.join(folder, name)).decode("utf-8", "replace")
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def read_info(folder: str, files: Files | None = None) -> DatasetInfo | None:
    """The ``dataset_info.json`` of ``folder``, if it has one."""
    text = _read_text(files, folder, INFO_FILE)
    if text is None:
        return None
    info = json.loads(text)
    if not isinstance(info, dict):
        raise _folder_error(f"{folder}/{INFO_FILE} is not a JSON object")
    splits = tuple(
        Split(
            json_text(s.get("name")),
            tuple(int(json_text(n)) for n in s.get("shardLengths") or []),
            int(json_text(s["numBytes"])) if "numBytes" in s else 0,
            json_text(s["filepathTemplate"]) if "filepathTemplate" in s else DEFAULT_TEMPLATE,
        )
        for s in info.get("splits") or []
    )
    return DatasetInfo(
        json_text(info.get("name", "")),
        json_text(info.get("version", "")),
        json_text(info["fileFormat"]) if "fileFormat" in info else FILE_FORMAT,
        splits,
    )


def read_features(
    folder: str, files: Files | None = None
) -> tuple[FeaturesDict, dict[str, list[str]]] | None:
    """The features of the dataset in ``folder`` and its ClassLabels' names, if it has them."""
    text = _read_text(files, folder, FEATURES_FILE)
    if text is None:
        return None
    features = parse(text)
    names: dict[str, list[str]] = {}
    for path in class_labels(features):
        labels = _read_text(files, folder, labels_file(path))
        if labels is not None:
            names[path] = [line.strip() for line in labels.split("\n") if line.strip()]
    return features, names


def folder_schema(folder: str, files: Files | None = None) -> dict[str, Any]:
    """The schema of a read of the TFDS version folder, from ``features.json`` (the jar's)."""
    found = read_features(folder, files)
    if found is None:
        raise FileNotFoundError(f"{folder}/{FEATURES_FILE}")
    return schema(*found)


def split_info(folder: str, split: str, files: Files | None = None) -> tuple[DatasetInfo, Split]:
    """The split of the dataset in ``folder`` a read asks for (``TFDSDataset.readSplit``)."""
    info = read_info(folder, files)
    if info is None:
        raise _folder_error(
            f"The option 'split' reads a TensorFlow Datasets folder, and {folder} has no "
            f"{INFO_FILE}."
        )
    if info.file_format != FILE_FORMAT:
        raise _folder_error(
            f"The TensorFlow Datasets folder {folder} holds {info.file_format} files; "
            "spark-tfrecord reads tfrecord ones."
        )
    for s in info.splits:
        if s.name == split:
            return info, s
    raise _folder_error(
        f"The TensorFlow Datasets folder {folder} has no split '{split}' (its splits: "
        f"{', '.join(s.name for s in info.splits)})."
    )


def read_schema(
    paths: Sequence[str], split: str | None, files: Files | None = None
) -> dict[str, Any] | None:
    """The schema of a read of ``paths``, from ``features.json`` if a TFDS folder's, else None.
    Fails, as the jar, for a TFDS folder read without ``split`` or a ``split`` of other files.
    """
    info_file = next((p for p in paths if p.rstrip("/").rsplit("/", 1)[-1] == INFO_FILE), None)
    if info_file is None:
        if split is None:
            return None
        raise _folder_error(
            "The option 'split' reads a TensorFlow Datasets folder (<data_dir>/<name>/<version>, "
            f"with {INFO_FILE}), and the path read has no {INFO_FILE}."
        )
    folder = info_file.rstrip("/").rsplit("/", 1)[0]
    if split is None:
        info = read_info(folder, files)
        if info is None:
            raise _folder_error(
                f"{folder}/{INFO_FILE} is TensorFlow Datasets metadata, not TFRecord data."
            )
        raise _folder_error(
            f"{folder} is a TensorFlow Datasets folder: choose a split with the option 'split' "
            f"(its splits: {', '.join(s.name for s in info.splits)})."
        )
    split_info(folder, split, files)
    found = read_features(folder, files)
    if found is None:
        raise _folder_error(
            f"The TensorFlow Datasets folder {folder} has no {FEATURES_FILE} to take the schema "
            "from."
        )
    return schema(*found)
