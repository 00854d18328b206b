package io.github.sparktfrecord.wire

import org.apache.spark.unsafe.Platform

import io.github.sparktfrecord.WireFormatException

/**
 * How protobuf bytes are read and written, reduced to what `tf.train.Example` and
 * `tf.train.SequenceExample` need: tags, varints, fixed-width numbers and length-delimited fields,
 * on a byte array and positions in it, so that the reader and writer never build protobuf objects.
 * Reading goes through a [[WireCursor]]; how an Example is walked is [[ExampleWalker]]'s.
 *
 * The `Kind…` constants are `Feature.kind`'s field numbers (see [[ExampleWalker]]), shared by the
 * reader, the writer and schema inference.
 */
private[sparktfrecord] object ProtoWire {
  final val WireVarint = 0
  final val WireFixed64 = 1
  final val WireLengthDelimited = 2
  final val WireStartGroup = 3
  final val WireEndGroup = 4
  final val WireFixed32 = 5

  /** `Feature.kind` field numbers, which are also the kinds the schema inferencer tracks. */
  final val KindNone = 0
  final val KindBytes = 1
  final val KindFloat = 2
  final val KindInt64 = 3

  final val KindNames: Array[String] = Array("unset", "bytes_list", "float_list", "int64_list")

  final val VarintTooLong = "varint longer than 10 bytes"

  def tag(field: Int, wireType: Int): Int = (field << 3) | wireType

  /**
   * The bytes of the length-delimited field whose length varint is at `at`, ending at most at
   * `limit`: `(start << 32) | end`; -1 when they do not fit (or the varint is not a length).
   * Never throws: what a reader that gives up on anything unusual needs.
   */
  def delimited(buf: Array[Byte], at: Int, limit: Int): Long = {
    if (at < limit) {
      val b = buf(at)
      if (b >= 0) {
        return if (b <= limit - at - 1) ((at + 1).toLong << 32) | (at + 1 + b) else -1L
      }
      // Two bytes: 128 to 16,383 (a list of 32 floats, and the entry and Feature holding it).
      if (limit - at >= 2) {
        val b1 = buf(at + 1)
        if (b1 >= 0) {
          val len = (b & 0x7f) | (b1 << 7)
          return if (len <= limit - at - 2) ((at + 2).toLong << 32) | (at + 2 + len) else -1L
        }
      }
    }
    longDelimited(buf, at, limit)
  }

  private def longDelimited(buf: Array[Byte], at: Int, limit: Int): Long = {
    var len = 0L
    var p = at
    var shift = 0
    while (p < limit && shift < 35) {
      val b = buf(p)
      p += 1
      len |= (b & 0x7fL) << shift
      if (b >= 0) {
        return if (len <= limit - p) (p.toLong << 32) | (p + len) else -1L
      }
      shift += 7
    }
    -1L
  }

  /** Bytes taken by `value` as an unsigned varint (1 to 10). */
  def varintSize(value: Long): Int = {
    // 64 - leading zeros = significant bits; seven of them per byte, at least one byte.
    val bits = 64 - java.lang.Long.numberOfLeadingZeros(value)
    if (bits == 0) 1 else (bits + 6) / 7
  }

  def varintSize(value: Int): Int = varintSize(value.toLong & 0xffffffffL)

  /**
   * Bytes taken by a length-delimited field of `length` bytes: its tag, its length as a varint, its
   * content. The tag is one byte, as it is for every field number below 16 (all of ours).
   */
  def lengthDelimitedSize(length: Long): Long = 1 + varintSize(length) + length

  /**
   * Writes the one-byte tag of length-delimited field `field` (below 16) and `length` at `pos`;
   * returns the position after them, where the field's `length` bytes go.
   */
  def writeTagAndLength(buf: Array[Byte], pos: Int, field: Int, length: Long): Int = {
    buf(pos) = tag(field, WireLengthDelimited).toByte
    writeVarint(buf, pos + 1, length)
  }

  /** Writes `value` as a varint at `pos`; returns the position after it. */
  def writeVarint(buf: Array[Byte], pos: Int, value: Long): Int = {
    var p = pos
    var v = value
    while ((v & ~0x7fL) != 0L) {
      buf(p) = ((v & 0x7f) | 0x80).toByte
      v >>>= 7
      p += 1
    }
    buf(p) = v.toByte
    p + 1
  }

  def writeFixed32(buf: Array[Byte], pos: Int, value: Int): Int = {
    buf(pos) = value.toByte
    buf(pos + 1) = (value >>> 8).toByte
    buf(pos + 2) = (value >>> 16).toByte
    buf(pos + 3) = (value >>> 24).toByte
    pos + 4
  }

  def readFixed32(buf: Array[Byte], pos: Int): Int = (buf(pos) & 0xff) |
    ((buf(pos + 1) & 0xff) << 8) | ((buf(pos + 2) & 0xff) << 16) |
    ((buf(pos + 3) & 0xff) << 24)

  def readFixed64(buf: Array[Byte], pos: Int): Long =
    (readFixed32(buf, pos).toLong & 0xffffffffL) | (readFixed32(buf, pos + 4).toLong << 32)

  /** Whether the JVM stores numbers little end first, as the wire format does. */
  val LittleEndian: Boolean = java.nio.ByteOrder.nativeOrder == java.nio.ByteOrder.LITTLE_ENDIAN

  /** Whether eight bytes of an array may be read as one little-endian long. */
  val WordReads: Boolean = LittleEndian && Platform.unaligned()

  /** The continuation bits of eight bytes read as one long. */
  final val HighBits = 0x8080808080808080L

  /** The low seven bits of each of eight varint bytes, first byte lowest, joined: 56 bits. */
  def groups(word: Long): Long = {
    var x = word & 0x7f7f7f7f7f7f7f7fL
    x = ((x & 0x7f007f007f007f00L) >>> 1) | (x & 0x007f007f007f007fL)
    x = ((x & 0x3fff00003fff0000L) >>> 2) | (x & 0x00003fff00003fffL)
    ((x & 0x0fffffff00000000L) >>> 4) | (x & 0x000000000fffffffL)
  }

  /** Whether `a[aOff, aOff + len)` and `b[bOff, bOff + len)` hold the same bytes. */
  def sameBytes(a: Array[Byte], aOff: Int, b: Array[Byte], bOff: Int, len: Int): Boolean = {
    var i = 0
    if (WordReads) {
      while (i + 8 <= len) {
        if (Platform.getLong(a, Platform.BYTE_ARRAY_OFFSET + aOff + i) !=
            Platform.getLong(b, Platform.BYTE_ARRAY_OFFSET + bOff + i)) {
          return false
        }
        i += 8
      }
    }
    while (i < len) {
      if (a(aOff + i) != b(bOff + i)) return false
      i += 1
    }
    true
  }

  /** The number of varints in a packed run: every byte without the continuation bit ends one. */
  def countVarints(buf: Array[Byte], from: Int, until: Int): Int = {
    var n = 0
    var p = from
    if (WordReads) {
      val lastWord = math.min(until, buf.length) - 8
      while (p <= lastWord) {
        n += java.lang.Long.bitCount(~Platform.getLong(buf, Platform.BYTE_ARRAY_OFFSET + p) &
          HighBits)
        p += 8
      }
    }
    while (p < until) {
      if (buf(p) >= 0) n += 1
      p += 1
    }
    n
  }
}

