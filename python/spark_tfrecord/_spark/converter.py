""":func:`make_converter`: a DataFrame cached once as TFRecord files, read back by a loader."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import urllib.parse
import uuid
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from spark_tfrecord._format.files.files import local_path
from spark_tfrecord._format.frames.manifest import read_manifest
from spark_tfrecord._spark.io import write

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.connect.dataframe import DataFrame as ConnectDataFrame

    from spark_tfrecord._loaders.grain import GrainSource
    from spark_tfrecord._loaders.tf import Shard
    from spark_tfrecord._loaders.torch import TorchDataset

#: The Spark conf key giving ``cache_dir`` when it is not passed.
CACHE_DIR_CONF = "spark.tfrecord.converter.cacheDir"
#: Part of every key: change it when the key's content or the folder's layout changes.
_KEY_VERSION = "spark-tfrecord converter 1"
#: Leaves whose data is an RDD: equal only within the application that made them.
_RDD_LEAVES = (
    "org.apache.spark.sql.execution.LogicalRDD",
    "org.apache.spark.sql.execution.ExternalRDD",
)
#: Fields of a Connect plan that differ between equal DataFrames built separately.
_CONNECT_NOISE = ("origin", "source_info")
_CACHED_RELATION_NOISE = ("userId", "sessionId", "user_id", "session_id")


class Converter:
    """TFRecord files of a DataFrame; only a path and a count, so it pickles and needs no Spark."""

    def __init__(self, path: str, num_records: int) -> None:
        self._path = path
        self._num_records = num_records

    @property
    def path(self) -> str:
        """The folder of the files: ``<cache_dir>/<key>``, a local path."""
        return self._path

    def __len__(self) -> int:
        """The number of records."""
        return self._num_records

    def __repr__(self) -> str:
        return f"Converter({self._path!r}, num_records={self._num_records})"

    def tf_dataset(
        self,
        *,
        columns: Sequence[str] | str | None = None,
        label: str | None = None,
        batch_size: int | None = None,
        shuffle_files: bool = False,
        seed: int | None = None,
        shuffle_buffer: int | None = None,
        repeat: bool = False,
        shard: Shard | None = None,
        drop_remainder: bool = False,
        options: Mapping[str, str] | None = None,
    ) -> Any:
        """:func:`spark_tfrecord.tf_dataset` of :attr:`path` (same arguments; known cardinality)."""
        from spark_tfrecord._loaders.tf import tf_dataset

        return tf_dataset(
            self._path,
            columns=columns,
            label=label,
            batch_size=batch_size,
            shuffle_files=shuffle_files,
            seed=seed,
            shuffle_buffer=shuffle_buffer,
            repeat=repeat,
            shard=shard,
            drop_remainder=drop_remainder,
            options=options,
        )

    def torch_dataset(
        self,
        columns: Sequence[str] | str | None = None,
        transform: Callable[[dict[str, Any]], Any] | None = None,
    ) -> TorchDataset:
        """:func:`spark_tfrecord.torch_dataset` of :attr:`path` (no TensorFlow needed)."""
        from spark_tfrecord._loaders.api import torch_dataset

        return torch_dataset(self._path, columns, transform)

    def grain_source(self, columns: Sequence[str] | str | None = None) -> GrainSource:
        """:func:`spark_tfrecord.grain_source` of :attr:`path`, for JAX's Grain loader."""
        from spark_tfrecord._loaders.api import grain_source

        return grain_source(self._path, columns)

    def delete(self) -> None:
        """Remove the folder, renamed away first so that no converter finds half of it."""
        parent, key = os.path.split(self._path)
        doomed = os.path.join(parent, f"_deleted-{key}-{uuid.uuid4().hex}")
        os.rename(self._path, doomed)
        shutil.rmtree(doomed)


def _local_folder(cache_dir: str) -> str:
    """``cache_dir`` as an absolute local path: a path, or a ``file:`` URL."""
    scheme = urllib.parse.urlparse(cache_dir).scheme
    if scheme == "file":
        if cache_dir.startswith("file://") and not cache_dir.startswith(
            ("file:///", "file://localhost/")
        ):
            raise ValueError(f"cache_dir {cache_dir!r}: a file: URL of another host")
    elif len(scheme) > 1:  # one letter: a Windows drive
        raise ValueError(
            f"cache_dir {cache_dir!r}: make_converter takes a local path or a file: URL; object "
            "stores (s3a://, gs://, ...) are not supported yet."
        )
    return os.path.abspath(os.path.expanduser(local_path(cache_dir)))


def _repeated(field: Any) -> bool:
    if hasattr(field, "is_repeated"):  # protobuf 5.x and later; older ones only have label
        return bool(field.is_repeated)
    return bool(field.label == field.LABEL_REPEATED)


def _normalize_connect_plan(message: Any, plan_ids: dict[int, int]) -> None:
    """Make equal Connect plans built separately equal: renumber plan ids, drop the noise."""
    for field, value in message.ListFields():
        name = field.name
        if name in _CONNECT_NOISE or (
            name in _CACHED_RELATION_NOISE and message.DESCRIPTOR.name == "CachedLocalRelation"
        ):
            message.ClearField(name)
        elif name == "plan_id" and isinstance(value, int):
            setattr(message, name, plan_ids.setdefault(value, len(plan_ids)))
        elif field.message_type is None:
            continue
        elif field.message_type.GetOptions().map_entry:
            if field.message_type.fields_by_name["value"].message_type is not None:
                for key in sorted(value):
                    _normalize_connect_plan(value[key], plan_ids)
        elif _repeated(field):
            for item in value:
                _normalize_connect_plan(item, plan_ids)
        else:
            _normalize_connect_plan(value, plan_ids)


