"""Random access to the records of a TFRecord folder, for map-style loaders: record i's bytes.

Record i is the i-th record of the folder's data files in the manifest's order (sorted by their
path relative to the folder), each file's records in order. Where a record starts comes from the
file's index (``_<name>.idx``, written with ``writeIndex``), or else from one scan of the file's
framing, in memory, the first time the process reads from that file. Every record read has its
length and both CRC32C checksums checked.

- Local files are read with one ``pread`` per record; the OS caches them.
- Files in an object store (fsspec URLs) are read in blocks of ``block_size`` bytes, with ranged
  reads (missing blocks next to each other in one request), into an LRU cache of
  ``cache_bytes`` per process: reading in order costs one request per block; a shuffled epoch
  costs one request per block when the folder fits in the cache, and none the next epoch.
- GZIP and ZLIB files cannot be entered in the middle: each is decompressed whole, the first
  time it is read, and kept in the same cache (a file larger than ``cache_bytes`` decompressed
  is refused with a ValueError).
"""

from __future__ import annotations

import bisect
import mmap
import os
import struct
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from spark_tfrecord import errors
from spark_tfrecord._files import file_system
from spark_tfrecord._index import INDEX_PREFIX, INDEX_SUFFIX
from spark_tfrecord._manifest import (
    _FOOTER,
    _HEADER,
    _MASK_DELTA,
    _MAX_RECORD_BYTES,
    DatasetInfo,
    _chunks,
    _crc32c,
    _masked,
    dataset_info_in,
)

_HEADER_STRUCT = struct.Struct("<QI")
#: Local files kept mapped at once per process (each holds a file descriptor).
_MAPS = 128
_FOOTER_STRUCT = struct.Struct("<I")