/**
 * The read path's one loop over the varints of a packed int64 run, for the fast path's int64
 * columns and the general path's packed runs alike. Its callers have checked that the run's last
 * byte ends a varint, so no varint it reads runs past the run, and it checks no bound. It returns
 * the value and leaves where the varint ends in [[varintEnd]] (-1 past ten bytes), so that the
 * caller keeps its position in a local: a field of the position would be read again after each
 * write into an array, which the JIT cannot tell apart from it.
 */
private[sparktfrecord] abstract class PackedVarints {

  /** Where the varint [[varint]] read last ends; -1 if it is longer than ten bytes. */
  protected final var varintEnd = 0

  /** The varint at `pos` of a packed run that ends on a varint's last byte. */
  protected final def varint(buf: Array[Byte], pos: Int): Long = {
    val b = buf(pos)
    if (b >= 0) { varintEnd = pos + 1; return b }
    var result = b & 0x7fL
    var p = pos + 1
    var shift = 7
    while (shift < 64) {
      val c = buf(p)
      p += 1
      result |= (c & 0x7fL) << shift
      if (c >= 0) { varintEnd = p; return result }
      shift += 7
    }
    varintEnd = -1
    0L
  }

  /** The error of a varint at `pos` longer than ten bytes, at its eleventh, as [[WireCursor]]'s. */
  protected final def tooLong(pos: Int): Nothing =
    throw new WireFormatException(ProtoWire.VarintTooLong, pos + 10)
}

