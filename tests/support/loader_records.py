"""Records of the trainer-side loaders (`torch_dataset`, `grain_source`) as plain JSON values, to
compare two reads bit for bit across processes.

`plain` keeps each value's kind, dtype and bytes: ``np.float32(-0.0)`` and ``np.float32(0.0)``
differ, as do NaNs of other bits, an int64 array and a float32 one, ``b"a"`` and ``"a"``.
`digest` is the SHA-256 of a sequence of plain records, for comparing whole data sets.
`trainer_frame` is a DataFrame of the records the object-store tests read with the loaders.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any


def plain(value: Any) -> Any:
    """A JSON value that two equal records (same kinds, dtypes and bits) share, and unequal ones
    do not."""
    import numpy as np

    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return ["bytes", bytes(value).hex()]
    if isinstance(value, np.ndarray):
        return ["ndarray", str(value.dtype), list(value.shape), value.tobytes().hex()]
    if isinstance(value, np.generic):
        return ["scalar", str(value.dtype), value.tobytes().hex()]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in sorted(value.items())}
    if hasattr(value, "_fields"):  # Ragged, Sparse: named tuples
        return [type(value).__name__, *(plain(v) for v in value)]
    if isinstance(value, (list, tuple)):
        return [type(value).__name__, *(plain(v) for v in value)]
    if hasattr(value, "numpy"):  # a torch tensor (of a collated batch)
        return ["tensor", plain(value.numpy())]
    raise TypeError(f"no plain form for {type(value).__name__}: {value!r}")


def digest(records: Iterable[Any]) -> str:
    """The SHA-256 of the records' plain forms, in order."""
    h = hashlib.sha256()
    for record in records:
        h.update(json.dumps(plain(record), sort_keys=True).encode())
        h.update(b"\n")
    return h.hexdigest()


def trainer_frame(spark: Any, rows: int) -> Any:
    """Narrow records of every kind a trainer meets, in three partitions: int64 ``id`` (0 to
    `rows` - 1), float32, a fixed list of 32 floats, a string, a list of 0..3 strings, bytes of
    40..196, and an int that is null one row in five."""
    return spark.range(0, rows, 1, 3).selectExpr(
        "id",
        "cast(id % 10 as float) / 4 as label",
        "transform(sequence(0, 31), k -> cast(id * 32 + k as float) / 7) as x",
        "concat('row ', cast(id as string)) as name",
        "slice(array('a', 'bb', 'ccc'), 1, cast(id % 4 as int)) as tags",
        "unhex(repeat(lpad(hex(id), 8, '0'), cast(id % 40 as int) + 10)) as blob",
        "if(id % 5 = 0, null, cast(id as int)) as maybe",
    )
