"""Google Cloud Storage: Spark writes and reads gs:// through Google's gcs-connector, and the
trainer reads the same folder through gcsfs, against a local server (fake-gcs-server).

One server on 127.0.0.1 serves the module (`support.gcs_server`); one child Python process runs
a Spark driver, `support.gcs_driver` (this process's session cannot take new jars), with the
shaded connector and the settings docs/deployment.md gives. The trainer side reads the folders
that driver wrote in this process, with ``STORAGE_EMULATOR_HOST`` pointing gcsfs at the server,
as Google's own clients take it. Collected on Spark 3.5 (Hadoop 3.3.4, where the connector's
``openFile`` does not link and the data source reads with ``open``) and on the 4.x after 4.0
(Hadoop 3.4 and 3.5, whose own fs.gs settings the connector cannot parse): tests/conftest.py.
Where Spark's Hadoop is 3.5 or later, a second driver runs a few scenarios with Hadoop's own
connector, hadoop-gcp, which has no endpoint setting: it reaches the same server as Google's
host, through a proxy and a front (`support.gcs_front`); the tests that take `connector` check
both runs.

The trainer's tests that read what this process put on the server (gcsfs's requests by block,
the loaders, `tf_dataset`, a stopped server) check the package's code, not Spark's: marked
``once``, they run in one of ci/test's suites that collect this file (tests/conftest.py).

`tf_dataset`'s test needs no Spark: it starts a server of its own that also answers HTTPS as
Google's hosts, behind a local proxy (`support.google_hosts`), and reads in one child Python
with TensorFlow (`support.tf_gcs_reader`), whose GCS file system only the environment points.
"""

from __future__ import annotations

import gzip
import json
import math
import re
import uuid
import zlib
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

import spark_tfrecord
from support import driver_result, free_port, trainer_side
from support.gcs_front import gcs_front, java_trust_store
from support.gcs_server import (
    GCS,
    Request,
    gcs_bucket,
    gcs_conf,
    gcs_jar,
    hadoop_gcp_conf,
    tensorflow_env,
)
from support.google_hosts import certificates, connect_proxy
from support.loader_epochs import Folder, mark
from support.loader_records import digest, plain, trainer_frame

pytestmark = pytest.mark.timeout(1800)  # the first test also waits for the downloads and the run

BUCKET = "tfrecord-gcs"
ROWS = 3000
BLOCK = 64 << 10
SPLIT_BYTES = 256 << 10


def _hadoop() -> tuple[int, ...]:
    """The version of this pyspark's Hadoop, from its hadoop-client-api jar."""
    import pyspark

    jars = sorted((Path(pyspark.__file__).parent / "jars").glob("hadoop-client-api-*.jar"))
    return tuple(int(x) for x in jars[0].stem.rsplit("-", 1)[1].split(".")) if jars else ()


#: The connectors this Spark runs: Google's gcs-connector on every line test_gcs is collected on,
#: and Hadoop's own hadoop-gcp (built against Hadoop 3.5) where Spark's Hadoop is 3.5 or later.
CONNECTORS = ["google"] + (["hadoop"] if _hadoop() >= (3, 5) else [])
#: What hadoop-gcp's run does: the writes and commits, not every scenario again.
HADOOP_SCENARIOS = ["partitioned", "modes", "failed_append"]


@pytest.fixture(scope="module")
def gcs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GCS]:
    with gcs_bucket(tmp_path_factory.mktemp("gcs") / "server.log", BUCKET) as bucket:
        yield bucket