def _connect_plan(df: Any) -> dict[str, str]:
    """A hash of the unresolved plan the client sends (it holds no analyzed plan)."""
    plan = df._plan.to_proto(df._session.client)
    _normalize_connect_plan(plan, {})
    return {"unresolved": hashlib.sha256(plan.SerializeToString(deterministic=True)).hexdigest()}


def _classic_plan(df: Any) -> dict[str, Any]:
    """The canonicalized analyzed plan (same for equal DataFrames), and what its text omits."""
    from py4j.protocol import Py4JError

    analyzed = df._jdf.queryExecution().analyzed()
    canonical = analyzed.canonicalized()
    # Every field printed (not cut at spark.sql.debug.maxToStringFields), no operator ids.
    try:
        text = canonical.treeString(True, False, 2**31 - 1, False)
    except Py4JError:  # Spark 4.1 and later: a fifth flag, false by default
        text = canonical.treeString(True, False, 2**31 - 1, False, False)
    java_leaves = analyzed.collectLeaves()
    leaves = [java_leaves.apply(i) for i in range(java_leaves.size())]
    rdds = [leaf.rdd().id() for leaf in leaves if leaf.getClass().getName() in _RDD_LEAVES]
    return {
        "analyzed": text,
        # The hash sees what the text omits: local rows, file roots and options, UDFs.
        "semantic_hash": analyzed.semanticHash(),
        # An RDD's rows are not in the plan: its id in its application stands for them.
        "rdds": [df.sparkSession.sparkContext.applicationId, rdds] if rdds else [],
    }


def _key(df: Any, options: dict[str, Any]) -> str:
    connect = type(df).__module__.startswith("pyspark.sql.connect")
    plan = _connect_plan(df) if connect else _classic_plan(df)
    material = {
        "version": _KEY_VERSION,
        "plan": plan,
        # Canonical plans forget the columns' names; the files keep them.
        "schema": df.schema.json(),
        # Files added, removed or renamed under the same plan (what Spark's writes do).
        "input_files": sorted(df.inputFiles()),
        "options": options,
    }
    encoded = json.dumps(material, sort_keys=True, default=repr).encode()
    return hashlib.sha256(encoded).hexdigest()[:32]


def make_converter(
    df: DataFrame | ConnectDataFrame, cache_dir: str | None = None, **options: Any
) -> Converter:
    """Write ``df`` once as TFRecord files under ``cache_dir`` and return a :class:`Converter`.

    The folder is named by a hash of the plan, schema, ``df.inputFiles()`` and options: an
    equal DataFrame finds it again with no Spark job (over files: in the same application). The
    key misses files rewritten in place and sources without files: ``delete()`` when the input
    changed. ``cache_dir``: a local path or ``file:`` URL (Spark Connect's server must see it
    too), default the conf ``spark.tfrecord.converter.cacheDir``. ``options``: :func:`write`'s.

    >>> import tempfile
    >>> def halves():
    ...     return spark.range(10).selectExpr("id", "array(id / 2, -id / 2) AS x")
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     converter = make_converter(halves(), tmp, compression="gzip")
    ...     again = make_converter(halves(), tmp, compression="gzip")  # found: no Spark job
    ...     print(len(converter), again.path == converter.path)
    10 True
    """
    for refused in ("mode", "partition_by"):
        if refused in options:
            raise TypeError(
                f"make_converter takes no {refused!r}: it writes a new folder of its own, "
                "whose records tf_dataset reads whole."
            )
    if df.isStreaming:
        raise ValueError("make_converter writes a DataFrame once: a streaming one never ends.")
    if cache_dir is None:
        cache_dir = df.sparkSession.conf.get(CACHE_DIR_CONF, None)
        if not cache_dir:
            raise ValueError(
                f"make_converter needs a cache folder: pass cache_dir, or set the Spark conf "
                f"{CACHE_DIR_CONF} (spark.conf.set({CACHE_DIR_CONF!r}, '/path/to/cache'))."
            )
    root = _local_folder(cache_dir)
    key = _key(df, options)
    final = os.path.join(root, key)
    info = read_manifest(final) if os.path.isdir(final) else None
    if info is None:
        if os.path.lexists(final):
            warnings.warn(
                f"{final} holds no valid manifest (changed since it was written?): "
                "writing it again.",
                stacklevel=2,
            )
            stale = os.path.join(root, f"_stale-{key}-{uuid.uuid4().hex}")
            os.rename(final, stale)
            shutil.rmtree(stale)
        os.makedirs(root, exist_ok=True)
        temporary = os.path.join(root, f"_tmp-{key}-{uuid.uuid4().hex}")
        try:
            # An explicit file: URL: a session whose default file system is HDFS writes here too.
            write(df, "file://" + temporary, **options)
            try:
                os.rename(temporary, final)
            except OSError:
                # Another converter of the same plan renamed first: use its folder.
                if read_manifest(final) is None:
                    raise
        finally:
            shutil.rmtree(temporary, ignore_errors=True)
        info = read_manifest(final)
        if info is None:
            raise RuntimeError(f"{final} was written but holds no valid manifest")
    return Converter(final, info.num_records)
