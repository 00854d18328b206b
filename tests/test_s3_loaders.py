"""The trainer-side loaders over an object store: `torch_dataset`, `grain_source` and
`dataset_info` on ``s3://`` URLs, against an S3-compatible server (moto's, one for the module).

Folders are written by Spark locally (the session fixture), then uploaded as s3a would leave
them (data files, indexes, ``_SUCCESS``, the manifest; no ``.crc`` files). What a read over S3
gives is compared with the same library's read of the local folder, bit for bit. Scenarios that
count requests run in a fresh Python each (`support.s3_epochs` through
`support.trainer_side`), so that each starts with an empty cache, and mark their phases in the
server's log; the bounds are the contract's: in order, at most one request per block of
``block_size`` (plus one per file and the folder's listing and manifest); shuffled with the
folder fitting in ``cache_bytes``, at most one GET per block in the first epoch and no request
in the second.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import threading
import time
import urllib.parse
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

import spark_tfrecord
from support import trainer_side
from support.loader_records import digest, plain
from support.s3_server import ACCESS_KEY, REGION, S3, SECRET_KEY, s3_bucket

pytestmark = pytest.mark.timeout(900)

BUCKET = "loaders"
ROWS = 3000
BLOCK = 64 << 10  # small blocks, so that each file is several
#: Requests an epoch may add to its blocks and files: the folder's listing and its manifest,
#: and a look at the folder itself (s3fs asks whether it is a directory).
SETUP_REQUESTS = 4


@dataclass(frozen=True)
class Folder:
    local: Path
    prefix: str  # its key in the bucket
    sizes: dict[str, int]  # data file (relative path) -> bytes

    @property
    def url(self) -> str:
        return f"s3://{BUCKET}/{self.prefix}"

    def blocks(self, name: str) -> int:
        return math.ceil(self.sizes[name] / BLOCK)

    @property
    def total_blocks(self) -> int:
        return sum(self.blocks(n) for n in self.sizes)


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3]:
    with s3_bucket(tmp_path_factory.mktemp("s3") / "moto.log", BUCKET) as bucket:
        yield bucket


def options(s3: S3) -> dict[str, Any]:
    """s3fs's storage_options for the server."""
    return {
        "endpoint_url": s3.endpoint,
        "key": ACCESS_KEY,
        "secret": SECRET_KEY,
        "client_kwargs": {"region_name": REGION},
    }


def frame(spark: Any) -> Any:
    """Narrow records of every kind a trainer meets: int64, float32, a fixed list of 32 floats,
    a string, a list of 0..3 strings, bytes of 40..196, and an int that is null one row in five."""
    return spark.range(0, ROWS, 1, 3).selectExpr(
        "id",
        "cast(id % 10 as float) / 4 as label",
        "transform(sequence(0, 31), k -> cast(id * 32 + k as float) / 7) as x",
        "concat('row ', cast(id as string)) as name",
        "slice(array('a', 'bb', 'ccc'), 1, cast(id % 4 as int)) as tags",
        "unhex(repeat(lpad(hex(id), 8, '0'), cast(id % 40 as int) + 10)) as blob",
        "if(id % 5 = 0, null, cast(id as int)) as maybe",
    )


def upload(s3: S3, local: Path, prefix: str) -> Folder:
    sizes = {}
    for path in sorted(local.rglob("*")):
        if path.is_dir() or path.name.startswith("."):  # Hadoop's local .crc files
            continue
        relative = path.relative_to(local).as_posix()
        s3.client.upload_file(str(path), BUCKET, f"{prefix}/{relative}")
        if not path.name.startswith("_"):
            sizes[relative] = path.stat().st_size
    return Folder(local, prefix, sizes)


