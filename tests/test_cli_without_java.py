"""``spark-tfrecord inspect`` needs no Java: run with no java on the PATH and no JAVA_HOME, it
prints what it always printed, and neither pyspark, py4j nor JPype is ever imported."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

from support.manifests import write_manifest
from support.tfrecord_bytes import (
    bytes_list,
    entry,
    example,
    feature,
    float_list_packed,
    frame,
    int64_list_packed,
)

#: Runs the command's main() and writes, on stderr, which heavy modules were imported: the JVM's
#: and Spark's, and the package's modules that only other commands need (the Spark side, the
#: loaders, the convert command).
_RUN = """\
import json, sys
from spark_tfrecord import cli
status = cli.main(sys.argv[1:])
heavy = ("pyspark", "py4j", "jpype", "_jpype", "spark_tfrecord._spark", "spark_tfrecord._loaders",
         "spark_tfrecord.cli.convert", "spark_tfrecord.cli.index")
print(json.dumps({"status": status, "imported": sorted(m for m in heavy if m in sys.modules)}),
      file=sys.stderr)
"""


def without_java() -> dict[str, str]:
    """This environment with no directory holding a ``java`` on the PATH and no JAVA_HOME."""
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env["PATH"] = os.pathsep.join(
        d
        for d in env.get("PATH", "").split(os.pathsep)
        if not os.path.exists(os.path.join(d, "java"))
    )
    env["SPARK_HOME"] = "/nonexistent"
    return env


def inspect(*args: str) -> tuple[list[str], dict[str, object], str]:
    env = without_java()
    assert shutil.which("java", path=env["PATH"]) is None
    done = subprocess.run(
        [sys.executable, "-c", _RUN, "inspect", *args], capture_output=True, text=True, env=env
    )
    *errors, last = done.stderr.splitlines() or [""]
    return done.stdout.splitlines(), json.loads(last), "\n".join(errors)


def record(i: int) -> bytes:
    return example(
        entry(b"id", feature("int64", int64_list_packed([i]))),
        entry(b"name", feature("bytes", bytes_list([f"n{i}".encode()]))),
        entry(b"xs", feature("float", float_list_packed([0.5, i + 0.25]))),
        entry(b"raw", feature("bytes", bytes_list([b"\xff\x00"]))),
    )


def test_a_folder_without_a_manifest(tmp_path: Path) -> None:
    data = tmp_path / "d"
    (data / "day=x").mkdir(parents=True)
    (data / "day=x" / "part-0.tfrecord").write_bytes(b"".join(frame(record(i)) for i in range(3)))
    (data / "day=x" / "part-1.tfrecord").write_bytes(frame(record(3)))
    size = sum(p.stat().st_size for p in (data / "day=x").iterdir())
    lines, run, errors = inspect(str(data), "-n", "2")
    assert (run, errors) == ({"status": 0, "imported": []}, "")
    assert lines == [
        f"files: 2, {size:,} bytes",
        "records: 4",
        "root",
        " |-- id: long (nullable = true)",
        " |-- name: string (nullable = true)",
        " |-- xs: array<float> (nullable = true)",
        " |-- raw: binary (nullable = true)",
        " |-- day: string (nullable = true)",
        '{"id": 0, "name": "n0", "xs": [0.5, 0.25], "raw": "0xff00", "day": "x"}',
        '{"id": 1, "name": "n1", "xs": [0.5, 1.25], "raw": "0xff00", "day": "x"}',
    ]


def test_a_folder_with_a_manifest(tmp_path: Path) -> None:
    data = tmp_path / "d"
    data.mkdir()
    (data / "part-0.tfrecord").write_bytes(b"".join(frame(record(i)) for i in range(2)))
    schema = {
        "type": "struct",
        "fields": [
            {"name": "id", "type": "integer", "nullable": False, "metadata": {}},
            {"name": "name", "type": "string", "nullable": True, "metadata": {}},
            {"name": "xs", "type": {"type": "array", "elementType": "double",
                                    "containsNull": False}, "nullable": True, "metadata": {}},
        ],
    }  # fmt: skip
    write_manifest(data, {"part-0.tfrecord": 2}, schema="id INT", schema_json=schema)
    size = (data / "part-0.tfrecord").stat().st_size
    lines, run, errors = inspect(str(data), "-n", "5")
    assert (run, errors) == ({"status": 0, "imported": []}, "")
    assert lines == [
        f"files: 1, {size:,} bytes",
        "records: 2 (_tfrecord_manifest.json)",
        f"           2 records {size:>16,} bytes  part-0.tfrecord",
        "root",
        " |-- id: integer (nullable = false)",
        " |-- name: string (nullable = true)",
        " |-- xs: array<double> (nullable = true)",
        '{"id": 0, "name": "n0", "xs": [0.5, 0.25]}',
        '{"id": 1, "name": "n1", "xs": [0.5, 1.25]}',
    ]


def test_a_tfds_folder(tmp_path: Path) -> None:
    folder = tmp_path / "ds" / "1.0.0"
    folder.mkdir(parents=True)
    module = "tensorflow_datasets.core.features."
    features = {
        "pythonClassName": module + "features_dict.FeaturesDict",
        "featuresDict": {
            "features": {
                "id": {"pythonClassName": module + "tensor_feature.Tensor",
                       "tensor": {"shape": {}, "dtype": "int64", "encoding": "none"}},
                "label": {"pythonClassName": module + "class_label_feature.ClassLabel",
                          "classLabel": {"numClasses": "2"}},
            }
        },
    }  # fmt: skip
    (folder / "features.json").write_text(json.dumps(features))
    (folder / "label.labels.txt").write_text("cat\ndog\n")
    shard = "ds-train.tfrecord-00000-of-00001"
    records = [
        example(
            entry(b"id", feature("int64", int64_list_packed([i]))),
            entry(b"label", feature("int64", int64_list_packed([i % 2]))),
        )
        for i in range(3)
    ]
    (folder / shard).write_bytes(b"".join(frame(r) for r in records))
    info = {
        "name": "ds",
        "version": "1.0.0",
        "fileFormat": "tfrecord",
        "splits": [{"name": "train", "shardLengths": ["3"], "numBytes": "0"}],
    }
    (folder / "dataset_info.json").write_text(json.dumps(info))
    size = (folder / shard).stat().st_size
    lines, run, errors = inspect(str(folder.parent), "-n", "2")
    assert (run, errors) == ({"status": 0, "imported": []}, "")
    assert lines == [
        f"tfds: ds 1.0.0, {folder}",
        f"split train: files: 1, {size:,} bytes, records: 3 (dataset_info.json)",
        "records: 3",
        "root",
        " |-- id: long (nullable = true)",
        " |-- label: long (nullable = true)",
        '{"id": 0, "label": 0}',
        '{"id": 1, "label": 1}',
    ]


def test_arrays_of_structs_and_encoded_tensors(tmp_path: Path) -> None:
    """A manifest's array of structs and a TFDS folder's encoded tensors (zlib and raw bytes)
    are read in plain Python too (test_python_inference compares such rows with the jar's)."""
    data = tmp_path / "d"
    data.mkdir()
    objects = [
        example(
            entry(b"id", feature("int64", int64_list_packed([i]))),
            entry(b"objs/w", feature("float", float_list_packed([0.5] * i))),
            entry(b"objs/tag", feature("bytes", bytes_list([b"t"] * i))),
        )
        for i in range(3)
    ]
    (data / "part-0.tfrecord").write_bytes(b"".join(frame(r) for r in objects))
    element = {"type": "struct", "fields": [
        {"name": "w", "type": "float", "nullable": True, "metadata": {}},
        {"name": "tag", "type": "string", "nullable": True, "metadata": {}},
    ]}  # fmt: skip
    schema = {"type": "struct", "fields": [
        {"name": "id", "type": "long", "nullable": True, "metadata": {}},
        {"name": "objs", "type": {"type": "array", "elementType": element, "containsNull": True},
         "nullable": True, "metadata": {}},
    ]}  # fmt: skip
    write_manifest(data, {"part-0.tfrecord": 3}, schema="id BIGINT", schema_json=schema)
    lines, run, errors = inspect(str(data), "-n", "3")
    assert (run, errors) == ({"status": 0, "imported": []}, "")
    assert lines[-4:] == [
        " |-- objs: array<struct<w:float,tag:string>> (nullable = true)",
        '{"id": 0, "objs": []}',
        '{"id": 1, "objs": [{"w": 0.5, "tag": "t"}]}',
        '{"id": 2, "objs": [{"w": 0.5, "tag": "t"}, {"w": 0.5, "tag": "t"}]}',
    ]

    folder = tmp_path / "ds" / "1.0.0"
    folder.mkdir(parents=True)
    module = "tensorflow_datasets.core.features."

    def tensor(dtype: str, rank: int, encoding: str) -> dict[str, object]:
        shape = {"dimensions": ["-1"] * rank}
        return {"pythonClassName": module + "tensor_feature.Tensor",
                "tensor": {"shape": shape, "dtype": dtype, "encoding": encoding}}  # fmt: skip

    features = {
        "pythonClassName": module + "features_dict.FeaturesDict",
        "featuresDict": {
            "features": {"depth": tensor("float32", 2, "zlib"), "mask": tensor("uint8", 3, "bytes")}
        },
    }
    (folder / "features.json").write_text(json.dumps(features))
    depth = struct.pack("<3f", 0.5, 1.5, -2.0)
    record = example(
        entry(b"depth/value", feature("bytes", bytes_list([zlib.compress(depth)]))),
        entry(b"depth/shape", feature("int64", int64_list_packed([3, 1]))),
        entry(b"mask/value", feature("bytes", bytes_list([bytes([0, 255])]))),
        entry(b"mask/shape", feature("int64", int64_list_packed([1, 2, 1]))),
    )
    shard = "ds-train.tfrecord-00000-of-00001"
    (folder / shard).write_bytes(frame(record))
    info = {
        "name": "ds",
        "version": "1.0.0",
        "fileFormat": "tfrecord",
        "splits": [{"name": "train", "shardLengths": ["1"], "numBytes": "0"}],
    }
    (folder / "dataset_info.json").write_text(json.dumps(info))
    lines, run, errors = inspect(str(folder), "-n", "2")
    assert (run, errors) == ({"status": 0, "imported": []}, "")
    assert lines[-4:] == [
        "root",
        " |-- depth: array<array<float>> (nullable = true)",
        " |-- mask: array<array<array<short>>> (nullable = true)",
        '{"depth": [[0.5], [1.5], [-2.0]], "mask": [[[0], [255]]]}',
    ]


def test_errors_without_java(tmp_path: Path) -> None:
    lines, run, errors = inspect(str(tmp_path / "nope"))
    assert (lines, run) == ([], {"status": 3, "imported": []})
    assert errors == (
        f"spark-tfrecord: error: FileNotFoundException: File {tmp_path}/nope does not exist "
        "(check the path)"
    )
    bad = tmp_path / "bad.tfrecord"
    bad.write_bytes(frame(record(0)) + frame(b"\x0a\x05\xff\xff"))
    lines, run, errors = inspect(str(bad))
    assert run == {"status": 4, "imported": []}
    assert errors == (
        "spark-tfrecord: error: TFRecordDataException: [TFRECORD_MALFORMED_RECORD] Malformed "
        "tf.train.Example (length 5 runs past its message at byte 1 of the record), in the "
        f"record at byte offset {len(frame(record(0)))} of {bad} (the file is damaged or not "
        "TFRecord; see docs/errors.md)"
    )


def test_an_fsspec_url_is_read_as_a_local_folder(tmp_path: Path, capsys: object) -> None:
    """An object store's folder (fsspec's in-memory one here) prints what the same folder on
    the local disk prints (in this process: which modules it imports, the tests above show)."""
    import fsspec  # type: ignore[import-untyped]

    from spark_tfrecord import cli

    data = tmp_path / "d"
    (data / "day=x").mkdir(parents=True)
    (data / "day=x" / "part-0.tfrecord").write_bytes(b"".join(frame(record(i)) for i in range(3)))
    (data / "day=x" / "part-1.tfrecord").write_bytes(frame(record(3)))
    (data / "_SUCCESS").write_bytes(b"")
    memory = fsspec.filesystem("memory")
    for p in data.rglob("*"):
        if p.is_file():
            memory.pipe_file(f"/bucket/d/{p.relative_to(data)}", p.read_bytes())
    shown = []
    for path in (str(data), "memory://bucket/d", "memory://bucket/d/day=x/part-*"):
        assert cli.main(["inspect", path, "-n", "3"]) == 0
        shown.append(capsys.readouterr().out.splitlines())  # type: ignore[attr-defined]
    assert shown[0] == shown[1]
    assert shown[2][:2] == shown[0][:2] and shown[2][-3:] == [
        line.replace(', "day": "x"', "") for line in shown[0][-3:]
    ]
    assert shown[0][-1] == '{"id": 2, "name": "n2", "xs": [0.5, 2.25], "raw": "0xff00", "day": "x"}'
