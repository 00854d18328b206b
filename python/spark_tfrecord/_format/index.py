"""Index files beside TFRecord files, for trainers that shard a file by record offsets.

The ``writeIndex`` write option (and ``spark-tfrecord index``) writes, for each data file
``dir/name``, the index ``dir/_name.idx``: one line per record, ``<offset> <size>``, the format
of the ``tfrecord`` package (PyTorch) and of NVIDIA DALI. These helpers need neither Spark nor a
JVM, so a trainer can use them with only this package installed.
"""

from __future__ import annotations

import os

#: What the index of data file ``name`` is called: ``_`` + ``name`` + ``.idx``.
INDEX_PREFIX, INDEX_SUFFIX = "_", ".idx"


def index_path(data_file: str) -> str:
    """The path of the index of ``data_file``: ``_<name>.idx`` in the same directory.

    >>> index_path("/data/train/part-00000-1b2c.c000.tfrecord")
    '/data/train/_part-00000-1b2c.c000.tfrecord.idx'
    """
    head, name = os.path.split(data_file)
    return os.path.join(head, INDEX_PREFIX + name + INDEX_SUFFIX)


def indexed_files(path: str) -> list[tuple[str, str]]:
    """The data files under the local directory ``path`` with their indexes, sorted by path.

    Data files are found as Spark finds them: recursively (``name=value`` partition directories
    included), skipping names that start with ``_`` or ``.``. A data file without its index
    raises ``FileNotFoundError`` naming it, so a trainer never silently reads fewer files than
    were written.
    """
    if os.path.isfile(path):
        found = [path]
    else:
        found = []
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith(("_", ".")))
            found += [os.path.join(root, f) for f in files if not f.startswith(("_", "."))]
        if not os.path.isdir(path):
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
