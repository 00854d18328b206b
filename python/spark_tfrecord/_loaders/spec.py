"""TensorFlow parsing specs for a Spark schema, to read our files with `tf.io.parse_example`.

The schema is handled in Spark's JSON form (``StructType.jsonValue()``, the manifest's
``schema_json``; a DDL string is parsed into it by :mod:`spark_tfrecord._format.ddl`), so that
neither pyspark nor a Spark session is needed: a trainer needs only this package and TensorFlow.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, Union, overload

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

#: What ``feature_spec`` takes: a pyspark StructType, Spark's JSON of one (a dict), a DDL
#: string, or the path of a folder written with a manifest.
Schema = Union["StructType", Mapping[str, Any], str, "os.PathLike[str]"]

_INT64 = ("boolean", "byte", "short", "integer", "long", "date", "timestamp", "timestamp_ntz")
_FLOAT = ("float", "double", "decimal")
_BYTES = ("string", "binary")
#: Spark's JSON names of the types whose simpleString differs.
_SIMPLE = {"byte": "tinyint", "short": "smallint", "integer": "int", "long": "bigint"}


def _name(data_type: Any) -> str:
    """The type's name: ``long``, ``decimal``, ``array``, ``struct``, ``udt``..."""
    if isinstance(data_type, str):
        m = re.match(r"[a-z_]+", data_type)
        return m.group() if m else data_type
    return str(data_type.get("type"))


def _is_array(data_type: Any) -> bool:
    return _name(data_type) == "array"


def _is_struct(data_type: Any) -> bool:
    return _name(data_type) == "struct"


def _is_vector(data_type: Any) -> bool:
    """A Spark ML (or MLlib) vector: ``{"type": "udt", "class": "...VectorUDT", ...}``."""
    return _name(data_type) == "udt" and any(
        str(data_type.get(key, "")).endswith(".VectorUDT") for key in ("class", "pyClass")
    )


def _simple(data_type: Any) -> str:
    """Spark's ``simpleString`` of the type, for messages."""
    name = _name(data_type)
    if isinstance(data_type, str):
        return _SIMPLE.get(data_type, data_type)
    if name == "array":
        return f"array<{_simple(data_type['elementType'])}>"
    if name == "map":
        return f"map<{_simple(data_type['keyType'])},{_simple(data_type['valueType'])}>"
    if name == "struct":
        fields = ",".join(f"{f['name']}:{_simple(f['type'])}" for f in data_type["fields"])
        return f"struct<{fields}>"
    if _is_vector(data_type):
        return "vector"
    return str(data_type.get("class", name))


def _dtype(tf: Any, data_type: Any, column: str) -> Any:
    name = _name(data_type)
    if name in _INT64:
        return tf.int64
    if name in _FLOAT or _is_vector(data_type):
        return tf.float32
    if name in _BYTES:
        return tf.string
    raise ValueError(
        f"Column {column!r} has type {_simple(data_type)}, which has no TFRecord feature kind."
    )


def _depth(data_type: Any) -> int:
    """How many arrays ``data_type`` is nested in (2 for ``array<array<T>>``)."""
    depth = 0
    while _is_array(data_type):
        data_type, depth = data_type["elementType"], depth + 1
    return depth


def _innermost(data_type: Any) -> Any:
    while _is_array(data_type):
        data_type = data_type["elementType"]
    return data_type


def _array_of(element: Any) -> dict[str, Any]:
    return {"type": "array", "elementType": element, "containsNull": True}


def _vector_size(field: Mapping[str, Any], column: str, sizes: Mapping[str, int]) -> int:
    """The size of vector column ``column``: ``sizes`` gives it, else its Spark ML metadata
    (``ml_attr.num_attrs``, which HashingTF, OneHotEncoder and VectorAssembler set)."""
    if column in sizes:
        return int(sizes[column])
    attrs = (field.get("metadata") or {}).get("ml_attr", {})
    if isinstance(attrs, dict) and "num_attrs" in attrs:
        return int(attrs["num_attrs"])
    raise ValueError(
        f"Column {column!r} is a vector written sparse, and tf.io.SparseFeature needs its size: "
        f"its metadata has no ml_attr.num_attrs. Give it as sizes={{{column!r}: N}}."
    )


def _is_path(schema: str) -> bool:
    """A path (or URL) rather than a DDL string: a string with ``://``, or one naming something
    that exists."""
    return "://" in schema or schema.startswith("file:") or os.path.exists(schema)


