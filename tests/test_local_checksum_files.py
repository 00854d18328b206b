"""Damage to a local file reads as docs/errors.md says, `.crc` file or not.

Hadoop's local file system writes a `.<name>.crc` side file beside each file it creates, a CRC
of every 512 bytes (our writes create their files without one, but other tools' files, and ours
copied with Hadoop, have it). Reading through it, a truncated or bit-flipped part file failed
with Hadoop's `Checksum error` at offset 0, whatever `verifyChecksums` said, and
`ignoreCorruptFiles` kept none of the records before the damage. The reader opens local files
without it (the framing's own CRCs protect every record), so these files read as on any other
file system.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import spark_tfrecord

DAMAGED = 9  # the record the damage hits: 9 records come before it


def spark_written(spark: Any, out: Path) -> tuple[Path, list[int]]:
    """One part file of 20 records (`id` 0 to 19, `s` "s0" to "s19") and each record's offset."""
    df = spark.range(20).selectExpr("id", "concat('s', id) as s").coalesce(1)
    first = out.parent / f"{out.name}-written"
    df.write.format("tfrecord").save(str(first))
    (written,) = first.glob("part-*.tfrecord")
    # Copied by Hadoop's local file system, which writes the `.crc` beside the copy.
    jvm = spark._jvm
    conf = spark._jsc.hadoopConfiguration()
    fs = jvm.org.apache.hadoop.fs.FileSystem.getLocal(conf)
    part = out / written.name
    jvm.org.apache.hadoop.fs.FileUtil.copy(
        fs,
        jvm.org.apache.hadoop.fs.Path(written.as_uri()),
        fs,
        jvm.org.apache.hadoop.fs.Path(part.as_uri()),
        True,
        conf,
    )
    assert (out / f".{part.name}.crc").is_file()
    raw = part.read_bytes()
    starts = [0]
    while starts[-1] < len(raw):
        (length,) = struct.unpack_from("<Q", raw, starts[-1])
        starts.append(starts[-1] + 16 + length)
    return part, starts[:-1]


def read(spark: Any, path: Path, **options: Any) -> Any:
    return spark_tfrecord.read(spark, str(path), schema="id long, s string", **options)


def read_paths(spark: Any, path: Path) -> dict[str, Callable[[], Any]]:
    """Every way of reading the records of a file, each through the reader's one way to open."""
    return {
        "collect": lambda: read(spark, path).collect(),
        "count": lambda: read(spark, path).count(),
        "inspect": lambda: spark._jvm.io.github.sparktfrecord.tools.TFRecordInspector.countRecords(
            str(path)
        ),
        "TFRecordInputFormat": lambda: spark.sparkContext.newAPIHadoopFile(
            str(path),
            "io.github.sparktfrecord.TFRecordInputFormat",
            "org.apache.hadoop.io.BytesWritable",
            "org.apache.hadoop.io.NullWritable",
        ).count(),
    }


def test_a_truncated_part_file(spark, out: Path) -> None:
    part, starts = spark_written(spark, out)
    at = starts[DAMAGED]
    (length,) = struct.unpack_from("<Q", part.read_bytes(), at)
    with part.open("r+b") as f:
        f.truncate(at + 12 + 3)  # 3 bytes of the record's data are left
    message = (
        f"Truncated TFRecord: the header claims {length} data bytes, but the file ends 3 bytes "
        f"after it at byte offset {at} of"
    )
    for name, query in read_paths(spark, part).items():
        with pytest.raises(Exception, match=message) as err:
            query()
        assert "Checksum error" not in str(err.value), name
    # verifyChecksums=false skips the data CRC only: a truncation is still one.
    with pytest.raises(Exception, match=message):
        read(spark, part, verifyChecksums=False).collect()
    kept = read(spark, out, ignoreCorruptFiles=True).collect()
    assert sorted((r.id, r.s) for r in kept) == [(i, f"s{i}") for i in range(DAMAGED)]


def test_a_bit_flipped_part_file(spark, out: Path) -> None:
    part, starts = spark_written(spark, out)
    at = starts[DAMAGED]
    raw = bytearray(part.read_bytes())
    value = raw.index(b"s9", at)  # the string of record 9, "s9" becomes "r9"
    assert value < starts[DAMAGED + 1]
    raw[value] ^= 0x01
    part.write_bytes(bytes(raw))
    message = f"Corrupt TFRecord: data checksum mismatch at byte offset {at} of"
    for name, query in read_paths(spark, part).items():
        with pytest.raises(Exception, match=message) as err:
            query()
        assert "Checksum error" not in str(err.value), name
    # verifyChecksums=false trusts the data CRC: the record is read as the file holds it.
    trusted = read(spark, out, verifyChecksums=False)
    expected = [(i, "r9" if i == DAMAGED else f"s{i}") for i in range(20)]
    assert sorted((r.id, r.s) for r in trusted.collect()) == expected
    assert trusted.count() == 20
    kept = read(spark, out, ignoreCorruptFiles=True).collect()
    assert sorted((r.id, r.s) for r in kept) == [(i, f"s{i}") for i in range(DAMAGED)]
