"""The reliability tests through both routes (issue 43): the jar, and the jar-less Python data
source in a Spark session started with no jar (support/jarless_source_child.py, one process for
the module; the tests' own session has the jar).

- **The fuzz corpus** (support/fuzz_corpus.py, tens of test_fuzz's cases: mutated, truncated
  and random files, hostile payloads, plain, gzip and deflate, damaged compressed bytes), read
  in each mode (FAILFAST, DROPMALFORMED, PERMISSIVE with ``columnNameOfCorruptRecord``): the
  Python route gives the jar's rows, or an error with the jar's condition and the jar's file,
  offset and column; never a hang (the child has a deadline) or a dead Python worker (whose
  error has no condition of ours).
- **A task killed mid-write:** an append through the Python route, to a folder with earlier
  data, whose write task's Python worker is killed (SIGKILL) while its staged file has bytes:
  once (the task's retry writes, and the job commits), or on every attempt (the job fails).
  Either way no partial file is visible: the folder holds the earlier files, byte for byte,
  and, when the job committed, the new complete ones, with no staging folder left; the
  manifest counts each file's records; both routes read the rows back.

Collected only where pyspark has the Python data source API (tests/conftest.py).
"""

from __future__ import annotations

import ast
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from support import child_results
from support.fuzz_corpus import BYTE_ARRAY, SEED, SEQUENCE, Case, make_cases
from support.jarless_source_child import WRITE_SCHEMA, digest, files, outcome
from support.tfrecord_oracle import PayloadError, decode, read_records

#: The corpus: test_fuzz's first cases, then the next few whose first bad record (as the oracle
#: decodes it) holds a value that does not fit its column, which few cases reach: tens of files,
#: which reach every outcome (checked below).
FIRST = 20
MISFITS = 4
MODES = ("FAILFAST", "DROPMALFORMED", "PERMISSIVE")
#: The corrupt record column of the PERMISSIVE reads (not Spark's default name).
CORRUPT_COLUMN = "bad_record"
#: The parameters of an error that both routes give alike (the reason's words are each codec's).
COMPARED = ("path", "offset", "column")


def _corpus() -> list[tuple[Case, bytes]]:
    """The cases read (see FIRST and MISFITS), each with its file's bytes."""
    made = make_cases(SEED, 400)
    chosen = made[:FIRST]
    chosen += [(c, d) for c, d in made[FIRST:] if _misfit(c)][:MISFITS]
    assert len(chosen) == FIRST + MISFITS
    return chosen


def _misfit(case: Case) -> bool:
    """Whether the first record of ``case`` that the oracle cannot read holds a value that does
    not fit its column (rather than a payload that does not parse)."""
    if case.schema is BYTE_ARRAY or case.damaged_compression:
        return False
    for r in read_records(case.content)[0]:
        try:
            decode(r.data, case.schema.columns, sequence=case.schema is SEQUENCE)
        except PayloadError as e:
            return not e.malformed
    return False