@overload
def feature_spec(
    schema: Schema,
    *,
    record_type: Literal["Example"] = ...,
    separator: str = ...,
    vector_layout: Literal["dense", "sparse"] | None = ...,
    sizes: Mapping[str, int] | None = ...,
) -> dict[str, Any]: ...


@overload
def feature_spec(
    schema: Schema,
    *,
    record_type: Literal["SequenceExample"],
    separator: str = ...,
    vector_layout: Literal["dense", "sparse"] | None = ...,
    sizes: Mapping[str, int] | None = ...,
) -> tuple[dict[str, Any], dict[str, Any]]: ...


def feature_spec(
    schema: Schema,
    *,
    record_type: Literal["Example", "SequenceExample"] = "Example",
    separator: str = "/",
    vector_layout: Literal["dense", "sparse"] | None = None,
    sizes: Mapping[str, int] | None = None,
) -> dict[str, Any] | tuple[dict[str, Any], dict[str, Any]]:
    """Return the ``tf.io`` parsing spec for the records written from a DataFrame of ``schema``.

    ``schema`` is a pyspark ``StructType``, its JSON (``StructType.jsonValue()``), a DDL string
    (``"id long not null, x array<float>"``), or the path of a folder a spark-tfrecord write
    left a manifest in (a ``PathLike``, or a string that names an existing file or folder or
    holds ``://``: any other string is taken for DDL). Neither a Spark session nor pyspark is
    needed. From a folder, the schema and the record type come from its
    ``_tfrecord_manifest.json`` (``record_type`` must match it), and its per-feature value
    counts make these entries dense:

    - a list or vector column with exactly k values in every record:
      ``tf.io.FixedLenFeature([k], dtype)``;
    - a scalar column (or struct leaf) that every record holds, nullable or not:
      ``tf.io.FixedLenFeature([], dtype)``;
    - a vector column written with ``vectorLayout=sparse`` is found so without
      ``vector_layout``.

    A folder with no valid manifest raises a ValueError saying so. The rest is as for a schema:

    - a non-nullable scalar column: ``tf.io.FixedLenFeature([], dtype)``
    - a nullable scalar column: ``tf.io.VarLenFeature(dtype)`` (absent → an empty sparse row)
    - an array or vector column: ``tf.io.RaggedFeature(dtype)``
    - with ``vector_layout="sparse"`` (files written with it), a vector column ``c``:
      ``tf.io.SparseFeature(index_key="c/indices", value_key="c/values", dtype=tf.float32,
      size=N)``, N from ``sizes={"c": N}`` or else the column's Spark ML metadata
      (``ml_attr.num_attrs``, which HashingTF, OneHotEncoder and VectorAssembler set); without
      either, a ValueError naming the column. ``tf.io.parse_example`` gives a ``SparseTensor``.
      ``parse_sequence_example`` takes no ``SparseFeature`` among the context features, so with
      ``record_type="SequenceExample"`` the parts are ``tf.io.RaggedFeature`` entries of their
      own, ``c/indices``, ``c/values`` and ``c/size`` (no size needed).
    - in an Example, a list of lists ``c`` (``array<array<…<T>>>``, depth d), written ragged:
      ``tf.io.RaggedFeature(dtype, value_key="c/ragged_flat_values",
      partitions=[tf.io.RaggedFeature.RowLengths("c/ragged_row_lengths_0"), …, "…_{d-2}"],
      row_splits_dtype=tf.int64)``; ``tf.io.parse_example`` gives a ``RaggedTensor`` of the
      column's lists.
    - with ``record_type="SequenceExample"``, ``array<array<T>>`` columns are feature lists, read
      as ``tf.io.RaggedFeature(dtype)`` sequence features; the result is then the pair
      ``(context_features, sequence_features)`` for ``tf.io.parse_sequence_example``.
    - a struct column: one entry per leaf, named by its path joined with ``separator`` (the
      ``pathSeparator`` option the files were written with), ``image/height``; a leaf is
      nullable when it or a struct above it is.
    - an array of structs: one entry per leaf of the element. In an Example, a
      ``tf.io.RaggedFeature(dtype)`` (its lists hold one value per element); a leaf that is a
      list, the ragged entry above with one list per element (a list of fixed length, field
      metadata ``tfrecord.listLength``, stored concatenated: ``UniformRowLength``); in a
      SequenceExample, a sequence feature with one step per element:
      ``tf.io.FixedLenSequenceFeature([], dtype, allow_missing=True)`` for a single value,
      ``tf.io.RaggedFeature(dtype)`` for a list.

    dtype is ``tf.int64`` for integers, booleans, dates and timestamps, ``tf.float32`` for
    float, double, decimal and vectors, ``tf.string`` for string and binary. TensorFlow is
    imported only when this is called.

    >>> import glob, tempfile
    >>> import tensorflow as tf
    >>> from spark_tfrecord import write
    >>> df = spark.createDataFrame([(1, [0.5, 1.5])], "id long not null, x array<float>")
    >>> spec = feature_spec(df.schema)
    >>> spec["id"]
    FixedLenFeature(shape=[], dtype=tf.int64, default_value=None)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     write(df, tmp + "/train")
    ...     files = glob.glob(tmp + "/train/part-*")
    ...     ds = tf.data.TFRecordDataset(files).batch(32)
    ...     batch = next(iter(ds.map(lambda records: tf.io.parse_example(records, spec))))
    >>> batch["id"].numpy().tolist(), batch["x"].to_list()
    ([1], [[0.5, 1.5]])
    >>> nested = spark.createDataFrame([], "image struct<height long, box struct<x float>>")
    >>> sorted(feature_spec(nested.schema))
    ['image/box/x', 'image/height']
    >>> lists = spark.createDataFrame([], "tokens array<array<string>>")
    >>> feature_spec(lists.schema)["tokens"].partitions
    (RowLengths(key='tokens/ragged_row_lengths_0'),)
    """
    import tensorflow as tf  # type: ignore[import-untyped,import-not-found,unused-ignore]

    counts: Mapping[str, tuple[int, int]] = {}
    if isinstance(schema, os.PathLike) or (isinstance(schema, str) and _is_path(schema)):
        struct, counts = _from_manifest(os.fspath(schema), record_type)
    elif isinstance(schema, str):
        from spark_tfrecord._format.ddl import parse_ddl

        try:
            struct = parse_ddl(schema)
        except ValueError as e:
            if "/" not in schema and os.sep not in schema:
                raise
            raise ValueError(
                f"No such file or folder: {schema!r}; and as a DDL schema (what a string that "
                f"names no existing path is taken for): {e}"
            ) from None
    elif isinstance(schema, Mapping):
        struct = schema
    else:
        struct = schema.jsonValue()  # a pyspark StructType
    sequence_type = record_type == "SequenceExample"
    known_sizes: Mapping[str, int] = sizes or {}
    context: dict[str, Any] = {}
    sequence: dict[str, Any] = {}

    ragged_size = tf.io.RaggedFeature(tf.int64, row_splits_dtype=tf.int64)

    def ragged(data_type: Any, column: str) -> Any:
        return tf.io.RaggedFeature(_dtype(tf, data_type, column), row_splits_dtype=tf.int64)

    def ragged_layout(data_type: Any, name: str, column: str) -> Any:
        """The list of lists ``data_type`` (depth >= 2) written ragged as feature ``name``."""
        return tf.io.RaggedFeature(
            _dtype(tf, _innermost(data_type), column),
            value_key=name + separator + "ragged_flat_values",
            partitions=[
                tf.io.RaggedFeature.RowLengths(name + separator + f"ragged_row_lengths_{k}")
                for k in range(_depth(data_type) - 1)
            ],
            row_splits_dtype=tf.int64,
        )

    def fixed_length(name: str) -> int | None:
        """k when the manifest says feature ``name`` has k >= 1 values in every record."""
        low, high = counts.get(name, (-1, -2))
        return low if low == high and low >= 1 else None

    def sparse_vector(name: str) -> bool:
        if vector_layout is not None:
            return vector_layout == "sparse"
        # From a manifest: the keys the files hold say how the vector was written.
        return name not in counts and name + separator + "indices" in counts

    def element_leaves(struct: Mapping[str, Any], name: str, column: str) -> None:
        for field in struct["fields"]:
            leaf, path = name + separator + field["name"], column + "." + field["name"]
            data_type = field["type"]
            if _is_struct(data_type):
                element_leaves(data_type, leaf, path)
            elif _is_array(data_type) and _is_struct(data_type["elementType"]):
                raise ValueError(
                    f"Column {path!r}: an array of structs cannot hold arrays of structs."
                )
            elif sequence_type and _depth(data_type) > 1:
                raise ValueError(
                    f"Column {path!r}: an array of structs in a SequenceExample cannot hold "
                    "arrays of arrays; record_type='Example' writes them ragged."
                )
            elif _is_vector(data_type):
                raise ValueError(
                    f"Column {path!r}: a vector inside an array of structs is not supported."
                )
            elif not sequence_type:
                metadata = field.get("metadata") or {}
                length = int(metadata.get("tfrecord.listLength", 0))
                if _is_array(data_type) and length > 0 and _depth(data_type) == 1:
                    # A list of fixed length per element, stored concatenated.
                    context[leaf] = tf.io.RaggedFeature(
                        _dtype(tf, data_type["elementType"], path),
                        value_key=leaf,
                        partitions=[tf.io.RaggedFeature.UniformRowLength(length)],
                        row_splits_dtype=tf.int64,
                    )
                elif _is_array(data_type):
                    # One list per element: a list of lists, written ragged.
                    context[leaf] = ragged_layout(_array_of(data_type), leaf, path)
                else:
                    context[leaf] = ragged(data_type, path)
            elif _is_array(data_type):
                sequence[leaf] = ragged(data_type["elementType"], path)
            else:
                sequence[leaf] = tf.io.FixedLenSequenceFeature(
                    [], _dtype(tf, data_type, path), allow_missing=True
                )

    def leaves(struct: Mapping[str, Any], prefix: str, column_prefix: str, nullable: bool) -> None:
        for field in struct["fields"]:
            name, column = prefix + field["name"], column_prefix + field["name"]
            data_type = field["type"]
            field_nullable = bool(field.get("nullable", True))
            if _is_struct(data_type):
                leaves(data_type, name + separator, column + ".", nullable or field_nullable)
            elif _is_array(data_type) and _is_struct(data_type["elementType"]):
                element_leaves(data_type["elementType"], name, column)
            elif _is_array(data_type) and _is_array(data_type["elementType"]):
                if not sequence_type:
                    context[name] = ragged_layout(data_type, name, column)
                elif _depth(data_type) > 2:
                    raise ValueError(
                        f"Column {column!r} is an array of arrays of arrays: a SequenceExample's "
                        "feature list holds lists only; record_type='Example' writes it ragged."
                    )
                else:
                    sequence[name] = ragged(data_type["elementType"]["elementType"], column)
            elif _is_vector(data_type) and sparse_vector(name):
                if sequence_type:  # parse_sequence_example takes no SparseFeature in the context
                    for part, dtype in (("indices", tf.int64), ("values", tf.float32)):
                        context[name + separator + part] = tf.io.RaggedFeature(
                            dtype, row_splits_dtype=tf.int64
                        )
                    context[name + separator + "size"] = ragged_size
                    continue
                context[name] = tf.io.SparseFeature(
                    index_key=name + separator + "indices",
                    value_key=name + separator + "values",
                    dtype=tf.float32,
                    size=_vector_size(field, column, known_sizes),
                )
            elif _is_array(data_type) or _is_vector(data_type):
                element = data_type["elementType"] if _is_array(data_type) else data_type
                dtype = _dtype(tf, element, column)
                k = fixed_length(name)
                if k is not None:  # the manifest: k values in every record
                    context[name] = tf.io.FixedLenFeature([k], dtype)
                else:
                    context[name] = tf.io.RaggedFeature(dtype, row_splits_dtype=tf.int64)
            elif fixed_length(name) == 1 or not (nullable or field_nullable):
                context[name] = tf.io.FixedLenFeature([], _dtype(tf, data_type, column))
            else:
                context[name] = tf.io.VarLenFeature(_dtype(tf, data_type, column))

    leaves(struct, "", "", False)
    if sequence_type:
        return context, sequence
    return context


