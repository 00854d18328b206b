"""TensorFlow Datasets features in plain Python: ``features.json`` → the Spark schema the jar gives.

Read as the jar reads them (TFDS not needed); a connector the jar refuses is refused with its
message (:class:`~spark_tfrecord.errors.ArgumentError`, ``TFRECORD_TFDS_FEATURES``).

>>> from spark_tfrecord._format.datasets.tfds_features import parse, schema
>>> found = schema(parse('''{"pythonClassName":
...     "tensorflow_datasets.core.features.features_dict.FeaturesDict", "featuresDict":
...     {"features": {"label": {"pythonClassName":
...     "tensorflow_datasets.core.features.class_label_feature.ClassLabel",
...     "classLabel": {"numClasses": "10"}}}}}'''), {})
>>> found["fields"][0]["type"], found["fields"][0]["metadata"]
('long', {'tfds.feature': 'ClassLabel'})
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Union

from spark_tfrecord import errors
from spark_tfrecord._format.columns.feature_paths import LIST_LENGTH_KEY
from spark_tfrecord._format.columns.schema import (
    TENSOR_DTYPE_KEY,
    TENSOR_ELEMENTS,
    TENSOR_ENCODING_KEY,
    TENSOR_ENCODINGS,
)

#: Field metadata keys of TFDS features (``TFDSFeatures``).
CONNECTOR_KEY, CLASS_NAMES_KEY = "tfds.feature", "tfds.classNames"

#: The keys of a feature's proto JSON that are not its content.
_NOT_CONTENT = ("pythonClassName", "description", "valueRange")
#: The Spark types of TFDS dtypes but the integers' (``TypeTable.fromTfdsDtype``).
_SPARK_TYPES = {"bool": "boolean", "float64": "double", "string": "binary"}
_SPARK_TYPES.update(dict.fromkeys(("float32", "float16", "bfloat16"), "float"))


@dataclass(frozen=True)
class FeaturesDict:
    """A ``FeaturesDict``: its features in order."""

    fields: tuple[tuple[str, Feature], ...]


@dataclass(frozen=True)
class SequenceFeature:
    """A ``Sequence``, or a ``Dataset`` (``connector``), which TFDS stores the same way."""

    feature: Feature
    connector: str = "Sequence"


@dataclass(frozen=True)
class Tensor:
    """One stored tensor: connector, TFDS dtype, one value's shape (-1: unknown), bytes encoding."""

    connector: str
    dtype: str
    shape: tuple[int, ...] = field(default=())
    encoding: str = "none"


Feature = Union[FeaturesDict, SequenceFeature, Tensor]


def _invalid(path: str, why: str) -> errors.ArgumentError:
    at = f" at '{path}'" if path else ""
    return errors.ArgumentError(errors.TFDS_FEATURES, f"Invalid TFDS features{at}: {why}")


def _unsupported(path: str, connector: str, why: str) -> errors.ArgumentError:
    reason = f"TFDS feature '{path}' ({connector}) is not supported: {why}."
    return errors.ArgumentError(errors.TFDS_FEATURES, reason)


def _join(path: str, key: str) -> str:
    return f"{path}/{key}" if path else key


def json_text(v: Any) -> str:
    """Jackson's ``asText`` of a scalar JSON value."""
    if isinstance(v, bool):
        return "true" if v else "false"
    return "" if v is None or isinstance(v, (dict, list)) else str(v)


def _true(v: Any) -> bool:
    """Jackson's ``asBoolean``: true, or the text ``true``."""
    return v is True or (isinstance(v, str) and v.strip().lower() == "true")


def _shape_text(t: Tensor) -> str:
    return "(" + ", ".join("None" if d < 0 else str(d) for d in t.shape) + ")"


def parse(text: str) -> FeaturesDict:
    """The features of ``features.json`` (or of a ``FeaturesDict``'s ``to_json()``)."""
    feature = _parse(json.loads(text), "")
    if not isinstance(feature, FeaturesDict):
        raise _invalid("", f"the top-level feature must be a FeaturesDict, not {feature}")
    return feature