/**
 * A position in a message being decoded, with the bounds it may not cross. One per task; every
 * failure names the byte offset inside the record, which the caller turns into a file offset.
 */
private[sparktfrecord] final class WireCursor {
  import ProtoWire._

  var buf: Array[Byte] = Array.emptyByteArray
  var pos: Int = 0

  /** Reads a varint at `pos` that must end before `limit`. */
  def readVarint(limit: Int): Long = {
    // Tags, lengths and small values are one byte: that case stays small enough to inline.
    if (pos < limit) {
      val b = buf(pos)
      if (b >= 0) {
        pos += 1
        return b
      }
    }
    readLongVarint(limit)
  }

  private def readLongVarint(limit: Int): Long = {
    // Two and three bytes (lengths, ids below 2^21) byte by byte; longer ones eight bytes at once,
    // where the first byte without a continuation bit ends the varint.
    if (limit - pos >= 3) {
      val b1 = buf(pos + 1)
      if (b1 >= 0) {
        val v = (buf(pos) & 0x7fL) | (b1.toLong << 7)
        pos += 2
        return v
      }
      val b2 = buf(pos + 2)
      if (b2 >= 0) {
        val v = (buf(pos) & 0x7fL) | ((b1 & 0x7fL) << 7) | (b2.toLong << 14)
        pos += 3
        return v
      }
    }
    if (WordReads && pos < limit && buf.length - pos >= 8) {
      val word = Platform.getLong(buf, Platform.BYTE_ARRAY_OFFSET + pos)
      val stops = ~word & HighBits
      if (stops != 0) {
        val bytes = (java.lang.Long.numberOfTrailingZeros(stops) >>> 3) + 1
        if (bytes <= limit - pos) {
          pos += bytes
          return groups(word & (-1L >>> (64 - 8 * bytes)))
        }
      } else if (limit - pos >= 9) {
        // Nine or ten bytes (every negative int64 takes ten): the 10th holds the top bit only.
        val b8 = buf(pos + 8)
        if (b8 >= 0) {
          pos += 9
          return groups(word) | (b8.toLong << 56)
        }
        if (limit - pos >= 10 && buf(pos + 9) >= 0) {
          val b9 = buf(pos + 9)
          pos += 10
          return groups(word) | ((b8 & 0x7fL) << 56) | (b9.toLong << 63)
        }
      }
    }
    var result = 0L
    var shift = 0
    while (shift < 64) {
      if (pos >= limit) throw new WireFormatException(s"varint runs past its message", pos)
      val b = buf(pos)
      pos += 1
      result |= (b & 0x7fL) << shift
      if (b >= 0) return result
      shift += 7
    }
    throw new WireFormatException(VarintTooLong, pos)
  }

  /** Reads a length prefix and returns the end of the delimited bytes, checked against `limit`. */
  def readLengthEnd(limit: Int): Int = {
    val start = pos
    val len = readVarint(limit)
    if (len < 0 || len > limit - pos) {
      throw new WireFormatException(s"length $len runs past its message", start)
    }
    pos + len.toInt
  }

  /** Skips the value of a field of `wireType` whose tag was just read. */
  def skipField(wireType: Int, limit: Int): Unit = wireType match {
    case WireVarint => readVarint(limit)
    case WireFixed64 => advance(8, limit)
    case WireLengthDelimited => pos = readLengthEnd(limit)
    case WireFixed32 => advance(4, limit)
    case WireStartGroup => skipGroup(limit)
    case _ => throw new WireFormatException(s"invalid wire type $wireType", pos)
  }

  private def advance(n: Int, limit: Int): Unit = {
    if (limit - pos < n) throw new WireFormatException(s"$n-byte field runs past its message", pos)
    pos += n
  }

  private def skipGroup(limit: Int): Unit = {
    var depth = 1
    while (depth > 0) {
      val t = readVarint(limit).toInt
      (t & 7) match {
        case WireStartGroup => depth += 1
        case WireEndGroup => depth -= 1
        case w => skipField(w, limit)
      }
    }
  }
}
