"""Spark Connect: a server started the way a user starts one, with the jar, and its clients.

The suite's Connect server (the ``server`` fixture of tests/conftest.py: one for the run, which
test_shards and test_converter use too; support.connect_server.jar_server runs
`sbin/start-connect-server.sh --jars <jar_path()>`, or the `spark-daemon.sh submit` that script
runs where the pyspark wheel lacks it) listens on a free port of 127.0.0.1; a client in a
process of its own, `support.connect_client` (`SparkSession.builder.remote("sc://...")` refuses
to start beside the classic session this pytest process holds, and would turn this process into
a Connect one), goes through reads, writes, inference, partitions, gzip, SequenceExample, the
corrupt-record column, the typed helpers, `feature_spec` of a Connect schema, `add_jar` on a
second session and the errors for bad options. `configure()` is tested on the builders that
start their own server (`remote("local[2]")`) and on those that cannot
take a jar (a server elsewhere), which it refuses with a ValueError saying what to do.

pyspark 3.5's wheel has no Connect server: the test fetches `spark-connect_2.12` from Maven
Central (a shaded jar that needs nothing else), as `--packages` would. Its gRPC port listens on
every interface: Spark 3.5 has no `spark.connect.grpc.binding.address` (4.0 added it).
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pyspark
import pytest

import spark_tfrecord
from support import child_env, module_command, tfrecord_files
from support.connect_server import Server, connect_jar_for_spark_3, listening
from support.tfrecord_bytes import entry, example, feature, int64_list_packed, write_records

SPARK_3 = pyspark.__version__.startswith("3.")
CLIENT_TIMEOUT = 600.0


def run_child(module: str, args: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    """What ``python -m support.<module> ARGS`` printed as its RESULT line."""
    done = subprocess.run(
        module_command(module, *args),
        capture_output=True,
        text=True,
        timeout=CLIENT_TIMEOUT,
        env=child_env(env),
    )
    lines = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")]
    assert done.returncode == 0 and lines, done.stderr[-6000:]
    result: dict[str, Any] = json.loads(lines[0][7:])
    return result


@pytest.fixture(scope="module")
def client(server: Server, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """What one Connect client did against the server, as JSON: the tests below read it."""
    root = tmp_path_factory.mktemp("connect-client")
    malformed = write_records(
        root / "malformed" / "a.tfrecord",
        [example(entry(b"x", feature("int64", int64_list_packed([5])))), b"\x0a\x05\x0a"],
    )
    truncated = root / "truncated" / "a.tfrecord"
    write_records(truncated, [example(entry(b"x", feature("int64", int64_list_packed([5]))))])
    truncated.write_bytes(truncated.read_bytes()[:-3])
    out = root / "out"
    result = run_child(
        "connect_client", [server.url, str(out), str(malformed), str(truncated.parent)]
    )
    result["out"] = str(out)
    return result


def test_the_server_listens_on_loopback_only(server: Server) -> None:
    sockets = listening(server.pid)
    grpc = {address for address, port in sockets if port == server.port}
    others = {address for address, port in sockets if port != server.port}
    # Spark 3.5 binds gRPC to every interface (it has no binding.address); all else is loopback.
    assert grpc and grpc <= ({"::", "0.0.0.0"} if SPARK_3 else {"127.0.0.1"}), sockets
    assert others == {"127.0.0.1"}, sockets


def test_the_client_is_a_connect_session_of_this_spark(client: dict[str, Any]) -> None:
    assert client["session"] == "pyspark.sql.connect.session.SparkSession"
    assert client["dataframe"] == "pyspark.sql.connect.dataframe"
    assert client["version"] == pyspark.__version__


def test_write_and_read_with_a_schema(client: dict[str, Any]) -> None:
    assert client["plain"] == [
        [i, f"name-{i}", [i / 2, -1.25], bytes([i, 255 - i]).hex(), i % 3] for i in range(9)
    ]


def test_typed_helpers_partitioned_gzip_inferred(client: dict[str, Any], tf: Any) -> None:
    assert client["inferred"] == "struct<id:bigint,name:string,x:array<float>,part:int>"
    assert client["typed"] == [[i, f"name-{i}", [i / 2, -1.25], i % 3] for i in range(9)]
    assert client["part_1"] == [1, 4, 7]
    files = tfrecord_files(Path(client["out"]) / "typed")
    assert files and all(f.name.endswith(".tfrecord.gz") for f in files)
    by_part: dict[str, list[int]] = {}
    for f in files:
        for record in tf.data.TFRecordDataset(str(f), compression_type="GZIP"):
            features = tf.train.Example.FromString(record.numpy()).features.feature
            assert "part" not in features  # a partition column is a directory, not a feature
            by_part.setdefault(f.parent.name, []).append(features["id"].int64_list.value[0])
    assert {k: sorted(v) for k, v in by_part.items()} == {
        f"part={p}": list(range(p, 9, 3)) for p in range(3)
    }
    # The write from the client left its manifest: each file's records as TensorFlow read them.
    folder = Path(client["out"]) / "typed"
    manifest = json.loads((folder / "_tfrecord_manifest.json").read_text())
    assert manifest["partition_columns"] == ["part"] and manifest["num_records"] == 9
    counts = {f.relative_to(folder).as_posix(): tf_records(tf, f) for f in files}
    assert {f["path"]: f["num_records"] for f in manifest["files"]} == counts


def tf_records(tf: Any, file: Path) -> int:
    return sum(1 for _ in tf.data.TFRecordDataset(str(file), compression_type="GZIP"))


def test_feature_spec_of_a_connect_schema(client: dict[str, Any], tf: Any) -> None:
    from pyspark.sql.types import StructType

    # A Connect DataFrame's schema is pyspark's own StructType: the test rebuilds it from its
    # JSON here, where TensorFlow is already imported, rather than import TensorFlow again.
    kind, schema_json = client["schema"]
    assert kind == "pyspark.sql.types.StructType"
    spec = spark_tfrecord.feature_spec(StructType.fromJson(json.loads(schema_json)))
    assert spec == {
        "id": tf.io.VarLenFeature(tf.int64),
        "name": tf.io.VarLenFeature(tf.string),
        "x": tf.io.RaggedFeature(tf.float32, row_splits_dtype=tf.int64),
        "part": tf.io.VarLenFeature(tf.int64),
    }


def test_sequence_example(client: dict[str, Any], tf: Any) -> None:
    from pyspark.sql.types import StructType

    assert client["seq_schema"] == "struct<id:bigint,tag:string,steps:array<array<bigint>>>"
    assert client["seq"] == [[1, [[1, 2], [3]], "a"], [2, [[4]], "b"]]
    schema = StructType.fromJson(json.loads(client["seq_schema_json"]))
    context, sequence = spark_tfrecord.feature_spec(schema, record_type="SequenceExample")
    assert context == {"id": tf.io.VarLenFeature(tf.int64), "tag": tf.io.VarLenFeature(tf.string)}
    assert sequence == {"steps": tf.io.RaggedFeature(tf.int64, row_splits_dtype=tf.int64)}


def test_nested_columns_and_their_pruning(client: dict[str, Any]) -> None:
    assert client["nested"] == [[1, ["ff", 480], [[0.5, 7], [0.25, 3]]], [2, None, []]]
    assert client["pruned"] == [[1, 480], [2, None]]


def test_a_tfds_dataset_written_and_read_by_a_client(client: dict[str, Any]) -> None:
    import tensorflow_datasets as tfds

    def f32(x: float) -> float:
        return float(struct.unpack("<f", struct.pack("<f", x))[0])

    expected = [
        [i, f"t{i}", [[[f32(v) for v in (0.1, 0.2, 0.3, 0.4 + k / 10)], k] for k in range(i % 3)]]
        for i in range(7)
    ]
    assert client["tfds_rows"] == expected
    assert client["tfds_schema"] == (
        "struct<id:bigint,text:string,objects:array<struct<bbox:array<float>,label:bigint>>>"
    )
    folder = client["tfds_folder"]
    assert folder == client["out"] + "/tfds/connect_ds/1.0.0"
    builder = tfds.builder_from_directory(folder)
    assert builder.info.splits["train"].num_shards == 2
    loaded = sorted(tfds.as_numpy(builder.as_dataset(split="train")), key=lambda e: int(e["id"]))
    assert [
        [int(e["id"]), e["text"].decode(), [[list(map(float, b)), int(label)]
         for b, label in zip(e["objects"]["bbox"], e["objects"]["label"])]]
        for e in loaded
    ] == expected  # fmt: skip


def test_statistics_of_a_connect_dataframe(
    client: dict[str, Any], spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """spark_tfrecord.statistics takes a Connect DataFrame as it takes a classic one: the same
    rows (one partition, so that every sum is taken in the same order) give the same bytes,
    with either engine of Spark's, and the same schema; the jar engine, which runs in the
    session's JVM, is refused with the engines a client has."""
    from support.connect_client import STATS_EXPRS

    # mapInArrow's workers need pyarrow and spark_tfrecord: this environment's python.
    monkeypatch.setattr(spark.sparkContext, "pythonExec", sys.executable)
    rows = spark.range(0, 60, 1, 1).selectExpr(*STATS_EXPRS)
    for engine in ("sql", "arrow"):
        ours = spark_tfrecord.statistics(rows, engine=engine)
        assert bytes.fromhex(client["statistics"][engine]) == ours, engine
    sql = bytes.fromhex(client["statistics"]["sql"])
    assert client["written_statistics"] == client["statistics"]["sql"]
    split = os.listdir(Path(client["out"]) / "tfx" / "Split-train")  # the records alone
    assert split and all(n.startswith("data_tfrecord-") and n.endswith(".gz") for n in split)
    assert client["stats_schema"] == spark_tfrecord.infer_schema(sql)
    assert 'name: "v"' in client["stats_schema"]
    assert client["stats_jar"] is not None and 'use engine="sql"' in client["stats_jar"]


