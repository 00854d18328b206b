"""A write's commit into a folder, as the jar's job commit (for the jar-less writer and Ray).
Tasks stage files in a hidden folder made before any task runs (so a task outliving an abort has
nowhere to stage); :meth:`FolderWrite.commit` moves them into place and merges the manifest under
the folder's lock. An object store's lock is taken after checking none exists, so two commits
within one request of each other can both take it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import reduce
from typing import Any, BinaryIO, Protocol, cast

from spark_tfrecord._format.datasets import manifest_write
from spark_tfrecord._format.datasets.manifest_write import NO_COUNTS, Entry, Manifest, merge_counts
from spark_tfrecord._format.files.files import Files, FsspecFiles, file_system, local_path
from spark_tfrecord._format.frames.manifest import MANIFEST_NAME
from spark_tfrecord._format.frames.record_writer import EXTENSIONS, RecordFileWriter

#: The staging folder's name before the write's id: hidden, so that every reader skips it.
STAGING_PREFIX = ".tfrecord-staging-"
#: The extension of the files written, before the codec's.
EXTENSION = ".tfrecord"


class Folder:
    """The folder ``path`` (local, a ``file:`` URL, or an fsspec URL with ``storage_options``)."""

    def __init__(self, path: str, storage_options: Mapping[str, Any] | None) -> None:
        files, where = file_system(path, storage_options)
        self.files: Files = files
        self.remote = isinstance(files, FsspecFiles)
        self.path = where.rstrip("/") if self.remote else os.path.abspath(local_path(where))

    def join(self, *names: str) -> str:
        return "/".join([self.path, *names]) if self.remote else os.path.join(self.path, *names)

    @property
    def _fs(self) -> Any:
        assert isinstance(self.files, FsspecFiles)
        return self.files.fs

    @contextmanager
    def create(self, path: str) -> Iterator[BinaryIO]:
        """A new file to write (an object appears when closed)."""
        with self._fs.open(path, "wb") if self.remote else open(path, "xb") as out:
            yield cast(BinaryIO, out)

    def remove(self, path: str) -> None:
        if self.remote:
            self._fs.rm(path)
        else:
            os.remove(path)

    def remove_tree(self, path: str) -> None:
        """Removes a folder and what it holds; nothing if it is not there."""
        if self.remote:
            with contextlib.suppress(FileNotFoundError):
                self._fs.rm(path, recursive=True)
        else:
            shutil.rmtree(path, ignore_errors=True)

    def move(self, source: str, target: str) -> None:
        if self.remote:
            self._fs.mv(source, target)
        else:
            os.replace(source, target)

    def empty(self, keep: set[str]) -> None:
        """Mode overwrite: removes all but the names ``keep``; a file that cannot go fails it."""
        if not self.remote:
            for entry in os.scandir(self.path):
                if entry.name in keep:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path)
                else:
                    os.remove(entry.path)
            return
        for path in self._fs.ls(self.path, detail=False):
            name = path.rstrip("/").rsplit("/", 1)[-1]
            if name not in keep:
                self._fs.rm(self.join(name), recursive=self.files.isdir(self.join(name)))

    @contextmanager
    def lock(self, owner: str) -> Iterator[None]:
        """The folder's manifest lock (the jar's ``_tfrecord_manifest.lock``)."""
        if not self.remote:
            with manifest_write.lock(self.path, owner):
                yield
            return
        path = self.join(manifest_write.LOCK_NAME)
        deadline = time.monotonic() + manifest_write.LOCK_WAIT_SECONDS
        while self._fs.exists(path):
            if time.monotonic() > deadline:
                raise OSError(
                    f"Another write is committing into {self.path} (its lock {path} is held): "
                    "this write gives up, leaving the folder as it was. Write again; if no other "
                    "write is running, delete the lock."
                )
            time.sleep(0.1)
        self._fs.pipe_file(path, owner.encode("utf-8"))
        try:
            yield
        finally:
            self._fs.rm(path)

    def commit_manifest(self, written: Manifest) -> None:
        """Merges ``written`` into the manifest or drops it (:func:`.merge`); lock held."""
        path = self.join(MANIFEST_NAME)
        listed = dict(self.files.list_data(self.path))
        merged = manifest_write.merge(manifest_write.read(self.files, path), written, listed)
        if not isinstance(merged, str):
            self.files.write_whole(path, merged.text().encode("utf-8"))
        elif self.files.isfile(path):
            self.remove(path)


class StagedFile(Protocol):
    """A task's report: its staged file (None: no rows), name in the folder, records, counts."""

    @property
    def staged(self) -> str | None: ...
    @property
    def name(self) -> str: ...
    @property
    def records(self) -> int: ...
    @property
    def counts(self) -> manifest_write.Counts: ...


