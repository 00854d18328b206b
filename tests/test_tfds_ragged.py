"""The TFDS connectors stored ragged, with the real tensorflow-datasets, both ways: a
``Sequence`` of a ``Sequence`` (nested arrays), a ``Sequence`` of a dict holding variable-length
lists (an array of structs with list fields), and RLDS's ``Dataset`` of steps (an array of
structs). TFDS writes (``store_as_tfds_dataset``) and we read value for value; we write
(``write_tfds``) and TFDS (``builder_from_directory``, ``tfds.load``) decodes value for value,
empty lists included. What still has no layout is refused naming the feature and the reason."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import spark_tfrecord
from support import write_with_tfds


@pytest.fixture(scope="module")
def tfds() -> Any:
    import tensorflow_datasets

    return tensorflow_datasets


def bits(x: Any) -> int:
    return int(np.float32(x).view(np.uint32))


def features(tfds: Any) -> Any:
    f = tfds.features
    return f.FeaturesDict(
        {
            "id": np.int64,
            "x": f.Sequence(f.Sequence(np.int64)),
            "x3": f.Sequence(f.Sequence(f.Sequence(f.Text()))),
            "s": f.Sequence({"tokens": f.Sequence(f.Text()), "score": np.float32}),
            "steps": f.Dataset(
                {
                    "observation": f.Tensor(shape=(2,), dtype=np.float32),
                    "tokens": f.Sequence(np.int64),
                    "action": np.int64,
                    "reward": np.float32,
                    "is_first": np.bool_,
                    "is_last": np.bool_,
                }
            ),
        }
    )


SCHEMA = (
    "id long, x array<array<long>>, x3 array<array<array<string>>>, "
    "s array<struct<tokens: array<string>, score: float>>, "
    "steps array<struct<observation: array<float>, tokens: array<long>, action: long, "
    "reward: float, is_first: boolean, is_last: boolean>>"
)


def example(i: int) -> dict[str, Any]:
    """Row i: empty inner and outer lists, NaN and -0.0, int64 extremes, non-ASCII text."""
    n = i % 3  # 0, 1 or 2 steps
    return {
        "id": i,
        "x": [[1, 2], [], [3, -(2**63), 2**63 - 1]] if i % 2 == 0 else ([] if i % 3 else [[]]),
        "x3": [[["a", "é"], []], [], [["b"]]] if i % 2 == 0 else [],
        "s": [
            {"tokens": ["tok", f"t{i}"], "score": -0.0},
            {"tokens": [], "score": float("nan")},
            {"tokens": ["z"], "score": 0.1},
        ][: i % 4],
        "steps": [
            {
                "observation": [0.5 + k, -0.0 if k else float("nan")],
                "tokens": list(range(k + i % 2)),
                "action": 10 * i + k,
                "reward": 1.0 if k == n - 1 else 0.1,
                "is_first": k == 0,
                "is_last": k == n - 1,
            }
            for k in range(n)
        ],
    }


def as_row(e: dict[str, Any]) -> tuple[Any, ...]:
    return (
        e["id"],
        e["x"],
        e["x3"],
        [(s["tokens"], s["score"]) for s in e["s"]],
        [
            (s["observation"], s["tokens"], s["action"], s["reward"], s["is_first"], s["is_last"])
            for s in e["steps"]
        ],
    )


def check_row(r: Any, e: dict[str, Any]) -> None:
    """A row we read, against the example TFDS was given (floats bit for bit)."""
    assert r.id == e["id"]
    assert r.x == e["x"] and r.x3 == e["x3"]
    assert [s.tokens for s in r.s] == [s["tokens"] for s in e["s"]]
    assert [bits(s.score) for s in r.s] == [bits(s["score"]) for s in e["s"]]
    assert len(r.steps) == len(e["steps"])
    for got, step in zip(r.steps, e["steps"]):  # in order
        assert [bits(v) for v in got.observation] == [bits(v) for v in step["observation"]]
        assert got.tokens == step["tokens"] and got.action == step["action"]
        assert bits(got.reward) == bits(step["reward"])
        assert (got.is_first, got.is_last) == (step["is_first"], step["is_last"])


def check_decoded(d: dict[str, Any], e: dict[str, Any]) -> None:
    """An example as TFDS decoded it, against the one it stands for."""
    assert int(d["id"]) == e["id"]
    assert d["x"].to_list() == e["x"]
    assert d["x3"].to_list() == [[[t.encode() for t in c] for c in b] for b in e["x3"]]
    assert d["s"]["tokens"].to_list() == [[t.encode() for t in s["tokens"]] for s in e["s"]]
    assert [bits(v) for v in d["s"]["score"]] == [bits(s["score"]) for s in e["s"]]
    steps = list(d["steps"])  # TFDS gives the steps as a dataset, in order
    assert len(steps) == len(e["steps"])
    for got, step in zip(steps, e["steps"]):
        assert [bits(v) for v in got["observation"]] == [bits(v) for v in step["observation"]]
        assert list(got["tokens"]) == step["tokens"] and got["action"] == step["action"]
        assert bits(got["reward"]) == bits(step["reward"])
        assert (bool(got["is_first"]), bool(got["is_last"])) == (step["is_first"], step["is_last"])


def decoded(tfds: Any, folder: str, split: str) -> dict[int, dict[str, Any]]:
    ds = tfds.builder_from_directory(folder).as_dataset(split=split, shuffle_files=False)
    return {int(d["id"]): d for d in tfds.as_numpy(ds)}


EXAMPLES = [example(i) for i in range(8)]


@pytest.fixture(scope="module")
def written_by_tfds(tfds: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ragged-by-tfds")
    return write_with_tfds(tfds, root, "ragged_by_tfds", features(tfds), {"train": EXAMPLES})


def test_tfds_writes_the_ragged_layout_we_read(tf: Any, written_by_tfds: Path) -> None:
    """What TFDS 4.9 stores: ragged_flat_values and row lengths per nested sequence and list leaf
    of a sequence of dicts; a Dataset's steps as a Sequence's (parallel lists)."""
    shard = next(p for p in written_by_tfds.iterdir() if ".tfrecord-" in p.name)
    record = next(iter(tf.data.TFRecordDataset(str(shard)))).numpy()
    names = set(tf.train.Example.FromString(record).features.feature)
    assert names == {
        "id",
        "x/ragged_flat_values",
        "x/ragged_row_lengths_0",
        "x3/ragged_flat_values",
        "x3/ragged_row_lengths_0",
        "x3/ragged_row_lengths_1",
        "s/score",
        "s/tokens/ragged_flat_values",
        "s/tokens/ragged_row_lengths_0",
        "steps/observation",
        "steps/tokens/ragged_flat_values",
        "steps/tokens/ragged_row_lengths_0",
        "steps/action",
        "steps/reward",
        "steps/is_first",
        "steps/is_last",
    }


def test_a_ragged_dataset_written_by_tfds_is_read_value_for_value(
    spark: Any, tfds: Any, written_by_tfds: Path
) -> None:
    df = spark_tfrecord.read_tfds(spark, str(written_by_tfds), "train")
    same = spark.read.format("tfrecord").option("split", "train").load(str(written_by_tfds))
    assert df.schema == same.schema
    # The columns of features.json, where TFDS sorts each dict's keys.
    read = (
        "id long, s array<struct<score: float, tokens: array<string>>>, "
        "steps array<struct<action: long, is_first: boolean, is_last: boolean, "
        "observation: array<float>, reward: float, tokens: array<long>>>, "
        "x array<array<long>>, x3 array<array<array<string>>>"
    )
    assert df.schema.simpleString() == spark.createDataFrame([], read).schema.simpleString()
    assert df.schema["steps"].metadata["tfds.feature"] == "Dataset"
    rows = {r.id: r for r in df.collect()}
    assert sorted(rows) == list(range(len(EXAMPLES)))
    tfds_decoded = decoded(tfds, str(written_by_tfds), "train")
    for e in EXAMPLES:
        check_row(rows[e["id"]], e)
        check_decoded(tfds_decoded[e["id"]], e)  # and TFDS reads the same from its files
    # Pruned to one leaf of the steps, still in order.
    actions = same.select("id", "steps.action").collect()
    assert {r.id: r.action for r in actions} == {
        e["id"]: [s["action"] for s in e["steps"]] for e in EXAMPLES
    }


@pytest.mark.parametrize("given", [True, False], ids=["features", "derived"])
def test_ragged_columns_written_by_spark_are_loaded_by_tfds(
    spark: Any, tfds: Any, tmp_path: Path, given: bool
) -> None:
    """write_tfds with features= (the Dataset kept), or features derived from the schema (arrays
    of arrays and list leaves of arrays of structs as Sequences): TFDS decodes every value."""
    df = spark.createDataFrame([as_row(e) for e in EXAMPLES], SCHEMA)
    folder = spark_tfrecord.write_tfds(
        df, str(tmp_path), "ragged_by_spark", "train", num_shards=2,
        features=features(tfds) if given else None,
    )  # fmt: skip
    written = json.loads((Path(folder) / "features.json").read_text())["featuresDict"]["features"]
    kinds = {k: v["pythonClassName"].rsplit(".", 1)[1] for k, v in written.items()}
    assert kinds["x"] == kinds["x3"] == kinds["s"] == "Sequence"
    assert kinds["steps"] == ("Dataset" if given else "Sequence")
    inner = written["x"]["sequence"]["feature"]
    assert inner["pythonClassName"].endswith("sequence_feature.Sequence")
    by_tfds = decoded(tfds, folder, "train")
    assert sorted(by_tfds) == list(range(len(EXAMPLES)))
    for e in EXAMPLES:
        d = by_tfds[e["id"]]
        if given:
            check_decoded(d, e)
            continue
        # Derived: the steps are a Sequence of a dict (parallel arrays), x3 holds Text.
        assert d["x"].to_list() == e["x"]
        assert d["x3"].to_list() == [[[t.encode() for t in c] for c in b] for b in e["x3"]]
        tokens = [[t.encode() for t in s["tokens"]] for s in e["s"]]
        assert d["s"]["tokens"].to_list() == tokens
        assert [bits(v) for v in d["s"]["score"]] == [bits(s["score"]) for s in e["s"]]
        assert d["steps"]["tokens"].to_list() == [s["tokens"] for s in e["steps"]]
        observations = [[bits(v) for v in s["observation"]] for s in e["steps"]]
        assert [[bits(v) for v in o] for o in d["steps"]["observation"].to_list()] == observations
        assert list(d["steps"]["action"]) == [s["action"] for s in e["steps"]]
        assert [bits(v) for v in d["steps"]["reward"]] == [bits(s["reward"]) for s in e["steps"]]
        assert [bool(v) for v in d["steps"]["is_last"]] == [s["is_last"] for s in e["steps"]]
    # tfds.load by name, sliced, reads the same.
    sliced = tfds.load("ragged_by_spark:1.0.0", data_dir=str(tmp_path), split="train[:50%]")
    assert len(list(sliced)) == len(EXAMPLES) // 2
    # And we read back what we wrote.
    back = {r.id: r for r in spark_tfrecord.read_tfds(spark, folder, "train").collect()}
    for e in EXAMPLES:
        check_row(back[e["id"]], e)


def test_a_split_of_a_tfds_rlds_dataset_written_back_decodes_the_same(
    spark: Any, tfds: Any, written_by_tfds: Path, tmp_path: Path
) -> None:
    """TFDS → Spark → TFDS: the episodes we read, written as a new split of the same dataset
    (its features.json, with the Dataset), decode as TFDS's own."""
    copy = tmp_path / "ragged_by_tfds" / "1.0.0"
    shutil.copytree(written_by_tfds, copy)
    train = spark_tfrecord.read_tfds(spark, str(copy), "train")
    spark_tfrecord.write_tfds(train.where("id % 2 = 0"), str(tmp_path), "ragged_by_tfds", "even")
    even = decoded(tfds, str(copy), "even")
    assert sorted(even) == [0, 2, 4, 6]
    for i, d in even.items():
        check_decoded(d, EXAMPLES[i])


