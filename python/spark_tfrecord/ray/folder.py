"""The folder a Ray write commits into, local or an object store's (fsspec): where write tasks
stage their files, and how the commit moves them into place, merges the manifest and writes
``_SUCCESS`` under the folder's manifest lock, as the jar's job commit does.

Locally the lock is the jar's own (:func:`spark_tfrecord._format.manifest_write.lock`: the file
``_tfrecord_manifest.lock``, made exclusively) and a staged file moves with one rename. On an
object store the lock is the same file, made after a look that none exists (as Hadoop's S3A
``create(overwrite=false)`` makes the jar's there: two commits starting within one request of
each other can both take it), and a file moves as a copy and a delete.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, BinaryIO, cast

from spark_tfrecord._format.datasets import manifest_write
from spark_tfrecord._format.files.files import (
    Files,
    FsspecFiles,
    LocalFiles,
    file_system,
    local_path,
)
from spark_tfrecord._format.frames.manifest import MANIFEST_NAME

#: The staging folder's name in the folder written, before the write's id (the jar-less Spark
#: writer's: hidden, so that every reader passes over it).
STAGING_PREFIX = ".tfrecord-staging-"


class Folder:
    """The folder ``path`` (local, a ``file:`` URL, or an fsspec URL with ``storage_options``)."""

    def __init__(self, path: str, storage_options: dict[str, Any] | None) -> None:
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

    def exists(self) -> bool:
        return self.files.isdir(self.path)

    def make_staging(self, write_id: str) -> str:
        staging = self.join(STAGING_PREFIX + write_id)
        if not self.remote:
            os.makedirs(staging)
        return staging

    @contextmanager
    def create(self, path: str) -> Iterator[BinaryIO]:
        """A new file to write (an object appears when closed)."""
        if self.remote:
            with self._fs.open(path, "wb") as out:
                yield cast(BinaryIO, out)
        else:
            with open(path, "xb") as out:
                yield out

    def size(self, path: str) -> int:
        return self.files.size(path)

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
        """Mode overwrite: everything in the folder goes but the names ``keep``."""
        if self.remote:
            names = [p.rstrip("/").rsplit("/", 1)[-1] for p in self._fs.ls(self.path, detail=False)]
        else:
            names = os.listdir(self.path)
        for name in names:
            if name in keep:
                continue
            if self._is_dir(name):
                self.remove_tree(self.join(name))
            else:
                self.remove(self.join(name))

    def _is_dir(self, name: str) -> bool:
        if self.remote:
            return self.files.isdir(self.join(name))
        return os.path.isdir(self.join(name)) and not os.path.islink(self.join(name))

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

    def commit_manifest(self, written: manifest_write.Manifest) -> None:
        """Merges ``written`` into the folder's manifest, or drops it (``manifest_write.merge``);
        with the lock held."""
        if not self.remote:
            manifest_write.commit_manifest(self.path, written)
            return
        path = self.join(MANIFEST_NAME)
        old = None
        if self._fs.exists(path):
            with tempfile.TemporaryDirectory() as local:
                LocalFiles().write_whole(
                    os.path.join(local, MANIFEST_NAME), self._fs.cat_file(path)
                )
                old = manifest_write.read(local)
        merged = manifest_write.merge(old, written, dict(self.files.list_data(self.path)))
        if isinstance(merged, str):
            if self._fs.exists(path):
                self._fs.rm(path)
            return
        self.files.write_whole(path, merged.text().encode("utf-8"))

    def write_success(self) -> None:
        self.files.write_whole(self.join("_SUCCESS"), b"")
