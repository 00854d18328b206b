"""Where a trainer's files are: the local disk, or an object store through fsspec (no Spark)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from typing import IO, Any, Protocol

#: Names Spark's listing passes over: ``_SUCCESS``, the manifest, indexes, ``_temporary``...
HIDDEN_PREFIXES = ("_", ".")
#: A TFDS dataset's metadata at the root of its folder, beside its shards: not data.
_TFDS_METADATA = ("dataset_info.json", "features.json")


def hidden(name: str) -> bool:
    return name.startswith(HIDDEN_PREFIXES)


def metadata(name: str) -> bool:
    return name in _TFDS_METADATA or name.endswith(".labels.txt")


def local_path(path: str) -> str:
    """``path`` without a ``file:`` scheme; as Hadoop, ``%`` is not decoded."""
    if path.startswith("file:"):
        path = path[len("file:") :]
        if path.startswith("//localhost/"):
            return path[len("//localhost") :]
        return path[2:] if path.startswith("//") else path
    return path


def is_url(path: str) -> bool:
    """A URL of another file system than the local one (``s3://b/k``, not ``file:``)."""
    return "://" in path and not path.startswith("file:")


#: The characters of Hadoop's glob syntax (``FileSystem.globStatus``), which Spark reads paths with.
GLOB_CHARACTERS = "*?[{"


def is_glob(path: str) -> bool:
    """Whether ``path`` is a glob, as Spark (Hadoop) takes it."""
    return any(c in path for c in GLOB_CHARACTERS)


def glob_root(path: str) -> str:
    """The folder above the first glob character of ``path`` (``path`` itself without one)."""
    first = min((i for i, c in enumerate(path) if c in GLOB_CHARACTERS), default=-1)
    return path if first < 0 else path[: path.rfind("/", 0, first) + 1] or "."


#: What the index of data file ``name`` is called: ``_`` + ``name`` + ``.idx``.
INDEX_PREFIX, INDEX_SUFFIX = "_", ".idx"


def index_path(data_file: str) -> str:
    """The path of the index of ``data_file``: ``_<name>.idx`` beside it (a local path or a URL).

    >>> index_path("/data/train/part-00000-1b2c.c000.tfrecord")
    '/data/train/_part-00000-1b2c.c000.tfrecord.idx'
    """
    name = data_file.rsplit("/", 1)[-1].rsplit(os.sep, 1)[-1]
    return data_file[: len(data_file) - len(name)] + INDEX_PREFIX + name + INDEX_SUFFIX


class Files(Protocol):
    """The few operations the trainer-side readers need, on one file system."""

    def isdir(self, path: str) -> bool: ...

    def isfile(self, path: str) -> bool: ...

    def size(self, path: str) -> int: ...

    def join(self, folder: str, relative: str) -> str:
        """The path of ``relative`` (``/``-separated) under ``folder``."""

    def list_data(self, folder: str) -> list[tuple[str, int]]:
        """The data files under ``folder`` as (path relative to it with ``/``, size), sorted:
        files and folders not :func:`hidden`, and at the root no TFDS metadata."""

    def glob(self, pattern: str) -> list[str]: ...

    def read_bytes(self, path: str) -> bytes: ...

    def read_range(self, path: str, start: int, end: int) -> bytes:
        """Bytes ``[start, end)`` of the file (fewer at its end)."""

    def open(self, path: str) -> AbstractContextManager[IO[bytes]]: ...

    def write_whole(self, path: str, data: bytes) -> None:
        """Writes ``data`` as ``path``, replacing it; readers see it whole or not at all."""

    @property
    def remote(self) -> bool:
        """Whether reads go over a network (then they are batched into blocks and cached)."""
        return False


class LocalFiles(Files):
    """The local file system (``os``)."""

    def isdir(self, path: str) -> bool:
        return os.path.isdir(path)

    def isfile(self, path: str) -> bool:
        return os.path.isfile(path)

    def size(self, path: str) -> int:
        return os.path.getsize(path)

    def join(self, folder: str, relative: str) -> str:
        return os.path.join(folder, *relative.split("/"))

    def list_data(self, folder: str) -> list[tuple[str, int]]:
        found: list[tuple[str, int]] = []
        for root, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if not hidden(d))
            rel_root = os.path.relpath(root, folder)
            for name in files:
                if hidden(name) or (rel_root == "." and metadata(name)):
                    continue
                rel = name if rel_root == "." else os.path.join(rel_root, name)
                found.append((rel.replace(os.sep, "/"), os.path.getsize(os.path.join(root, name))))
        return sorted(found)

    def glob(self, pattern: str) -> list[str]:
        import glob

        return sorted(glob.glob(pattern))

    def read_bytes(self, path: str) -> bytes:
        with open(path, "rb") as f:
            return f.read()

    def read_range(self, path: str, start: int, end: int) -> bytes:
        with open(path, "rb") as f:
            return os.pread(f.fileno(), end - start, start)

    @contextmanager
    def open(self, path: str) -> Iterator[IO[bytes]]:
        with open(path, "rb") as f:
            yield f

    def write_whole(self, path: str, data: bytes) -> None:
        # Written under a hidden name beside it, then renamed over it (atomic on one disk).
        folder, name = os.path.split(path)
        staged = os.path.join(folder, f".{name}.{os.getpid()}")
        with open(staged, "wb") as out:
            out.write(data)
        os.replace(staged, path)


