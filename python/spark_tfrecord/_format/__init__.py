"""The TFRecord format in plain Python, one pipeline in five stages, each a sub-package that
imports only the stages before it (ci/check-python-layers.py): ``files`` → ``frames`` →
``entries`` → ``columns`` → ``datasets``.

It imports only the standard library, NumPy and :mod:`spark_tfrecord.errors` (fsspec and the
CRC32C packages when they are used), so that the loaders, the command and Spark's side share it.
"""
