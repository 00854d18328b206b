"""Index files beside data files: ``dir/_name.idx``, one ``<offset> <size>`` line per record.
The format of the ``tfrecord`` package (PyTorch) and NVIDIA DALI; needs neither Spark nor a JVM.
"""

from __future__ import annotations

import os

from spark_tfrecord._format.files.files import INDEX_PREFIX, INDEX_SUFFIX, LocalFiles, index_path

__all__ = ["INDEX_PREFIX", "INDEX_SUFFIX", "index_path", "indexed_files"]


def indexed_files(path: str) -> list[tuple[str, str]]:
    """The data files at ``path`` (a local directory or file) with their indexes, sorted by path.
    Listed as Spark lists them; ``FileNotFoundError`` for a data file without its index.
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
