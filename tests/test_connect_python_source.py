"""Spark Connect with no jar (issue 43): a Connect server started without the jar, whose Python
workers have spark-tfrecord, serves ``format("tfrecord")`` through the Python data source,
which Spark registers by itself from the top-level ``pyspark_tfrecord`` module; a client in an
environment of ``pyspark-client`` and spark-tfrecord only (support.python_envs) writes rows,
reads them back with a schema and with the schema inferred; the files hold the rows' Examples
as built by hand (support.tfrecord_bytes), byte for byte, which TensorFlow parses. The same
server whose workers lack spark-tfrecord: the client's read and write fail with Spark's
DATA_SOURCE_NOT_FOUND, and ``spark_tfrecord.register`` with an error that says what to install
where.

Each server (support.connect_server) starts once for the module, on 127.0.0.1, with no
``--jars`` and no ``spark.sql.extensions``; each client runs in a process of its own
(support.jarless_connect_client). Collected only where pyspark has the Python data source API
(tests/conftest.py): Spark 4.
"""

from __future__ import annotations

import json
import re
import subprocess
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pyspark
import pytest

from support import TESTS, tfrecord_files
from support.connect_server import Server, connect_server, listening
from support.jarless_connect_client import rows
from support.python_envs import connect_client_venv, package_path, worker_python
from support.tfrecord_bytes import (
    bytes_list,
    entry,
    example,
    feature,
    float_list_packed,
    int64_list_packed,
    read_records,
)

SPARK_HOME = Path(pyspark.__file__).resolve().parent
CLIENT_TIMEOUT = 600.0


def jarless_server(root: Path, *, with_package: bool) -> AbstractContextManager[Server]:
    """A Connect server with no jar, whose Python workers (and the driver's, which look up the
    ``pyspark_*`` modules) run `worker_python`, with spark-tfrecord or without."""
    package = package_path(root / "package") if with_package else None
    python, path = worker_python(root / "workers", with_package=package)
    env = {"PYSPARK_PYTHON": python, "PYSPARK_DRIVER_PYTHON": python, "PYTHONPATH": path}
    conf = {"spark.pyspark.python": python, "spark.pyspark.driver.python": python}
    return connect_server(SPARK_HOME, root / "server", jars=[], conf=conf, env=env)


