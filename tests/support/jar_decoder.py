"""The jar's decoder and the Python codec on the same file and schema, in one exact form.

The jar's side is the data source's scan, called in this process through JPype
(``io.github.sparktfrecord.tools.RecordResults``, on the JVM that :mod:`spark_tfrecord.local`
starts): each record's row as exact text (docs in ``tools/ExactText.scala``), or its error's
condition and parameters. The Python side is what the loaders give (``grain_source``, which
``torch_dataset`` shares): ``src[i]`` (the record path) and ``src.collate(src.__getitems__(...))``
(the batch path). Both become `Tree` values: atoms are the exact text's (``f:3f800000``,
``s:c3a9``, ``-5``), lists are lists, structs dicts, null None; so a difference shows as the
column and value it is in.

Only two lines name private names of the package: :func:`_start_jvm` (``local._tools``, which
starts the JVM on the bundled jar and pyspark's jars) and :func:`schema_of_ddl`
(``_format.ddl.parse_ddl``); the restructure of issue 42 changes those lines alone.
"""

from __future__ import annotations

import datetime
import json
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Union

import numpy as np

#: A value in exact form: an atom (a string), null (None), a list or a struct.
Tree = Union[str, None, list["Tree"], dict[str, "Tree"]]
#: Spark's JSON type names (and ours) of the types stored as int64 and shown as an integer.
INTEGERS = ("byte", "short", "integer", "long", "date", "timestamp", "timestamp_ntz")
#: Spark's DDL names of the JSON names that differ.
_DDL_NAMES = {"byte": "tinyint", "short": "smallint", "integer": "int", "long": "bigint"}
_EPOCH_DAY = datetime.date(1970, 1, 1)
_RECORD_RESULTS = "io.github.sparktfrecord.tools.RecordResults"
_FLOAT_TEXT = "io.github.sparktfrecord.codec.FloatText"


@dataclass(frozen=True)
class Row:
    """A record's row: each top-level column's value."""

    values: dict[str, Tree]


@dataclass(frozen=True)
class Failure:
    """A record's error (or the read's, before any record): its condition and parameters."""

    condition: str
    parameters: dict[str, str] = field(default_factory=dict)

    @property
    def offset(self) -> int | None:
        found = self.parameters.get("offset")
        return None if found is None else int(found)


Result = Union[Row, Failure]


# --- the jar ---------------------------------------------------------------------------------


def _start_jvm() -> Any:
    """JPype's ``JClass``, with the JVM of :mod:`spark_tfrecord.local` started (the
    ``spark_tfrecord.testing`` plugin stops it at the end of the session)."""
    import jpype

    from spark_tfrecord import local

    local._tools()  # the one private name: starts the JVM on the bundled jar and pyspark's
    return jpype.JClass


def schema_of_ddl(ddl: str) -> dict[str, Any]:
    """The schema of a DDL string in Spark's JSON form, which both sides are given. (Parsed in
    Python: Spark's parser, in the JVM of `spark_tfrecord.local`, starts Spark's logging, which
    that JVM's simple logger cannot be cast to.)"""
    from spark_tfrecord._format.columns.ddl import parse_ddl  # a private name: see _start_jvm

    return parse_ddl(ddl)


def jar_inferred_schema(path: str) -> dict[str, Any]:
    """The schema the data source infers for the file."""
    from spark_tfrecord import local

    return local.infer_schema([path])


def jar_results(
    path: str, schema: Mapping[str, Any], options: Mapping[str, str] | None = None
) -> list[tuple[int, Result]]:
    """Each record of the file as the jar's scan reads it (FAILFAST, going on after a record
    that fails), with its offset: a `Row`, or a `Failure`; a framing error ends the list, a
    schema's error is the one result (offset -1)."""
    jclass = _start_jvm()
    java_options = jclass("java.util.HashMap")()
    for key, value in {"mode": "FAILFAST", **(options or {})}.items():
        java_options.put(key, value)
    found = jclass(_RECORD_RESULTS).read(path, json.dumps(schema), java_options)
    out: list[tuple[int, Result]] = []
    for result in found:
        kind, offset, *rest = (str(s) for s in result)
        if kind == "row":
            parsed = parse(rest[0])
            assert isinstance(parsed, dict), rest[0]
            out.append((int(offset), Row(parsed)))
        else:
            condition, pairs = rest[0], rest[1:]
            out.append((int(offset), Failure(condition, dict(zip(pairs[::2], pairs[1::2])))))
    return out


