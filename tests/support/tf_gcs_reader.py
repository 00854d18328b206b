"""Reads a folder with `spark_tfrecord.tf_dataset` from ``gs://``, through TensorFlow's own GCS
file system, and from a local copy, in a Python of its own: TensorFlow takes its GCS settings
from the environment when it first opens a ``gs://`` path, and the test sets them
(`support.gcs_server.tensorflow_env`) for this process alone.

``python -m support.tf_gcs_reader CONFIG`` (JSON: ``env``, ``remote``, ``local``, ``batch_size``)
emits (`emit`) the batches of each read, as lists, and what ``tf.io.gfile`` finds in the remote
folder: its listing, a glob, and the manifest's bytes, as text; and ``feature_spec`` of each.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from support import emit


def batches(dataset: Any) -> list[dict[str, list[Any]]]:
    """The elements of a ``tf_dataset`` (batches of features), as lists; bytes as text."""
    return [
        {
            name: [v.decode() if isinstance(v, bytes) else v for v in tensor.numpy().tolist()]
            for name, tensor in sorted(batch.items())
        }
        for batch in dataset
    ]


def main(config: dict[str, Any]) -> None:
    os.environ.update(config["env"])  # before TensorFlow's GCS file system first starts
    import tensorflow as tf

    import spark_tfrecord

    remote, local, size = config["remote"], config["local"], config["batch_size"]
    emit(
        remote=batches(spark_tfrecord.tf_dataset(remote, batch_size=size)),
        local=batches(spark_tfrecord.tf_dataset(local, batch_size=size)),
        listdir=sorted(tf.io.gfile.listdir(remote)),
        glob=sorted(tf.io.gfile.glob(remote + "/part-*")),
        manifest=tf.io.gfile.GFile(remote + "/_tfrecord_manifest.json").read(),
        specs=[repr(sorted(spark_tfrecord.feature_spec(p).items())) for p in (remote, local)],
    )


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