def refused_read(spark: Any, tmp_path: Path, name: str, feature: Any) -> str:
    """The message of a read of a dataset whose only feature `name` is `feature`."""
    folder = tmp_path / name / "1.0.0"
    folder.mkdir(parents=True)
    feature.save_config(str(folder))
    (folder / "dataset_info.json").write_text(
        json.dumps({"name": name, "version": "1.0.0", "splits": [{"name": "train"}]})
    )
    with pytest.raises(Exception) as e:
        spark_tfrecord.read_tfds(spark, str(folder), "train").collect()
    return str(e.value)


def test_connectors_without_a_layout_are_refused_naming_feature_and_reason(
    spark: Any, tfds: Any, tmp_path: Path
) -> None:
    f = tfds.features
    cases = {
        "fixed_inner": (
            f.Sequence(f.Sequence(f.Tensor(shape=(2,), dtype=np.float32))),
            "TFDS feature 'v' (Sequence) is not supported: a Tensor of shape (2) at the bottom "
            "of a nested sequence is stored ragged with row lengths that count tensors",
        ),
        "dict_in_sequence": (
            f.Sequence({"inner": f.Sequence({"a": np.int64})}),
            "TFDS feature 'v/inner' (Sequence) is not supported: a sequence of dicts inside a "
            "sequence has no feature layout",
        ),
        "unknown_in_sequence": (
            f.Sequence(f.Tensor(shape=(None,), dtype=np.int64)),
            "TFDS feature 'v' (Sequence) is not supported: a sequence of Tensor of shape (None) "
            "has an unknown dimension in each element",
        ),
        "one_unknown_encoded": (
            f.Tensor(shape=(None, 3), dtype=np.int64, encoding="bytes"),
            "TFDS feature 'v' (Tensor) is not supported: an encoded tensor of shape (None, 3) "
            "(at most one unknown dimension) is stored as one bytes value under its own name",
        ),
    }
    for name, (feature, message) in cases.items():
        text = refused_read(spark, tmp_path, name, f.FeaturesDict({"v": feature}))
        assert message in text, (name, text)
    # Written with such features: refused before anything is written, naming the column.
    df = spark.createDataFrame([([[0.5, 1.5]],)], "v array<array<float>>")
    with pytest.raises(Exception, match="TFDS feature 'v' \\(Sequence\\) is not supported"):
        spark_tfrecord.write_tfds(
            df, str(tmp_path), "w", "train",
            features=f.FeaturesDict({"v": cases["fixed_inner"][0]}),
        )  # fmt: skip
    nested = spark.createDataFrame([], "o array<struct<p: array<struct<q: long>>>>")
    with pytest.raises(Exception, match=r"Column 'o\.p' holds arrays of structs inside an array"):
        spark_tfrecord.write_tfds(nested, str(tmp_path), "w", "train")
    assert not (tmp_path / "w").exists()
