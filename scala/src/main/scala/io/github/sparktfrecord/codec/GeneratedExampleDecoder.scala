package io.github.sparktfrecord.codec

import org.apache.spark.sql.catalyst.expressions.{UnsafeArrayData, UnsafeRow}
import org.apache.spark.sql.catalyst.expressions.codegen.{UnsafeArrayWriter, UnsafeRowWriter}
import org.apache.spark.unsafe.Platform

import io.github.sparktfrecord.{TFRecordDataException, WireFormatException}
import io.github.sparktfrecord.wire.{FeatureOrder, ProtoWire}

/**
 * What the decoder generated for one flat Example schema ([[ExampleDecoderGenerator]]) extends:
 * the generated code walks the record's map entries with its cursor in locals, recognises each
 * name by its position in the previous record, and calls, for each wanted column, the helper
 * below for the column's type and shape, with the column's writer. Nothing is dispatched per
 * value.
 *
 * The helpers read the usual Feature only: one list message of the column's kind holding one
 * `value` field (packed numbers, as TensorFlow writes them), or a bytes list of plain values.
 * They return false, having written nothing, for anything else (several lists, unpacked values,
 * another kind, an empty feature), and the generated code hands that feature over to the
 * `interpreter`, which then reads it, or fails on it, exactly as it would have. They also return
 * false on a value the column cannot hold, having perhaps begun an array: the interpreter then
 * fails on the same value, and the row is not used.
 *
 * The interpreter's row writer, array writers and per-record state are shared: a record laid out
 * in any unusual way is read by the interpreter whole.
 */
