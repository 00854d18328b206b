"""A Cloud Storage server on 127.0.0.1 (fake-gcs-server) and what Spark needs to reach it through
gs:// (Google's gcs-connector, shaded, from Maven Central).

`fake_gcs_server` builds the server once from its Go module (``go install``) into
``$SPARK_TFRECORD_CACHE/go`` (ci/test builds it while the environments install, so that CI
caches it); `gcs_bucket` runs it in a child process with one empty bucket until the block ends.
`gcs_jar` is the connector and `gcs_conf` the session settings that point gs:// at the server,
with no credentials; `hadoop_gcp_conf` those of Hadoop's own hadoop-gcp, which reaches the server
through `support.gcs_front`. ``python -m support.gcs_server`` builds the server and prints its
path.

fake-gcs-server, not gcp-storage-emulator: the connector lists a folder's objects in one batch
request of metadata reads, which the emulator answers with errors ("Multiple IOExceptions" in
``getItemInfos``); fake-gcs-server answers it, and logs every request it serves.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, NamedTuple

from support import ROOT, free_port, local_server
from support.google_hosts import GOOGLE_HOSTS, Certificates

CACHE = Path(os.environ.get("SPARK_TFRECORD_CACHE", ROOT / ".cache"))
SERVER_MODULE, SERVER_VERSION = "github.com/fsouza/fake-gcs-server", "v1.56.1"
#: Google's connector: the newest release with a shaded jar (its dependencies inside, relocated)
#: on Maven Central; 3.1.19 and later, and 4.x, publish none there.
CONNECTOR = ("com.google.cloud.bigdataoss", "gcs-connector", "3.1.18", "shaded")
#: Hadoop's own connector (Hadoop 3.5's core-default.xml names it in fs.gs.impl): one shaded jar.
HADOOP_GCP = ("org.apache.hadoop", "hadoop-gcp", "3.5.0")
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
        # The binary is all the tests run: Go's module and build caches (1.2 GB) go, as a CI
        # machine's disk holds every environment of the suite besides them.
        for cache in ("GOMODCACHE", "GOCACHE"):
            shutil.rmtree(env[cache], ignore_errors=True)
    return binary


class Request(NamedTuple):
    """A request the server served: method, path and query, and HTTP status. (The server logs
    no size for the content it sends: 0 for every media download.)"""

    method: str
    target: str
    status: int

    @property
    def object(self) -> str:
        """``bucket/name`` of the object a JSON-API request is about (``/b/BUCKET/o/NAME``),
        else ``""``."""
        path = urllib.parse.urlsplit(self.target).path
        if "/b/" not in path or "/o/" not in path:
            return ""
        bucket, _, name = path.split("/b/", 1)[1].partition("/o/")
        return f"{bucket}/{urllib.parse.unquote(name)}"

    def reads(self, prefix: str) -> bool:
        """Whether it reads the content of an object whose ``bucket/name`` starts with `prefix`
        (a media download: ``GET /download/storage/v1/b/BUCKET/o/NAME?alt=media``)."""
        return (
            self.method == "GET" and "alt=media" in self.target and self.object.startswith(prefix)
        )


@dataclass
class GCS:
    """A bucket of a running server: its endpoint and the server's log of requests; with
    `gcs_bucket`'s ``certificates``, also the address of its HTTPS port."""

    endpoint: str
    log: Path
    bucket: str
    https: tuple[str, int] | None = None

    def put(self, key: str, data: bytes) -> None:
        """Stores ``data`` as the object ``key`` of the bucket (a simple upload)."""
        query = urllib.parse.urlencode({"uploadType": "media", "name": key})
        request = urllib.request.Request(
            f"{self.endpoint}/upload/storage/v1/b/{self.bucket}/o?{query}",
            data=data,
            headers={"Content-Type": "application/octet-stream"},
        )
        urllib.request.urlopen(request, timeout=30).close()

    def requests(self) -> list[Request]:
        """The requests the server has logged, in the order it served them."""
        text = self.log.read_text(errors="replace")
        found = re.findall(r'\\"([A-Z]+) (\S+) HTTP/[0-9.]+\\" (\d+)', text)
        return [Request(method, target, int(status)) for method, target, status in found]

    def phases(self, token: str) -> dict[str, list[Request]]:
        """The requests after each of `token`'s markers, by phase (`loader_epochs.phases`)."""
        from support.loader_epochs import phases

        def marker(r: Request) -> str | None:
            return r.target[len("/_mark/") :] if r.target.startswith("/_mark/") else None

        return phases(self.requests, marker, token, self.log)