@pytest.fixture(scope="module")
def folders(s3: S3, spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Folder]:
    """The same records three ways: with index files, without, and GZIP (two files)."""
    root = tmp_path_factory.mktemp("loaders")
    df = frame(spark)
    spark_tfrecord.write(df, str(root / "indexed"), write_index=True)
    spark_tfrecord.write(df, str(root / "plain"))
    spark_tfrecord.write(df.coalesce(2), str(root / "gzip"), compression="gzip")
    found = {name: upload(s3, root / name, name) for name in ("indexed", "plain", "gzip")}
    assert all(f.total_blocks >= 2 * len(f.sizes) for f in found.values()), found
    return found


# --- the server's log, split at a scenario's markers --------------------------------------


@dataclass(frozen=True)
class Request:
    method: str
    bucket: str
    key: str
    query: str
    status: int


LINE = re.compile(r'"([A-Z]+) (\S+) HTTP/[0-9.]+" (\d+)')


def logged(s3: S3) -> list[Request]:
    text = re.sub(r"\x1b\[[0-9;]*m", "", s3.log.read_text(errors="replace"))
    found = []
    for method, target, status in LINE.findall(text):
        parts = urllib.parse.urlsplit(target)
        bucket, _, key = parts.path.lstrip("/").partition("/")
        found.append(Request(method, bucket, urllib.parse.unquote(key), parts.query, int(status)))
    return found


def phases(s3: S3, token: str) -> dict[str, list[Request]]:
    """The requests of each phase of a `support.s3_epochs` run, by phase name (``open``,
    ``epoch0``, ...), the markers left out."""
    deadline = time.monotonic() + 30
    while True:  # the server logs a request after answering it
        requests = logged(s3)
        if any(r.bucket == "_mark" and r.key == f"{token}-end" for r in requests):
            break
        assert time.monotonic() < deadline, f"no end marker {token} in {s3.log}"
        time.sleep(0.2)
    split: dict[str, list[Request]] = {}
    current = None
    for r in requests:
        if r.bucket == "_mark":
            name = r.key[len(token) + 1 :] if r.key.startswith(token + "-") else None
            current = None if name in (None, "end") else name
            if name not in (None, "end"):
                split[name] = []
        elif current is not None:
            split[current].append(r)
    return split


def of_folder(requests: list[Request], folder: Folder) -> list[Request]:
    """The requests about the folder: its objects, and listings of the bucket under it."""
    return [
        r
        for r in requests
        if r.bucket == BUCKET
        and (
            r.key.startswith(folder.prefix + "/")
            or r.key == folder.prefix
            or (r.key == "" and folder.prefix in urllib.parse.unquote(r.query))
        )
    ]


def data_gets(requests: list[Request], folder: Folder) -> dict[str, int]:
    """GETs of each data file (relative path -> count)."""
    counts = dict.fromkeys(folder.sizes, 0)
    for r in requests:
        relative = r.key[len(folder.prefix) + 1 :]
        if r.method == "GET" and relative in counts:
            counts[relative] += 1
    return counts


def show(requests: list[Request]) -> str:
    return "\n".join(f"{r.method} {r.key or '/'}?{r.query} {r.status}" for r in requests)


def run_child(code: str, env: dict[str, str] | None = None, timeout: float = 300) -> Any:
    """`support.trainer_side` running `code`; its result, or its error as a dict."""
    answer = trainer_side.run(code, env, timeout)
    assert "pyspark" not in answer["heavy"], answer  # a trainer's process, no JVM
    return answer


def epochs(s3: S3, folder: Folder, runs: list[dict[str, Any]], **kwargs: Any) -> Any:
    token = uuid.uuid4().hex[:12]
    args = {"token": token, "runs": runs, "storage_options": options(s3), **kwargs}
    code = (
        "from support.s3_epochs import epochs\n"
        f"result = epochs({folder.url!r}, endpoint={s3.endpoint!r}, **{args!r})"
    )
    answer = run_child(code)
    assert "result" in answer, answer
    return answer["result"], phases(s3, token)


# --- values -------------------------------------------------------------------------------


