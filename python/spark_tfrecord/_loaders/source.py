"""A folder's decoded records by number, for :func:`torch_dataset` and :func:`grain_source`."""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from spark_tfrecord import errors
from spark_tfrecord._format.columns.column_errors import ColumnError, NoValue
from spark_tfrecord._format.columns.layout import Layout, layout
from spark_tfrecord._format.columns.schema import Column, type_string
from spark_tfrecord._format.datasets.datasets import read_options, refuse_tfds, schema_of
from spark_tfrecord._format.entries.decoder import MalformedRecord
from spark_tfrecord._format.files import partitions
from spark_tfrecord._format.files.files import file_system
from spark_tfrecord._format.frames.manifest import dataset_info_in, read_manifest
from spark_tfrecord._format.frames.records import RecordReader

if TYPE_CHECKING:
    from spark_tfrecord._loaders.sampler import BlockShuffleSampler


class RecordSource:
    """The decoded records of a TFRecord folder, by number (see :func:`torch_dataset`)."""

    def __init__(
        self,
        path: str,
        columns: Sequence[str] | str | None = None,
        transform: Callable[[dict[str, Any]], Any] | None = None,
        *,
        options: Mapping[str, str] | None = None,
        storage_options: Mapping[str, Any] | None = None,
        cache_bytes: int = 256 << 20,
        block_size: int = 4 << 20,
    ) -> None:
        fs, where = file_system(path, storage_options)
        info = read_manifest(where, fs) if fs.isdir(where) else None
        if info is None:
            refuse_tfds(fs, where)  # before its records are counted
            info = dataset_info_in(fs, where)
        self._reader = RecordReader(
            path,
            storage_options=storage_options,
            cache_bytes=cache_bytes,
            block_size=block_size,
            info=info,
            files=(fs, where),
        )
        found = partitions.discover(self._reader.path, [f.path for f in self._reader.files])
        names = list(found[0]) if found else []
        given: dict[str, str] = {}  # partition columns a DDL string types
        if isinstance(columns, str):
            from spark_tfrecord._format.columns.ddl import parse_ddl

            parsed = read_options(info.record_type, options)
            schema: Mapping[str, Any] = parse_ddl(columns)
            given = {
                f["name"]: type_string(f["type"]) for f in schema["fields"] if f["name"] in names
            }
            schema = {**schema, "fields": [f for f in schema["fields"] if f["name"] not in names]}
            selected: list[str] | None = None
            counts: Mapping[str, tuple[int, int]] = {}
        else:
            had = schema_of(info, self._reader.files_system, options)
            parsed, schema, counts = had.options, had.json, had.counts
            selected = None if columns is None else list(columns)
            if selected is not None:
                names = [n for n in selected if n in names]
                selected = [n for n in selected if n not in names]
        #: ``"manifest"``, ``"inferred"`` (from the records), or ``"given"`` (a DDL string).
        self.schema_source = "given" if isinstance(columns, str) else had.source
        self._raw = parsed.record_type == "ByteArray"
        record_type: Literal["Example", "SequenceExample"] = (
            "SequenceExample" if parsed.record_type == "SequenceExample" else "Example"
        )
        self._what = f"tf.train.{record_type}"
        if self._raw:
            schema, selected = {"type": "struct", "fields": []}, None
        self._layout_args = (schema, counts, selected, path, parsed.path_separator, record_type)
        self._layout: Layout = layout(*self._layout_args)
        self._transform = transform
        self._partitions = self._partition_values(found, names, given)

    def _partition_values(
        self, found: list[dict[str, str]], names: list[str], given: Mapping[str, str]
    ) -> list[tuple[Column, list[Any]]]:
        """Each partition column and its value per file, typed as Spark does or as ``given``."""
        out = []
        for name in names:
            raws = [d[name] for d in found]
            spark = given.get(name) or partitions.column_type(raws)
            kind = partitions.kind(spark)
            values: list[Any] = [partitions.value(raw, spark) for raw in raws]
            scalar = {"int": np.int64, "float": np.float32}.get(kind)
            if scalar is not None:
                values = [None if v is None else scalar(v) for v in values]
            fixed = None if any(v is None for v in values) else 1
            out.append((Column(name, kind, "scalar", fixed=fixed, spark=spark), values))
        return out

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        del state["_layout"]  # closures: made again where the source is unpickled
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._layout = layout(*self._layout_args)

    def __len__(self) -> int:
        return len(self._reader)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._reader.path!r}, {len(self)} records)"

    @property
    def keys(self) -> list[str]:
        """The keys of each record (``["byteArray"]`` for ByteArray records)."""
        if self._raw:
            return ["byteArray"]
        return [c.key for c in self._layout.columns] + [c.key for c, _ in self._partitions]

    @property
    def reader(self) -> RecordReader:
        """The raw records (``reader.read(i)``) and their places (``files``, ``offsets(f)``)."""
        return self._reader

    @property
    def requests(self) -> int:
        """The ranged reads this process made of the files (0 for local files)."""
        return self._reader.requests

    def block_sampler(
        self, *, seed: int = 0, window: int | None = None, num_replicas: int = 1, rank: int = 0
    ) -> BlockShuffleSampler:
        """A :class:`BlockShuffleSampler`, for object-store folders larger than ``cache_bytes``."""
        from spark_tfrecord._loaders.sampler import BlockShuffleSampler

        return BlockShuffleSampler(
            self.reader, seed=seed, window=window, num_replicas=num_replicas, rank=rank
        )

    def _index(self, i: Any) -> int:
        n = len(self)
        k: int = operator.index(i)
        if k < 0:
            k += n
        if not 0 <= k < n:
            raise IndexError(f"record {i} of {n}")
        return k

    def _decode(self, i: int) -> Any:
        data, f, offset = self._reader.read(i)
        if self._raw:
            record: dict[str, Any] = {"byteArray": data}
        else:
            try:
                record = self._layout.record(data)
            except MalformedRecord as e:
                feature = f" (feature {e.key!r})" if e.key else ""
                raise errors.CorruptFileError(
                    errors.MALFORMED_RECORD,
                    f"Malformed {self._what}: {e.reason}{feature}",
                    self._reader.files[f].path,
                    offset,  # no column, as the jar's: the bytes are not an Example's
                ) from None
            except ColumnError as e:
                raise errors.CorruptFileError(
                    errors.DATA_MISMATCH, str(e), self._reader.files[f].path, offset, e.column
                ) from None
        for c, values in self._partitions:
            record[c.key] = values[f]
        return record if self._transform is None else self._transform(record)

    def __getitem__(self, i: int) -> Any:
        return self._decode(self._index(i))

    def __getitems__(self, indices: Sequence[int]) -> Sequence[Any]:
        """The records ``indices`` read together: without ``transform``, a :class:`RecordBatch`."""
        n = len(self)
        given = np.asarray(indices, np.int64)
        given = np.where(given < 0, given + n, given)
        if len(given) and not (int(given.min()) >= 0 and int(given.max()) < n):
            for i in indices:
                self._index(i)  # the IndexError naming the first index out of range
        wanted: list[int] = given.tolist()
        if self._transform is not None or self._raw:
            self._reader.prefetch(wanted)
            return [self._decode(i) for i in wanted]
        return RecordBatch(self, wanted, *self._reader.read_batch(wanted))

    def collate(self, records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """A batch of (untransformed) records in NumPy arrays (see ``Layout.collate``)."""
        ours = records if isinstance(records, RecordBatch) and records.source is self else None
        batch: dict[str, Any] | None = None
        if self._raw:
            batch = {"byteArray": [r["byteArray"] for r in records]}
        elif ours is not None:
            batch = self._layout.collate_raw(ours.buf, ours.starts, ours.stops)
        if batch is None:
            try:
                batch = self._layout.collate(records)
            except NoValue as e:
                if ours is None:
                    raise
                f, j = self._reader.locate(ours.indices[e.record])
                offset = int(self._reader.offsets(f)[j, 0])
                raise errors.CorruptFileError(
                    errors.DATA_MISMATCH, str(e), self._reader.files[f].path, offset, e.column
                ) from None
        if self._partitions and ours is not None:
            ends = np.asarray(self._reader.ends, np.int64)
            files = np.searchsorted(ends, ours.indices, side="right").tolist()
            for c, values in self._partitions:
                batch[c.key] = Layout.collate_column(c, [values[f] for f in files])
        else:
            for c, _ in self._partitions:
                batch[c.key] = Layout.collate_column(c, [r[c.key] for r in records])
        return batch


class RecordBatch(Sequence[Any]):
    """Records read together, undecoded: each decodes when looked at, or all in ``collate``."""

    def __init__(
        self, source: RecordSource, indices: list[int], buf: bytes, starts: Any, stops: Any
    ) -> None:
        self.source, self.indices = source, indices
        self.buf, self.starts, self.stops = buf, starts, stops
        self._decoded: list[Any] = [None] * len(indices)

    def __len__(self) -> int:
        return len(self.indices)

    def __getitem__(self, k: Any) -> Any:
        if isinstance(k, slice):
            return [self[j] for j in range(*k.indices(len(self)))]
        found = self._decoded[k]
        if found is None:
            found = self._decoded[k] = self.source._decode(self.indices[k])
        return found
