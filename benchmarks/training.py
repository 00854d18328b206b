"""tf_dataset against the hand-written tf.data pipeline, records/s into a Keras-style loop.

    python benchmarks/training.py [--rows 400000] [--size 32] [--repeat 3] [--compression none]

Spark writes a Spark ML-like DataFrame once (a dense vector of ``--size`` floats, a double
label; 4 files); then a child process (TensorFlow without a Spark JVM beside it, two threads per
pool, as the tf.data reference of benchmarks/run.py) feeds the same files, an epoch per run, to
a Keras-style training step (a ``tf.function``: one Dense layer, a gradient, an SGD update)
through three pipelines:

- ``by hand``: docs/tensorflow.md's pipeline as a user writes it today, ``TFRecordDataset`` ->
  ``batch`` -> ``parse_example`` with ``feature_spec(df.schema)``, plus what Keras needs and
  that spec cannot give: the ragged vector and the sparse label made dense (docs/training.md,
  "What this replaces");
- ``by hand, tuned``: the same with the spec written by hand (``FixedLenFeature``, the vector's
  size hard-coded), parallel reads and parses and a prefetch;
- ``tf_dataset``: ``spark_tfrecord.tf_dataset(path, label="label", batch_size=B)``.

The pipelines take turns in each round after a warm-up round; each figure is the median of
``--repeat`` epochs, and every epoch must give every record (checked); "others' cores" is the
CPU other processes used meanwhile (on a shared machine the ratios move with it). The issue's
goal: at least 1x the hand-written pipeline, with no ``steps_per_epoch``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tfrbench.child import emit, run, script
from tfrbench.data import ROOT
from tfrbench.tfdata import QUIET_TF, THREADS
from tfrbench.timing import interleaved

BATCH = 256
PIPELINES = ("by hand", "by hand, tuned", "tf_dataset")


def main() -> int:
    parser = argparse.ArgumentParser(prog="benchmarks/training.py", description=__doc__)
    parser.add_argument("--rows", type=int, default=400_000)
    parser.add_argument("--size", type=int, default=32, help="the vector's size")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--compression", choices=("none", "gzip"), default="none")
    parser.add_argument("--out", default=str(ROOT / ".cache" / "bench-training"))
    parser.add_argument("--child", help=argparse.SUPPRESS)  # the folder the child reads
    args = parser.parse_args()
    if args.child:
        emit(measure(Path(args.child), args))
        return 0
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

    out = Path(args.out)
    shutil.rmtree(out, ignore_errors=True)
    write(out / "train", args)
    cmd = script("training", "--child", str(out / "train"), "--repeat", str(args.repeat))
    cmd += ["--rows", str(args.rows), "--size", str(args.size)]
    result = run(cmd, env={**os.environ, **QUIET_TF})
    medians = {name: statistics.median(result["runs"][name]) for name in PIPELINES}
    print(
        f"{args.rows:,} records (a vector of {args.size} floats and a label), "
        f"{args.compression}, batches of {BATCH}; TensorFlow {result['version']}, "
        f"{THREADS} threads; median of {args.repeat} epochs after a warm-up"
    )
    print("| pipeline | s / epoch | records/s | tf_dataset's records/s / these | others' cores |")
    print("|---|---:|---:|---:|---:|")
    for name in PIPELINES:
        ratio = medians[name] / medians["tf_dataset"]
        print(
            f"| {name} | {medians[name]:.2f} | {args.rows / medians[name]:,.0f} | {ratio:.2f}x "
            f"| {result['others'][name]:.1f} |"
        )
    shutil.rmtree(out, ignore_errors=True)
    return 0


def write(path: Path, args: argparse.Namespace) -> None:
    """A VectorAssembler-like output: ``features`` (a dense vector) and ``label``, 4 files."""
    from pyspark.ml.functions import array_to_vector

    import spark_tfrecord
    from spark_tfrecord.testing import local_session

    spark = local_session(app_name="bench-training", conf={"spark.driver.memory": "4g"})
    df = spark.range(0, args.rows, 1, 4).selectExpr(
        f"transform(sequence(1, {args.size}), i -> CAST(i * id % 1000 AS DOUBLE) / 7) AS f",
        "CAST(id % 2 AS DOUBLE) AS label",
    )
    df = df.select(array_to_vector("f").alias("features"), "label")
    spark_tfrecord.write(df, str(path), compression=args.compression)
    spark.stop()


def measure(path: Path, args: argparse.Namespace) -> dict[str, Any]:
    """The child's side: each pipeline's epochs into the same training step, timed in turns."""
    import keras
    import tensorflow as tf

    import spark_tfrecord

    tf.get_logger().setLevel("ERROR")
    tf.config.threading.set_inter_op_parallelism_threads(THREADS)
    tf.config.threading.set_intra_op_parallelism_threads(THREADS)
    info = spark_tfrecord.dataset_info(str(path))
    files = [f.path for f in info.files]
    kind = {"none": "", "gzip": "GZIP"}[info.files[0].compression]
    size = args.size

    # What docs/tensorflow.md shows: feature_spec(df.schema) (a vector's spec is an array's),
    # where the vector is ragged and the nullable label sparse; then made dense for Keras, its
    # size hard-coded.
    spec = spark_tfrecord.feature_spec("features array<float>, label double")

    def dense(batch: Any) -> Any:
        features = batch["features"].to_tensor(shape=[None, size])
        return features, tf.sparse.to_dense(batch["label"])[:, 0]

    by_hand = (
        tf.data.TFRecordDataset(files, compression_type=kind)
        .batch(BATCH)
        .map(lambda records: dense(tf.io.parse_example(records, spec)))
    )
    tuned_spec = {
        "features": tf.io.FixedLenFeature([size], tf.float32),
        "label": tf.io.FixedLenFeature([], tf.float32),
    }

    def tuned_parse(records: Any) -> Any:
        parsed = tf.io.parse_example(records, tuned_spec)
        return parsed["features"], parsed["label"]

    tuned = (
        tf.data.TFRecordDataset(files, compression_type=kind, num_parallel_reads=tf.data.AUTOTUNE)
        .batch(BATCH)
        .map(tuned_parse, num_parallel_calls=tf.data.AUTOTUNE)
        .prefetch(tf.data.AUTOTUNE)
    )
    ours = spark_tfrecord.tf_dataset(str(path), label="label", batch_size=BATCH).map(
        lambda features, label: (features["features"], label)
    )

    model = keras.Sequential([keras.Input(shape=(size,)), keras.layers.Dense(1)])
    optimizer = keras.optimizers.SGD(1e-4)

    @tf.function
    def step(x: Any, y: Any) -> Any:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True)[:, 0] - y))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return tf.shape(y)[0]

    def epoch(ds: Any) -> Callable[[], None]:
        def go() -> None:
            seen = 0
            for x, y in ds:
                seen += int(step(x, y))
            if seen != args.rows:
                raise SystemExit(f"an epoch gave {seen} records, not {args.rows}")

        return go

    datasets = {"by hand": by_hand, "by hand, tuned": tuned, "tf_dataset": ours}
    actions = {name: epoch(ds) for name, ds in datasets.items()}
    runs, spent = interleaved(None, args.repeat, actions, warmup=1, rotate=True)
    others = {name: spent[name].others for name in actions}
    return {"runs": runs, "others": others, "version": tf.__version__}


if __name__ == "__main__":
    sys.exit(main())