@contextmanager
def gcs_bucket(
    log: Path, bucket: str, deadline_seconds: float = 60, certificates: Certificates | None = None
) -> Iterator[GCS]:
    """A fake-gcs-server (in memory, plain HTTP, logging every request to `log`) with one empty
    bucket, until the block ends. Raises RuntimeError with the log's tail if it does not start.

    With ``certificates`` (`support.google_hosts`), it also serves HTTPS with them on a port of
    its own, as ``storage.googleapis.com``: its public host, which media downloads
    (``/bucket/object``) must name; the JSON API answers on any host."""
    binary = fake_gcs_server()
    https: list[int] = []

    def command(port: int) -> list[str]:
        host = f"127.0.0.1:{port}"
        common = [
            *(str(binary), "-host", "127.0.0.1", "-backend", "memory"),
            *("-external-url", f"http://{host}", "-log-level", "info"),
        ]
        if certificates is None:
            return [*common, "-scheme", "http", "-port", str(port), "-public-host", host]
        https[:] = [free_port()]
        return [
            *common,
            *("-scheme", "both", "-port-http", str(port), "-port", str(https[0])),
            *("-public-host", GOOGLE_HOSTS[0], "-cert-location", str(certificates.server)),
            *("-private-key-location", str(certificates.server_key)),
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
        yield GCS(endpoint, log, bucket, ("127.0.0.1", https[0]) if https else None)


def tensorflow_env(proxy: str, certificates: Certificates) -> dict[str, str]:
    """The environment that points TensorFlow's own GCS file system (which has no endpoint
    setting, and reads ``https://storage.googleapis.com`` and ``https://www.googleapis.com``
    with its libcurl) at a `gcs_bucket` served with ``certificates``, through the
    `support.google_hosts.connect_proxy` at ``proxy``: libcurl's proxy variables, the authority
    TensorFlow hands libcurl (it reads ``CURL_CA_BUNDLE`` itself), the token TensorFlow's tests
    use instead of credentials, and one retry instead of ten (a failure shows in seconds)."""
    return {
        **{name: proxy for name in ("HTTPS_PROXY", "https_proxy")},
        **{name: "" for name in ("NO_PROXY", "no_proxy")},
        "CURL_CA_BUNDLE": str(certificates.authority),
        "GOOGLE_AUTH_TOKEN_FOR_TESTING": "no-credentials",
        "GCS_RETRY_CONFIG_MAX_RETRIES": "1",
    }


def gcs_jar(connector: Literal["google", "hadoop"] = "google") -> Path:
    """Google's shaded gcs-connector, or Hadoop's hadoop-gcp, from Maven Central (once)."""
    from support.maven import fetch

    if connector == "hadoop":
        return fetch(*HADOOP_GCP)
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


def hadoop_gcp_conf(proxy: str, trust_store: Path) -> dict[str, str]:
    """Session settings for Hadoop's own hadoop-gcp (Hadoop 3.5: fs.gs.impl and its sizes are
    core-default.xml's) against a `support.gcs_front.gcs_front` behind the
    `support.google_hosts.connect_proxy` at ``proxy``: hadoop-gcp has no endpoint setting, so
    the JVM goes through the proxy and trusts the front's authority (``trust_store``, from
    `support.gcs_front.java_trust_store`). Its ``UNAUTHENTICATED`` fails, so it has user
    credentials whose token server is the front."""
    port = proxy.rsplit(":", 1)[1]
    java = [
        *("-Dhttps.proxyHost=127.0.0.1", f"-Dhttps.proxyPort={port}"),
        *(f"-Djavax.net.ssl.trustStore={trust_store}", "-Djavax.net.ssl.trustStoreType=PKCS12"),
        "-Djavax.net.ssl.trustStorePassword=changeit",
    ]
    hadoop = {
        "fs.gs.project.id": PROJECT,
        "fs.gs.auth.type": "USER_CREDENTIALS",
        "fs.gs.auth.client.id": "test-client",
        "fs.gs.auth.client.secret": "test-secret",
        "fs.gs.auth.refresh.token": "test-refresh-token",
        "fs.gs.token.server.url": "https://storage.googleapis.com/token",
    }
    return {
        "spark.driver.extraJavaOptions": " ".join(java),
        **{f"spark.hadoop.{k}": v for k, v in hadoop.items()},
    }


if __name__ == "__main__":
    print(fake_gcs_server())