def _parse(node: Any, path: str) -> Feature:
    if isinstance(node, dict) and "type" in node and "content" in node:
        class_name, content = json_text(node["type"]), node["content"]
    elif isinstance(node, dict) and "pythonClassName" in node:
        key = next((k for k in node if k not in _NOT_CONTENT), None)
        class_name, content = json_text(node["pythonClassName"]), node[key] if key else {}
    else:
        raise _invalid(path, f"not a TFDS feature connector: {json.dumps(node)}")
    if not isinstance(content, dict):
        content = {}
    name = class_name[class_name.rfind(".") + 1 :]

    def shape(of: Mapping[str, Any]) -> tuple[int, ...]:
        s = of.get("shape")
        dims = s if isinstance(s, list) else s.get("dimensions") if isinstance(s, dict) else None
        return () if dims is None else tuple(-1 if d is None else int(json_text(d)) for d in dims)

    if name == "FeaturesDict":
        features = content.get("features", content)
        if not isinstance(features, dict):
            features = {}
        return FeaturesDict(tuple((k, _parse(v, _join(path, k))) for k, v in features.items()))
    if name in ("Sequence", "Dataset"):
        # An RLDS episode's steps: TFDS stores a Dataset as a Sequence.
        return SequenceFeature(_parse(content.get("feature"), path), name)
    if name in ("Tensor", "Scalar"):
        encoding = json_text(content.get("encoding", "none")).lower()
        t = Tensor(name, json_text(content.get("dtype", "float32")), shape(content), encoding)
        if t.encoding != "none":
            _check_encoded(path, t)
        return t
    if name == "ClassLabel":
        return Tensor(name, "int64")
    if name == "Text":
        if "encoder" in content or "encoderConfig" in content:
            raise _unsupported(path, name, "text with an encoder is stored as token ids")
        return Tensor(name, "string")
    if name in ("Image", "LabeledImage"):
        return Tensor("Image", "string")
    if name == "Video":  # one encoded image per frame
        return Tensor(name, "string", (shape(content)[:1] or (-1,)))
    if name == "Translation" and not _true(content.get("variableLanguagesPerExample")):
        languages = content.get("languages") or []
        return FeaturesDict(tuple((json_text(x), Tensor("Text", "string")) for x in languages))
    if name == "BBoxFeature":
        return Tensor(name, "float32", (4,))
    if name == "Audio":
        if _true(content.get("lazyDecode")):
            return Tensor(name, "string")
        return Tensor(name, json_text(content.get("dtype", "int64")), shape(content))
    raise _unsupported(path, name, "this connector is not supported by spark-tfrecord")


def _check_encoded(path: str, t: Tensor) -> None:
    if t.encoding not in TENSOR_ENCODINGS:
        raise _unsupported(path, t.connector, f"encoding '{t.encoding}' is not bytes or zlib")
    if sum(1 for d in t.shape if d < 0) < 2:
        raise _unsupported(
            path,
            t.connector,
            f"an encoded tensor of shape {_shape_text(t)} (at most one unknown dimension) is "
            "stored as one bytes value under its own name, which spark-tfrecord does not "
            "decode; only encoded tensors with more than one unknown dimension (`x/value` and "
            "`x/shape`) are",
        )
    if t.dtype not in TENSOR_ELEMENTS:
        raise _unsupported(
            path,
            t.connector,
            f"an encoded tensor of dtype {t.dtype} has no Spark type (supported: "
            + ", ".join(sorted(TENSOR_ELEMENTS))
            + ")",
        )


def class_labels(features: FeaturesDict) -> list[str]:
    """The paths of the ClassLabel features (``objects/label``)."""

    def walk(f: Feature, path: str) -> list[str]:
        if isinstance(f, FeaturesDict):
            return [p for k, v in f.fields for p in walk(v, _join(path, k))]
        if isinstance(f, SequenceFeature):
            return walk(f.feature, path)
        return [path] if f.connector == "ClassLabel" else []

    return walk(features, "")


def labels_file(path: str) -> str:
    """The file of a ClassLabel's names: ``objects/label`` → ``objects-label.labels.txt``."""
    return path.replace("/", "-") + ".labels.txt"


def _spark_type(t: Tensor, path: str) -> str:
    """The Spark type of a stored tensor (``TypeTable.fromTfdsDtype``); a string for Text."""
    if t.connector == "Text":
        return "string"
    if t.dtype in _SPARK_TYPES:
        return _SPARK_TYPES[t.dtype]
    if t.dtype.startswith(("int", "uint")):
        return "long"
    raise _unsupported(path, t.connector, f"dtype {t.dtype} has no TFRecord list")