def test_permissive_keeps_the_corrupt_record(client: dict[str, Any]) -> None:
    assert client["permissive"] == [[5, None], [None, "0a050a"]]


def test_write_refuses_an_existing_path_by_default(client: dict[str, Any]) -> None:
    kind, message, *_ = client["exists"]
    assert kind == "AnalysisException" and "already exists" in message, (kind, message)


def test_bad_options_fail_with_a_clear_message(client: dict[str, Any]) -> None:
    kind, message, *_ = client["bad_record_type"]
    assert kind == "IllegalArgumentException"
    assert "Invalid value 'Bogus' for TFRecord option 'recordType'" in message
    assert "Example, SequenceExample, ByteArray" in message
    kind, message, *_ = client["bad_codec"]
    assert kind == "IllegalArgumentException"
    assert "TFRecord option 'compression' is 'snappy', a codec TensorFlow cannot read" in message
    kind, message, *_ = client["bad_mode"]
    assert kind == "IllegalArgumentException"
    assert "Invalid value 'SOMETIMES' for TFRecord option 'mode'" in message


def test_a_client_matches_errors_by_condition(client: dict[str, Any]) -> None:
    """Spark 4's client: planning errors are the client's exception itself, with our condition
    and parameters; a task's error is Spark's FAILED_READ_FILE / TASK_WRITE_FAILED with ours as
    a cause, which spark_tfrecord.errors finds in the text Spark sends for the causes.

    pyspark 3.5's client receives no condition at all, Spark's or ours, only a message cut at
    about 2 KB: ours is found in it for planning errors (the message starts with it) and for a
    write's error, but a read's cause lies past the cut (docs/errors.md says so)."""
    kind, _, spark_condition, ours, params = client["bad_mode"]
    assert kind == "IllegalArgumentException" and ours == "TFRECORD_INVALID_OPTION"
    _, _, _, ours, _ = client["bad_record_type"]
    assert ours == "TFRECORD_INVALID_OPTION"
    _, _, _, ours, _ = client["null_element"]
    assert ours == "TFRECORD_DATA_MISMATCH", client["null_element"]
    _, message, outer, ours, _ = client["truncated"]
    assert "truncated/a.tfrecord" in message, message
    if SPARK_3:
        assert spark_condition is None and outer is None
        return
    assert spark_condition == "TFRECORD_INVALID_OPTION"
    assert (params["option"], params["value"]) == ("mode", "SOMETIMES"), params
    assert ours == "TFRECORD_CORRUPT_RECORD.TRUNCATED", client["truncated"]
    assert outer == "FAILED_READ_FILE.NO_HINT", client["truncated"]