def jar_float_texts(values: Sequence[float]) -> list[str]:
    """Each float32 as the jar writes it as text (``codec.FloatText``: a float feature read
    into a string column, or into a decimal one before its rounding)."""
    import jpype

    text = _start_jvm()(_FLOAT_TEXT).text
    return [str(text(jpype.JFloat(v))) for v in values]


def parse(text: str) -> Tree:
    """A value of the jar's exact text as a `Tree`."""
    tree, end = _parse(text, 0)
    if end != len(text):
        raise ValueError(f"trailing text at {end} of {text!r}")
    return tree


def _parse(text: str, at: int) -> tuple[Tree, int]:
    if text.startswith("vec(", at):  # vec(size){i=v,...}: kept whole, an atom
        end = text.index("}", at) + 1
        return text[at:end], end
    if text[at] in "[{":
        close = "]" if text[at] == "[" else "}"
        items: list[Tree] = []
        names: list[str] = []
        at += 1
        while text[at] != close:
            if close == "}":
                equals = text.index("=", at)
                names.append(text[at:equals])
                at = equals + 1
            item, at = _parse(text, at)
            items.append(item)
            if text[at] == ",":
                at += 1
        return (items if close == "]" else dict(zip(names, items))), at + 1
    end = at
    while end < len(text) and text[end] not in ",]}":
        end += 1
    atom = text[at:end]
    return (None if atom == "null" else atom), end


# --- the Python codec, through the loaders ---------------------------------------------------


def ddl_of(schema: Mapping[str, Any]) -> str:
    """A schema's DDL string, which the loaders take for a folder without a manifest."""
    return ", ".join(_ddl_field(f) for f in schema["fields"])


def _ddl_field(f: Mapping[str, Any]) -> str:
    if f.get("metadata"):
        raise ValueError(f"column {f['name']!r}: its metadata has no DDL form")
    not_null = "" if f.get("nullable", True) else " NOT NULL"
    return f"`{f['name']}` {_ddl_type(f['type'])}{not_null}"


def _ddl_type(t: Any) -> str:
    if isinstance(t, str):
        return _DDL_NAMES.get(t, t)
    if t["type"] == "array":
        return f"array<{_ddl_type(t['elementType'])}>"
    if t["type"] == "struct":
        return (
            "struct<" + ", ".join(_ddl_field(f).replace("` ", "`: ", 1) for f in t["fields"]) + ">"
        )
    raise ValueError(f"{t} has no DDL form the loaders read")


def python_source(path: str, schema: Mapping[str, Any]) -> Any:
    """The loaders' source of the file for the schema (``grain_source``, which builds on what
    ``torch_dataset`` does), or the error making it raises."""
    import spark_tfrecord

    return spark_tfrecord.grain_source(path, columns=ddl_of(schema))


def failure(error: BaseException) -> Failure:
    """A Python error as a `Failure` (its condition, or its class where it has none)."""
    from spark_tfrecord import errors

    condition = errors.condition(error)
    if condition is None:
        return Failure(type(error).__name__, {"message": str(error)})
    return Failure(condition, errors.parameters(error))


def python_results(path: str, schema: Mapping[str, Any]) -> list[Result]:
    """Each record as the record path reads it (``src[i]``); one `Failure` when the source
    cannot be made."""
    try:
        source = python_source(path, schema)
        count = len(source)
    except Exception as e:  # any error is a result to compare
        return [failure(e)]
    out: list[Result] = []
    for i in range(count):
        try:
            out.append(Row(record_tree(schema, source[i])))
        except Exception as e:
            out.append(failure(e))
    return out


def python_batch(source: Any, schema: Mapping[str, Any], indices: Sequence[int]) -> list[Result]:
    """The records ``indices`` of a `python_source` as the batch path reads them (``collate``
    of ``__getitems__``), split back into rows; one `Failure` when the batch fails."""
    try:
        batch = source.collate(source.__getitems__(list(indices)))
    except Exception as e:
        return [failure(e)]
    return [Row(r) for r in batch_trees(schema, batch, len(indices))]


# --- Python values as trees ------------------------------------------------------------------


def _name(t: Any) -> str:
    if isinstance(t, str):
        return "decimal" if t.startswith("decimal") else t
    return str(t["type"])


def _bits32(x: Any) -> str:
    return f"f:{struct.unpack('<I', np.float32(x).tobytes())[0]:08x}"


def _bits64(x: Any) -> str:
    return f"d:{struct.unpack('<Q', np.float64(x).tobytes())[0]:016x}"


def _is_float32(x: Any) -> bool:
    return isinstance(x, np.floating) and x.dtype == np.float32


