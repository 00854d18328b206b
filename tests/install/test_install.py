"""How the wheel installs: beside any PySpark without replacing it, and for a trainer with no
Spark at all (issue 42). Each test installs into a fresh virtual environment, from PyPI."""

from __future__ import annotations

import json
import re
import subprocess
import zipfile
from pathlib import Path

import pytest

from conftest import Venv

#: Distributions that are a Spark client, or that start or talk to a JVM.
SPARK = {"pyspark", "pyspark-client", "pyspark-connect", "databricks-connect", "py4j", "jpype1"}


def requirements(wheel: Path) -> tuple[list[str], dict[str, set[str]]]:
    """The wheel's plain dependencies, and each extra's requirements, by distribution name."""
    with zipfile.ZipFile(wheel) as zf:
        (name,) = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        lines = zf.read(name).decode().splitlines()
    plain: list[str] = []
    extras: dict[str, set[str]] = {}
    for line in lines:
        if not line.startswith("Requires-Dist:"):
            continue
        requirement = line.split(":", 1)[1].strip()
        dist = re.split(r"[ ;<>=!~\[(]", requirement, maxsplit=1)[0].lower()
        extra = re.search(r"extra == ['\"]([\w-]+)['\"]", requirement)
        if extra:
            extras.setdefault(extra.group(1), set()).add(dist)
        else:
            plain.append(dist)
    return plain, extras


def test_the_wheel_depends_on_no_spark_and_names_it_in_extras(wheel: Path) -> None:
    plain, extras = requirements(wheel)
    assert not SPARK & set(plain), plain
    assert extras["spark"] == {"pyspark"}
    assert extras["local"] == {"pyspark", "jpype1"}
    for trainer in ("torch", "grain"):
        assert not SPARK & extras[trainer], extras[trainer]
    # Ray's workers check every record's CRC32C as the loaders do: with its C code
    assert extras["ray"] == {"ray", "pyarrow", "google-crc32c"}


# pyspark-client and pyspark-connect are Spark Connect's own clients; databricks-connect ships a
# pyspark package of its own and requires that no other be installed.
@pytest.mark.parametrize("client", ["pyspark-client", "pyspark-connect", "databricks-connect"])
def test_installs_beside_a_spark_client_and_leaves_it_alone(
    venv: Venv, wheel: Path, client: str
) -> None:
    venv.pip("install", "--quiet", client)
    before = venv.installed()
    planned = venv.would_install(str(wheel))
    assert "spark-tfrecord" in planned
    assert not SPARK & set(planned), planned

    venv.pip("install", "--quiet", str(wheel))
    after = venv.installed()
    for dist in SPARK:
        assert after.get(dist) == before.get(dist), (dist, before.get(dist), after.get(dist))
    # Importing the package loads no Spark (nor py4j, nor JPype), and the pyspark that then
    # imports is the client's.
    shown = venv.run(
        "import json, sys, spark_tfrecord\n"
        "loaded = sorted(m for m in ('pyspark', 'py4j', 'jpype') if m in sys.modules)\n"
        "import pyspark\n"
        "print(json.dumps([pyspark.__file__, loaded]))"
    )
    assert shown.returncode == 0, shown.stderr
    location, loaded = json.loads(shown.stdout)
    assert "/site-packages/pyspark/" in location
    assert loaded == []


@pytest.mark.parametrize("extra,library", [("torch", "torch"), ("grain", "grain")])
def test_a_trainer_install_brings_no_spark(
    venv: Venv, wheel: Path, extra: str, library: str
) -> None:
    planned = venv.would_install(f"{wheel}[{extra}]")
    assert {library, "numpy", "google-crc32c", "spark-tfrecord"} <= set(planned)
    assert not SPARK & set(planned), sorted(SPARK & set(planned))


def test_without_pyspark_the_loaders_work_and_the_spark_helpers_name_the_choices(
    venv: Venv, wheel: Path, tmp_path: Path
) -> None:
    venv.pip("install", "--quiet", str(wheel))
    assert not SPARK & set(venv.installed())
    folder = tmp_path / "data"
    folder.mkdir()
    code = f"""
import json, struct, sys
import spark_tfrecord

def masked(data):  # TFRecord's masked CRC32C, bit by bit (the test trusts no module of ours)
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    crc ^= 0xFFFFFFFF
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF

# One Example record {{"id": int64_list [7]}}, framed.
feature = bytes([0x1a, 0x03, 0x0a, 0x01, 0x07])          # Feature{{int64_list{{value: 7}}}}
entry = b"\\x0a\\x02id" + b"\\x12" + bytes([len(feature)]) + feature
record = b"\\x0a" + bytes([len(entry) + 2]) + b"\\x0a" + bytes([len(entry)]) + entry
length = struct.pack("<Q", len(record))
with open({str(folder / "part-0.tfrecord")!r}, "wb") as out:
    out.write(length + struct.pack("<I", masked(length)) + record
              + struct.pack("<I", masked(record)))
info = spark_tfrecord.dataset_info({str(folder)!r})
problems = {{}}
for name, call in [
    ("configure", lambda: spark_tfrecord.configure(None)),
    ("jar_path", lambda: spark_tfrecord.jar_path()),
]:
    try:
        call()
    except ImportError as error:
        problems[name] = str(error)
print(json.dumps({{"records": info.num_records, "problems": problems,
    "loaded": sorted(m for m in ("pyspark", "py4j", "jpype") if m in sys.modules)}}))
"""
    shown = venv.run(code)
    assert shown.returncode == 0, shown.stderr
    result = json.loads(shown.stdout)
    assert result["records"] == 1
    assert result["loaded"] == []
    assert set(result["problems"]) == {"configure", "jar_path"}
    # The command's inspect runs in plain Python: no Spark installed, no java on the PATH.
    no_java = {"PATH": str(venv.bin), "HOME": str(tmp_path)}
    assert not any((Path(d) / "java").exists() for d in no_java["PATH"].split(":"))
    inspected = subprocess.run(
        [str(venv.bin / "spark-tfrecord"), "inspect", str(folder)],
        capture_output=True,
        text=True,
        env=no_java,
    )
    assert inspected.returncode == 0, inspected.stderr
    assert inspected.stdout.splitlines() == [
        "files: 1, 31 bytes",
        "records: 1",
        "root",
        " |-- id: long (nullable = true)",
        '{"id": 7}',
    ]
    for message in result["problems"].values():
        for choice in ("pyspark", "pyspark-client", "databricks-connect", "spark-tfrecord[spark]"):
            assert choice in message, message
