"""Random access to the records of a TFRecord folder, for map-style loaders: record i's bytes.
Local files are read with ``pread`` (or held whole), object stores in cached groups of records
per ``block_size`` block, GZIP / ZLIB files decompressed whole into the cache.
"""

from __future__ import annotations

import bisect
import os
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from spark_tfrecord import errors
from spark_tfrecord._format.files.files import Files, file_system, index_path
from spark_tfrecord._format.frames.compression import chunks
from spark_tfrecord._format.frames.framing import (
    FOOTER,
    HEADER,
    check_frame,
    frame_starts,
    frames_sound,
    header_length,
    sound_frames,
    truncated_error,
)
from spark_tfrecord._format.frames.manifest import DatasetInfo, dataset_info_in

#: The cache's key of a held folder's bytes (see RecordReader._held).
_HELD = "held"


class _Cache:
    """An LRU of byte strings, bounded by their total size."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.size = 0
        self._items: OrderedDict[Any, bytes] = OrderedDict()

    def get(self, key: Any) -> bytes | None:
        item = self._items.get(key)
        if item is not None:
            self._items.move_to_end(key)
        return item

    def pop(self, key: Any) -> bytes | None:
        item = self._items.pop(key, None)
        if item is not None:
            self.size -= len(item)
        return item

    def put(self, key: Any, value: bytes) -> None:
        self.pop(key)
        self._items[key] = value
        self.size += len(value)
        while self.size > self.capacity and len(self._items) > 1:
            _, evicted = self._items.popitem(last=False)
            self.size -= len(evicted)


class RecordReader:
    """The records of the folder (or file, or glob) ``path``, by their number."""

    def __init__(
        self,
        path: str,
        *,
        storage_options: Mapping[str, Any] | None = None,
        cache_bytes: int = 256 << 20,
        block_size: int = 4 << 20,
        info: DatasetInfo | None = None,
        files: tuple[Files, str] | None = None,
    ) -> None:
        if cache_bytes < block_size:
            raise ValueError(f"cache_bytes ({cache_bytes}) must hold a block ({block_size})")
        if block_size < 1:
            raise ValueError(f"block_size must be at least 1, not {block_size}")
        # ``files``: the file system and path ``info`` was had on (its listings cached there)
        self.files_system, self.path = files or file_system(os.fspath(path), storage_options)
        self.info = info if info is not None else dataset_info_in(self.files_system, self.path)
        self.files = list(self.info.files)
        self.compressions = [f.compression for f in self.files]
        for f, compression in zip(self.files, self.compressions):
            if compression not in ("none", "gzip", "deflate"):
                raise ValueError(
                    f"{f.path} is compressed with {compression}, which only the data source "
                    "(Spark) reads: write with compression none, gzip or deflate"
                )
        self.ends = list(np.cumsum([f.num_records for f in self.files], dtype=np.int64))
        self.cache_bytes, self.block_size = cache_bytes, block_size
        sizes = np.array([f.num_bytes for f in self.files], np.int64)
        #: Where each file starts in the held folder's bytes, when it is held (see _held).
        self._bases = np.cumsum(sizes) - sizes
        self._holds = (
            not self.files_system.remote
            and all(c == "none" for c in self.compressions)
            and int(sizes.sum()) <= cache_bytes // 2
        )
        self._reset()

    def _reset(self) -> None:
        self._offsets: list[Any] = [None] * len(self.files)
        self._cache = _Cache(self.cache_bytes)
        self._fds: dict[int, int] = {}
        self._group_bounds: dict[int, tuple[Any, Any]] = {}
        #: The held bytes once all their frames are found sound: their batches skip checksums.
        self._sound: bytes | None = None
        self._pid = os.getpid()
        #: Ranged reads made by this process (object stores; decompressed files: whole reads).
        self.requests = 0

    def __getstate__(self) -> dict[str, Any]:
        dropped = ("_offsets", "_cache", "_fds", "_group_bounds", "_pid", "_sound", "requests")
        return {k: v for k, v in self.__dict__.items() if k not in dropped}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._reset()

    # os's functions bound as defaults: at exit, a live reader is collected after os is cleared.
    def __del__(self, getpid: Any = os.getpid, close: Any = os.close) -> None:
        if getattr(self, "_pid", None) == getpid():
            for fd in getattr(self, "_fds", {}).values():
                close(fd)

    def __len__(self) -> int:
        return int(self.ends[-1]) if self.ends else 0

    # --- where a record is ---------------------------------------------------------------

    def locate(self, i: int) -> tuple[int, int]:
        """(file, record within the file) of record ``i`` (0 <= i < len)."""
        f = bisect.bisect_right(self.ends, i)
        return f, i - (int(self.ends[f - 1]) if f else 0)

    def offsets(self, f: int) -> Any:
        """The (offset, framed size) of every record of file ``f``, an int64 array (n, 2)."""
        found = self._offsets[f]
        if found is None:
            if self._pid != os.getpid():  # a forked worker: its own descriptors and caches
                self._reset()
            found = self._index(f)
            found = self._scan(f) if found is None else found
            if len(found) != self.files[f].num_records:
                raise ValueError(
                    f"{self.files[f].path} holds {len(found)} records, but the folder's "
                    f"manifest says {self.files[f].num_records}: the folder changed after it "
                    "was listed; make the dataset again"
                )
            self._offsets[f] = found
        return found

    def _index(self, f: int) -> Any | None:
        """The offsets from the file's index, or None when it has none."""
        path = self.files[f].path
        index = index_path(path)
        try:
            text = self.files_system.read_bytes(index)
        except (FileNotFoundError, IsADirectoryError):
            return None
        self.requests += self.files_system.remote
        try:
            pairs = np.array(text.split(), dtype=np.int64).reshape(-1, 2)
        except ValueError:
            raise ValueError(f"{index} is not an index (lines of 'offset size')") from None
        if self.compressions[f] == "none" and len(pairs):
            end = int(pairs[-1, 0] + pairs[-1, 1])
            if end != self.files[f].num_bytes:
                raise ValueError(
                    f"{index} ends at byte {end}, but {path} has {self.files[f].num_bytes}: the "
                    "index is of another file; delete it, or rebuild it with spark-tfrecord index"
                )
        return pairs

    def _scan(self, f: int) -> Any:
        """Offsets from one pass over the file's framing, headers checked (data CRCs on read)."""
        path = self.files[f].path
        found: list[Any] = []  # per run of sound frames: their starts, then the last's end
        if self.compressions[f] != "none":
            stream: Any = iter([self._whole(f)])
        elif self.files_system.remote:
            stream = self._scanned_blocks(f)
        else:
            stream = chunks(path, "none", self.files_system)
        buf, base, pos = b"", 0, 0  # buf[0] is at stream offset base
        for chunk in stream:
            buf = buf[pos:] + chunk
            base += pos
            starts, end = frame_starts(buf, 0, len(buf))
            bounds = np.array([*starts, end], np.int64)
            sound = sound_frames(buf, bounds[:-1], bounds[1:], verify_checksums=False)
            found.append(bounds[: sound + 1] + base)
            pos = int(bounds[sound])
            if len(buf) - pos >= HEADER:  # unsound: raises its error; else ends in a later chunk
                header_length(buf, pos, path, base + pos)
        if pos != len(buf):
            raise truncated_error(
                f"the file ends {len(buf) - pos} bytes into a record", path, base + pos
            )
        firsts = np.concatenate([b[:-1] for b in found] or [np.empty(0, np.int64)])
        ends = np.concatenate([b[1:] for b in found] or [np.empty(0, np.int64)])
        return np.stack([firsts, ends - firsts], axis=1)

    # --- reading ---------------------------------------------------------------------------

    def _whole(self, f: int) -> bytes:
        """The decompressed bytes of GZIP / ZLIB file ``f``, from the cache or read whole."""
        key = (f, "whole")
        data = self._cache.get(key)
        if data is None:
            data = b"".join(chunks(self.files[f].path, self.compressions[f], self.files_system))
            self.requests += self.files_system.remote
            if len(data) > self.cache_bytes:
                raise ValueError(
                    f"{self.files[f].path} is {self.compressions[f]}-compressed, so reading a "
                    f"record in it means decompressing the whole file, {len(data)} bytes, which "
                    f"does not fit cache_bytes ({self.cache_bytes}): raise cache_bytes, or write "
                    "the folder uncompressed for random access (tf_dataset reads compressed "
                    "files in order)"
                )
            self._cache.put(key, data)
        return data

    def _scanned_blocks(self, f: int) -> Any:
        """Remote file ``f`` in ranged block reads, for its scan; cached as groups if it fits."""
        size, path, total = self.block_size, self.files[f].path, self.files[f].num_bytes
        kept: list[bytes] | None = [] if total <= self.cache_bytes else None
        for start in range(0, total, size):
            block = self.files_system.read_range(path, start, min(total, start + size))
            self.requests += 1
            if kept is not None:
                kept.append(block)
            yield block
        if kept is not None:
            self._cache.put((f, "scanned"), b"".join(kept))

    def _groups(self, f: int) -> tuple[Any, Any]:
        """Start and end offsets (int64 arrays) of remote file ``f``'s groups: records per block."""
        found = self._group_bounds.get(f)
        if found is None:
            table = self.offsets(f)
            starts, ends = table[:, 0], table[:, 0] + table[:, 1]
            _, first = np.unique(starts // self.block_size, return_index=True)
            last = np.concatenate([first[1:], [len(starts)]]) - 1
            found = (starts[first], ends[last]) if len(starts) else (starts, ends)
            self._group_bounds[f] = found
            scanned = self._cache.pop((f, "scanned"))
            if scanned is not None:  # the scan's bytes: no second read
                for g, (a, b) in enumerate(zip(*(x.tolist() for x in found))):
                    self._cache.put((f, g), scanned[a:b])
        return found

    def _fetch(self, f: int, first: int, stop: int) -> None:
        """Groups ``[first, stop)`` of remote file ``f``, in one ranged read, into the cache."""
        group_starts, group_ends = self._groups(f)
        begin, end = int(group_starts[first]), int(group_ends[stop - 1])
        data = self.files_system.read_range(self.files[f].path, begin, end)
        self.requests += 1
        for g in range(first, stop):
            a, b = int(group_starts[g]) - begin, int(group_ends[g]) - begin
            self._cache.put((f, g), data[a:b])

    def _framed(self, f: int, offset: int, framed: int) -> bytes:
        """The framed record at ``offset`` of file ``f`` (fewer bytes if the file ends)."""
        if self.compressions[f] != "none":
            return self._whole(f)[offset : offset + framed]
        if self.files_system.remote:
            group_starts, _ = self._groups(f)
            g = int(np.searchsorted(group_starts, offset, side="right")) - 1
            data = self._cache.get((f, g))
            if data is None:
                self._fetch(f, g, g + 1)
                data = self._cache.get((f, g)) or b""
            start = offset - int(group_starts[g])
            return data[start : start + framed]
        return os.pread(self._fd(f), framed, offset)

    def _fd(self, f: int) -> int:
        """Local file ``f``'s descriptor, opened once per process."""
        fd = self._fds.get(f)
        if fd is None:
            fd = self._fds[f] = os.open(self.files[f].path, os.O_RDONLY)
        return fd

    def _checked(self, i: int) -> tuple[bytes, int, int]:
        """Record ``i`` framed, its length and CRCs checked: (framed bytes, file, offset)."""
        f, j = self.locate(i)
        offset, framed = (int(x) for x in self.offsets(f)[j])
        buf = self._framed(f, offset, framed)
        if len(buf) < framed:
            raise truncated_error(
                f"the file ends {len(buf)} bytes into a record of {framed}",
                self.files[f].path,
                offset,
            )
        check_frame(buf, self.files[f].path, offset, framed - HEADER - FOOTER)
        return buf, f, offset

    def read(self, i: int) -> tuple[bytes, int, int]:
        """Record ``i``'s data, checked, with its file's number and its offset there."""
        buf, f, offset = self._checked(i)
        return buf[HEADER:-FOOTER], f, offset

    def read_batch(self, indices: Sequence[int]) -> tuple[bytes, Any, Any]:
        """Records ``indices`` checked, in one buffer: record k is ``buf[starts[k]:stops[k]]``."""
        self.prefetch(indices)
        wanted = np.asarray(indices, np.int64)
        files = np.searchsorted(np.asarray(self.ends, np.int64), wanted, side="right")
        firsts = np.concatenate([[0], np.asarray(self.ends, np.int64)])[files]
        offsets = np.empty(len(wanted), np.int64)
        sizes = np.empty(len(wanted), np.int64)
        for f in np.unique(files).tolist():
            these = files == f
            table = self.offsets(f)[wanted[these] - firsts[these]]
            offsets[these], sizes[these] = table[:, 0], table[:, 1]
        held = self._held(np.unique(files).tolist())
        if held is not None:
            starts = self._bases[files] + offsets
            if held is self._sound or frames_sound(held, starts, starts + sizes):
                return held, starts + HEADER, starts + sizes - FOOTER
            self._cache.pop(_HELD)  # read from the files again, for the error that names it
        if self.files_system.remote:
            pieces = zip(files.tolist(), offsets.tolist(), sizes.tolist())
            buf = b"".join(self._framed(f, o, n) for f, o, n in pieces)
        else:
            buf = self._gather(files, offsets, sizes)
        ends = np.cumsum(sizes)
        starts = ends - sizes
        # a record past its file's end, or unsound: the first bad record's error
        if len(buf) != int(sizes.sum()) or not frames_sound(buf, starts, ends):
            self._first_bad(indices)
        return buf, starts + HEADER, ends - FOOTER

    def _held(self, touched: list[int]) -> bytes | None:
        """The held folder's bytes, read once per process; None if not held or a size changed."""
        if not self._holds:
            return None
        for f in touched:
            if os.fstat(self._fd(f)).st_size != self.files[f].num_bytes:
                self._cache.pop(_HELD)
                return None
        held = self._cache.get(_HELD)
        if held is None:
            parts = [os.pread(self._fd(f), i.num_bytes, 0) for f, i in enumerate(self.files)]
            if any(len(p) != i.num_bytes for p, i in zip(parts, self.files)):
                return None
            held = b"".join(parts)
            self._cache.put(_HELD, held)
            self._check_held(held)
        return held

    def _check_held(self, held: bytes) -> None:
        """Checks all held frames once: if all are sound, batches from them skip their checks."""
        try:
            tables = [self.offsets(f) for f in range(len(self.files))]
        except (errors.CorruptFileError, ValueError):
            return  # a file whose framing cannot be walked: its batches fail where they read it
        table = np.concatenate(tables or [np.empty((0, 2), np.int64)])
        starts = table[:, 0] + np.repeat(self._bases, [len(t) for t in tables])
        if frames_sound(held, starts, starts + table[:, 1]):
            self._sound = held

    def _gather(self, files: Any, offsets: Any, sizes: Any) -> bytes:
        """Local files' framed records joined in one buffer: a ``pread`` per run of adjacent
        records. Not mmap: a file truncated under a map kills the reader (SIGBUS); a short read
        raises the first bad record's error instead.
        """
        ends = offsets + sizes
        follows = (files[1:] == files[:-1]) & (offsets[1:] == ends[:-1])
        firsts = np.flatnonzero(np.concatenate([[True], ~follows])) if len(files) else files
        lasts = np.concatenate([firsts[1:], [len(files)]]) - 1
        run_files, run_starts = files[firsts].tolist(), offsets[firsts].tolist()
        run_sizes = (ends[lasts] - offsets[firsts]).tolist()
        if all(self.compressions[f] == "none" for f in set(run_files)):
            pread, fds = os.pread, {f: self._fd(f) for f in set(run_files)}
            pieces = [pread(fds[f], n, o) for f, n, o in zip(run_files, run_sizes, run_starts)]
        else:  # GZIP / ZLIB files among them
            pieces = [self._framed(f, o, n) for f, n, o in zip(run_files, run_sizes, run_starts)]
        return b"".join(pieces)

    def _first_bad(self, indices: Sequence[int]) -> None:
        """Raises the error of the first record of ``indices`` that fails its checks."""
        for i in indices:
            self._checked(i)
        raise AssertionError("a batch failed its checks, but none of its records alone")

    def prefetch(self, indices: Sequence[int]) -> None:
        """Fetches the remote groups ``indices`` need, consecutive missing ones in one read."""
        if not self.files_system.remote:
            return
        wanted: dict[int, set[int]] = {}
        for i in indices:
            f, j = self.locate(i)
            if self.compressions[f] != "none":
                continue
            group_starts, _ = self._groups(f)
            g = int(np.searchsorted(group_starts, self.offsets(f)[j, 0], side="right")) - 1
            wanted.setdefault(f, set()).add(g)
        for f, groups in wanted.items():
            group_starts, group_ends = self._groups(f)
            missing = sorted(g for g in groups if self._cache.get((f, g)) is None)
            k = 0
            while k < len(missing):
                run = k + 1
                while (
                    run < len(missing)
                    and missing[run] == missing[run - 1] + 1
                    and int(group_ends[missing[run]] - group_starts[missing[k]])
                    <= self.cache_bytes // 2
                ):
                    run += 1
                self._fetch(f, missing[k], missing[run - 1] + 1)
                k = run