def relative_files(info: Any, root: str) -> list[tuple[str, int, int, str]]:
    """dataset_info's files with paths relative to the folder (``s3://`` or not)."""
    prefix = root.split("://")[-1].rstrip("/") + "/"
    paths = [f.path.split("://")[-1] for f in info.files]
    assert all(p.startswith(prefix) for p in paths), (prefix, paths)
    return [
        (p[len(prefix) :], f.num_records, f.num_bytes, f.compression)
        for p, f in zip(paths, info.files)
    ]


@pytest.mark.parametrize("name", ["indexed", "gzip"])
def test_dataset_info_over_s3_equals_the_local_one(
    s3: S3, folders: dict[str, Folder], name: str
) -> None:
    folder = folders[name]
    local = spark_tfrecord.dataset_info(str(folder.local))
    remote = spark_tfrecord.dataset_info(folder.url, storage_options=options(s3))
    assert remote.source == local.source == "manifest"
    assert remote.num_records == local.num_records == ROWS
    assert relative_files(remote, folder.url) == relative_files(local, str(folder.local))
    assert sorted(p for p, *_ in relative_files(remote, folder.url)) == sorted(folder.sizes)
    for field in ("schema", "record_type", "partition_columns", "features", "schema_json"):
        assert getattr(remote, field) == getattr(local, field), field


@pytest.mark.parametrize("name", ["indexed", "plain", "gzip"])
def test_torch_dataset_over_s3_equals_the_local_read(
    s3: S3, folders: dict[str, Folder], name: str
) -> None:
    folder = folders[name]
    local = spark_tfrecord.torch_dataset(str(folder.local))
    remote = spark_tfrecord.torch_dataset(folder.url, storage_options=options(s3))
    assert len(remote) == len(local) == ROWS
    assert [plain(remote[i]) for i in range(ROWS)] == [plain(local[i]) for i in range(ROWS)]
    assert sorted(int(local[i]["id"]) for i in range(ROWS)) == list(range(ROWS))
    some = [2999, 0, 1500, 7, 7]
    batch = remote.__getitems__(some)
    assert [plain(r) for r in batch] == [plain(local[i]) for i in some]
    assert plain(remote.collate(batch)) == plain(local.collate([local[i] for i in some]))
    # a column subset, a struct of none: the listed columns only
    narrow = spark_tfrecord.torch_dataset(folder.url, ["id", "x"], storage_options=options(s3))
    assert [sorted(narrow[i]) for i in (0, ROWS - 1)] == [["id", "x"]] * 2
    assert plain(narrow[5]["x"]) == plain(local[5]["x"])


def test_grain_source_over_s3_equals_the_local_read(s3: S3, folders: dict[str, Folder]) -> None:
    folder = folders["indexed"]
    local = spark_tfrecord.grain_source(str(folder.local))
    remote = spark_tfrecord.grain_source(folder.url, storage_options=options(s3))
    assert len(remote) == len(local) == ROWS
    picks = [0, 1, 999, 1000, 2998, 2999, 17]
    assert [plain(remote[i]) for i in picks] == [plain(local[i]) for i in picks]