class FolderWrite:
    """One write of ``compression`` files into ``path``; made on the driver, pickled to the tasks.
    At least ``num_shards`` files (None: one per task that staged one); ``shards_option`` and
    ``repartition`` word the error when the tasks staged more.
    """

    def __init__(
        self,
        path: str,
        storage_options: Mapping[str, Any] | None,
        *,
        write_id: str,
        compression: str,
        num_shards: int | None,
        overwrite: bool,
        shards_option: str,
        repartition: str,
    ) -> None:
        self.folder = Folder(path, storage_options)
        self.write_id = write_id
        self.compression = compression
        self.extension = EXTENSION + EXTENSIONS[compression]
        self.num_shards = num_shards
        self.overwrite = overwrite
        self.shards_option, self.repartition = shards_option, repartition
        self.created = False
        self.staging = ""

    def start(self) -> None:
        """Makes the staging folder (and a local folder) on the driver, before any task runs."""
        self.created = not self.folder.files.isdir(self.folder.path)
        self.staging = self.folder.join(STAGING_PREFIX + self.write_id)
        if not self.folder.remote:
            os.makedirs(self.staging)

    def name(self, index: int, kind: str = "c000") -> str:
        """The jar's name of file ``index`` (``kind`` ``empty``: a file ``numShards`` added)."""
        return f"part-{index:05d}-{self.write_id}-{kind}{self.extension}"

    def staged_path(self, name: str, attempt: str) -> str:
        """Where a task's ``attempt`` stages the file ``name``."""
        return self.folder.join(STAGING_PREFIX + self.write_id, f"{name}.{attempt}")

    def commit(
        self, tasks: Sequence[StagedFile], record_type: str, schema: Mapping[str, Any]
    ) -> None:
        """Places the staged files, merges the manifest (lock held); too many files: ``OSError``."""
        staged = sorted((t for t in tasks if t.staged is not None), key=lambda t: t.name)
        n = self.num_shards or max(1, len(staged))
        if len(staged) > n:
            self.discard()
            raise OSError(
                f"The write produced {len(staged)} files, more than its {self.shards_option} "
                f"{n}: {self.repartition}"
            )
        folder = self.folder
        with folder.lock(self.write_id):
            if self.overwrite:
                folder.empty({os.path.basename(self.staging), manifest_write.LOCK_NAME})
            placed: list[tuple[str, int]] = []
            for t in staged:
                assert t.staged is not None
                folder.move(t.staged, folder.join(t.name))
                placed.append((t.name, t.records))
            for i in range(len(staged), n):
                # No tasks leave one empty file, as Spark does; numShards' are named as the jar's.
                name = self.name(i, "empty" if self.num_shards else "c000")
                with folder.create(folder.join(name)) as out:
                    RecordFileWriter(out, self.compression).close()
                placed.append((name, 0))
            counted = [t.counts for t in staged if t.records > 0]
            counts = reduce(merge_counts, counted) if counted else NO_COUNTS
            entries = tuple(
                Entry(rel, records, folder.files.size(folder.join(rel)), self.compression)
                for rel, records in placed
            )
            folder.commit_manifest(Manifest(record_type, dict(schema), (), entries, counts))
            folder.files.write_whole(folder.join("_SUCCESS"), b"")
        folder.remove_tree(self.staging)

    def discard(self) -> None:
        """Removes the staging folder, and the folder if this write made it and it is empty."""
        if self.staging:
            self.folder.remove_tree(self.staging)
        if self.created and not self.folder.remote:
            with contextlib.suppress(OSError):
                os.rmdir(self.folder.path)