def _masked_all(crcs: Any) -> Any:
    """:func:`_masked` of an array of CRCs (uint64), as uint32."""
    rotated = ((crcs >> np.uint64(15)) | (crcs << np.uint64(17))) & np.uint64(0xFFFFFFFF)
    return ((rotated + np.uint64(_MASK_DELTA)) & np.uint64(0xFFFFFFFF)).astype(np.uint32)


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

    def put(self, key: Any, value: bytes) -> None:
        old = self._items.pop(key, None)
        if old is not None:
            self.size -= len(old)
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
    ) -> None:
        if cache_bytes < block_size:
            raise ValueError(f"cache_bytes ({cache_bytes}) must hold a block ({block_size})")
        if block_size < 1:
            raise ValueError(f"block_size must be at least 1, not {block_size}")
        self.files_system, self.path = file_system(os.fspath(path), storage_options)
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
        self._reset()

    def _reset(self) -> None:
        self._offsets: list[Any] = [None] * len(self.files)
        self._cache = _Cache(self.cache_bytes)
        self._fds: dict[int, int] = {}
        self._maps: dict[int, Any] = {}
        self._pid = os.getpid()
        #: Ranged reads made by this process (object stores; decompressed files: whole reads).
        self.requests = 0

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        for key in ("_offsets", "_cache", "_fds", "_maps", "_pid", "requests"):
            state.pop(key)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._reset()

    def __del__(self) -> None:
        if getattr(self, "_pid", None) == os.getpid():
            for fd in getattr(self, "_fds", {}).values():
                os.close(fd)

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
            if found is None:
                found = self._scan(f)
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
        name = path.rsplit("/", 1)[-1].rsplit(os.sep, 1)[-1]
        index = path[: len(path) - len(name)] + INDEX_PREFIX + name + INDEX_SUFFIX
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
        """The offsets from the file's framing: one pass over its (decompressed) bytes, each
        record's length checked against its checksum."""
        path = self.files[f].path
        crc = _crc32c()[0]
        found: list[int] = []
        if self.compressions[f] != "none":
            data = self._whole(f)
            chunks: Any = iter([data])
        elif self.files_system.remote:
            chunks = (
                self._blocks(f, b, b + 1)
                for b in range(-(-self.files[f].num_bytes // self.block_size))
            )
        else:
            chunks = _chunks(path, "none", self.files_system)
        buf, base, pos = b"", 0, 0  # buf[0] is at stream offset base
        for chunk in chunks:
            buf = buf[pos:] + chunk
            base += pos
            pos = 0
            while len(buf) - pos >= _HEADER:
                length, length_crc = _HEADER_STRUCT.unpack_from(buf, pos)
                if _masked(crc(buf[pos : pos + 8])) != length_crc:
                    raise errors.CorruptFileError(
                        errors.LENGTH_CHECKSUM,
                        "Corrupt TFRecord: length checksum mismatch",
                        path,
                        base + pos,
                    )
                if length > _MAX_RECORD_BYTES:
                    raise errors.CorruptFileError(
                        errors.RECORD_TOO_LARGE,
                        f"TFRecord of {length} bytes exceeds maxRecordBytes",
                        path,
                        base + pos,
                    )
                framed = _HEADER + length + _FOOTER
                if len(buf) - pos < framed:
                    break  # the record's end is in a later chunk
                found.append(base + pos)
                found.append(framed)
                pos += framed
        if pos != len(buf):
            raise errors.CorruptFileError(
                errors.TRUNCATED,
                f"Truncated TFRecord: the file ends {len(buf) - pos} bytes into a record",
                path,
                base + pos,
            )
        return np.array(found, np.int64).reshape(-1, 2)

    # --- reading ---------------------------------------------------------------------------

    def _whole(self, f: int) -> bytes:
        """The decompressed bytes of GZIP / ZLIB file ``f``, from the cache or read whole."""
        key = (f, "whole")
        data = self._cache.get(key)
        if data is None:
            data = b"".join(_chunks(self.files[f].path, self.compressions[f], self.files_system))
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

    def _blocks(self, f: int, first: int, stop: int) -> bytes:
        """Blocks ``[first, stop)`` of remote file ``f``, joined; missing ones fetched with
        one ranged read per run of consecutive missing blocks."""
        size, cache, path = self.block_size, self._cache, self.files[f].path
        parts: list[bytes] = []
        b = first
        while b < stop:
            cached = cache.get((f, b))
            if cached is not None:
                parts.append(cached)
                b += 1
                continue
            run = b + 1
            while run < stop and cache.get((f, run)) is None:
                run += 1
            data = self.files_system.read_range(path, b * size, run * size)
            self.requests += 1
            for k in range(b, run):
                block = data[(k - b) * size : (k - b + 1) * size]
                cache.put((f, k), block)
                parts.append(block)
            b = run
        return b"".join(parts)

    def _framed(self, f: int, offset: int, framed: int) -> bytes:
        """The framed record at ``offset`` of file ``f`` (fewer bytes if the file ends)."""
        if self.compressions[f] != "none":
            return self._whole(f)[offset : offset + framed]
        if self.files_system.remote:
            size = self.block_size
            first = offset // size
            data = self._blocks(f, first, (offset + framed - 1) // size + 1)
            start = offset - first * size
            return data[start : start + framed]
        fd = self._fds.get(f)
        if fd is None:
            fd = self._fds[f] = os.open(self.files[f].path, os.O_RDONLY)
        return os.pread(fd, framed, offset)

    def _checked(self, i: int) -> tuple[bytes, int, int]:
        """Record ``i`` framed, its length and CRCs checked: (framed bytes, file, offset)."""
        f, j = self.locate(i)
        offset, framed = (int(x) for x in self.offsets(f)[j])
        buf = self._framed(f, offset, framed)
        if len(buf) < framed:
            raise errors.CorruptFileError(
                errors.TRUNCATED,
                f"Truncated TFRecord: the file ends {len(buf)} bytes into a record of {framed}",
                self.files[f].path,
                offset,
            )
        crc = _crc32c()[0]
        length, length_crc = _HEADER_STRUCT.unpack_from(buf, 0)
        if _masked(crc(buf[:8])) != length_crc:
            raise errors.CorruptFileError(
                errors.LENGTH_CHECKSUM,
                "Corrupt TFRecord: length checksum mismatch",
                self.files[f].path,
                offset,
            )
        if length != framed - _HEADER - _FOOTER:
            raise errors.CorruptFileError(
                errors.UNREADABLE,
                f"the record holds {length} bytes, its index says {framed - _HEADER - _FOOTER}: "
                "the index is of another file",
                self.files[f].path,
                offset,
            )
        (data_crc,) = _FOOTER_STRUCT.unpack_from(buf, _HEADER + length)
        if _masked(crc(memoryview(buf)[_HEADER : _HEADER + length])) != data_crc:
            raise errors.CorruptFileError(
                errors.DATA_CHECKSUM,
                "Corrupt TFRecord: data checksum mismatch",
                self.files[f].path,
                offset,
            )
        return buf, f, offset

    def read(self, i: int) -> tuple[bytes, int, int]:
        """Record ``i``'s data, checked, with its file's number and its offset there."""
        buf, f, offset = self._checked(i)
        return buf[_HEADER:-_FOOTER], f, offset

    def read_batch(self, indices: Sequence[int]) -> tuple[bytes, Any, Any]:
        """Records ``indices``, checked, in one buffer: record k is
        ``buf[starts[k]:stops[k]]``. Lengths and checksums are checked for the batch at once;
        a record that fails is read again alone, for the error that names it."""
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
        if self.files_system.remote:
            buf = b"".join(self._pieces(files.tolist(), offsets.tolist(), sizes.tolist()))
            ends = np.cumsum(sizes)
            starts = ends - sizes
            if len(buf) != int(ends[-1] if len(ends) else 0):
                self._first_bad(indices)  # a record past its file's end
        else:
            buf, starts = self._gather(files, offsets, sizes, indices)
            ends = starts + sizes
        u8 = np.frombuffer(buf, np.uint8)
        if len(wanted):
            header = u8[starts[:, None] + np.arange(_HEADER)].copy().view("<u4")
            lengths = header[:, 0].astype(np.int64) | (header[:, 1].astype(np.int64) << 32)
            footer = u8[(ends - _FOOTER)[:, None] + np.arange(_FOOTER)].copy().view("<u4")[:, 0]
            crc = _crc32c()[0]
            view = memoryview(buf)
            starts_list, ends_list = starts.tolist(), ends.tolist()
            length_crcs = np.fromiter(
                (crc(view[a : a + 8]) for a in starts_list), np.uint64, len(starts_list)
            )
            data_crcs = np.fromiter(
                (crc(view[a + _HEADER : b - _FOOTER]) for a, b in zip(starts_list, ends_list)),
                np.uint64,
                len(starts_list),
            )
            if (
                (lengths != sizes - _HEADER - _FOOTER).any()
                or (_masked_all(length_crcs) != header[:, 2]).any()
                or (_masked_all(data_crcs) != footer).any()
            ):
                self._first_bad(indices)
        return buf, starts + _HEADER, ends - _FOOTER

    def _gather(
        self, files: Any, offsets: Any, sizes: Any, indices: Sequence[int]
    ) -> tuple[bytes, Any]:
        """The framed records of local files joined in one buffer, sliced from each file's
        memory map (no read call per record), and where each record starts in it."""
        views = {f: self._mapped(f) for f in np.unique(files).tolist()}
        file_list, offset_list, size_list = files.tolist(), offsets.tolist(), sizes.tolist()
        if any(o + n > len(views[f]) for f, o, n in zip(file_list, offset_list, size_list)):
            self._first_bad(indices)  # a record past its file's end: its error
        buf = b"".join([views[f][o : o + n] for f, o, n in zip(file_list, offset_list, size_list)])
        return buf, np.cumsum(sizes) - sizes

    def _mapped(self, f: int) -> memoryview:
        """File ``f``'s bytes: its memory map (uncompressed) or its decompressed bytes."""
        found = self._maps.get(f)
        if found is None:
            if self.compressions[f] != "none":
                found = memoryview(self._whole(f))
            elif self.files[f].num_bytes == 0:
                found = memoryview(b"")
            else:
                with open(self.files[f].path, "rb") as file:
                    found = memoryview(mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ))
            if len(self._maps) >= _MAPS:
                self._maps.pop(next(iter(self._maps)))
            self._maps[f] = found
        return found

    def _pieces(self, files: list[int], offsets: list[int], sizes: list[int]) -> list[Any]:
        """The framed records at ``offsets`` of ``files``: from a local file, records next to
        each other in one read."""
        if self.files_system.remote or len(files) < 2:
            return [self._framed(f, o, n) for f, o, n in zip(files, offsets, sizes)]
        pieces: list[Any] = []
        k = 0
        while k < len(files):
            f, start = files[k], offsets[k]
            run = k + 1
            end = start + sizes[k]
            while run < len(files) and files[run] == f and offsets[run] == end:
                end += sizes[run]
                run += 1
            if run == k + 1 or self.compressions[f] != "none":
                pieces.append(self._framed(f, start, sizes[k]))
            else:
                data = memoryview(self._framed(f, start, end - start))
                at = 0
                for j in range(k, run):
                    pieces.append(data[at : at + sizes[j]])
                    at += sizes[j]
            k = run
        return pieces

    def _first_bad(self, indices: Sequence[int]) -> None:
        """Raises the error of the first record of ``indices`` that fails its checks."""
        for i in indices:
            self._checked(i)
        raise AssertionError("a batch failed its checks, but none of its records alone")

    def prefetch(self, indices: Sequence[int]) -> None:
        """Fetches the remote blocks ``indices`` need in as few ranged reads as possible."""
        if not self.files_system.remote:
            return
        wanted: dict[int, set[int]] = {}
        for i in indices:
            f, j = self.locate(i)
            if self.compressions[f] != "none":
                continue
            offset, framed = (int(x) for x in self.offsets(f)[j])
            first, last = offset // self.block_size, (offset + framed - 1) // self.block_size
            wanted.setdefault(f, set()).update(range(first, last + 1))
        budget = self.cache_bytes // self.block_size
        for f, blocks in wanted.items():
            missing = sorted(b for b in blocks if self._cache.get((f, b)) is None)
            if len(missing) > budget:  # more than the cache holds: fetched as read
                continue
            start = 0
            for k in range(1, len(missing) + 1):
                if k == len(missing) or missing[k] != missing[k - 1] + 1:
                    self._blocks(f, missing[start], missing[k - 1] + 1)
                    start = k