def test_credentials_and_endpoint_from_the_environment(s3: S3, folders: dict[str, Folder]) -> None:
    """No storage_options: s3fs (botocore) reads AWS_ENDPOINT_URL and the keys from the
    environment, as the cloud SDKs do. In a fresh process, so no file system instance made
    with options in this one is reused."""
    folder = folders["indexed"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(
        AWS_ENDPOINT_URL=s3.endpoint,
        AWS_ACCESS_KEY_ID=ACCESS_KEY,
        AWS_SECRET_ACCESS_KEY=SECRET_KEY,
        AWS_DEFAULT_REGION=REGION,
    )
    code = f"from support.s3_epochs import read_all\nresult = read_all({folder.url!r})"
    answer = run_child(code, env)
    assert "result" in answer, answer
    local = spark_tfrecord.torch_dataset(str(folder.local))
    info = spark_tfrecord.dataset_info(str(folder.local))
    assert answer["result"] == {
        "len": ROWS,
        "digest": digest(local[i] for i in range(ROWS)),
        "num_records": ROWS,
        "files": [[f.path.rsplit("/", 1)[-1], f.num_records, f.num_bytes] for f in info.files],
    }


# --- requests per epoch -------------------------------------------------------------------


def test_reading_in_order_costs_one_request_per_block(s3: S3, folders: dict[str, Folder]) -> None:
    """With a cache of only four blocks, an in-order epoch still fetches each block once: no
    request per record."""
    folder = folders["indexed"]
    result, split = epochs(
        s3, folder, [{"shuffle": False}], block_size=BLOCK, cache_bytes=4 * BLOCK
    )
    assert result["len"] == ROWS
    assert sorted(result["ids"][0]) == list(range(ROWS))
    # The documented order: files sorted by path (part-00000.. hold the range's 3 partitions in
    # turn), records in file order.
    assert result["ids"][0] == list(range(ROWS))
    every = of_folder(split["open"] + split["epoch0"], folder)
    gets = data_gets(every, folder)
    assert all(gets[n] <= folder.blocks(n) for n in gets), (gets, folder.sizes, show(every))
    bound = folder.total_blocks + len(folder.sizes) + SETUP_REQUESTS
    assert len(every) <= bound, f"{len(every)} requests > {bound}:\n{show(every)}"
    assert of_folder(split["epoch0"], folder), "the epoch read nothing from the server"


@pytest.mark.parametrize("name", ["indexed", "plain", "gzip"])
def test_shuffled_epochs_fetch_each_block_once(
    s3: S3, folders: dict[str, Folder], name: str
) -> None:
    """The folder fits in cache_bytes: a shuffled first epoch fetches each block at most once
    (a file without an index is scanned once; a GZIP file is fetched once and decompressed
    whole), and a second epoch in the same process costs no request at all."""
    folder = folders[name]
    runs = [{"shuffle": True}, {"shuffle": True}]
    result, split = epochs(s3, folder, runs, block_size=BLOCK, cache_bytes=64 << 20)
    assert result["len"] == ROWS
    first, second = result["ids"]
    assert sorted(first) == sorted(second) == list(range(ROWS))
    assert first != second and first != sorted(first)  # shuffled, and anew
    opened = of_folder(split["open"] + split["epoch0"], folder)
    gets = data_gets(opened, folder)
    assert all(gets[n] <= folder.blocks(n) for n in gets), (gets, folder.sizes, show(opened))
    bound = folder.total_blocks + len(folder.sizes) + SETUP_REQUESTS
    assert len(opened) <= bound, f"{len(opened)} requests > {bound}:\n{show(opened)}"
    assert of_folder(split["epoch1"], folder) == [], show(of_folder(split["epoch1"], folder))


def test_block_sampler_reads_each_block_once_from_a_folder_larger_than_the_cache(
    s3: S3, folders: dict[str, Folder]
) -> None:
    """``ds.block_sampler()`` shuffles blocks, then records within windows of blocks (half the
    cache by default): with a cache of eight blocks, a folder of more is read a block at a
    time, each once per epoch (as its docstring says), in another order each epoch. Batches are
    small beside a window, so that a batch needs few blocks besides its window's."""
    folder = folders["indexed"]
    assert folder.total_blocks > 8 * 2
    runs = [{"block_sampler": 7}, {"block_sampler": 7}]
    result, split = epochs(s3, folder, runs, block_size=BLOCK, cache_bytes=8 * BLOCK, batch_size=32)
    first, second = result["ids"]
    assert sorted(first) == sorted(second) == list(range(ROWS))
    assert first != second and first != sorted(first)
    for phase in ("epoch0", "epoch1"):
        requests = of_folder(split[phase], folder)
        gets = data_gets(requests, folder)
        assert all(gets[n] <= folder.blocks(n) for n in gets), (phase, gets, folder.sizes)
        assert len(requests) <= folder.total_blocks + len(folder.sizes), show(requests)


@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_dataloader_with_two_workers_gives_every_record_once(
    s3: S3, folders: dict[str, Folder], context: str
) -> None:
    folder = folders["indexed"]
    runs = [{"shuffle": True, "num_workers": 2, "context": context}]
    result, split = epochs(s3, folder, runs, block_size=BLOCK, batch_size=100)
    assert result["len"] == ROWS
    assert sorted(result["ids"][0]) == list(range(ROWS))
    # each worker process has its own cache: at most one GET per block per worker
    gets = data_gets(of_folder(split["epoch0"], folder), folder)
    assert all(gets[n] <= 2 * folder.blocks(n) for n in gets), (gets, folder.sizes)


# --- errors -------------------------------------------------------------------------------


class Forbidden(BaseHTTPRequestHandler):
    """What S3 answers a key it does not know: 403 InvalidAccessKeyId, to every request."""

    BODY = (
        b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>InvalidAccessKeyId</Code>'
        b"<Message>The AWS Access Key Id you provided does not exist in our records.</Message>"
        b"</Error>"
    )

    def answer(self) -> None:
        self.send_response(403)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(self.BODY)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(self.BODY)

    do_GET = do_HEAD = do_PUT = do_POST = answer

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def forbidding() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Forbidden)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def closed_port() -> str:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


