"""An S3-compatible server on 127.0.0.1 (moto's) and what Spark needs to reach it through s3a://.

`moto_server` runs ``python -m moto.server`` in a child process until the block ends.
`s3a_jars` fetches the S3A connector matching the installed pyspark's Hadoop (hadoop-aws and the
AWS SDK bundle that Hadoop release was built with) plus Spark's cloud committer bindings, and
`s3a_conf` is the session configuration that points s3a:// at the server. `S3` is one bucket of
a running server, with its client and the server's log of requests.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyspark

from support import local_server
from support.maven import fetch, pom_property

ACCESS_KEY = SECRET_KEY = "testing"  # moto accepts any static credentials
REGION = "us-east-1"
# Maven Central lacks spark-hadoop-cloud for some Spark releases (3.5.9, 4.0.5 and 4.3.0 among
# them; 4.2 and 4.3 have none at all). Its few classes (PathOutputCommitProtocol, a subclass of
# HadoopMapReduceCommitProtocol) stay compatible, so these take the nearest published release.
HADOOP_CLOUD = {"3.5": "3.5.8", "4.0": "4.0.2", "4.3": "4.1.2"}


@contextmanager
def moto_server(log: Path, deadline_seconds: float = 120) -> Iterator[str]:
    """The endpoint (``http://127.0.0.1:PORT``) of a moto server that runs until the block ends.

    Raises RuntimeError with the tail of the server's log if it does not answer in time.
    """

    def command(port: int) -> list[str]:
        return [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)]

    with local_server("moto server", command, "/moto-api/", log, deadline_seconds) as endpoint:
        yield endpoint


def _version_in_jar_name(glob: str, pattern: str) -> str:
    """A version out of the name of the one jar of the installed pyspark matching `glob`."""
    jars = Path(pyspark.__file__).parent / "jars"
    names = [p.name for p in jars.glob(glob)]
    match = re.fullmatch(pattern, names[0]) if len(names) == 1 else None
    if match is None:
        raise LookupError(f"no single {glob} in {jars}: {names}")
    return match.group(1)


def hadoop_version() -> str:
    """The Hadoop release of the installed pyspark, from its hadoop-client-api jar."""
    return _version_in_jar_name("hadoop-client-api-*.jar", r"hadoop-client-api-(.+)\.jar")


def scala_version() -> str:
    """The Scala binary version of the installed pyspark, from its spark-core jar."""
    return _version_in_jar_name("spark-core_*.jar", r"spark-core_(\d+\.\d+)-.+\.jar")


def s3a_jars(hadoop: str) -> list[Path]:
    """hadoop-aws of this Hadoop release and the runtime dependencies its pom declares.

    Hadoop 3.3 was built with the AWS SDK v1 bundle, 3.4 and later with the v2 bundle; 3.5 also
    needs the Analytics Accelerator Library (shaded, no dependencies of its own). hadoop-aws's
    other runtime dependency, wildfly-openssl, is needed only for fs.s3a.ssl.channel.mode=openssl.
    """
    jars = [fetch("org.apache.hadoop", "hadoop-aws", hadoop)]

    def sdk(name: str) -> str:
        return pom_property("org.apache.hadoop", "hadoop-project", hadoop, name)

    if hadoop.startswith(("2.", "3.0", "3.1", "3.2", "3.3")):
        jars.append(fetch("com.amazonaws", "aws-java-sdk-bundle", sdk("aws-java-sdk.version")))
    else:
        jars.append(fetch("software.amazon.awssdk", "bundle", sdk("aws-java-sdk-v2.version")))
    pom = fetch("org.apache.hadoop", "hadoop-aws", hadoop, "pom").read_text()
    if "<artifactId>analyticsaccelerator-s3</artifactId>" in pom:
        version = sdk("amazon-s3-analyticsaccelerator-s3.version")
        group = "software.amazon.s3.analyticsaccelerator"
        jars.append(fetch(group, "analyticsaccelerator-s3", version))
    return jars


def hadoop_cloud_jar() -> Path:
    """spark-hadoop-cloud, whose PathOutputCommitProtocol lets Spark SQL use the S3A committers."""
    line = ".".join(pyspark.__version__.split(".")[:2])
    version = HADOOP_CLOUD.get(line, pyspark.__version__)
    return fetch("org.apache.spark", f"spark-hadoop-cloud_{scala_version()}", version)


def s3a_conf(endpoint: str) -> dict[str, str]:
    """Session settings that point s3a:// at an S3-compatible endpoint (path-style, no TLS)."""
    hadoop = {
        "fs.s3a.endpoint": endpoint,
        "fs.s3a.endpoint.region": REGION,
        "fs.s3a.path.style.access": "true",
        "fs.s3a.connection.ssl.enabled": "false",
        "fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
        "fs.s3a.access.key": ACCESS_KEY,
        "fs.s3a.secret.key": SECRET_KEY,
        # Fail fast instead of retrying for minutes if the server went away.
        "fs.s3a.attempts.maximum": "2",
        "fs.s3a.retry.limit": "2",
        # The S3A committers (magic needs it enabled on Hadoop 3.3; later releases default to it).
        "fs.s3a.committer.magic.enabled": "true",
        "mapreduce.outputcommitter.factory.scheme.s3a": (
            "org.apache.hadoop.fs.s3a.commit.S3ACommitterFactory"
        ),
    }
    return {f"spark.hadoop.{k}": v for k, v in hadoop.items()}


def s3_client(endpoint: str) -> Any:
    """A boto3 S3 client of the server."""
    import boto3

    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
        region_name=REGION,
    )


@dataclass
class S3:
    """A bucket of a running server: its endpoint, a boto3 client, and the server's log."""

    endpoint: str
    client: Any  # a boto3 S3 client
    log: Path  # the server's log, one line per request
    bucket: str

    def objects(self, prefix: str) -> dict[str, bytes]:
        """The objects under ``prefix/`` (keys relative to it), without directory markers."""
        found: dict[str, bytes] = {}
        pages = self.client.get_paginator("list_objects_v2")
        for page in pages.paginate(Bucket=self.bucket, Prefix=prefix + "/"):
            for item in page.get("Contents", []):
                if not item["Key"].endswith("/"):
                    body = self.client.get_object(Bucket=self.bucket, Key=item["Key"])["Body"]
                    found[item["Key"][len(prefix) + 1 :]] = body.read()
        return found

    def requests(self) -> list[tuple[str, str, int]]:
        """The requests the server has logged: (method, key in the bucket, HTTP status)."""
        text = re.sub(r"\x1b\[[0-9;]*m", "", self.log.read_text(errors="replace"))  # colours
        found = re.findall(rf'"([A-Z]+) /{self.bucket}/([^ ?]*)\S* HTTP/[0-9.]+" (\d+)', text)
        return [(method, key, int(status)) for method, key, status in found]


@contextmanager
def s3_bucket(log: Path, bucket: str) -> Iterator[S3]:
    """A moto server (`moto_server`, logging to `log`) with one empty bucket, until the block
    ends."""
    with moto_server(log) as endpoint:
        client = s3_client(endpoint)
        client.create_bucket(Bucket=bucket)
        yield S3(endpoint, client, log, bucket)
