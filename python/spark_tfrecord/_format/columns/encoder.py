"""The Example encoder: rows as framed ``tf.train.Example`` records, byte for byte as the jar's.

>>> import pyarrow as pa
>>> encoder = ExampleEncoder("id bigint, x array<float>")
>>> batch = pa.RecordBatch.from_pydict({"id": [7], "x": [[1.0, 2.0]]}, schema=pa.schema(
...     [("id", pa.int64()), ("x", pa.list_(pa.float32()))]))
>>> encoder.encode(batch).records()[0].hex()
'0a200a0b0a02696412051a030a01070a110a0178120c120a0a080000803f00000040'

The rules and errors are the jar's (``codec/ExampleSerializer``); a batch is anything with
pyarrow's ``RecordBatch`` interface (``num_rows``, ``column(i)``), columns in the schema's order.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Union

import numpy as np

from spark_tfrecord import errors
from spark_tfrecord._format.columns import arrow
from spark_tfrecord._format.columns.elements import element_plan
from spark_tfrecord._format.columns.feature_paths import (
    BYTE_ARRAY,
    EXAMPLE,
    RECORD_TYPES,
    SEQUENCE_EXAMPLE,
    validate,
)
from spark_tfrecord._format.columns.features import (
    Feature,
    Issues,
    Plan,
    feature_list_plan,
    list_plan,
    scalar_plan,
)
from spark_tfrecord._format.columns.ragged import ragged_plan
from spark_tfrecord._format.columns.schema import depth, is_array, is_vector
from spark_tfrecord._format.columns.tensors import tensor_plan
from spark_tfrecord._format.columns.vectors import dense_vector_plan, sparse_vector_plan
from spark_tfrecord._format.frames.encode_errors import EncodeError, argument_error, data_error
from spark_tfrecord._format.frames.frames import Encoded, frame
from spark_tfrecord._format.frames.packing import Parts, Ragged, const, field, lengths, varint

Schema = Union[str, Mapping[str, Any]]


class ExampleEncoder:
    """Encodes batches of rows of one schema as the jar writes them.
    ``schema``: Spark's JSON (a mapping or its text), a ``StructType`` or DDL. The options are the
    jar's write options (camelCased); ``require_values`` fails on a null as a TFDS write does.
    """

    def __init__(
        self,
        schema: Schema | Any,
        *,
        record_type: str = EXAMPLE,
        path_separator: str = "/",
        vector_layout: str = "dense",
        require_values: bool = False,
    ) -> None:
        self.schema = schema_json(schema)
        self.record_type = _one_of("recordType", record_type, RECORD_TYPES)
        self.sparse_vectors = (
            _one_of("vectorLayout", vector_layout, ("dense", "sparse")) == "sparse"
        )
        if not path_separator:
            raise _invalid("pathSeparator", path_separator, "a non-empty string (default /)")
        self.require_values = require_values
        self._sequence = self.record_type == SEQUENCE_EXAMPLE
        self.leaves = validate(self.schema, self.record_type, path_separator, self.sparse_vectors)
        self._keys = [_key_header(leaf.name) for leaf in self.leaves]
        #: Per feature, 1 if it is a feature list, else 0.
        self._in_lists = [int(self._sequence and depth(x.data_type) == 2) for x in self.leaves]
        #: Per feature, the fewest and most values a row (a feature list: a step) held so far.
        self._fewest = np.full(len(self.leaves), np.iinfo(np.int64).max, np.int64)
        self._most = np.full(len(self.leaves), -1, np.int64)
        self._plans: list[tuple[int, Plan]] = []
        i = 0
        while i < len(self.leaves):
            width, plan = self._plan(i)
            self._plans.append((i, plan))
            i += width

    def encode(self, batch: Any) -> Encoded:
        """The records of a batch's rows; a value the jar cannot write raises its error."""
        n = int(batch.num_rows)
        if self.record_type == BYTE_ARRAY:
            return frame(self._byte_array(batch.column(0), n), n)
        issues = Issues()
        features: list[Feature | None] = [None] * len(self.leaves)
        for first, plan in self._plans:
            for k, feature in enumerate(plan(batch, n, issues)):
                features[first + k] = feature
        if self.require_values:
            for i, feature in enumerate(features):
                if feature is not None and not feature.present.all():
                    row = int(np.argmin(feature.present))
                    issues.add(row, i, (-1,), self._absent(i, row))
        issues.raise_first()
        # The entries of the context's features (0) and of its feature lists (1), with their sizes.
        entries: tuple[list[Ragged], list[Ragged]] = ([], [])
        sizes = np.zeros((2, n), np.int64)
        for i, f in enumerate(features):
            assert f is not None
            if len(f.counts):
                self._fewest[i] = min(self._fewest[i], int(f.counts.min()))
                self._most[i] = max(self._most[i], int(f.counts.max()))
            entry = self._entry(i, f)
            entries[self._in_lists[i]].extend(entry.parts)
            sizes[self._in_lists[i]] += entry.size
        if not self._sequence:
            return frame(field(b"\x0a", Parts(entries[0], sizes[0]), np.ones(n, np.bool_)).parts, n)
        record = [
            *field(b"\x0a", Parts(entries[0], sizes[0]), sizes[0] > 0).parts,
            *field(b"\x12", Parts(entries[1], sizes[1]), sizes[1] > 0).parts,
        ]
        return frame(record, n)

    def value_counts(self) -> tuple[dict[str, tuple[int, int]], dict[str, tuple[int, int]]]:
        """Per feature and feature list: the fewest and most values a record (step) held so far."""
        found: list[dict[str, tuple[int, int]]] = [{}, {}]
        for i, leaf in enumerate(self.leaves):
            if self._most[i] >= 0:
                found[self._in_lists[i]][leaf.name] = (int(self._fewest[i]), int(self._most[i]))
        return found[0], found[1]

    def _entry(self, i: int, feature: Feature) -> Parts:
        """The map entry ``{key: name, value: feature}`` of feature i, for its present rows."""
        present, value = feature.present, feature.value
        key = self._keys[i]
        prefix = lengths(value.size, present)
        inner = Parts(
            [const(key, present), prefix, *value.parts],
            np.where(present, len(key) + prefix.size + value.size, 0),
        )
        return field(b"\x0a", inner, present)

    def _absent(self, i: int, row: int) -> Callable[[], EncodeError]:
        column = self.leaves[i].column
        return lambda: data_error(
            errors.DATA_MISMATCH,
            column,
            f"Column '{column}' is null in a row, and a TensorFlow Datasets feature has no null "
            "(its parser fails on a record without it). Drop or fill the nulls first.",
            row,
        )

    def _byte_array(self, column: Any, n: int) -> list[Ragged]:
        ok = arrow.valid(column)
        if ok is not None and not ok.all():
            name = str(self.schema["fields"][0]["name"])
            raise data_error(
                errors.DATA_MISMATCH,
                name,
                f"Column '{name}' is null in a row: recordType ByteArray writes each value "
                "as one record and has nothing to write for a null. Filter the nulls out first.",
                int(np.argmin(ok)),
            )
        buf, off = arrow.binary(column)
        return [Ragged(buf, off[:-1], np.diff(off))]

    def _plan(self, i: int) -> tuple[int, Plan]:
        """The plan of the leaves from i on: how many it covers, and the plan."""
        leaf = self.leaves[i]
        if leaf.tensor_part:
            return 2, tensor_plan(leaf, i)
        if leaf.vector_part:
            return 3, sparse_vector_plan(leaf, i)
        if leaf.ragged_level >= 0:
            d = depth(leaf.data_type)
            return d, ragged_plan(leaf, i, d)
        if leaf.in_array_of_structs:
            return 1, element_plan(leaf, i, self._sequence)
        t = leaf.data_type
        if is_vector(t):
            return 1, dense_vector_plan(leaf)
        if self._sequence and depth(t) == 2:
            return 1, feature_list_plan(leaf, i)
        if is_array(t):
            return 1, list_plan(leaf, i, fixed_length=0 if self._sequence else leaf.list_length)
        return 1, scalar_plan(leaf)


def schema_json(schema: Schema | Any) -> dict[str, Any]:
    """Spark's JSON form of a schema given as JSON (a mapping or text), a ``StructType``, or DDL."""
    import json

    if hasattr(schema, "jsonValue"):
        return dict(schema.jsonValue())
    if isinstance(schema, Mapping):
        return dict(schema)
    text = str(schema).strip()
    if text.startswith("{"):
        return dict(json.loads(text))
    from spark_tfrecord._format.columns.ddl import parse_ddl

    return parse_ddl(text)


def _one_of(option: str, value: str, valid: Sequence[str]) -> str:
    for v in valid:
        if v.lower() == str(value).strip().lower():
            return v
    raise _invalid(option, str(value), ", ".join(valid))


def _invalid(option: str, value: str, valid: str) -> EncodeError:
    return argument_error(
        errors.INVALID_OPTION,
        f"Invalid value '{value}' for TFRecord option '{option}'. Valid values: {valid}.",
        option=option,
        value=value,
        valid=valid,
    )


def _key_header(name: str) -> bytes:
    """``key = 1`` of a map entry, then the tag of its ``value = 2``."""
    key = name.encode("utf-8")
    return b"\x0a" + varint(len(key)) + key + b"\x12"
