"""The TFRecord format in plain Python: framing and checksums, compression, file systems,
manifests and index files, the schema walk, and the ``Example`` codec.

It imports only the standard library, NumPy and :mod:`spark_tfrecord.errors` (fsspec and the
CRC32C packages when they are used), so that the loaders, the command and Spark's side share it.
"""
