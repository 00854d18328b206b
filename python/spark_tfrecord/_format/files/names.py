"""The ``Literal`` value sets of the format's options; a leaf, so the CLI needs no Spark."""

from __future__ import annotations

from typing import Literal

RecordType = Literal["Example", "SequenceExample", "ByteArray"]
#: The codecs TensorFlow reads; the ``compression`` option also takes aliases and other codecs.
Compression = Literal["none", "gzip", "deflate"]