@pytest.fixture(scope="module")
def runs(gcs: GCS, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every scenario's result, from one Spark driver in a child process, and its log."""
    work = tmp_path_factory.mktemp("spark")
    conf = {
        "spark.jars": str(gcs_jar()),
        "spark.local.dir": str(work),  # Spark copies spark.jars here for its local executor
        **gcs_conf(gcs.endpoint),
    }
    local = tmp_path_factory.mktemp("local")
    config = {
        "conf": conf,
        "bucket": BUCKET,
        "endpoint": gcs.endpoint,
        "log": str(gcs.log),
        "local": str(local),
        "split_bytes": SPLIT_BYTES,
        "refused_endpoint": f"http://127.0.0.1:{free_port()}",  # nothing listens there
    }
    result, log = driver_result("gcs_driver", config, work / "driver.log", timeout=1500)
    result["local"] = local
    result["log"] = log
    return result


@pytest.fixture(scope="module")
def hadoop_runs(gcs: GCS, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """`HADOOP_SCENARIOS` with hadoop-gcp, from a driver of their own, under ``hadoop/`` of the
    same bucket: through the proxy and the front of `support.gcs_front`, as Google's host."""
    work = tmp_path_factory.mktemp("hadoop-gcp")
    authority = certificates(work)
    with gcs_front(gcs.endpoint, authority) as front, connect_proxy(front.address) as proxy:
        conf = {
            "spark.jars": str(gcs_jar("hadoop")),
            "spark.local.dir": str(work),
            **hadoop_gcp_conf(proxy.url, java_trust_store(authority, work)),
        }
        config = {
            "conf": conf,
            "bucket": BUCKET,
            "folder": "/hadoop",
            "scenarios": HADOOP_SCENARIOS,
            "endpoint": gcs.endpoint,
            "local": str(work),
            "split_bytes": SPLIT_BYTES,
        }
        result, log = driver_result("gcs_driver", config, work / "driver.log", timeout=900)
    result["log"] = log
    result["moves"], result["tunnels"] = front.moves, sorted(set(proxy.tunnels))
    return result


@pytest.fixture(scope="module", params=CONNECTORS)
def connector(request: pytest.FixtureRequest) -> tuple[str, dict[str, Any], str]:
    """Each connector's name, run and folder of the bucket (``""``: its root)."""
    if request.param == "hadoop":
        return "hadoop", request.getfixturevalue("hadoop_runs"), "/hadoop"
    return "google", request.getfixturevalue("runs"), ""


def objects(prefix: str) -> dict[str, bytes]:
    """The objects of the bucket under `prefix` (a folder), by name relative to it, read with
    gcsfs (the `emulator` fixture points it at the server)."""
    from gcsfs.core import GCSFileSystem

    fs = GCSFileSystem(token="anon", skip_instance_cache=True)
    root = f"{BUCKET}/{prefix}/"
    return {k[len(root) :]: fs.cat_file(k) for k in fs.find(root) if not k.endswith("/")}


def by_part(files: dict[str, bytes]) -> dict[str, bytes]:
    """Files by name, each write's id left out of its part files' names (``part-00001-<id>-c000``
    -> ``part-00001-c000``), to compare two writes' files."""
    return {
        re.sub(r"(part-\d{5})-[0-9a-f-]{36}", r"\1", name): data for name, data in files.items()
    }


def local_files(folder: Path) -> dict[str, bytes]:
    """A local folder's files as `objects` gives a bucket's (Hadoop's .crc files left out)."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in folder.rglob("*")
        if p.is_file() and not p.name.endswith(".crc")
    }


def outcome(runs: dict[str, Any], scenario: str) -> dict[str, Any]:
    result: dict[str, Any] = runs[scenario]
    assert "failed" not in result, result.get("failed")
    return result


def expected_rows() -> list[list[Any]]:
    """What gcs_driver.frame holds: id, p, label, name, tags."""
    tags = ["a", "bb", "ccc"]
    return [[i, i % 3, (i % 10) / 4, f"row {i}", tags[: i % 4]] for i in range(ROWS)]


def test_partitioned_write_reads_back_equal(connector: tuple[str, dict[str, Any], str]) -> None:
    name, runs, _ = connector
    result = outcome(runs, "partitioned")
    assert result["schema"] == "struct<id:bigint,label:float,name:string,tags:array<string>,p:int>"
    assert result["rows"] == expected_rows()
    assert result["p1_names"] == sorted(f"row {i}" for i in range(1, ROWS, 3))
    if name == "hadoop":
        # hadoop-gcp asked Google's host (the proxy tunnels nothing else), and committed its
        # tasks' files with objects.move, one object at a time.
        assert runs["tunnels"] == ["storage.googleapis.com:443"], runs["tunnels"]
        part = f"{BUCKET}/hadoop/partitioned/p=1/part-"
        assert any(m.startswith(part) for m in runs["moves"]), runs["moves"][:5]


def test_gzip_append_overwrite(connector: tuple[str, dict[str, Any], str]) -> None:
    result = outcome(connector[1], "modes")
    assert result["appended"] == list(range(150))
    assert result["overwritten"] == list(range(1000, 1010))


def test_the_read_falls_back_to_open_where_the_connector_cannot_open_files(
    connector: tuple[str, dict[str, Any], str],
) -> None:
    """Spark 3.5's Hadoop 3.3.4 lacks the class the connector's openFile links to; the data
    source then opens files with open(path), and says so once. Later Hadoops link it, and
    hadoop-gcp's openFile runs."""
    import pyspark

    runs = connector[1]
    warned = "GoogleHadoopFileSystem.openFile cannot run in this JVM" in runs["log"]
    assert warned == pyspark.__version__.startswith("3."), runs["log"][-3000:]


def test_spark_names_a_missing_bucket_and_object(runs: dict[str, Any]) -> None:
    for what, error in outcome(runs, "missing").items():
        assert error["error"] is not None, what
        assert "PATH_NOT_FOUND" in error["error"] and error["url"] in error["error"], error


def test_spark_names_the_url_when_the_server_refuses(runs: dict[str, Any]) -> None:
    """No server at the endpoint: after its retries the connector fails the read and the write
    with an error naming the URL, caused by the refused connection; not a hang."""
    for what, found in outcome(runs, "refused").items():
        assert found["error"] is not None, what
        assert f"Error accessing gs://refused-{what}/t" in found["error"], found["error"][:3000]
        assert "java.net.ConnectException: Connection refused" in found["error"], what


@pytest.fixture
def emulator(gcs: GCS, monkeypatch: pytest.MonkeyPatch) -> str:
    """gcsfs pointed at the server, as Google's clients are, without credentials."""
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", gcs.endpoint)
    return gcs.endpoint


def test_the_trainer_reads_what_spark_wrote(
    runs: dict[str, Any], gcs: GCS, emulator: str, tmp_path: Path
) -> None:
    """dataset_info, grain_source and torch_dataset on the gs:// folder the connector wrote
    (with its folders' placeholder objects, ``partitioned/`` and ``partitioned/p=0/``) read what
    Spark reads, and the same records, bit for bit, as from a local copy of the folder."""
    outcome(runs, "partitioned")
    url = f"gs://{BUCKET}/partitioned"
    from gcsfs.core import GCSFileSystem

    fs = GCSFileSystem(token="anon", skip_instance_cache=True)
    placeholders = [k for k in fs.find(url, withdirs=False) if k.endswith("/")]
    assert f"{BUCKET}/partitioned/p=0/" in placeholders, placeholders
    local = tmp_path / "partitioned"
    for key in fs.find(url):
        if not key.endswith("/"):
            target = local / key[len(f"{BUCKET}/partitioned/") :]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(fs.cat_file(key))

    info = spark_tfrecord.dataset_info(url)
    assert (info.source, info.num_records) == ("manifest", ROWS)
    copied = spark_tfrecord.dataset_info(str(local))
    assert [(f.path[len(url) :], f.num_records, f.num_bytes) for f in info.files] == [
        (f.path[len(str(local)) :], f.num_records, f.num_bytes) for f in copied.files
    ]
    assert info == replace(copied, path=url, files=info.files)

    # An epoch in order reads each block of each file once, plus one request a file (the
    # folder's files are one block each); the records cached, a second epoch asks for nothing.
    # The requests of each are those the server logged between markers: it logs a request
    # after answering it, so a count of its log taken at once could miss one.
    remote = spark_tfrecord.grain_source(url, block_size=BLOCK)
    mark(gcs.endpoint, "trainer-first")
    records = [remote[i] for i in range(len(remote))]
    mark(gcs.endpoint, "trainer-again")
    again = [remote[i] for i in range(ROWS)]
    mark(gcs.endpoint, "trainer-end")
    epochs = gcs.phases("trainer")
    bound = sum(2 * math.ceil(f.num_bytes / BLOCK) for f in info.files)
    assert len(epochs["first"]) <= bound, show(epochs["first"])
    assert (epochs["again"], digest(again)) == ([], digest(records))
    copy = spark_tfrecord.grain_source(str(local))
    assert digest(records) == digest(copy[i] for i in range(ROWS))
    rows = sorted(
        [int(r["id"]), int(r["p"]), float(r["label"]), r["name"], list(r["tags"])] for r in records
    )
    assert rows == expected_rows(), plain(records[0])

    # torch_dataset, on a column subset: the same records, in the same order.
    torch_remote = spark_tfrecord.torch_dataset(url, ["id", "name"])
    torch_local = spark_tfrecord.torch_dataset(str(local), ["id", "name"])
    assert len(torch_remote) == ROWS
    assert digest(torch_remote[i] for i in range(ROWS)) == digest(
        torch_local[i] for i in range(ROWS)
    )
    assert [sorted(torch_remote[i]) for i in (0, ROWS - 1)] == [["id", "name"]] * 2


def test_a_failed_append_leaves_the_folder_as_it_was(
    connector: tuple[str, dict[str, Any], str], emulator: str
) -> None:
    """Renames on Cloud Storage go one object at a time, but a job that fails before its commit
    leaves its files under _temporary: Spark and the manifest still give the earlier write."""
    _, runs, folder = connector
    result = outcome(runs, "failed_append")
    assert result["error"] is not None and "boom at 4099" in result["error"]
    assert result["ids"] == list(range(100))
    info = spark_tfrecord.dataset_info(f"gs://{BUCKET}{folder}/failed_append")
    assert (info.source, info.num_records, len(info.files)) == ("manifest", 100, 2)


@pytest.mark.once
def test_the_trainer_names_a_missing_bucket_and_object(emulator: str) -> None:
    for url in (f"gs://no-such-{BUCKET}/t", f"gs://{BUCKET}/no-such-folder"):
        with pytest.raises(FileNotFoundError, match=url):
            spark_tfrecord.dataset_info(url)


# --- the Spark side: what else a Dataproc job writes and reads ---------------------------------


def data_reads(requests: list[Request], prefix: str) -> dict[str, int]:
    """How many times `requests` read the content of each object under `prefix`."""
    read: dict[str, int] = {}
    for r in requests:
        if r.reads(f"{prefix}/"):
            read[r.object] = read.get(r.object, 0) + 1
    return read


def test_a_projection_reads_what_a_full_scan_reads_and_a_partition_filter_its_files(
    runs: dict[str, Any], gcs: GCS, emulator: str
) -> None:
    """TFRecord files hold rows whole: a scan of one column fetches the same objects with the
    same requests as a scan of all (it saves the decoding of the rest, not the reads); a filter
    on a partition column reads only that partition's files. Besides, each query's planning
    samples the records of the table's first file, to warn of schema columns no record holds
    (docs/types.md): one read of that file a query."""
    result = outcome(runs, "projection")
    assert result["counts"] == {"all": ROWS, "id": ROWS, "p1_name": ROWS // 3}
    phases = gcs.phases("projection")
    stored = sorted(f"{BUCKET}/partitioned/{k}" for k in objects("partitioned") if k[0] != "_")
    first = stored[0]
    assert "/p=0/part-00000-" in first, stored
    every = data_reads(phases["all"], f"{BUCKET}/partitioned")
    assert every == {k: 2 if k == first else 1 for k in stored}, every
    assert data_reads(phases["id"], f"{BUCKET}/partitioned") == every
    p1 = data_reads(phases["p1_name"], f"{BUCKET}/partitioned")
    assert p1 == {first: 1, **{k: 1 for k in stored if "/p=1/" in k}}, p1


def test_a_big_file_is_read_in_ranged_splits(runs: dict[str, Any], gcs: GCS, emulator: str) -> None:
    result = outcome(runs, "split")
    files = objects("split")
    (part,) = [k for k in files if k.startswith("part-")]
    size = len(files[part])
    assert size > 3 * SPLIT_BYTES
    # One task per SPLIT_BYTES range of the one file, every record once, none lost at a boundary.
    assert result["block_starts"] == list(range(0, size, SPLIT_BYTES))
    assert result["ids"] == list(range(30000)) and result["wrong_s"] == []
    # Each task fetches its range (and the record that crosses its end), not the whole object.
    reads = [r for r in gcs.phases("split")["scan"] if r.reads(f"{BUCKET}/split/{part}")]
    assert len(result["block_starts"]) <= len(reads) <= 4 * len(result["block_starts"]), reads


def test_write_index_writes_the_same_files_as_to_a_local_folder(
    runs: dict[str, Any], emulator: str
) -> None:
    outcome(runs, "indexed")
    stored = by_part(objects("indexed"))
    local = by_part(local_files(runs["local"] / "indexed"))
    indexes = sorted(k for k in stored if k.endswith(".idx"))
    assert indexes == [f"_part-0000{i}-c000.tfrecord.idx" for i in range(3)], sorted(stored)
    names = [k for k in stored if not k.startswith("_")] + indexes
    assert {k: stored[k] for k in names} == {k: local[k] for k in names}
    manifest = json.loads(stored["_tfrecord_manifest.json"])
    assert manifest["num_records"] == ROWS


def test_num_shards_with_a_seed_gives_the_local_write_s_bytes(
    runs: dict[str, Any], emulator: str
) -> None:
    """Balanced, shuffled shards: the same seed and rows give the same files on gs:// as from
    another partitioning to a local folder."""
    result = outcome(runs, "shards")
    assert result["ids"] == list(range(ROWS))
    stored = objects("shards")
    shards = sorted(k for k in stored if not k.startswith("_"))
    assert shards == [f"train-0000{i}-of-00004" for i in range(4)], sorted(stored)
    local = local_files(runs["local"] / "shards")
    assert {k: stored[k] for k in shards} == {k: local[k] for k in shards}
    info = spark_tfrecord.dataset_info(f"gs://{BUCKET}/shards")
    assert [f.num_records for f in info.files] == [ROWS // 4] * 4


def test_a_tfds_dataset_of_two_splits(runs: dict[str, Any], emulator: str) -> None:
    result = outcome(runs, "tfds")
    folder = f"gs://{BUCKET}/tfds/gcs_ds/1.0.0"
    assert result["folder"] == folder
    assert result["splits"] == {"train": list(range(2500)), "test": list(range(2500, ROWS))}
    stored = objects("tfds/gcs_ds/1.0.0")
    shards = sorted(k for k in stored if ".tfrecord-" in k)
    assert shards == [f"gcs_ds-test.tfrecord-0000{i}-of-00002" for i in range(2)] + [
        f"gcs_ds-train.tfrecord-0000{i}-of-00003" for i in range(3)
    ]
    splits = {s["name"]: s for s in json.loads(stored["dataset_info.json"])["splits"]}
    lengths = {name: [int(n) for n in s["shardLengths"]] for name, s in splits.items()}
    assert lengths == {"train": [834, 833, 833], "test": [250, 250]}
    info = spark_tfrecord.dataset_info(folder)
    assert info.num_records == ROWS


def test_a_tfx_examples_artifact(runs: dict[str, Any], emulator: str) -> None:
    result = outcome(runs, "tfx")
    assert result == {"train": list(range(2000)), "eval": list(range(2000, ROWS))}
    stored = objects("tfx")
    assert sorted(stored) == [
        *(f"Split-eval/data_tfrecord-0000{i}-of-00002.gz" for i in range(2)),
        *(f"Split-train/data_tfrecord-0000{i}-of-00002.gz" for i in range(2)),
        "_SUCCESS",
        "_tfrecord_manifest.json",
    ]
    assert json.loads(stored["_tfrecord_manifest.json"])["num_records"] == ROWS


def test_two_appends_at_once_both_commit(runs: dict[str, Any], emulator: str) -> None:
    """The commits take the folder's lock, an object created only if absent (the connector's
    create without overwrite): one waits for the other, and both are counted."""
    result = outcome(runs, "appends_at_once")
    assert result["errors"] == []
    expected = [*range(10), *range(1000, 1500), *range(2000, 2500)]
    assert result["ids"] == expected
    info = spark_tfrecord.dataset_info(f"gs://{BUCKET}/appends_at_once")
    assert (info.source, info.num_records) == ("manifest", len(expected))
    assert "_tfrecord_manifest.lock" not in objects("appends_at_once")


# --- the trainer side: requests per epoch, feature_spec, a stopped server ----------------------


def data_file_reads(folder: Folder, requests: list[Request]) -> dict[str, int]:
    """Reads of the content of each data file of `folder` (relative path -> count)."""
    counts = dict.fromkeys(folder.sizes, 0)
    for r in requests:
        relative = r.object[len(f"{BUCKET}/{folder.prefix}/") :]
        if r.reads(f"{BUCKET}/{folder.prefix}/") and relative in counts:
            counts[relative] += 1
    return counts


#: Requests an epoch may add to its blocks and files: the folder's listing, its manifest, and
#: gcsfs's look at the folder itself.
SETUP_REQUESTS = 4


@pytest.fixture(scope="module")
def uploaded(gcs: GCS, spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Folder:
    from gcsfs.core import GCSFileSystem

    local = tmp_path_factory.mktemp("trainer") / "indexed"
    spark_tfrecord.write(trainer_frame(spark, ROWS), str(local), write_index=True)
    fs = GCSFileSystem(token="anon", endpoint_url=gcs.endpoint, skip_instance_cache=True)
    sizes = {}
    for path in sorted(local.rglob("*")):
        if path.is_file() and not path.name.endswith(".crc"):
            relative = path.relative_to(local).as_posix()
            fs.pipe_file(f"{BUCKET}/trainer/{relative}", path.read_bytes())
            if not path.name.startswith("_"):
                sizes[relative] = path.stat().st_size
    found = Folder(local, f"gs://{BUCKET}/trainer", "trainer", sizes, BLOCK)
    assert found.total_blocks >= 2 * len(sizes), sizes
    return found


def epochs(gcs: GCS, folder: Folder, runs: list[dict[str, Any]], **kwargs: Any) -> Any:
    """`support.loader_epochs.epochs` in a trainer's fresh Python pointed at the server, and
    the server's requests by phase."""
    token = uuid.uuid4().hex[:12]
    args = {"token": token, "runs": runs, **kwargs}
    code = (
        "from support.loader_epochs import epochs\n"
        f"result = epochs({folder.url!r}, endpoint={gcs.endpoint!r}, **{args!r})"
    )
    answer = trainer_side.run(code, {"STORAGE_EMULATOR_HOST": gcs.endpoint}, timeout=600)
    assert "result" in answer and "pyspark" not in answer["heavy"], answer
    return answer["result"], gcs.phases(token)


def of_folder(requests: list[Request], folder: Folder) -> list[Request]:
    """The requests about the folder: its objects, and listings of the bucket under it."""
    return [
        r
        for r in requests
        if r.object.startswith(f"{BUCKET}/{folder.prefix}")
        or f"prefix={folder.prefix}" in unquote(r.target)
    ]


def show(requests: list[Request]) -> str:
    return "\n".join(f"{r.method} {r.target} {r.status}" for r in requests)


@pytest.mark.once
def test_reading_in_order_costs_one_request_per_block(gcs: GCS, uploaded: Folder) -> None:
    """With a cache of only four blocks, an in-order epoch fetches each block once."""
    runs = [{"shuffle": False}]
    result, phases = epochs(gcs, uploaded, runs, block_size=BLOCK, cache_bytes=4 * BLOCK)
    assert result["ids"] == [list(range(ROWS))]
    every = of_folder(phases["open"] + phases["epoch0"], uploaded)
    gets = data_file_reads(uploaded, every)
    assert all(0 < gets[n] <= uploaded.blocks(n) for n in gets), (gets, show(every))
    bound = uploaded.total_blocks + len(uploaded.sizes) + SETUP_REQUESTS
    assert len(every) <= bound, f"{len(every)} requests > {bound}:\n{show(every)}"


@pytest.mark.once
def test_shuffled_epochs_fetch_each_block_once(gcs: GCS, uploaded: Folder) -> None:
    """The folder fits in the cache: a shuffled first epoch fetches each block at most once,
    and a second epoch in the same process asks for nothing."""
    runs = [{"shuffle": True}, {"shuffle": True}]
    result, phases = epochs(gcs, uploaded, runs, block_size=BLOCK, cache_bytes=64 << 20)
    first, second = result["ids"]
    assert sorted(first) == sorted(second) == list(range(ROWS))
    assert first != second and first != sorted(first)
    opened = of_folder(phases["open"] + phases["epoch0"], uploaded)
    gets = data_file_reads(uploaded, opened)
    assert all(0 < gets[n] <= uploaded.blocks(n) for n in gets), (gets, show(opened))
    assert len(opened) <= uploaded.total_blocks + len(uploaded.sizes) + SETUP_REQUESTS
    assert of_folder(phases["epoch1"], uploaded) == [], show(phases["epoch1"])


@pytest.mark.once
def test_block_sampler_reads_each_block_once_an_epoch(gcs: GCS, uploaded: Folder) -> None:
    """A cache of eight blocks, a folder of more: ``block_sampler`` reads a block at a time,
    each once per epoch, in another order each epoch."""
    assert uploaded.total_blocks > 8 * 2
    runs = [{"block_sampler": 7}, {"block_sampler": 7}]
    kwargs = {"block_size": BLOCK, "cache_bytes": 8 * BLOCK, "batch_size": 32}
    result, phases = epochs(gcs, uploaded, runs, **kwargs)
    first, second = result["ids"]
    assert sorted(first) == sorted(second) == list(range(ROWS))
    assert first != second and first != sorted(first)
    for phase in ("epoch0", "epoch1"):
        requests = of_folder(phases[phase], uploaded)
        gets = data_file_reads(uploaded, requests)
        assert all(0 < gets[n] <= uploaded.blocks(n) for n in gets), (phase, gets)
        assert len(requests) <= uploaded.total_blocks + len(uploaded.sizes), show(requests)


@pytest.mark.once
def test_feature_spec_and_values_of_a_gs_folder_equal_the_local_ones(
    gcs: GCS, uploaded: Folder, emulator: str
) -> None:
    assert spark_tfrecord.feature_spec(uploaded.url) == spark_tfrecord.feature_spec(
        str(uploaded.local)
    )
    remote = spark_tfrecord.grain_source(uploaded.url)
    local = spark_tfrecord.grain_source(str(uploaded.local))
    assert len(remote) == len(local) == ROWS
    assert digest(remote[i] for i in range(ROWS)) == digest(local[i] for i in range(ROWS))


#: gcsfs's retries without their backoff (1 + 2 + 4 + 8 + 16 s between its six tries, each of
#: which a refused connection fails at once): the retry loop and its error as they are, minus
#: half a minute of sleep.
NO_BACKOFF = """\
import asyncio, types, gcsfs.retry
async def _at_once(delay, result=None):
    return await asyncio.sleep(0, result)
gcsfs.retry.asyncio = types.SimpleNamespace(**{**vars(asyncio), "sleep": _at_once})
"""


@pytest.mark.once
def test_a_stopped_server_gives_a_clear_error_not_a_hang(tmp_path: Path) -> None:
    """gcsfs retries a refused connection a few times (NO_BACKOFF), then the loaders raise its
    error, which names the host; the test's timeout is the hang's bound."""
    with gcs_bucket(tmp_path / "server.log", "stopped") as stopped:
        host = stopped.endpoint.removeprefix("http://")
    answer = trainer_side.run(
        NO_BACKOFF
        + "import spark_tfrecord\nresult = spark_tfrecord.dataset_info('gs://stopped/t')",
        {"STORAGE_EMULATOR_HOST": stopped.endpoint},
        timeout=300,
    )
    assert "error" in answer and host in answer["message"], answer
    assert "Cannot connect" in answer["message"] or "refused" in answer["message"], answer


def write_folder(folder: Path, counts: dict[str, int]) -> list[dict[str, Any]]:
    """A folder as the writer leaves it, one file a codec (``counts``: file name → records), the
    records built by hand (id, x, name), with its manifest; returns the rows in file order."""
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

    folder.mkdir()
    rows: list[dict[str, Any]] = []
    for name, n in sorted(counts.items()):
        framed = b""
        for i in range(len(rows), len(rows) + n):
            row = {"id": i, "name": f"row {i}", "x": [i / 4, -i / 2]}  # exact in float32
            rows.append(row)
            framed += frame(
                example(
                    entry(b"id", feature("int64", int64_list_packed([i]))),
                    entry(b"x", feature("float", float_list_packed(row["x"]))),
                    entry(b"name", feature("bytes", bytes_list([row["name"].encode()]))),
                )
            )
        packed = {".gz": gzip.compress, ".deflate": zlib.compress}.get(Path(name).suffix)
        (folder / name).write_bytes(packed(framed) if packed else framed)
    floats = {"type": "array", "elementType": "float", "containsNull": True}
    columns = {"id": "long", "x": floats, "name": "string"}
    fields = [{"name": k, "type": t, "nullable": True, "metadata": {}} for k, t in columns.items()]
    write_manifest(
        folder,
        counts,
        schema="id BIGINT,x ARRAY<FLOAT>,name STRING",
        schema_json={"type": "struct", "fields": fields},
        features={"id": (1, 1), "x": (2, 2), "name": (1, 1)},
    )
    (folder / "_SUCCESS").write_bytes(b"")
    return rows


@pytest.mark.once
def test_tf_dataset_reads_gs_through_tensorflows_own_file_system(tmp_path: Path) -> None:
    """tf_dataset on gs:// reads the files through TensorFlow's own GCS file system, which has
    no endpoint setting: it reaches storage.googleapis.com (objects) and www.googleapis.com
    (metadata, listings) over HTTPS. Here a server of its own answers as both, with a
    certificate from a test authority that TensorFlow is told to trust (CURL_CA_BUNDLE),
    through a local CONNECT proxy that libcurl finds in HTTPS_PROXY (support.google_hosts);
    the manifest is read through gcsfs. The batches equal those of the local copy, value for
    value, across the folder's three codecs."""
    counts = {"part-00000.tfrecord": 40, "part-00001.tfrecord.gz": 25}
    counts["part-00002.tfrecord.deflate"] = 35
    local = tmp_path / "folder"
    rows = write_folder(local, counts)
    certs = certificates(tmp_path)
    url = f"gs://{BUCKET}/folder"
    with gcs_bucket(tmp_path / "server.log", BUCKET, certificates=certs) as gcs:
        assert gcs.https is not None
        for path in sorted(local.iterdir()):
            gcs.put(f"folder/{path.name}", path.read_bytes())
        with connect_proxy(gcs.https) as proxy:
            env = {**tensorflow_env(proxy.url, certs), "STORAGE_EMULATOR_HOST": gcs.endpoint}
            config = {"env": env, "remote": url, "local": str(local), "batch_size": 16}
            log_file = tmp_path / "reader.log"
            result, log = driver_result("tf_gcs_reader", config, log_file, timeout=300)
        served = gcs.requests()

    expected = [
        {k: [row[k] for row in rows[i : i + 16]] for k in ("id", "name", "x")}
        for i in range(0, len(rows), 16)
    ]
    assert result["local"] == expected
    assert result["remote"] == expected
    assert result["listdir"] == sorted(p.name for p in local.iterdir())
    assert result["glob"] == [f"{url}/{name}" for name in sorted(counts)]
    assert result["manifest"] == (local / "_tfrecord_manifest.json").read_text()
    remote_spec, local_spec = result["specs"]
    assert remote_spec == local_spec and "('x', FixedLenFeature(shape=[2]," in remote_spec
    # TensorFlow went through the proxy to both hosts, and read every file from the server with
    # a media download (``/bucket/object``, ranged: gcsfs's go to ``/download/storage/v1``).
    assert set(proxy.tunnels) == {"storage.googleapis.com:443", "www.googleapis.com:443"}, log
    assert proxy.refused == []
    media = {
        unquote(target) for method, target, status in served if (method, status) == ("GET", 206)
    }
    assert {f"/{BUCKET}/folder/{name}" for name in counts} <= media, served