def _reads(root: Path, cases: list[Case]) -> list[dict[str, Any]]:
    """The reads of the corpus, the same through both routes. In FAILFAST each file alone: its
    rows or its first error. In DROPMALFORMED and PERMISSIVE (whose bad records do not fail
    a read) the files of a schema in one query, each file's rows marked with its place, with
    ``ignoreCorruptFiles`` (damaged framing or compression keeps the records before it): a
    query of its own for each file costs the Python route a few seconds of Python workers."""
    reads = []
    for case in cases:
        path = str(root / case.file_name)
        options = {**case.schema.options, "mode": "FAILFAST"}
        reads.append({"case": f"{case.name}", "paths": [path], "ddl": case.schema.ddl})
        reads[-1]["options"] = options
    for schema in {c.schema.record_type: c.schema for c in cases}.values():
        paths = [str(root / c.file_name) for c in cases if c.schema is schema]
        for mode in MODES[1:]:
            options = {**schema.options, "mode": mode, "ignoreCorruptFiles": "true"}
            ddl = schema.ddl
            if mode == "PERMISSIVE":
                options["columnNameOfCorruptRecord"] = CORRUPT_COLUMN
                ddl += f", {CORRUPT_COLUMN} binary"
            case = f"{schema.record_type}-{mode}"
            reads.append({"case": case, "paths": paths, "ddl": ddl, "options": options})
    return reads


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The corpus's reads and the writes' folders, and what the Python route gave for each (in
    one child process, one session with no jar)."""
    root = tmp_path_factory.mktemp("reliability")
    cases = []
    for case, data in _corpus():
        path = root / "fuzz" / case.file_name
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(data)
        cases.append(case)
    reads = _reads(root / "fuzz", cases)
    writes = []
    for name, once in (("killed once", True), ("killed always", False)):
        kills = root / name / "kills"
        kills.mkdir(parents=True)
        folder = str(root / name / "table")
        writes.append({"case": name, "folder": folder, "kills": str(kills), "once": once})
    spec = root / "spec.json"
    spec.write_text(json.dumps({"reads": reads, "writes": writes}))
    found = child_results("jarless_source_child", str(spec), timeout=1500)
    assert found["jvm"]["jar"] is None, found["jvm"]
    return {"reads": reads, "writes": writes, "python": found}


def test_each_mutated_file_gives_the_jars_rows_or_error(
    spark: Any, scenario: dict[str, Any]
) -> None:
    python = scenario["python"]
    disagreements = []
    outcomes: Counter[str] = Counter()
    for read in scenario["reads"]:
        reader = spark.read.format("tfrecord").options(**read["options"]).schema(read["ddl"])
        jar = outcome(reader, read["paths"])
        mine = python[read["case"]]
        if "rows" in jar:
            outcomes["rows" if jar["rows"] else "no rows"] += 1
            if read["options"]["mode"] == "PERMISSIVE":
                bad = [r for r in jar["rows"] if ast.literal_eval(r)[-2] is not None]
                outcomes["a corrupt record's bytes"] += len(bad)
            same = mine.get("rows") == jar["rows"]
        else:
            outcomes[str(jar["condition"])] += 1
            given = {k: v for k, v in jar["parameters"].items() if k in COMPARED}
            same = mine.get("condition") == jar["condition"] and all(
                _same(k, mine["parameters"].get(k), v) for k, v in given.items()
            )
        if not same:
            disagreements.append((read["case"], read["options"], jar, mine))
    assert not disagreements, "\n".join(json.dumps(d)[:1500] for d in disagreements)
    # every outcome, and of errors the jar's condition (never an error that is not ours)
    assert outcomes["rows"] and outcomes["a corrupt record's bytes"], outcomes
    for condition in (
        "TFRECORD_MALFORMED_RECORD",
        "TFRECORD_DATA_MISMATCH",
        "TFRECORD_CORRUPT_RECORD.TRUNCATED",
        "TFRECORD_CORRUPT_RECORD.DATA_CHECKSUM",
    ):
        assert outcomes[condition], outcomes
    assert "None" not in outcomes, outcomes


def _same(parameter: str, mine: str | None, jars: str) -> bool:
    """Whether the parameter's values are the same: a file the same file (the jar names a
    local file by its ``file:`` URL, which Spark's scan gives it; the Python route by the path
    the read was given)."""
    if parameter == "path" and mine is not None:
        return Path(mine).resolve() == Path(re.sub("^file:(//)?", "", jars)).resolve()
    return mine == jars


def _records(path: Path) -> int:
    records, error = read_records(path.read_bytes())
    assert error is None, (path, error)
    return len(records)


@pytest.mark.parametrize("case", ["killed once", "killed always"])
def test_a_task_killed_mid_write_leaves_no_partial_file(
    spark: Any, scenario: dict[str, Any], case: str
) -> None:
    """The write task's Python worker was killed while its staged file had bytes. Killed once,
    the retry wrote and the job committed: the earlier files as they were and the two new
    ones, complete and counted. Killed on every attempt, the job failed: the folder is as it
    was, byte for byte. No staging folder is left; both routes read the rows back."""
    (write,) = [w for w in scenario["writes"] if w["case"] == case]
    found = scenario["python"][case]
    folder = Path(write["folder"])
    kills = found["kills"]
    assert [k["attempt"] for k in kills] == ([0] if write["once"] else [0, 1]), kills
    assert all(k["size"] > 0 for k in kills), kills
    assert not any(Path(k["staged"]).exists() for k in kills)
    now = files(str(folder))
    earlier = list(range(40))
    if write["once"]:
        assert found["error"] is None
        new = set(now) - set(found["before"])
        assert {n[:11] for n in new if n.startswith("part-")} == {"part-00000-", "part-00001-"}
        assert new <= {*(n for n in new if n.startswith("part-")), "_SUCCESS"}
        changed = {n for n in found["before"] if now.get(n) != found["before"][n]}
        assert changed == {"_tfrecord_manifest.json"}, changed
        expected = earlier + list(range(1000, 5000))
    else:
        assert found["error"] is not None and "Python worker" in found["error"]
        assert now == found["before"]
        expected = earlier
    assert not [n for n in now if n.startswith(".")], now
    manifest = json.loads((folder / "_tfrecord_manifest.json").read_text())
    parts = sorted(n for n in now if n.startswith("part-"))
    assert sorted(f["path"] for f in manifest["files"]) == parts
    for f in manifest["files"]:
        assert f["num_records"] == _records(folder / f["path"]), f
    assert manifest["num_records"] == len(expected)
    jar = spark.read.format("tfrecord").schema(WRITE_SCHEMA).load(str(folder)).collect()
    assert [r[0] for r in digest(jar)] == expected
    assert found["rows"] == digest(jar)