@pytest.fixture(scope="module")
def client_python(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The client environment's Python, and the PYTHONPATH that gives it spark-tfrecord (and
    the tests' `support` package, for the client program)."""
    package = package_path(tmp_path_factory.mktemp("client") / "package")
    return connect_client_venv(pyspark.__version__), f"{package}:{TESTS}"


def run_client(client: tuple[Path, str], *args: str) -> dict[str, Any]:
    python, path = client
    done = subprocess.run(
        [str(python), "-m", "support.jarless_connect_client", *args],
        capture_output=True,
        text=True,
        timeout=CLIENT_TIMEOUT,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": path, "HOME": str(Path.home())},
        cwd="/",
    )
    lines = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")]
    assert done.returncode == 0 and lines, done.stderr[-6000:]
    result: dict[str, Any] = json.loads(lines[0][7:])
    return result


def client_of(server: Server, client: tuple[Path, str], *args: str) -> dict[str, Any]:
    """What the client program did against ``server``, and the addresses the server listened
    on meanwhile."""
    result = run_client(client, server.url, *args)
    result["listening"] = sorted({address for address, _ in listening(server.pid)})
    return result


@pytest.fixture(scope="module")
def installed(
    client_python: tuple[Path, str], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    """What a client did against the server whose workers have spark-tfrecord (stopped before
    the other starts)."""
    root = tmp_path_factory.mktemp("jarless-connect")
    with jarless_server(root, with_package=True) as server:
        result = client_of(server, client_python, str(root / "out"))
    result["out"] = str(root / "out")
    return result


@pytest.fixture(scope="module")
def missing(
    client_python: tuple[Path, str], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    """What a client saw from the server whose workers lack spark-tfrecord."""
    root = tmp_path_factory.mktemp("jarless-connect-missing")
    with jarless_server(root, with_package=False) as server:
        return client_of(server, client_python, str(root / "out"), "missing")


def test_the_client_has_pyspark_client_and_spark_tfrecord_only(
    installed: dict[str, Any],
) -> None:
    assert installed["session"] == "pyspark.sql.connect.session.SparkSession"
    assert installed["server_version"] == pyspark.__version__
    assert "pyspark-client" in installed["distributions"]
    assert "pyspark" not in installed["distributions"] and not installed["py4j"]
    assert installed["listening"] == ["127.0.0.1"]


def test_write_and_read_back_with_a_schema(installed: dict[str, Any]) -> None:
    expected = [[i, n, x, raw.hex(), tags] for i, n, x, raw, tags in rows()]
    assert installed["read"] == expected
    assert installed["after_append"] == len(expected) + 1
    # An option only the jar writes: the Python data source served the write, not a jar.
    _, message, _ = installed["jar_only_option"]
    assert (
        "The TFRecord option 'shardPrefix' needs the jar; the Python data source (no jar) does "
        "not write it" in message
    ), message


def test_inference(installed: dict[str, Any]) -> None:
    """spark_tfrecord.read with no schema: the types of the rows written, inferred from the
    files (UTF-8 bytes as string, the others as binary), and the same rows."""
    assert installed["inferred"] == (
        "struct<id:bigint,name:string,x:array<float>,raw:binary,tags:array<string>>"
    )
    assert installed["inferred_rows"] == [
        {"id": i, "name": n, "x": x, "raw": raw.hex(), "tags": tags}
        for i, n, x, raw, tags in rows()
    ]


def test_register_on_a_server_that_has_the_source(installed: dict[str, Any]) -> None:
    assert installed["register"] is None
    assert installed["after_register"] == [*range(9), 100]


def record(i: int, name: str, x: list[float], raw: bytes, tags: list[str]) -> bytes:
    """The Example of a row, built by hand: the schema's order, empty lists kept."""
    return example(
        entry(b"id", feature("int64", int64_list_packed([i]))),
        entry(b"name", feature("bytes", bytes_list([name.encode()]))),
        entry(b"x", feature("float", float_list_packed(x))),
        entry(b"raw", feature("bytes", bytes_list([raw]))),
        entry(b"tags", feature("bytes", bytes_list([t.encode() for t in tags]))),
    )


def test_the_files_of_the_write(installed: dict[str, Any], tf: Any) -> None:
    """The files that the writes (two tasks, then an append) left: the jar's names, each record
    the bytes of the row's Example built by hand, both checksums right; TensorFlow parses them
    value for value; the manifest counts them."""
    folder = Path(installed["out"])
    files = tfrecord_files(folder)
    assert files and all(
        re.fullmatch(r"part-\d{5}-[0-9a-f-]{36}-c000\.tfrecord", f.name) for f in files
    )
    written = [*rows(), (100, "more", [], b"", [])]
    found = sorted(data for f in files for data in read_records(f))
    assert found == sorted(record(*r) for r in written)
    parsed = {}
    for f in files:
        for data in tf.data.TFRecordDataset(str(f)):
            features = tf.train.Example.FromString(data.numpy()).features.feature
            parsed[features["id"].int64_list.value[0]] = [
                features["name"].bytes_list.value[0].decode(),
                list(features["x"].float_list.value),
                features["raw"].bytes_list.value[0].hex(),
                [t.decode() for t in features["tags"].bytes_list.value],
            ]
    assert parsed == {i: [n, x, raw.hex(), tags] for i, n, x, raw, tags in written}
    manifest = json.loads((folder / "_tfrecord_manifest.json").read_text())
    assert manifest["num_records"] == len(written)
    counts = {f.name: sum(1 for _ in read_records(f)) for f in files}
    assert {e["path"]: e["num_records"] for e in manifest["files"]} == counts


def test_without_spark_tfrecord_the_error_names_it(missing: dict[str, Any]) -> None:
    """A read, an inference and a write fail as Spark fails for any name it does not know
    (docs/errors.md gives the fixes); spark_tfrecord.register says what is missing and where,
    at once, where a read after it would fail with the workers' ModuleNotFoundError."""
    assert missing["listening"] == ["127.0.0.1"]
    for action in ("read", "infer", "write"):
        _, message, condition = missing[action]
        assert condition == "DATA_SOURCE_NOT_FOUND", missing[action]
        assert "[DATA_SOURCE_NOT_FOUND] Failed to find the data source: tfrecord." in message
    kind, message, condition = missing["register"]
    assert (kind, condition) == ("RuntimeError", None), missing["register"]
    assert message == (
        "The Spark Connect server's Python workers cannot import spark_tfrecord, so the "
        "tfrecord data source without the jar cannot run there: pip install spark-tfrecord into "
        "the Python environment the server runs its Python workers with (spark.pyspark.python, "
        "PYSPARK_PYTHON), or give the server the jar (spark_tfrecord.add_jar(spark), or --jars "
        "where the server starts)"
    )
    # pyspark-client 4.0.4 gives this error no condition (''), only its text.
    _, message, _ = missing["registered_read"]
    assert message.startswith(
        "[PYTHON_DATA_SOURCE_ERROR] Failed to create Python data source instance"
    ), message
    assert "ModuleNotFoundError: No module named 'spark_tfrecord'" in message