private[sparktfrecord] abstract class GeneratedExampleDecoder(
    val interpreter: TFRecordDeserializer,
    path: String) extends RowDecoder {
  import GeneratedExampleDecoder._

  final val rowWriter: UnsafeRowWriter = interpreter.rowWriter

  /** Column `i`'s array writer (null for a scalar). */
  final def arrayWriter(i: Int): UnsafeArrayWriter = interpreter.decoders(i).arrayWriter

  /**
   * Learned by position in the record, for names of up to eight bytes: the name's length (-1:
   * none learned), its bytes as a little-endian word, the mask of those bytes, and its column (-1:
   * unwanted). Read by the generated code; longer names go through [[learn]] every time.
   */
  var lengths: Array[Int] = Array.fill(16)(-1)
  var words: Array[Long] = new Array[Long](16)
  var masks: Array[Long] = new Array[Long](16)
  var ids: Array[Int] = new Array[Int](16)
  private val order = new FeatureOrder(interpreter.index)

  /**
   * Reads the record `buf[start, end)` into the row begun by [[begin]]; false when the
   * Example's own fields are laid out in a way it leaves to the interpreter.
   */
  protected def decodeRecord(buf: Array[Byte], start: Int, end: Int, offset: Long): Boolean

  final def deserialize(buf: Array[Byte], start: Int, end: Int, offset: Long): UnsafeRow = {
    val done =
      try decodeRecord(buf, start, end, offset)
      catch {
        case e: WireFormatException =>
          throw TFRecordDataException.malformed(e, false, path, offset, start)
      }
    if (done) interpreter.endRecord() else interpreter.deserialize(buf, start, end, offset)
  }

  final def corruptRow(buf: Array[Byte], start: Int, end: Int): UnsafeRow =
    interpreter.corruptRow(buf, start, end)

  /** A new row; the stamp that marks the columns it sets in `interpreter.seen`. */
  protected final def begin(offset: Long): Int = interpreter.beginRecord(offset)

  /** Any field of the Features message at `pos` but a usual map entry: the interpreter's. */
  protected final def otherField(buf: Array[Byte], pos: Int, end: Int): Int =
    interpreter.decodeField(buf, pos, end)

  /** The Feature `buf[start, end)` into column `ordinal`, as the interpreter reads it. */
  protected final def fallback(
      ordinal: Int,
      buf: Array[Byte],
      start: Int,
      end: Int,
      offset: Long): Unit =
    interpreter.decodeFeature(ordinal, buf, start, end, offset)

  /**
   * The column of the name `buf[off, off + len)` at `position` of the record, when the generated
   * code did not recognise it from [[lengths]]: learned for the next record.
   */
  protected final def learn(position: Int, buf: Array[Byte], off: Int, len: Int): Int = {
    val id = order.at(position, buf, off, len)
    if (len <= 8 && position < FeatureOrder.MaxPositions) {
      if (position >= lengths.length) grow(position + 1)
      var word = 0L
      var i = 0
      while (i < len) { word |= (buf(off + i) & 0xffL) << (8 * i); i += 1 }
      lengths(position) = len
      words(position) = word
      masks(position) = if (len == 0) 0L else -1L >>> (64 - 8 * len)
      ids(position) = id
    }
    id
  }

  private def grow(size: Int): Unit = {
    val n = math.max(size, lengths.length * 2)
    val old = lengths.length
    lengths = java.util.Arrays.copyOf(lengths, n)
    java.util.Arrays.fill(lengths, old, n, -1)
    words = java.util.Arrays.copyOf(words, n)
    masks = java.util.Arrays.copyOf(masks, n)
    ids = java.util.Arrays.copyOf(ids, n)
  }

  /**
   * The bytes of the length-delimited field whose length varint is at `at`, ending at most at
   * `limit`: `(start << 32) | end`; -1 when they do not fit (or the varint is not a length).
   */
  protected final def delimited(buf: Array[Byte], at: Int, limit: Int): Long = {
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

  /**
   * The list message of the usual Feature `buf[start, end)`: one list of the kind whose tag is
   * `kindTag`, filling the Feature, not empty; `(start << 32) | end`, else -1.
   */
  private def list(kindTag: Int, buf: Array[Byte], start: Int, end: Int): Long = {
    if (end - start < 3 || buf(start) != kindTag) return -1L
    val l = delimited(buf, start + 1, end)
    if (l.toInt != end || (l >>> 32).toInt == end) -1L else l
  }

  /** The one `value` field filling the usual Feature's list, not empty: as [[list]], else -1. */
  private def field(kindTag: Int, buf: Array[Byte], start: Int, end: Int): Long = {
    val l = list(kindTag, buf, start, end)
    if (l < 0) return -1L
    val from = (l >>> 32).toInt
    if (buf(from) != ValueTag) return -1L
    val f = delimited(buf, from + 1, end)
    if (f.toInt != end || (f >>> 32).toInt == end) -1L else f
  }

  /**
   * The packed int64 run of the usual Feature: `(start << 32) | end`, else -1 (also when it does
   * not end on a varint's last byte, which the interpreter reports).
   */
  private def int64Run(buf: Array[Byte], start: Int, end: Int): Long = {
    val f = field(Int64Tag, buf, start, end)
    if (f < 0 || buf(f.toInt - 1) < 0) -1L else f
  }

  /** Set by [[varint]]: where the varint it read ends; -1 if it is longer than ten bytes. */
  private var varintEnd = 0

  /** The varint at `pos`, which ends before `end` (the run's last byte ends one). */
  private def varint(buf: Array[Byte], pos: Int, end: Int): Long = {
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

  /** The one varint of a scalar's run, else false (no value written). */
  private def scalarInt64(buf: Array[Byte], start: Int, end: Int): Boolean = {
    val f = int64Run(buf, start, end)
    if (f < 0) return false
    scalarValue = varint(buf, (f >>> 32).toInt, f.toInt)
    varintEnd == f.toInt
  }

  /** The value [[scalarInt64]] read. */
  private var scalarValue = 0L

  final def scalarLong(ordinal: Int, buf: Array[Byte], start: Int, end: Int): Boolean =
    scalarInt64(buf, start, end) && { rowWriter.write(ordinal, scalarValue); true }

  final def scalarInt(ordinal: Int, buf: Array[Byte], start: Int, end: Int): Boolean =
    scalarInt64(buf, start, end) && scalarValue == scalarValue.toInt && {
      rowWriter.write(ordinal, scalarValue.toInt); true
    }

  final def scalarShort(ordinal: Int, buf: Array[Byte], start: Int, end: Int): Boolean =
    scalarInt64(buf, start, end) && scalarValue == scalarValue.toShort && {
      rowWriter.write(ordinal, scalarValue.toShort); true
    }

  final def scalarByte(ordinal: Int, buf: Array[Byte], start: Int, end: Int): Boolean =
    scalarInt64(buf, start, end) && scalarValue == scalarValue.toByte && {
      rowWriter.write(ordinal, scalarValue.toByte); true
    }

  final def scalarBoolean(ordinal: Int, buf: Array[Byte], start: Int, end: Int): Boolean =
    scalarInt64(buf, start, end) && (scalarValue == 0L || scalarValue == 1L) && {
      rowWriter.write(ordinal, scalarValue == 1L); true
    }

  final def scalarFloat(ordinal: Int, buf: Array[Byte], start: Int, end: Int): Boolean = {
    val f = field(FloatTag, buf, start, end)
    if (f < 0 || f.toInt - (f >>> 32).toInt != 4) return false
    rowWriter.write(ordinal, Platform.getFloat(buf, Platform.BYTE_ARRAY_OFFSET + (f >>> 32)))
    true
  }

  final def scalarDouble(ordinal: Int, buf: Array[Byte], start: Int, end: Int): Boolean = {
    val f = field(FloatTag, buf, start, end)
    if (f < 0 || f.toInt - (f >>> 32).toInt != 4) return false
    rowWriter.write(ordinal,
      Platform.getFloat(buf, Platform.BYTE_ARRAY_OFFSET + (f >>> 32)).toDouble)
    true
  }

  /** A string or binary scalar: one bytes value (not empty). */
  final def scalarBytes(ordinal: Int, buf: Array[Byte], start: Int, end: Int): Boolean = {
    val f = field(BytesTag, buf, start, end)
    if (f < 0) return false
    val from = (f >>> 32).toInt
    rowWriter.write(ordinal, buf, from, f.toInt - from)
    true
  }

  /**
   * The packed run of an int64 array column, counted and its array begun: the run's start, or -1.
   * The writer's cursor before the array is left in [[arrayStart]].
   */
  private def beginInt64Array(aw: UnsafeArrayWriter, buf: Array[Byte], start: Int, end: Int)
      : Int = {
    val f = int64Run(buf, start, end)
    if (f < 0) return -1
    val from = (f >>> 32).toInt
    arrayStart = rowWriter.cursor()
    aw.initialize(ProtoWire.countVarints(buf, from, f.toInt))
    from
  }

  /** The row writer's cursor where the array being written starts. */
  private var arrayStart = 0

  private def endArray(ordinal: Int): Boolean = {
    rowWriter.setOffsetAndSizeFromPreviousCursor(ordinal, arrayStart)
    true
  }

  final def arrayLong(
      aw: UnsafeArrayWriter,
      ordinal: Int,
      buf: Array[Byte],
      start: Int,
      end: Int): Boolean = {
    var p = beginInt64Array(aw, buf, start, end)
    if (p < 0) return false
    var i = 0
    while (p < end) {
      val b = buf(p)
      if (b >= 0) { aw.write(i, b.toLong); p += 1 }
      else {
        val v = varint(buf, p, end)
        if (varintEnd < 0) return false
        aw.write(i, v)
        p = varintEnd
      }
      i += 1
    }
    endArray(ordinal)
  }

  final def arrayInt(
      aw: UnsafeArrayWriter,
      ordinal: Int,
      buf: Array[Byte],
      start: Int,
      end: Int): Boolean = {
    var p = beginInt64Array(aw, buf, start, end)
    if (p < 0) return false
    var i = 0
    while (p < end) {
      val b = buf(p)
      if (b >= 0) { aw.write(i, b.toInt); p += 1 }
      else {
        val v = varint(buf, p, end)
        if (varintEnd < 0 || v != v.toInt) return false
        aw.write(i, v.toInt)
        p = varintEnd
      }
      i += 1
    }
    endArray(ordinal)
  }

  final def arrayShort(
      aw: UnsafeArrayWriter,
      ordinal: Int,
      buf: Array[Byte],
      start: Int,
      end: Int): Boolean = {
    var p = beginInt64Array(aw, buf, start, end)
    if (p < 0) return false
    var i = 0
    while (p < end) {
      val v = varint(buf, p, end)
      if (varintEnd < 0 || v != v.toShort) return false
      aw.write(i, v.toShort)
      p = varintEnd
      i += 1
    }
    endArray(ordinal)
  }

  final def arrayByte(
      aw: UnsafeArrayWriter,
      ordinal: Int,
      buf: Array[Byte],
      start: Int,
      end: Int): Boolean = {
    var p = beginInt64Array(aw, buf, start, end)
    if (p < 0) return false
    var i = 0
    while (p < end) {
      val v = varint(buf, p, end)
      if (varintEnd < 0 || v != v.toByte) return false
      aw.write(i, v.toByte)
      p = varintEnd
      i += 1
    }
    endArray(ordinal)
  }

  final def arrayBoolean(
      aw: UnsafeArrayWriter,
      ordinal: Int,
      buf: Array[Byte],
      start: Int,
      end: Int): Boolean = {
    var p = beginInt64Array(aw, buf, start, end)
    if (p < 0) return false
    var i = 0
    while (p < end) {
      val b = buf(p)
      if (b != 0 && b != 1) return false
      aw.write(i, b == 1)
      p += 1
      i += 1
    }
    endArray(ordinal)
  }

  /** A float array: the packed little-endian floats copied into the array in one go. */
  final def arrayFloat(
      aw: UnsafeArrayWriter,
      ordinal: Int,
      buf: Array[Byte],
      start: Int,
      end: Int): Boolean = {
    val f = field(FloatTag, buf, start, end)
    if (f < 0) return false
    val from = (f >>> 32).toInt
    val len = f.toInt - from
    if ((len & 3) != 0) return false
    val count = len >> 2
    arrayStart = rowWriter.cursor()
    val elementsAt = aw.cursor() + UnsafeArrayData.calculateHeaderPortionInBytes(count)
    aw.initialize(count)
    Platform.copyMemory(buf, Platform.BYTE_ARRAY_OFFSET + from, aw.getBuffer, elementsAt, len)
    endArray(ordinal)
  }

  final def arrayDouble(
      aw: UnsafeArrayWriter,
      ordinal: Int,
      buf: Array[Byte],
      start: Int,
      end: Int): Boolean = {
    val f = field(FloatTag, buf, start, end)
    if (f < 0) return false
    val from = (f >>> 32).toInt
    val len = f.toInt - from
    if ((len & 3) != 0) return false
    val count = len >> 2
    arrayStart = rowWriter.cursor()
    aw.initialize(count)
    var i = 0
    while (i < count) {
      aw.write(i, Platform.getFloat(buf, Platform.BYTE_ARRAY_OFFSET + from + 4 * i).toDouble)
      i += 1
    }
    endArray(ordinal)
  }

  /** A string or binary array: a bytes list of plain `value` fields, counted, then copied. */
  final def arrayBytes(
      aw: UnsafeArrayWriter,
      ordinal: Int,
      buf: Array[Byte],
      start: Int,
      end: Int): Boolean = {
    val l = list(BytesTag, buf, start, end)
    if (l < 0) return false
    val from = (l >>> 32).toInt
    var p = from
    var count = 0
    while (p < end) {
      if (buf(p) != ValueTag) return false
      val v = delimited(buf, p + 1, end)
      if (v < 0) return false
      p = v.toInt
      count += 1
    }
    arrayStart = rowWriter.cursor()
    aw.initialize(count)
    p = from
    var i = 0
    while (i < count) {
      val v = delimited(buf, p + 1, end)
      val s = (v >>> 32).toInt
      aw.write(i, buf, s, v.toInt - s)
      p = v.toInt
      i += 1
    }
    endArray(ordinal)
  }
}

private[sparktfrecord] object GeneratedExampleDecoder {
  import ProtoWire._

  // The one-byte tags of the Feature kinds' list messages and of a list's `value` field.
  final val BytesTag = (KindBytes << 3) | WireLengthDelimited
  final val FloatTag = (KindFloat << 3) | WireLengthDelimited
  final val Int64Tag = (KindInt64 << 3) | WireLengthDelimited
  final val ValueTag = (1 << 3) | WireLengthDelimited
}
