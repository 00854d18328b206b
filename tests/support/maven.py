"""Jars for the tests from Maven Central, downloaded once into the cache (no Maven needed).

The cache is ``$SPARK_TFRECORD_CACHE/maven`` (``.cache/maven`` of the checkout by default, a
folder git ignores), laid out as a Maven repository. Each download is checked against the SHA-1
that Maven Central publishes beside it and renamed into place only when complete, so an
interrupted download is never taken for a jar.
"""

from __future__ import annotations

import hashlib
import os
import re
import urllib.request
from pathlib import Path

from support import ROOT

CENTRAL = "https://repo1.maven.org/maven2"
CACHE = Path(os.environ.get("SPARK_TFRECORD_CACHE", ROOT / ".cache")) / "maven"


def _relative(group: str, artifact: str, version: str, ext: str, classifier: str) -> str:
    name = f"{artifact}-{version}" + (f"-{classifier}" if classifier else "")
    return f"{group.replace('.', '/')}/{artifact}/{version}/{name}.{ext}"


def fetch(group: str, artifact: str, version: str, ext: str = "jar", classifier: str = "") -> Path:
    """The local path of ``group:artifact:version`` (``ext`` jar or pom; a ``classifier`` such as
    ``shaded``), downloaded if needed."""
    relative = _relative(group, artifact, version, ext, classifier)
    path = CACHE / relative
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    url = f"{CENTRAL}/{relative}"
    with urllib.request.urlopen(url + ".sha1", timeout=60) as response:
        expected = response.read().decode().split()[0].strip().lower()
    partial = path.with_name(f"{path.name}.{os.getpid()}.part")
    digest = hashlib.sha1()
    try:
        with urllib.request.urlopen(url, timeout=60) as response, partial.open("wb") as out:
            while chunk := response.read(1 << 20):
                digest.update(chunk)
                out.write(chunk)
        if digest.hexdigest() != expected:
            raise OSError(f"{url}: SHA-1 {digest.hexdigest()}, Maven Central says {expected}")
        partial.replace(path)
    finally:
        partial.unlink(missing_ok=True)
    return path


def pom_property(group: str, artifact: str, version: str, name: str) -> str:
    """A ``<properties>`` value of a pom, such as the AWS SDK version hadoop-project names."""
    text = fetch(group, artifact, version, "pom").read_text()
    match = re.search(rf"<{re.escape(name)}>([^<]+)</{re.escape(name)}>", text)
    if match is None:
        raise LookupError(f"{group}:{artifact}:{version}'s pom has no property {name}")
    return match.group(1).strip()
