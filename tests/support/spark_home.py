"""A Spark home that is the installed pyspark's but for some of its jars, as a user's build
resolves them: what `SPARK_HOME` points a child driver at when a test needs a jar of Spark's own
replaced rather than only preceded (a class that the old version lacks must not be found in the
new one further down the class path)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path


def spark_home_with(folder: Path, replaced: Mapping[str, Path]) -> Path:
    """Makes ``folder`` a Spark home of links to pyspark's files, its ``jars/`` without the jars
    whose names start with a key of ``replaced`` (``"jackson-core-"``), each with its value
    instead; returns ``folder``."""
    import pyspark

    home = Path(pyspark.__file__).resolve().parent
    folder.mkdir(parents=True, exist_ok=True)
    for entry in home.iterdir():
        if entry.name != "jars":
            (folder / entry.name).symlink_to(entry)
    jars = folder / "jars"
    jars.mkdir()
    for jar in (home / "jars").iterdir():
        if not any(jar.name.startswith(prefix) for prefix in replaced):
            (jars / jar.name).symlink_to(jar)
    for prefix, jar in replaced.items():
        if not any(j.name.startswith(prefix) for j in (home / "jars").iterdir()):
            raise LookupError(f"pyspark has no jar {prefix}*, nothing to replace")
        (jars / jar.name).symlink_to(jar)
    return folder
