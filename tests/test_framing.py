"""The batch walk of a stream's frames (``walk_batches``, which finds the records whole in the
bytes read by their lengths and checks them together) against the one-record walk
(``walk_stream``): on random streams, sound, damaged anywhere and truncated, read in chunks of
any size, both give the same records, then the same error (code, offset, message)."""

from __future__ import annotations

import random
import struct
from pathlib import Path

import pytest

from spark_tfrecord import errors
from spark_tfrecord._format.frames.crc import RESIDUE, RESTART_WORD, crc32c, masked
from spark_tfrecord._format.frames.framing import walk_batches, walk_stream

SEED = 57
CASES = 600


def frame(data: bytes) -> bytes:
    head = struct.pack("<Q", len(data))
    crc = crc32c()
    return head + struct.pack("<I", masked(crc(head))) + data + struct.pack("<I", masked(crc(data)))


def chunked(stream: bytes, rng: random.Random) -> list[bytes]:
    size = rng.choice([1, 7, 64, 500, 4096, 1 << 20])
    return [stream[i : i + size] for i in range(0, len(stream), size)]


Found = tuple[list[tuple[int, bytes]], "tuple[str, int, str] | None"]


def one_at_a_time(
    stream: bytes, chunks: list[bytes], stop_at: int | None, verify: bool, most: int
) -> Found:
    found = []
    walk = walk_stream(
        iter(chunks), "f", len(stream), verify_checksums=verify, max_record_bytes=most
    )
    try:
        for offset, data in walk:
            if stop_at is not None and offset >= stop_at:
                return found, None
            found.append((offset, bytes(data)))
    except errors.CorruptFileError as e:
        return found, (e.condition, int(e.parameters["offset"]), str(e))
    return found, None


def in_batches(
    stream: bytes, chunks: list[bytes], stop_at: int | None, verify: bool, most: int, batch: int
) -> Found:
    found = []
    walk = walk_batches(
        iter(chunks),
        "f",
        len(stream),
        verify_checksums=verify,
        max_record_bytes=most,
        batch=batch,
        batch_bytes=3000,
        stop_at=stop_at,
    )
    try:
        for buf, starts, stops, offsets in walk:
            assert len(starts) <= batch
            found += [(o, bytes(buf[a:b])) for a, b, o in zip(starts, stops, offsets)]
    except errors.CorruptFileError as e:
        return found, (e.condition, int(e.parameters["offset"]), str(e))
    return found, None


def damaged(stream: bytes, rng: random.Random) -> bytes:
    how = rng.choice(["sound", "flip", "flip", "truncate", "length"])
    if how == "sound" or not stream:
        return stream
    at = rng.randrange(len(stream))
    if how == "flip":
        return stream[:at] + bytes([stream[at] ^ (1 << rng.randrange(8))]) + stream[at + 1 :]
    if how == "truncate":
        return stream[:at]
    # a length field made hostile: huge, or off by a little
    starts, pos = [], 0
    while pos < len(stream):
        starts.append(pos)
        pos += 16 + struct.unpack_from("<Q", stream, pos)[0]
    at = rng.choice(starts)
    length = rng.choice([2**63 - 1, 2**31, struct.unpack_from("<Q", stream, at)[0] + 1])
    return stream[:at] + struct.pack("<Q", length) + stream[at + 8 :]