def _from_manifest(
    path: str, record_type: str
) -> tuple[Mapping[str, Any], Mapping[str, tuple[int, int]]]:
    """The schema JSON and the per-feature value counts of the folder ``path``'s manifest."""
    from spark_tfrecord._format.manifest import MANIFEST_NAME, _read_manifest, _Stale, local_path

    folder = local_path(path, "feature_spec")
    try:
        info = _read_manifest(folder)
    except _Stale as e:
        raise ValueError(
            f"feature_spec({path!r}) needs the folder's valid {MANIFEST_NAME}, which every "
            f"spark-tfrecord write leaves, and here {e}. Write the data with spark-tfrecord "
            "(spark_tfrecord.write or format('tfrecord')), or pass the schema instead: a DDL "
            "string such as 'id long, x array<float>', or a StructType."
        ) from None
    if info.record_type not in ("Example", "SequenceExample"):
        raise ValueError(
            f"{path} holds {info.record_type} records: raw bytes, with no features to parse."
        )
    if info.record_type != record_type:
        raise ValueError(
            f"{path} holds {info.record_type} records, but feature_spec was called with "
            f"record_type={record_type!r}: pass record_type={info.record_type!r}."
        )
    if info.schema_json is None:
        raise ValueError(f"{path}'s {MANIFEST_NAME} has no schema_json.")
    return info.schema_json, info.features
