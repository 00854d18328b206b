"""The manifest a write leaves, written in plain Python as the jar writes it (``TFRecordManifest``).

A commit keeps the earlier entries whose file is unchanged and merges the counts; a data file no
manifest counted drops the manifest. The lock serializes commits, whichever route wrote them.

>>> counts = merge_counts(({"x": (1, 2)}, {}), ({"x": (3, 3), "y": (1, 1)}, {}))
>>> sorted(counts[0].items())
[('x', (1, 3)), ('y', (0, 1))]
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

from spark_tfrecord._format.columns.ddl import to_ddl
from spark_tfrecord._format.files.files import Files
from spark_tfrecord._format.frames.manifest import MANIFEST_FORMAT, MANIFEST_VERSION

#: Per feature, the fewest and most values a record held; per feature list, a step held.
Counts = tuple[dict[str, tuple[int, int]], dict[str, tuple[int, int]]]
NO_COUNTS: Counts = ({}, {})
#: The lock a commit holds while it merges, the jar's name.
LOCK_NAME = "_tfrecord_manifest.lock"
#: How long a commit waits for another's lock (the jar's default), and when a lock is stale.
LOCK_WAIT_SECONDS = 120.0
STALE_LOCK_SECONDS = 30 * 60.0


@dataclass(frozen=True)
class Entry:
    """One data file: its path relative to the folder ('/'-separated), records, bytes, codec."""

    path: str
    records: int
    bytes: int
    compression: str


@dataclass(frozen=True)
class Manifest:
    """What a manifest holds (the jar's ``TFRecordManifest.Manifest``)."""

    record_type: str
    schema_json: dict[str, Any]
    partition_columns: tuple[str, ...]
    files: tuple[Entry, ...]
    counts: Counts

    def text(self) -> str:
        """The manifest's JSON, indented by two spaces, keys in the jar's order."""
        files = sorted(self.files, key=lambda e: e.path)
        root: dict[str, Any] = {
            "format": MANIFEST_FORMAT,
            "version": MANIFEST_VERSION,
            "record_type": self.record_type,
            "schema": to_ddl(self.schema_json),
            "schema_json": self.schema_json,
            "partition_columns": list(self.partition_columns),
            "num_records": sum(e.records for e in files),
            "num_bytes": sum(e.bytes for e in files),
            "files": [
                {
                    "path": e.path,
                    "num_records": e.records,
                    "num_bytes": e.bytes,
                    "compression": e.compression,
                }
                for e in files
            ],
            "features": _counts_json(self.counts[0]),
        }
        if self.record_type == "SequenceExample":
            root["feature_lists"] = _counts_json(self.counts[1])
        return json.dumps(root, indent=2, ensure_ascii=False) + "\n"


def _counts_json(counts: Mapping[str, tuple[int, int]]) -> dict[str, Any]:
    return {k: {"min": lo, "max": hi} for k, (lo, hi) in sorted(counts.items())}


def _read_counts(node: Any) -> dict[str, tuple[int, int]]:
    return {k: (int(v["min"]), int(v["max"])) for k, v in (node or {}).items()}


def read(files: Files, path: str) -> Manifest | None:
    """The manifest file ``path``, if it is one of this version; None otherwise."""
    try:
        root = json.loads(files.read_bytes(path).decode("utf-8"))
        if root.get("format") != MANIFEST_FORMAT or root.get("version") != MANIFEST_VERSION:
            return None
        return Manifest(
            str(root["record_type"]),
            dict(root["schema_json"]),
            tuple(str(c) for c in root["partition_columns"]),
            tuple(
                Entry(
                    str(f["path"]),
                    int(f["num_records"]),
                    int(f["num_bytes"]),
                    str(f["compression"]),
                )
                for f in root["files"]
            ),
            (_read_counts(root.get("features")), _read_counts(root.get("feature_lists"))),
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        # Not one we can merge with: the commit decides as if there were none.
        return None


def merge_counts(a: Counts, b: Counts) -> Counts:
    """Fewest and most over two sets of files; a missing feature had 0 values, a list no steps."""

    def both(
        x: Mapping[str, tuple[int, int]], y: Mapping[str, tuple[int, int]], absent_is_zero: bool
    ) -> dict[str, tuple[int, int]]:
        out = {}
        for k in set(x) | set(y):
            ranges = [r for r in (x.get(k), y.get(k)) if r is not None]
            lo = 0 if absent_is_zero and len(ranges) < 2 else min(r[0] for r in ranges)
            out[k] = (lo, max(r[1] for r in ranges))
        return out

    return both(a[0], b[0], True), both(a[1], b[1], False)


def merge(old: Manifest | None, written: Manifest, listed: Mapping[str, int]) -> Manifest | str:
    """``written`` merged into ``old`` (``listed``: data files, sizes); else why none can stay."""
    mine = {e.path for e in written.files}
    kept = [
        e
        for e in (old.files if old is not None else ())
        if e.path not in mine and listed.get(e.path) == e.bytes
    ]
    known = {e.path for e in kept} | mine
    unknown = sorted(p for p in listed if p not in known)
    if unknown:
        return f"the folder holds {unknown[0]}, which no manifest of its writes counted"
    counts = merge_counts(old.counts, written.counts) if kept and old else written.counts
    return replace(written, files=(*kept, *written.files), counts=counts)


@contextmanager
def lock(folder: str, owner: str, wait_seconds: float = LOCK_WAIT_SECONDS) -> Iterator[None]:
    """Holds ``folder``'s manifest lock, waiting up to ``wait_seconds``; takes over a stale one."""
    path = os.path.join(folder, LOCK_NAME)
    deadline = time.monotonic() + wait_seconds
    while True:
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            break
        except FileExistsError:
            try:
                age = time.time() - os.path.getmtime(path)
            except FileNotFoundError:
                continue
            if age > STALE_LOCK_SECONDS:
                os.remove(path)
            elif time.monotonic() > deadline:
                raise OSError(
                    f"Another write is committing into {folder} (its lock {path} is held): this "
                    f"write waited {wait_seconds:.0f} s and gives up, leaving the folder as it "
                    "was. Write again; if no other write is running, delete the lock."
                ) from None
            else:
                time.sleep(0.1)
    with os.fdopen(fd, "wb") as out:
        out.write(owner.encode("utf-8"))
    try:
        yield
    finally:
        os.remove(path)
