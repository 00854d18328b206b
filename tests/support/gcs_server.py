"""A Cloud Storage server on 127.0.0.1 (fake-gcs-server) and what Spark needs to reach it through
gs:// (Google's gcs-connector, shaded, from Maven Central).

`fake_gcs_server` builds the server once from its Go module (``go install``) into
``$SPARK_TFRECORD_CACHE/go`` (ci/test builds it while the environments install, so that CI
caches it); `gcs_bucket` runs it in a child process with one empty bucket until the block ends.
`gcs_jar` is the connector and `gcs_conf` the session settings that point gs:// at the server,
with no credentials. ``python -m support.gcs_server`` builds the server and prints its path.

fake-gcs-server, not gcp-storage-emulator: the connector lists a folder's objects in one batch
request of metadata reads, which the emulator answers with errors ("Multiple IOExceptions" in
``getItemInfos``); fake-gcs-server answers it, and logs every request it serves.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from support import ROOT, local_server

CACHE = Path(os.environ.get("SPARK_TFRECORD_CACHE", ROOT / ".cache"))
SERVER_MODULE, SERVER_VERSION = "github.com/fsouza/fake-gcs-server", "v1.56.1"
#: Google's connector: the newest release with a shaded jar (its dependencies inside, relocated)
#: on Maven Central; 3.1.19 and later, and 4.x, publish none there.
CONNECTOR = ("com.google.cloud.bigdataoss", "gcs-connector", "3.1.18", "shaded")
PROJECT = "test-project"


def _go_env() -> dict[str, str]:
    go = CACHE / "go"
    return {
        **os.environ,
        "GOPATH": str(go / "path"),
        "GOMODCACHE": str(go / "mod"),
        "GOCACHE": str(go / "build"),
        "GOBIN": str(go / "bin" / SERVER_VERSION),
        "GOFLAGS": "-modcacherw",  # so that the cache can be deleted as any folder
    }


def fake_gcs_server() -> Path:
    """The server's binary, built with ``go install`` the first time (minutes, then cached)."""
    env = _go_env()
    binary = Path(env["GOBIN"]) / "fake-gcs-server"
    if not binary.is_file():
        done = subprocess.run(
            ["go", "install", f"{SERVER_MODULE}@{SERVER_VERSION}"],
            env=env,
            capture_output=True,
            text=True,
            timeout=3600,
        )
        if done.returncode != 0 or not binary.is_file():
            raise RuntimeError(f"go install {SERVER_MODULE} failed:\n{done.stderr[-5000:]}")
    return binary


@dataclass
class GCS:
    """A bucket of a running server: its endpoint and the server's log of requests."""

    endpoint: str
    log: Path
    bucket: str

    def requests(self) -> list[tuple[str, str, int]]:
        """The requests the server has logged: (method, path and query, HTTP status)."""
        text = self.log.read_text(errors="replace")
        found = re.findall(r'\\"([A-Z]+) (\S+) HTTP/[0-9.]+\\" (\d+)', text)
        return [(method, target, int(status)) for method, target, status in found]


@contextmanager
def gcs_bucket(log: Path, bucket: str, deadline_seconds: float = 60) -> Iterator[GCS]:
    """A fake-gcs-server (in memory, plain HTTP, logging every request to `log`) with one empty
    bucket, until the block ends. Raises RuntimeError with the log's tail if it does not start."""
    binary = fake_gcs_server()

    def command(port: int) -> list[str]:
        host = f"127.0.0.1:{port}"
        return [
            *(str(binary), "-scheme", "http", "-host", "127.0.0.1", "-port", str(port)),
            *("-backend", "memory", "-public-host", host),
            *("-external-url", f"http://{host}", "-log-level", "info"),
        ]

    with local_server(
        "fake-gcs-server", command, "/storage/v1/b", log, deadline_seconds
    ) as endpoint:
        request = urllib.request.Request(
            f"{endpoint}/storage/v1/b?project={PROJECT}",
            data=json.dumps({"name": bucket}).encode(),
            headers={"Content-Type": "application/json"},
        )
        urllib.request.urlopen(request, timeout=30).close()
        yield GCS(endpoint, log, bucket)


def gcs_jar() -> Path:
    """Google's shaded gcs-connector, from Maven Central (once)."""
    from support.maven import fetch

    return fetch(*CONNECTOR[:3], classifier=CONNECTOR[3])


def gcs_conf(endpoint: str) -> dict[str, str]:
    """Session settings that point gs:// at a server through Google's connector, without
    credentials. Hadoop 3.5 (Spark 4.3) names its own hadoop-gcp in fs.gs.impl and
    sets sizes with units (``64m``) in core-default.xml, which Google's connector cannot parse
    (NumberFormatException): they are set here in bytes, as they are on every Spark line."""
    hadoop = {
        "fs.gs.impl": "com.google.cloud.hadoop.fs.gcs.GoogleHadoopFileSystem",
        "fs.AbstractFileSystem.gs.impl": "com.google.cloud.hadoop.fs.gcs.GoogleHadoopFS",
        "fs.gs.storage.root.url": endpoint,
        "fs.gs.auth.type": "UNAUTHENTICATED",
        "fs.gs.project.id": PROJECT,
        "fs.gs.block.size": str(64 << 20),
        "fs.gs.rewrite.max.chunk.size": str(512 << 20),
        "fs.gs.outputstream.buffer.size": str(8 << 20),
        "fs.gs.inputstream.inplace.seek.limit": str(8 << 20),
        "fs.gs.inputstream.min.range.request.size": str(2 << 20),
        # The connector renames an object with Cloud Storage's objects.move (one request, atomic
        # per object), which fake-gcs-server refuses (HTTP 400): copy and delete instead.
        "fs.gs.operation.move.enable": "false",
    }
    return {f"spark.hadoop.{k}": v for k, v in hadoop.items()}


if __name__ == "__main__":
    print(fake_gcs_server())
