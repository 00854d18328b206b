"""Records of the trainer-side loaders (`torch_dataset`, `grain_source`) as plain JSON values, to
compare two reads bit for bit across processes.

`plain` keeps each value's kind, dtype and bytes: ``np.float32(-0.0)`` and ``np.float32(0.0)``
differ, as do NaNs of other bits, an int64 array and a float32 one, ``b"a"`` and ``"a"``.
`digest` is the SHA-256 of a sequence of plain records, for comparing whole data sets.
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