@pytest.mark.parametrize("case", ["missing bucket", "missing folder", "bad key", "no server"])
def test_a_wrong_location_or_credential_fails_clearly(
    s3: S3, folders: dict[str, Folder], forbidding: str, case: str
) -> None:
    """An error that says what is wrong, in seconds, in the trainer's process: no hang."""
    missing_bucket, missing_folder = "s3://no-such-bucket/train", f"s3://{BUCKET}/no-such-folder"
    url, endpoint, wanted = {
        "missing bucket": (missing_bucket, s3.endpoint, f"^FileNotFoundError: .*{missing_bucket}"),
        "missing folder": (missing_folder, s3.endpoint, f"^FileNotFoundError: .*{missing_folder}"),
        "bad key": (folders["indexed"].url, forbidding, r"Access Key|Forbidden|403|[Dd]enied"),
        "no server": (folders["indexed"].url, closed_port(), r"[Cc]onnect|127\.0\.0\.1"),
    }[case]
    storage = {**options(s3), "endpoint_url": endpoint}
    code = (
        "import spark_tfrecord\n"
        f"ds = spark_tfrecord.torch_dataset({url!r}, storage_options={storage!r})\n"
        "result = [len(ds), repr(ds[0])]"
    )
    started = time.monotonic()
    answer = run_child(code, timeout=240)
    assert "error" in answer, answer
    assert re.search(wanted, f"{answer['error']}: {answer['message']}"), answer
    assert time.monotonic() - started < 180


def test_folder_without_manifest_needs_columns(s3: S3, folders: dict[str, Folder]) -> None:
    """A folder TensorFlow wrote has no manifest: the DDL string gives its schema, and the
    records read over S3 equal the local ones."""
    folder = folders["plain"]
    prefix = "no-manifest"
    stripped = upload(s3, folder.local, prefix)
    s3.client.delete_object(Bucket=BUCKET, Key=f"{prefix}/_tfrecord_manifest.json")
    local_copy = folder.local.parent / "no-manifest"
    shutil.copytree(folder.local, local_copy)
    (local_copy / "_tfrecord_manifest.json").unlink()
    ddl = "id long, x array<float>, name string"
    remote = spark_tfrecord.torch_dataset(stripped.url, ddl, storage_options=options(s3))
    local = spark_tfrecord.torch_dataset(str(local_copy), ddl)
    assert len(remote) == len(local) == ROWS
    assert digest(remote[i] for i in range(ROWS)) == digest(local[i] for i in range(ROWS))