def test_what_a_client_reads_first(client: dict[str, Any]) -> None:
    """docs/errors.md, "What Python shows first": a client raises what the server sends as the
    outermost error. That is ours for a planning error; for a task's error it is Spark's own
    (FAILED_READ_FILE / TASK_WRITE_FAILED on 4.x, the job's "Job aborted" on 3.5), with ours in
    the causes, where errors.condition finds it (test above)."""
    kind, first, *_ = client["bad_record_type"]
    assert kind == "IllegalArgumentException"
    assert first == (
        "[TFRECORD_INVALID_OPTION] Invalid value 'Bogus' for TFRecord option 'recordType'. "
        "Valid values: Example, SequenceExample, ByteArray."
    )
    read_kind, read_first, *_ = client["truncated"]
    write_kind, write_first, *_ = client["null_element"]
    if SPARK_3:
        aborted = "(org.apache.spark.SparkException) Job aborted due to stage failure: "
        assert (read_kind, write_kind) == ("SparkConnectGrpcException",) * 2
        assert read_first.startswith(aborted) and write_first.startswith(aborted)
        # Then the task's error: here Spark's "Encountered error while reading file …".
        assert "/truncated/a.tfrecord" in read_first, read_first
        assert "[TASK_WRITE_FAILED] Task failed while writing rows to file:" in write_first
        return
    assert (read_kind, write_kind) == ("SparkException", "SparkException")
    assert read_first.startswith(
        "[FAILED_READ_FILE.NO_HINT] Encountered error while reading file file://"
    )
    assert read_first.endswith("/truncated/a.tfrecord.  SQLSTATE: KD001"), read_first
    assert write_first.startswith("[TASK_WRITE_FAILED] Task failed while writing rows to file:")