@pytest.mark.parametrize("part", range(4))
def test_the_batch_walk_gives_the_one_record_walks_records_and_error(part: int) -> None:
    rng = random.Random(SEED + part)
    compared = errored = 0
    for _ in range(CASES // 4):
        lengths = [rng.choice([0, 1, 5, 40, 200, 3000]) for _ in range(rng.randrange(0, 120))]
        stream = b"".join(frame(rng.randbytes(n)) for n in lengths)
        stream = damaged(stream, rng)
        chunks = chunked(stream, rng)
        stop_at = rng.choice([None, None, rng.randrange(len(stream) + 1)])
        verify = rng.random() < 0.8
        most = rng.choice([2**31 - 1 - 64, 2500])
        batch = rng.choice([1, 16, 50, 4096])
        expected = one_at_a_time(stream, chunks, stop_at, verify, most)
        got = in_batches(stream, chunks, stop_at, verify, most, batch)
        assert got == expected, (lengths, stop_at, verify, most, batch)
        compared += len(expected[0])
        errored += expected[1] is not None
    assert compared > 1000 and errored > 20  # the cases reach both records and errors


def test_the_loaders_scan_finds_the_one_record_walks_frames_and_error(tmp_path: Path) -> None:
    # The map-style loaders' scan of a file with no index (its frames found by their lengths,
    # their headers checked together): the offsets and sizes the one-record walk finds, or
    # its error's condition and offset (the data's checksums are the batches' to check).
    from spark_tfrecord._format.frames.records import RecordReader

    rng = random.Random(SEED)
    path = tmp_path / "part-00000.tfrecord"
    path.write_bytes(frame(b"x"))
    records = RecordReader(str(tmp_path))
    scanned = errored = 0
    for _ in range(300):
        lengths = [rng.choice([0, 1, 5, 40, 200, 3000]) for _ in range(rng.randrange(0, 120))]
        stream = damaged(b"".join(frame(rng.randbytes(n)) for n in lengths), rng)
        path.write_bytes(stream)
        expected = one_at_a_time(stream, chunked(stream, rng), None, False, 2**31 - 1 - 64)
        try:
            table = records._scan(0)
            got: Found = ([(int(a), int(b)) for a, b in table], None)
        except errors.CorruptFileError as e:
            got = ([], (e.condition, int(e.parameters["offset"]), ""))
        frames = [(o, len(data) + 16) for o, data in expected[0]]
        if expected[1] is None:
            assert got == (frames, None)
            scanned += len(frames)
        else:
            assert got[1] is not None and got[1][:2] == expected[1][:2], (lengths, expected[1])
            errored += 1
    assert scanned > 1000 and errored > 20


def test_the_crc_restart_takes_the_register_back_to_its_start() -> None:
    # What the batch check of short records' data rests on: any bytes followed by their CRC
    # leave RESIDUE, and 8 zero bytes then RESTART_WORD after that read as nothing at all.
    crc = crc32c()
    restart = bytes(8) + struct.pack("<I", RESTART_WORD)
    rng = random.Random(SEED)
    for n in (0, 1, 3, 4, 17, 200, 5000):
        a, b = rng.randbytes(n), rng.randbytes(rng.randrange(300))
        sealed = a + struct.pack("<I", crc(a))
        assert crc(sealed) == RESIDUE
        assert crc(sealed + restart + b) == crc(b)


@pytest.mark.parametrize("where", ["data", "footer", "two"])
def test_every_short_records_data_crc_is_checked_in_one_call(
    where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 4,096 short records checked together (the batch walk's path for records under 1 KiB on
    # average): one CRC call for the batch when all are sound; a damaged record anywhere,
    # its data or its CRC, still gives the records before it and its own offset, as walk_stream.
    from spark_tfrecord._format.frames import framing

    calls = 0
    real = framing.crc32c()

    def counted(data: object) -> int:
        nonlocal calls
        calls += 1
        return real(data)

    monkeypatch.setattr(framing, "crc32c", lambda: counted)
    rng = random.Random(SEED)
    records = [rng.randbytes(rng.randrange(0, 300)) for _ in range(4096)]
    stream = b"".join(frame(r) for r in records)
    expected = one_at_a_time(stream, [stream], None, True, 2**31 - 1 - 64)
    calls = 0
    sound = in_batches(stream, [stream], None, True, 2**31 - 1 - 64, 4096)
    assert sound == expected and len(sound[0]) == 4096 and sound[1] is None
    # the first record walked alone (its length's CRC and its data's), one for the 4,095 others
    assert calls == 3
    offsets = [o for o, _ in sound[0]]
    for k in (0, 1, 2047, 4095):
        at = offsets[k] + 12 + len(records[k]) if where == "footer" else offsets[k] + 12
        if where != "footer" and not records[k]:
            continue  # no data to damage
        bad = bytearray(stream)
        bad[at] ^= 0x10
        if where == "two":
            bad[offsets[3000] + 12 + len(records[3000])] ^= 0x01  # another record's CRC too
        damaged = bytes(bad)
        got = in_batches(damaged, [damaged], None, True, 2**31 - 1 - 64, 4096)
        assert got == one_at_a_time(damaged, [damaged], None, True, 2**31 - 1 - 64)
        first = min(k, 3000) if where == "two" else k
        assert got[1] is not None and got[1][:2] == (errors.DATA_CHECKSUM, offsets[first])
        assert [o for o, _ in got[0]] == offsets[:first]
