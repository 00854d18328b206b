"""CRC32C: ``crc32c``'s C code, else ``google-crc32c``'s, else pure Python; TFRecord's mask."""

from __future__ import annotations

import contextlib
import functools
import struct
from collections.abc import Callable
from typing import Any

MASK_DELTA = 0xA282EAD8


@functools.cache
def _crc_tables() -> tuple[list[int], ...]:
    """Slicing-by-8 tables: ``t[k][i]`` is the CRC of byte i followed by k zero bytes."""
    t0 = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t0.append(c)
    tables = [t0]
    for _ in range(7):
        tables.append([(x >> 8) ^ t0[x & 0xFF] for x in tables[-1]])
    return tuple(tables)


_WORDS = struct.Struct("<Q").iter_unpack


def _crc32c_python(data: bytes | bytearray | memoryview) -> int:
    """CRC32C in pure Python (slicing-by-8), the fallback."""
    t0, t1, t2, t3, t4, t5, t6, t7 = _crc_tables()
    data = bytes(data)
    whole = len(data) & ~7
    crc = 0xFFFFFFFF
    for (word,) in _WORDS(data[:whole]):
        x = crc ^ word
        crc = (
            t7[x & 0xFF]
            ^ t6[(x >> 8) & 0xFF]
            ^ t5[(x >> 16) & 0xFF]
            ^ t4[(x >> 24) & 0xFF]
            ^ t3[(x >> 32) & 0xFF]
            ^ t2[(x >> 40) & 0xFF]
            ^ t1[(x >> 48) & 0xFF]
            ^ t0[x >> 56]
        )
    for b in data[whole:]:
        crc = t0[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _fast_crc32c() -> tuple[Callable[[Any], int], str]:
    """The fastest CRC32C importable, and its name."""
    with contextlib.suppress(ImportError):
        import crc32c  # type: ignore[import-not-found, unused-ignore]

        return crc32c.crc32c, "crc32c"
    with contextlib.suppress(ImportError):
        import google_crc32c  # type: ignore[import-not-found, unused-ignore]

        if getattr(google_crc32c, "implementation", "c") == "c":
            value = google_crc32c.value  # takes bytes only, not a memoryview
            return (lambda data: value(bytes(data))), "google-crc32c"
    return _crc32c_python, "pure Python"


_crc32c_impl: tuple[Callable[[Any], int], str] | None = None


def crc32c_implementation() -> str:
    """Which CRC32C counting uses: ``"google-crc32c"``, ``"crc32c"`` or ``"pure Python"``."""
    return _crc32c()[1]


def _crc32c() -> tuple[Callable[[Any], int], str]:
    global _crc32c_impl
    if _crc32c_impl is None:
        _crc32c_impl = _fast_crc32c()
    return _crc32c_impl


def crc32c() -> Callable[[Any], int]:
    """The CRC32C function of this process (bytes, bytearray or memoryview to int)."""
    return _crc32c()[0]


def masked(crc: int) -> int:
    """TFRecord's masked CRC: rotated right by 15 bits, plus a constant."""
    return (((crc >> 15) | (crc << 17)) + MASK_DELTA) & 0xFFFFFFFF


@functools.cache
def _word_tables() -> Any:
    import numpy as np

    return np.array(_crc_tables(), np.uint64)


def crc32c_words(words: Any) -> Any:
    """The CRC32C of each 8-byte LE word of a uint64 array (length fields), as uint64."""
    import numpy as np

    t = _word_tables()
    x = words.astype(np.uint64) ^ np.uint64(0xFFFFFFFF)
    crc = t[7][x & np.uint64(0xFF)]
    for k in range(1, 8):
        crc ^= t[7 - k][(x >> np.uint64(8 * k)) & np.uint64(0xFF)]
    return crc ^ np.uint64(0xFFFFFFFF)


def unmasked_all(masks: Any) -> Any:
    """The CRCs (uint32) whose :func:`masked` values are ``masks`` (a NumPy array)."""
    import numpy as np

    x = (masks.astype(np.uint64) - np.uint64(MASK_DELTA)) & np.uint64(0xFFFFFFFF)
    return (((x << np.uint64(15)) | (x >> np.uint64(17))) & np.uint64(0xFFFFFFFF)).astype(np.uint32)


#: The CRC32C of any bytes followed by their own CRC32C (little-endian).
RESIDUE = 0x48674BC7
#: 8 zero bytes, then this word (little-endian): 12 bytes that take the CRC32C's register from
#: :data:`RESIDUE` back to where it starts, as if nothing had been read (tests/test_framing.py).
RESTART_WORD = 0xB0802EF6


def masked_all(crcs: Any) -> Any:
    """:func:`masked` of a NumPy array of CRCs (uint64), as uint32."""
    import numpy as np

    rotated = ((crcs >> np.uint64(15)) | (crcs << np.uint64(17))) & np.uint64(0xFFFFFFFF)
    return ((rotated + np.uint64(MASK_DELTA)) & np.uint64(0xFFFFFFFF)).astype(np.uint32)