def value_tree(t: Any, value: Any) -> Tree:
    """A value of the Python codec (or of a pyspark Row) as the jar's exact form of a column
    of type ``t`` (Spark's JSON). A value of another kind than the type's gets an atom that
    says what it is (``int64:2`` for a boolean column), which no jar value equals."""
    if value is None:
        return None
    name = _name(t)
    if name == "array":
        if hasattr(value, "to_list") and hasattr(value, "row_lengths"):  # Ragged
            value = value.to_list()
        return [value_tree(t["elementType"], v) for v in value]
    if name == "struct":
        return {f["name"]: value_tree(f["type"], value[f["name"]]) for f in t["fields"]}
    if name == "udt":
        return _vector(value)
    if name == "boolean":
        if isinstance(value, (bool, np.bool_)):
            return "true" if value else "false"
        return {0: "false", 1: "true"}.get(int(value), f"int64:{int(value)}")
    if name in INTEGERS:
        if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
            return str((value - _EPOCH_DAY).days)  # a pyspark Row's date
        if isinstance(value, (bool, float, np.floating, datetime.datetime)):
            return f"{type(value).__name__}:{value!r}"
        return str(int(value))
    if name == "float":
        if _is_float32(value) or _bits64(np.float32(value)) == _bits64(value):
            return _bits32(value)  # a float32, or a double that is one (a pyspark Row's)
        return "float64:" + _bits64(value)
    if name == "double":
        return _bits64(value)
    if name == "decimal":
        if isinstance(value, Decimal):
            return f"dec:{value:f}"
        return f"{type(value).__name__}:" + (_bits32(value) if _is_float32(value) else repr(value))
    if name == "string":
        if isinstance(value, str):
            return "s:" + value.encode("utf-8").hex()
        return f"{type(value).__name__}:{value!r}"
    if name == "binary":
        if isinstance(value, (bytes, bytearray, memoryview)):
            return "b:" + bytes(value).hex()
        return f"{type(value).__name__}:{value!r}"
    raise ValueError(f"no exact form for {t}")


def _vector(value: Any) -> str:
    """An ML vector as ``vec(size){i=d:bits,...}`` (entries whose bits are not +0.0's)."""
    if hasattr(value, "indices") and hasattr(value, "size"):  # Sparse, SparseVector
        size, indices, values = int(value.size), list(value.indices), list(value.values)
    else:
        values = list(np.asarray(value))
        size, indices = len(values), list(range(len(values)))
    entries = [f"{int(i)}={_bits64(v)}" for i, v in zip(indices, values) if _bits64(v) != _ZERO]
    return f"vec({size}){{{','.join(entries)}}}"


_ZERO = "d:" + "0" * 16


def _is_struct_array(t: Any) -> bool:
    return _name(t) == "array" and _name(t["elementType"]) == "struct"


def _array_of(t: Any) -> dict[str, Any]:
    return {"type": "array", "elementType": t, "containsNull": True}


def _zip_elements(struct: Any, parts: Mapping[str, Tree], *, batch: bool = False) -> Tree:
    """An array of structs from its leaves' lists (one item per element); None when every leaf
    is None (the record has none of the features). In a batch, which gives an absent leaf no
    values, an empty leaf beside others that hold values is an absent one: null in each
    element, an empty list for a list leaf (as `as_loaders_hold` has a null list there)."""
    present = [v for v in parts.values() if v is not None]
    if not present:
        return None
    lengths = {len(v) for v in present if isinstance(v, list) and (len(v) or not batch)}
    if len(lengths) > 1 or (not lengths and not batch):
        return f"leaves of unequal lengths: {parts}"
    size = lengths.pop() if lengths else 0
    return [
        {f["name"]: _item(parts[f["name"]], e, f["type"]) for f in struct["fields"]}
        for e in range(size)
    ]


def _item(part: Tree, e: int, t: Any) -> Tree:
    if isinstance(part, list) and e < len(part):
        return part[e]
    return [] if isinstance(part, list) and _name(t) == "array" else None


def record_tree(schema: Mapping[str, Any], record: Mapping[str, Any]) -> dict[str, Tree]:
    """A record of the loaders (struct leaves keyed by their path ``a/b``) as a row's tree."""
    return {f["name"]: _leaf_tree(f["type"], record, f["name"]) for f in schema["fields"]}


