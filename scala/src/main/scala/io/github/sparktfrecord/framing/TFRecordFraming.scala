package io.github.sparktfrecord.framing

import java.util.zip.CRC32C

import io.github.sparktfrecord.wire.ProtoWire

/**
 * TFRecord framing, as TensorFlow's `RecordWriter` writes it:
 * {{{
 *   uint64 length            little endian
 *   uint32 masked_crc32c(length bytes)
 *   byte   data[length]
 *   uint32 masked_crc32c(data)
 * }}}
 * The mask keeps a CRC of data that itself contains CRCs from being trivially zero.
 */
private[sparktfrecord] object TFRecordFraming {
  final val HeaderBytes = 12
  final val FooterBytes = 4
  final val OverheadBytes = HeaderBytes + FooterBytes

  /** The largest byte array the JVM reliably allocates: the default `maxRecordBytes`. */
  final val MaxRecordBytes: Int = Int.MaxValue - 64
  private final val MaskDelta = 0xa282ead8

  def mask(crc: Int): Int = ((crc >>> 15) | (crc << 17)) + MaskDelta

  /** The masked CRC32C of `buf[off, off + len)`, computed with a reused `crc`. */
  def maskedCrc(crc: CRC32C, buf: Array[Byte], off: Int, len: Int): Int = {
    crc.reset()
    crc.update(buf, off, len)
    mask(crc.getValue.toInt)
  }

  def writeLongLE(buf: Array[Byte], pos: Int, v: Long): Unit = {
    ProtoWire.writeFixed32(buf, pos, v.toInt)
    ProtoWire.writeFixed32(buf, pos + 4, (v >>> 32).toInt)
  }

  /**
   * Frames the `length` data bytes that already stand at `buf[HeaderBytes, HeaderBytes + length)`:
   * fills the header before them and the footer after them. `buf` must have room for the footer.
   */
  def frame(crc: CRC32C, buf: Array[Byte], length: Int): Int = {
    writeLongLE(buf, 0, length.toLong)
    ProtoWire.writeFixed32(buf, 8, maskedCrc(crc, buf, 0, 8))
    ProtoWire.writeFixed32(buf, HeaderBytes + length, maskedCrc(crc, buf, HeaderBytes, length))
    HeaderBytes + length + FooterBytes
  }
}
