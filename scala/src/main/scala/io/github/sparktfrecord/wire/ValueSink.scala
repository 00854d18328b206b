package io.github.sparktfrecord.wire

/** Receives the values of one feature, in order. */
private[sparktfrecord] abstract class ValueSink {
  def int64(v: Long): Unit
  def float(v: Float): Unit
  def bytes(buf: Array[Byte], off: Int, len: Int): Unit

  /** `count` packed little-endian floats at `buf[off]`; a sink may copy them in one go. */
  def floats(buf: Array[Byte], off: Int, count: Int): Unit = {
    var i = 0
    while (i < count) {
      float(java.lang.Float.intBitsToFloat(ProtoWire.readFixed32(buf, off + 4 * i)))
      i += 1
    }
  }
}
