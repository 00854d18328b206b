"""The jar added to a session that already runs (a notebook's, a shared one): `add_jar`.

Each case starts a fresh session without the jar, in a process of its own
(`support.running_session`: a classic session, and on Spark 4 a Spark Connect client of a local
Connect server), adds the jar with `spark_tfrecord.add_jar` (`ADD JAR`, or `addArtifacts`) and
goes through every path that ships our classes to tasks: a partitioned gzip write, an inferred
read, a read in small splits, PERMISSIVE with the corrupt-record column, SequenceExample,
count(), `feature_spec` of the schema, and the writes whose job committer is ours (a TFDS
dataset, TensorFlow's shard names: that committer was not found until it was given our class
loader). While the reader broadcast the Hadoop configuration in a class of our own, reads failed
here with "SerializableHadoopConf cannot be cast to SerializableHadoopConf" (two class loaders).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pyspark
import pytest

from support import child_env, module_command
from support.tfrecord_bytes import entry, example, feature, int64_list_packed, write_records

# Spark Connect's client and its local server come with pyspark 4 (pyspark 3.5 would fetch the
# server jar with --packages).
KINDS = ["classic"] + (["connect"] if int(pyspark.__version__.split(".")[0]) >= 4 else [])


# SPARK_TESTING: pyspark's local Connect server takes a free port instead of 15002.
CONNECT_ENV = {"SPARK_TESTING": "1", "SPARK_LOCAL_IP": "127.0.0.1"}


@pytest.mark.parametrize("kind", KINDS)
def test_add_jar_to_a_running_session(tmp_path: Path, kind: str) -> None:
    malformed = write_records(
        tmp_path / "m" / "a.tfrecord",
        [example(entry(b"x", feature("int64", int64_list_packed([5])))), b"\x0a\x05\x0a"],
    )
    done = subprocess.run(
        module_command("running_session", kind, str(tmp_path / "out"), str(malformed)),
        capture_output=True,
        text=True,
        timeout=600,
        env=child_env(**(CONNECT_ENV if kind == "connect" else {})),
    )
    lines = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")]
    assert done.returncode == 0 and lines, done.stderr[-5000:]
    result = json.loads(lines[0][7:])
    assert result["type"].startswith("pyspark.sql.connect" if kind == "connect" else "pyspark.sql")
    assert result["jar"] == result["again"] and result["jar"].endswith(".jar")
    assert result["inferred"] == "struct<id:bigint,s:string,p:int>"
    assert result["gz"] == list(range(1, 3000, 3))
    assert result["splits"] > 2
    assert result["split_ids"] == list(range(3000)) and result["count"] == 3000
    assert result["permissive"] == [[5, None], [None, "0a050a"]]
    assert result["sequence"] == [[1, [[1, 2], [3]]]]
    assert result["spec"] == ["id", "p", "s"]  # feature_spec takes the session's schema
    assert result["tfds"] == [[i, f"t{i}"] for i in range(100)]
    info = json.loads(Path(result["tfds_folder"], "dataset_info.json").read_text())
    assert [len(s["shardLengths"]) for s in info["splits"]] == [3]
    sharded = sorted(p.name for p in (tmp_path / "out" / "sharded").glob("p-*"))
    assert sharded == ["p-00000-of-00002", "p-00001-of-00002"]
