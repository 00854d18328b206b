"""The closed sets of values the format's options take, as ``Literal`` types: the record types
(the ``recordType`` option) and the codecs TensorFlow reads (``compression``). A leaf, so that
the command line offers them without importing the Spark side."""

from __future__ import annotations

from typing import Literal

RecordType = Literal["Example", "SequenceExample", "ByteArray"]
#: The codecs TensorFlow reads (``TFRecordDataset`` ``compression_type`` "", "GZIP", "ZLIB"). The
#: ``compression`` option also takes aliases, and Hadoop's other codecs with
#: ``allowNonTensorFlowCodec``; these three are what the command line offers.
Compression = Literal["none", "gzip", "deflate"]