# --- the command's index, over S3 ------------------------------------------------------------


def test_index_of_an_s3_folder_in_plain_python(s3: S3, tmp_path: Path) -> None:
    """``spark-tfrecord index s3://…`` runs in plain Python, with no java on the PATH: each
    index (one PUT) is the one the same command writes beside the local copy, byte for byte,
    and a damaged file fails with no index written for it."""
    import gzip
    import subprocess
    import sys

    from spark_tfrecord import cli
    from support.tfrecord_bytes import bytes_list, entry, example, feature, frame, int64_list_packed

    def record(i: int) -> bytes:
        return example(
            entry(b"id", feature("int64", int64_list_packed([i]))),
            entry(b"name", feature("bytes", bytes_list([b"n" * i]))),
        )

    local = tmp_path / "d"
    (local / "day=1").mkdir(parents=True)
    (local / "day=1" / "part-0.tfrecord").write_bytes(b"".join(frame(record(i)) for i in range(5)))
    (local / "day=1" / "part-1.tfrecord.gz").write_bytes(
        gzip.compress(b"".join(frame(record(i)) for i in range(40, 43)))
    )
    (local / "_SUCCESS").write_bytes(b"")
    for path in local.rglob("*"):
        if path.is_file():
            s3.client.upload_file(str(path), BUCKET, f"idx/{path.relative_to(local).as_posix()}")
    s3.client.put_object(Bucket=BUCKET, Key="bad/part-0.tfrecord", Body=frame(record(1))[:-3])

    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_") and k != "JAVA_HOME"}
    env.update(
        AWS_ENDPOINT_URL=s3.endpoint,
        AWS_ACCESS_KEY_ID=ACCESS_KEY,
        AWS_SECRET_ACCESS_KEY=SECRET_KEY,
        AWS_DEFAULT_REGION=REGION,
        SPARK_HOME="/nonexistent",
        PATH=os.pathsep.join(
            d for d in env.get("PATH", "").split(os.pathsep) if not os.path.isfile(f"{d}/java")
        ),
    )
    assert shutil.which("java", path=env["PATH"]) is None

    def index(url: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "spark_tfrecord", "index", url]
        return subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)

    done = index(f"s3://{BUCKET}/idx")
    assert (done.returncode, done.stderr) == (0, "")
    assert cli.main(["index", str(local)]) == 0
    remote_lines = done.stdout.splitlines()
    assert remote_lines[:-1] == [
        f"{5:>12,} records {(local / 'day=1' / 'part-0.tfrecord').stat().st_size:>16,} bytes  "
        f"s3://{BUCKET}/idx/day=1/_part-0.tfrecord.idx",
        f"{3:>12,} records {(local / 'day=1' / 'part-1.tfrecord.gz').stat().st_size:>16,} bytes  "
        f"s3://{BUCKET}/idx/day=1/_part-1.tfrecord.gz.idx",
    ]
    assert remote_lines[-1].startswith("indexed 2 files: 8 records, ")
    for name in ("_part-0.tfrecord.idx", "_part-1.tfrecord.gz.idx"):
        got = s3.client.get_object(Bucket=BUCKET, Key=f"idx/day=1/{name}")["Body"].read()
        assert got == (local / "day=1" / name).read_bytes() and got.count(b"\n") in (3, 5)

    done = index(f"s3://{BUCKET}/bad/")
    assert done.returncode == 4 and "[TFRECORD_CORRUPT_RECORD.TRUNCATED]" in done.stderr, (
        done.stderr
    )
    listed = s3.client.list_objects_v2(Bucket=BUCKET, Prefix="bad/")["Contents"]
    assert [o["Key"] for o in listed] == ["bad/part-0.tfrecord"]