class FsspecFiles(Files):
    """An fsspec file system, made anew in each process: its loops and sockets survive no fork."""

    def __init__(self, url: str, storage_options: Mapping[str, Any] | None) -> None:
        self.protocol = url.split("://", 1)[0]
        self.storage_options = dict(storage_options or {})
        self._fs: Any = None
        self._pid = -1

    def __getstate__(self) -> dict[str, Any]:
        return {"protocol": self.protocol, "storage_options": self.storage_options}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["protocol"] + "://", state["storage_options"])  # type: ignore[misc]

    @property
    def fs(self) -> Any:
        if self._fs is None or self._pid != os.getpid():
            try:
                import fsspec  # type: ignore[import-untyped,import-not-found,unused-ignore]
            except ImportError:
                raise ImportError(
                    f"Reading {self.protocol}:// URLs needs fsspec and its {self.protocol} "
                    "implementation: pip install 'spark-tfrecord[s3]' (s3fs) or "
                    "'spark-tfrecord[gcs]' (gcsfs)"
                ) from None
            # skip_instance_cache: an instance cached before a fork shares its loop and sockets.
            try:
                if self.protocol in ("gs", "gcs") and gcs_emulator(self.storage_options):
                    # gcsfs's default class asks each bucket's type over gRPC, which an
                    # emulator (JSON API only) never answers: use the JSON-only class.
                    from gcsfs.core import (  # type: ignore[import-untyped,import-not-found,unused-ignore]
                        GCSFileSystem,
                    )

                    self._fs = GCSFileSystem(skip_instance_cache=True, **self.storage_options)
                else:
                    self._fs = fsspec.filesystem(
                        self.protocol, skip_instance_cache=True, **self.storage_options
                    )
            except ImportError as e:
                raise ImportError(
                    f"Reading {self.protocol}:// URLs needs fsspec's {self.protocol} "
                    f"implementation ({e}); for s3:// pip install 'spark-tfrecord[s3]', for "
                    "gs:// 'spark-tfrecord[gcs]'"
                ) from None
            self._pid = os.getpid()
        return self._fs

    @property
    def remote(self) -> bool:
        return True

    def _kind(self, path: str) -> str | None:
        """The entry's type, None if missing; other errors raise (fsspec's ``isdir`` hides them)."""
        try:
            return str(self.fs.info(path).get("type"))
        except FileNotFoundError:
            return None

    def isdir(self, path: str) -> bool:
        return self._kind(path) == "directory"

    def isfile(self, path: str) -> bool:
        return self._kind(path) == "file"

    def size(self, path: str) -> int:
        return int(self.fs.size(path))

    def join(self, folder: str, relative: str) -> str:
        return folder.rstrip("/") + "/" + relative

    def list_data(self, folder: str) -> list[tuple[str, int]]:
        root = str(self.fs._strip_protocol(folder)).rstrip("/")
        found: list[tuple[str, int]] = []
        for path, info in self.fs.find(root, detail=True).items():
            # A folder's placeholder object (``t/``), as the GCS connector makes, is no file.
            if info.get("type") == "directory" or path.endswith("/"):
                continue
            rel = path[len(root) + 1 :] if path.startswith(root + "/") else path
            parts = rel.split("/")
            if any(hidden(p) for p in parts) or (len(parts) == 1 and metadata(parts[0])):
                continue
            found.append((rel, int(info["size"])))
        return sorted(found)

    def glob(self, pattern: str) -> list[str]:
        return sorted(f"{self.protocol}://{p}" for p in self.fs.glob(pattern))

    def read_bytes(self, path: str) -> bytes:
        return bytes(self.fs.cat_file(path))

    def read_range(self, path: str, start: int, end: int) -> bytes:
        return bytes(self.fs.cat_file(path, start=start, end=end))

    @contextmanager
    def open(self, path: str) -> Iterator[IO[bytes]]:
        with self.fs.open(path, "rb") as f:
            yield f

    def write_whole(self, path: str, data: bytes) -> None:
        # One PUT (pipe_file): an object store shows the new object whole or not at all.
        self.fs.pipe_file(path, data)


def gcs_emulator(storage_options: Mapping[str, Any]) -> bool:
    """Whether ``endpoint_url`` or ``STORAGE_EMULATOR_HOST`` points gcsfs off Cloud Storage."""
    endpoint = storage_options.get("endpoint_url") or os.environ.get("STORAGE_EMULATOR_HOST")
    return endpoint not in (None, "", "default")


def file_system(path: str, storage_options: Mapping[str, Any] | None = None) -> tuple[Files, str]:
    """The file system of ``path`` and the path as it takes it (``file:`` URLs made local)."""
    if is_url(path):
        return FsspecFiles(path, storage_options), path
    if storage_options:
        raise ValueError(f"storage_options are for fsspec URLs (s3://...), not {path!r}")
    return LocalFiles(), local_path(path)
