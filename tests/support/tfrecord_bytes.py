"""Raw TFRecord framing and protobuf bytes, built by hand in Python.

The tests use this to make records that TensorFlow's writer never produces (unpacked lists,
merged messages, unknown fields, corrupt checksums) and to look at the files we write without
going through our own reader.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator
from pathlib import Path

_POLY = 0x82F63B78
_TABLE = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ _POLY if _c & 1 else _c >> 1
    _TABLE.append(_c)


def crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for b in data:
        crc = _TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc(data: bytes) -> int:
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def frame(data: bytes) -> bytes:
    header = struct.pack("<Q", len(data))
    return (
        header + struct.pack("<I", masked_crc(header)) + data + struct.pack("<I", masked_crc(data))
    )


def write_records(path: Path, records: Iterable[bytes]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(frame(r) for r in records))
    return path


def read_records(path: Path) -> Iterator[bytes]:
    """The data of every record in a file, checking both checksums."""
    raw = path.read_bytes()
    pos = 0
    while pos < len(raw):
        (length,) = struct.unpack_from("<Q", raw, pos)
        assert struct.unpack_from("<I", raw, pos + 8)[0] == masked_crc(raw[pos : pos + 8])
        data = raw[pos + 12 : pos + 12 + length]
        assert struct.unpack_from("<I", raw, pos + 12 + length)[0] == masked_crc(data)
        yield data
        pos += 16 + length


def index_lines(stream: bytes) -> str:
    """The index of a record stream (uncompressed), from its framing: `<offset> <size>` lines,
    as the tfrecord package and DALI read them."""
    lines, pos = [], 0
    while pos < len(stream):
        (length,) = struct.unpack_from("<Q", stream, pos)
        lines.append(f"{pos} {length + 16}\n")
        pos += length + 16
    return "".join(lines)


# --- protobuf wire pieces -------------------------------------------------------------------


def varint(v: int) -> bytes:
    v &= (1 << 64) - 1
    out = bytearray()
    while v > 0x7F:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def field(number: int, wire_type: int, payload: bytes) -> bytes:
    key = varint((number << 3) | wire_type)
    if wire_type == 2:
        return key + varint(len(payload)) + payload
    return key + payload


def ld(number: int, payload: bytes) -> bytes:
    return field(number, 2, payload)


def int64_list_packed(values: list[int]) -> bytes:
    return ld(1, b"".join(varint(v) for v in values)) if values else b""


def int64_list_unpacked(values: list[int]) -> bytes:
    return b"".join(field(1, 0, varint(v)) for v in values)


def float_list_packed(values: list[float]) -> bytes:
    return ld(1, b"".join(struct.pack("<f", v) for v in values)) if values else b""


def float_list_unpacked(values: list[float]) -> bytes:
    return b"".join(field(1, 5, struct.pack("<f", v)) for v in values)


def bytes_list(values: list[bytes]) -> bytes:
    return b"".join(ld(1, v) for v in values)


def feature(kind: str, list_message: bytes) -> bytes:
    return ld({"bytes": 1, "float": 2, "int64": 3}[kind], list_message)


def entry(key: bytes, feature_message: bytes) -> bytes:
    return ld(1, ld(1, key) + ld(2, feature_message))


def example(*entries: bytes) -> bytes:
    return ld(1, b"".join(entries))


def lying_header(length: int) -> bytes:
    """A record header claiming ``length`` data bytes, with the length's correct masked CRC."""
    header = struct.pack("<Q", length)
    return header + struct.pack("<I", masked_crc(header))
