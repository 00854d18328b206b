"""Index files beside TFRecord files, for trainers that shard a file by record offsets.

The ``writeIndex`` write option (and ``spark-tfrecord index``) writes, for each data file
``dir/name``, the index ``dir/_name.idx``: one line per record, ``<offset> <size>``, the format
of the ``tfrecord`` package (PyTorch) and of NVIDIA DALI. These helpers need neither Spark nor a
JVM, so a trainer can use them with only this package installed.
"""

from __future__ import annotations

import os

from spark_tfrecord._format.files.files import INDEX_PREFIX, INDEX_SUFFIX, LocalFiles, index_path

__all__ = ["INDEX_PREFIX", "INDEX_SUFFIX", "index_path", "indexed_files"]


def indexed_files(path: str) -> list[tuple[str, str]]:
    """The data files under the local directory ``path`` with their indexes, sorted by path.

    Data files are found as Spark finds them: recursively (``name=value`` partition directories
    included), skipping names that start with ``_`` or ``.`` and, at the root, a TFDS dataset's
    metadata (``dataset_info.json``, ``features.json``), as :func:`dataset_info` lists them. A
    data file without its index raises ``FileNotFoundError`` naming it, so a trainer never
    silently reads fewer files than were written.
    """
    if os.path.isfile(path):
        found = [path]
    elif os.path.isdir(path):
        files = LocalFiles()
        found = [files.join(path, rel) for rel, _ in files.list_data(path)]
    else:
        raise FileNotFoundError(f"no such file or directory: {path}")
    pairs = []
    for data in sorted(found):
        index = index_path(data)
        if not os.path.isfile(index):
            raise FileNotFoundError(
                f"{data} has no index {index}: write with writeIndex=True, "
                "or run `spark-tfrecord index` on it"
            )
        pairs.append((data, index))
    return pairs