def _nested(s: SequenceFeature) -> tuple[int, Tensor] | None:
    """A chain of sequences ending in a tensor: its depth and the tensor; None for dicts."""
    depth, f = 1, s.feature
    while isinstance(f, SequenceFeature):
        depth, f = depth + 1, f.feature
    return (depth, f) if isinstance(f, Tensor) else None


def _check_sequence(
    path: str, s: SequenceFeature, depth: int, t: Tensor, in_sequence: bool
) -> None:
    if -1 in t.shape:
        raise _unsupported(
            path,
            s.connector,
            f"a sequence of {t.connector} of shape {_shape_text(t)} has an unknown dimension in "
            "each element, which TFDS stores only when every element has the same shape",
        )
    if t.shape and depth + (1 if in_sequence else 0) >= 2:
        raise _unsupported(
            path,
            s.connector,
            f"a {t.connector} of shape {_shape_text(t)} at the bottom of a nested sequence is "
            "stored ragged with row lengths that count tensors, while spark-tfrecord's ragged "
            "lists count values; only scalars are supported there",
        )


def _dict_in_sequence(path: str, connector: str) -> errors.ArgumentError:
    return _unsupported(
        path,
        connector,
        "a sequence of dicts inside a sequence has no feature layout (an array of structs "
        "inside an array, which TFDS stores as ragged leaves under one name)",
    )


def _array(element: Any, depth: int = 1) -> Any:
    for _ in range(depth):
        element = {"type": "array", "elementType": element, "containsNull": False}
    return element


def _metadata(t: Tensor, names: Sequence[str] | None, length: int) -> dict[str, Any]:
    meta: dict[str, Any] = {CONNECTOR_KEY: t.connector}
    if names is not None:
        meta[CLASS_NAMES_KEY] = list(names)
    if length > 0:
        meta[LIST_LENGTH_KEY] = length
    return meta


def schema(features: FeaturesDict, class_names: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """The Spark schema of ``features``; ``class_names`` (by ClassLabel path) go in its metadata."""

    def struct(d: FeaturesDict, path: str, in_sequence: bool) -> dict[str, Any]:
        fields = [column(k, v, _join(path, k), in_sequence) for k, v in d.fields]
        return {"type": "struct", "fields": fields}

    def column(name: str, f: Feature, path: str, in_sequence: bool) -> dict[str, Any]:
        meta: dict[str, Any] = {}
        if isinstance(f, FeaturesDict):
            data_type: Any = struct(f, path, in_sequence)
        elif isinstance(f, SequenceFeature) and isinstance(f.feature, FeaturesDict):
            if in_sequence:
                raise _dict_in_sequence(path, f.connector)
            data_type = _array(struct(f.feature, path, True))
            if f.connector != "Sequence":
                meta = {CONNECTOR_KEY: f.connector}
        elif isinstance(f, SequenceFeature):
            found = _nested(f)
            if found is None:
                raise _dict_in_sequence(path, f.connector)
            depth, t = found
            _check_sequence(path, f, depth, t, in_sequence)
            data_type = _array(_spark_type(t, path), depth)
            meta = _metadata(t, class_names.get(path), 0)
        elif f.encoding != "none":
            if in_sequence or "/" in path:
                raise _unsupported(
                    path, f.connector, "an encoded tensor is supported only as a top-level feature"
                )
            data_type = _array(TENSOR_ELEMENTS[f.dtype][1], len(f.shape))
            meta = {
                CONNECTOR_KEY: f.connector,
                TENSOR_ENCODING_KEY: f.encoding,
                TENSOR_DTYPE_KEY: f.dtype,
            }
        else:
            if -1 in f.shape[1:]:
                raise _unsupported(
                    path,
                    f.connector,
                    f"shape {_shape_text(f)} has an unknown dimension after the first, which "
                    "TFDS infers from the number of values; spark-tfrecord does not (not "
                    "implemented)",
                )
            if in_sequence and -1 in f.shape:
                raise _unsupported(
                    path,
                    f.connector,
                    f"shape {_shape_text(f)} inside a Sequence has an unknown dimension in each "
                    "element, which TFDS stores only when every element has the same shape",
                )
            atom = _spark_type(f, path)
            data_type = _array(atom) if f.shape else atom
            fixed = math.prod(f.shape) if f.shape and -1 not in f.shape else 0
            meta = _metadata(f, class_names.get(path), fixed)
        return {"name": name, "type": data_type, "nullable": True, "metadata": meta}

    return struct(features, "", False)