def test_add_jar_to_a_second_session_of_a_server_that_has_it(client: dict[str, Any]) -> None:
    assert client["other_is_new"]
    assert client["add_jar"] == spark_tfrecord.jar_path()
    assert client["added"] == [[i, str(i * 2)] for i in range(40)]


@pytest.mark.parametrize("how", ["remote", "SPARK_REMOTE", "connect builder"])
def test_configure_refuses_a_server_that_runs_elsewhere(
    how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pyspark.sql import SparkSession

    url = "sc://127.0.0.1:15002/;token=secret"
    if how == "remote":
        builder: Any = SparkSession.builder.remote(url)
    elif how == "SPARK_REMOTE":
        monkeypatch.setenv("SPARK_REMOTE", url)
        builder = SparkSession.builder.appName("x")
    else:
        from pyspark.sql.connect.session import SparkSession as ConnectSparkSession

        builder = ConnectSparkSession.builder.remote(url)
    with pytest.raises(ValueError) as raised:
        spark_tfrecord.configure(builder)
    message = str(raised.value)
    assert "sc://127.0.0.1:15002" in message and "secret" not in message
    assert f"--jars {spark_tfrecord.jar_path()}" in message
    assert "spark_tfrecord.add_jar(spark)" in message
    assert "spark.jars" not in builder._options


@pytest.mark.parametrize(
    "options",
    [{"spark.remote": "local[2]"}, {"spark.api.mode": "connect", "spark.master": "local[2]"}],
)
def test_configure_adds_the_jar_for_a_server_the_builder_starts(options: dict[str, str]) -> None:
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.config(map={**options, "spark.jars": "/x/other.jar"})
    assert spark_tfrecord.configure(builder) is builder
    assert builder._options["spark.jars"] == "/x/other.jar," + spark_tfrecord.jar_path()


def test_configure_hides_only_the_refusals_of_its_own_settings() -> None:
    """The filter configure() adds for a local server: its two settings with its values, as
    pyspark's Connect conf warns them; the same key with another value, and another key, warn."""
    from pyspark.sql import SparkSession

    def shown(key: str, value: str) -> list[str]:
        message = f"Failed to set {key} to Some({value}) due to [CANNOT_MODIFY_CONFIG] Cannot"
        with warnings.catch_warnings(record=True) as caught:
            spark_tfrecord.configure(SparkSession.builder.remote("local[2]"))
            warnings.warn_explicit(
                message, UserWarning, "conf.py", 1, module="pyspark.sql.connect.conf"
            )
        return [str(w.message) for w in caught]

    jar = spark_tfrecord.jar_path()
    assert shown("spark.jars", jar) == []
    assert shown("spark.sql.extensions", spark_tfrecord.EXTENSIONS) == []
    assert len(shown("spark.jars", jar + ",/x/other.jar")) == 1
    assert len(shown("spark.driver.host", "127.0.0.1")) == 1


def test_configure_gives_the_jar_to_a_local_connect_server(tmp_path: Path) -> None:
    # pyspark 3.5 needs the Connect server's jar too (as --packages would give it): configure
    # keeps it. SPARK_TESTING makes the local server take a free port (not 15002).
    earlier = str(connect_jar_for_spark_3()) if SPARK_3 else ""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_", "PYSPARK_"))}
    env.update(SPARK_TESTING="1", SPARK_LOCAL_IP="127.0.0.1")
    result = run_child("local_connect_server", [str(tmp_path / "out"), earlier], env)
    assert result["session"] == "pyspark.sql.connect.session"
    jars = [earlier, spark_tfrecord.jar_path()] if earlier else [spark_tfrecord.jar_path()]
    assert result["jars"].split(",") == jars
    assert result["rows"] == [[i, [float(i), 0.5]] for i in range(20)]
    # pyspark 4 sets every option again once the server runs, and the server refuses those it
    # started with: configure() hides the refusals of its two settings, and no other.
    ours = [w for w in result["warnings"] if "spark.jars" in w or "spark.sql.extensions" in w]
    assert ours == [], ours
    refused = {w.split()[3] for w in result["warnings"] if w.startswith("Failed to set ")}
    others = {
        "spark.connect.grpc.binding.address",
        "spark.driver.host",
        "spark.driver.bindAddress",
        "spark.driver.extraJavaOptions",
        "spark.ui.enabled",
    }
    assert refused == (set() if SPARK_3 else others), result["warnings"]