def _leaf_tree(t: Any, record: Mapping[str, Any], key: str) -> Tree:
    if _name(t) == "struct":
        return {f["name"]: _leaf_tree(f["type"], record, f"{key}/{f['name']}") for f in t["fields"]}
    if _is_struct_array(t):  # an array of structs: a list per leaf, one item per element
        struct = t["elementType"]
        parts = {
            f["name"]: _leaf_tree(_array_of(f["type"]), record, f"{key}/{f['name']}")
            for f in struct["fields"]
        }
        return _zip_elements(struct, parts)
    return value_tree(t, record[key])


def batch_trees(schema: Mapping[str, Any], batch: Mapping[str, Any], size: int) -> list[Any]:
    """A collated batch split back into rows' trees (``Layout.collate``'s forms: stacked
    arrays, ``(values, offsets)``, ``(values, offsets, inner offsets...)``)."""
    rows: list[dict[str, Tree]] = [{} for _ in range(size)]
    for f in schema["fields"]:
        for j, value in enumerate(_batch_values(f["type"], batch, f["name"], size)):
            rows[j][f["name"]] = value
    return rows


def _batch_values(t: Any, batch: Mapping[str, Any], key: str, size: int) -> list[Tree]:
    name = _name(t)
    if name == "struct":
        parts = {
            f["name"]: _batch_values(f["type"], batch, f"{key}/{f['name']}", size)
            for f in t["fields"]
        }
        return [{n: parts[n][j] for n in parts} for j in range(size)]
    if _is_struct_array(t):
        struct = t["elementType"]
        lists = {
            f["name"]: _batch_values(_array_of(f["type"]), batch, f"{key}/{f['name']}", size)
            for f in struct["fields"]
        }
        return [
            _zip_elements(struct, {n: v[j] for n, v in lists.items()}, batch=True)
            for j in range(size)
        ]
    got = batch[key]
    if not isinstance(got, tuple):  # a value per record, stacked
        return [value_tree(t, got[j]) for j in range(size)]
    values, *offsets = got
    trees: list[Tree] = []
    for j in range(size):
        if name != "array":  # a scalar: none (null) or one value
            start, stop = int(offsets[0][j]), int(offsets[0][j + 1])
            trees.append(None if stop == start else value_tree(t, values[start]))
            continue
        trees.append(_nested(t, values, offsets, 0, int(offsets[0][j]), int(offsets[0][j + 1])))
    return trees


def _nested(t: Any, values: Any, offsets: Sequence[Any], level: int, start: int, stop: int) -> Tree:
    """The items ``[start, stop)`` of level ``level`` of a batch's lists, as a list."""
    element = t["elementType"]
    if level + 1 == len(offsets):
        return [value_tree(element, values[k]) for k in range(start, stop)]
    below = offsets[level + 1]
    return [
        _nested(element, values, offsets, level + 1, int(below[k]), int(below[k + 1]))
        for k in range(start, stop)
    ]


def as_loaders_hold(t: Any, tree: Tree, *, batch: bool = False) -> Tree:
    """A jar's value as the loaders can hold it: their records key a struct's leaves by path,
    so a null struct is a struct of nulls; in a batch (``(values, offsets)``, which gives a
    null no values) a null list is an empty one; and a string's bytes that are not UTF-8 are
    a ``str`` as Java decodes them (``new String(bytes, UTF_8)``, which pyspark shows of the
    value Spark keeps: U+FFFD for each invalid sequence)."""
    name = _name(t)
    if name == "string" and isinstance(tree, str) and tree.startswith("s:"):
        return "s:" + _java_text(bytes.fromhex(tree[2:])).encode().hex()
    if name == "struct":
        inner = tree if isinstance(tree, dict) else {}
        return {
            f["name"]: as_loaders_hold(f["type"], inner.get(f["name"]), batch=batch)
            for f in t["fields"]
        }
    if name == "array":
        if tree is None:
            return [] if batch else None
        if not isinstance(tree, list):
            return tree
        return [as_loaders_hold(t["elementType"], v, batch=batch) for v in tree]
    return tree


def _java_text(raw: bytes) -> str:
    """The bytes as Java decodes them as UTF-8 (in the jar's JVM, when they are not UTF-8)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        jclass = _start_jvm()
        return str(
            jclass("java.lang.String")(raw, jclass("java.nio.charset.StandardCharsets").UTF_8)
        )


def row_as_loaders_hold(
    schema: Mapping[str, Any], row: Mapping[str, Tree], *, batch: bool = False
) -> dict[str, Tree]:
    """`as_loaders_hold` of each column of a row."""
    return {
        f["name"]: as_loaders_hold(f["type"], row[f["name"]], batch=batch) for f in schema["fields"]
    }
