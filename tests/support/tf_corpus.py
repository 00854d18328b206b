"""Files TensorFlow writes (``tf.io.TFRecordWriter``, ``tf.train.Example``), for the tests that
read them: the interop file of test_tensorflow_interop and the files of the differential tests.
Each builder takes the ``tensorflow`` module and returns the serialized records."""

from __future__ import annotations

import math
import struct
from pathlib import Path
from typing import Any

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
#: A float32 NaN with a payload, and the smallest denormal: their bits must survive.
NAN_PAYLOAD = struct.unpack("<f", struct.pack("<I", 0x7FC00001))[0]
DENORMAL = struct.unpack("<f", struct.pack("<I", 1))[0]


def write(tf: Any, path: Path, records: list[bytes]) -> Path:
    """Writes serialized records with TensorFlow's writer."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tf.io.TFRecordWriter(str(path)) as writer:
        for record in records:
            writer.write(record)
    return path


def _example(tf: Any, features: dict[str, Any]) -> bytes:
    message = tf.train.Example(features=tf.train.Features(feature=features))
    serialized: bytes = message.SerializeToString()
    return serialized


def ints(tf: Any, *values: int) -> Any:
    return tf.train.Feature(int64_list=tf.train.Int64List(value=list(values)))


def floats(tf: Any, *values: float) -> Any:
    return tf.train.Feature(float_list=tf.train.FloatList(value=list(values)))


def byte_strings(tf: Any, *values: bytes) -> Any:
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=list(values)))


def interop(tf: Any) -> list[bytes]:
    """Extremes of each kind, text and bytes that are not UTF-8, empty lists, a Feature of no
    kind, a record missing features, and an empty Example."""
    return [
        _example(
            tf,
            {
                "id": ints(tf, 0),
                "extremes": ints(tf, INT64_MIN, INT64_MAX, 0),
                "floats": floats(tf, math.nan, math.inf, -math.inf, -0.0, 1e-45),
                "text": byte_strings(tf, "日本語 é 🎉".encode()),
                "raw": byte_strings(tf, b"\xff\xfe\x00", b"\xc3\x28"),
                "empty_ints": ints(tf),
                "unset": tf.train.Feature(),
            },
        ),
        _example(tf, {"id": ints(tf, 1), "floats": floats(tf), "empty_ints": ints(tf, 7, 8)}),
        tf.train.Example().SerializeToString(),
    ]


def every_kind(tf: Any) -> list[bytes]:
    """Features that every Spark type a column can have reads: ``small`` int64 values in every
    integer type's range (0 and 1 in ``bit``, for booleans), ``days`` and ``micros`` for dates
    and timestamps, floats with their edge bits, UTF-8 ``text`` and non-UTF-8 ``raw`` bytes,
    each as one value (``*_1``) and as lists; ragged lists (``r``, ``rf``, ``rs``, ``r3``) and
    struct leaves (``st/...``; ``objs/...``, of an array of structs). Record 0 has all, record
    1 empty lists, record 2 none, record 3 Features of no kind, then ordinary records."""

    def full(i: int) -> dict[str, Any]:
        small = [(-1) ** i * (i % 100), 127 - i % 3, -128 + i % 5]
        fl = [0.5 * i, -0.0, NAN_PAYLOAD, math.inf, -math.inf, DENORMAL, 3.4028234663852886e38]
        text = [f"row {i} é".encode(), b"", "日本語 🎉".encode()]
        raw = [bytes([i % 256, 0xFF, 0xC3, 0x28]), b""]
        return {
            "small_1": ints(tf, small[0]),
            "small": ints(tf, *small),
            "bit_1": ints(tf, i % 2),
            "bit": ints(tf, 0, 1, i % 2),
            "days_1": ints(tf, -719162 + i),
            "days": ints(tf, -719162, 2932896, 0, i),
            "micros_1": ints(tf, -(10**15) + i),
            "micros": ints(tf, INT64_MIN, INT64_MAX, -1, i),
            "big_1": ints(tf, INT64_MIN + i),
            "big": ints(tf, INT64_MIN, INT64_MAX, 0, -1, 2**31, i),
            "fl_1": floats(tf, fl[i % len(fl)]),
            "fl": floats(tf, *fl),
            "text_1": byte_strings(tf, text[i % len(text)]),
            "text": byte_strings(tf, *text),
            "raw_1": byte_strings(tf, raw[0]),
            "raw": byte_strings(tf, *raw),
            "r/ragged_flat_values": ints(tf, i, INT64_MIN, INT64_MAX),
            "r/ragged_row_lengths_0": ints(tf, 2, 0, 1),
            "rf/ragged_flat_values": floats(tf, -0.0, NAN_PAYLOAD),
            "rf/ragged_row_lengths_0": ints(tf, 1, 1),
            "rs/ragged_flat_values": byte_strings(tf, b"a", "é".encode(), b""),
            "rs/ragged_row_lengths_0": ints(tf, 0, 3),
            "r3/ragged_flat_values": floats(tf, 1.5, -2.5, 0.25),
            "r3/ragged_row_lengths_0": ints(tf, 2, 0),
            "r3/ragged_row_lengths_1": ints(tf, 1, 2),
            "st/a": ints(tf, i),
            "st/name": byte_strings(tf, f"name {i}".encode()),
            "st/inner/x": floats(tf, 0.125 * i),
            "st/inner/tags": byte_strings(tf, b"t1", b"t2"),
            "objs/n": ints(tf, i, -i, INT64_MAX),
            "objs/name": byte_strings(tf, b"a", "é".encode(), b""),
            "objs/toks/ragged_flat_values": byte_strings(tf, b"x", b"y", b"z"),
            "objs/toks/ragged_row_lengths_0": ints(tf, 2, 0, 1),
            "objs/inner/a": ints(tf, 1, 2, 3),
        }

    names = list(full(0))
    empty = {k: _empty_like(tf, v) for k, v in full(0).items()}
    unset = {k: tf.train.Feature() for k in names}
    records = [full(0), _drop_scalars(empty), {}, unset]
    records += [full(i) for i in range(4, 24)]
    return [_example(tf, r) for r in records]


def _empty_like(tf: Any, feature: Any) -> Any:
    kind = feature.WhichOneof("kind")
    return {"int64_list": ints, "float_list": floats, "bytes_list": byte_strings}[kind](tf)


def _drop_scalars(features: dict[str, Any]) -> dict[str, Any]:
    """Without the one-value features (an empty list for a scalar column is a null, tested by
    the record of Features of no kind) and struct leaves."""
    return {
        k: v
        for k, v in features.items()
        if not (k.endswith("_1") and "/" not in k) and not k.startswith("st/")
    }


def images(tf: Any) -> list[bytes]:
    """JPEG and PNG bytes that TensorFlow encodes, and text beside them."""
    pixels = tf.reshape(tf.range(4 * 4 * 3, dtype=tf.int32) * 5 % 256, (4, 4, 3))
    pixels = tf.cast(pixels, tf.uint8)
    return [
        _example(
            tf,
            {
                "image": byte_strings(tf, encoded.numpy()),
                "format": byte_strings(tf, fmt.encode()),
                "label": ints(tf, k),
            },
        )
        for k, (fmt, encoded) in enumerate(
            [("jpeg", tf.io.encode_jpeg(pixels)), ("png", tf.io.encode_png(pixels))]
        )
    ]


def _sequence_example(tf: Any, context: dict[str, Any], lists: dict[str, list[Any]]) -> bytes:
    message = tf.train.SequenceExample(
        context=tf.train.Features(feature=context),
        feature_lists=tf.train.FeatureLists(
            feature_list={k: tf.train.FeatureList(feature=v) for k, v in lists.items()}
        ),
    )
    serialized: bytes = message.SerializeToString()
    return serialized


def sequences(tf: Any) -> list[bytes]:
    """``tf.train.SequenceExample`` records: context features (``id``, ``label``, ``tokens``)
    and feature lists (``frames``, ``ids``, ``words``, and an array of structs' ``steps/t``,
    ``steps/tag``, ``steps/xs``): full, empty lists and steps, absent ones, extremes, and two
    records that put a name in the wrong place (a feature list of a context column's name, a
    context feature of a feature list's)."""
    empty = tf.train.Feature()
    full = _sequence_example(
        tf,
        {"id": ints(tf, 1), "label": byte_strings(tf, b"cat"), "tokens": byte_strings(tf, b"a")},
        {
            "frames": [floats(tf, 1.5, -0.0), floats(tf, math.nan, NAN_PAYLOAD, DENORMAL)],
            "ids": [ints(tf, 1, 2), ints(tf), ints(tf, INT64_MIN, INT64_MAX, 300)],
            "words": [byte_strings(tf, b"a"), byte_strings(tf, "é".encode(), b"")],
            "steps/t": [ints(tf, 1), ints(tf, 2)],
            "steps/tag": [byte_strings(tf, b"x"), byte_strings(tf, b"y")],
            "steps/xs": [floats(tf, 0.5), floats(tf, 1.0, 2.0)],
        },
    )
    empties = _sequence_example(
        tf,
        {"id": ints(tf, 2), "tokens": byte_strings(tf)},
        {"frames": [], "words": [byte_strings(tf), empty], "ids": [empty]},
    )
    context_only = _sequence_example(tf, {"id": ints(tf, 3), "label": empty}, {})
    lists_only = _sequence_example(
        tf, {}, {"ids": [ints(tf, 7)], "steps/t": [], "steps/tag": [], "steps/xs": []}
    )
    a_list_named_as_context = _sequence_example(tf, {}, {"id": [ints(tf, 4)]})
    a_context_named_as_list = _sequence_example(tf, {"frames": floats(tf, 1.0)}, {})
    two_values_in_a_step = _sequence_example(
        tf,
        {"id": ints(tf, 5)},
        {
            "steps/t": [ints(tf, 1), ints(tf, 2, 3)],
            "steps/tag": [byte_strings(tf, b"x"), byte_strings(tf, b"y")],
            "steps/xs": [floats(tf), floats(tf)],
        },
    )
    return [
        full,
        empties,
        context_only,
        lists_only,
        a_list_named_as_context,
        a_context_named_as_list,
        two_values_in_a_step,
    ]
