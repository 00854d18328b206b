package io.github.sparktfrecord.codec

import java.util.zip.Deflater

import org.apache.spark.sql.catalyst.expressions.SpecializedGetters
import org.apache.spark.sql.catalyst.util.ArrayData

import io.github.sparktfrecord.TFRecordError
import io.github.sparktfrecord.wire.ProtoWire

/**
 * Writes an encoded tensor column ([[FeaturePaths.TensorEncodingKey]], `array<…<T>>` of rank r)
 * as `tfds.features.Tensor(encoding=…)` stores one with a dynamic shape: [[value]], the feature
 * `x/value` (one bytes value: every value's little-endian bytes in C order, zlib-deflated for
 * `zlib`), and [[shape]], `x/shape` (int64, r sizes). The value is flattened once per row, when
 * `x/value` is measured (the serializer measures it before `x/shape`); the buffers and the
 * [[Deflater]] are reused. A row whose arrays are not rectangular, or hold a null, fails naming
 * the column. An empty array's inner sizes are 0.
 */
private[sparktfrecord] final class EncodedTensorEncoder(
    column: String,
    rank: Int,
    element: EncodedTensor.Element,
    zlib: Boolean) {
  import EncodedTensor._
  import ProtoWire._

  private val dims = new Array[Long](rank)
  private var raw = new Array[Byte](64)
  private var rawLength = 0
  private var packed = new Array[Byte](64)
  private var packedLength = 0
  private val deflater: Deflater = if (zlib) new Deflater() else null

  /** The stored bytes of the last measured value: `raw` or its deflated copy. */
  private def stored: Array[Byte] = if (zlib) packed else raw
  private def storedLength: Int = if (zlib) packedLength else rawLength

  private def flatten(array: ArrayData): Unit = {
    java.util.Arrays.fill(dims, -1L)
    rawLength = 0
    walk(array, 0)
    var level = 0
    while (level < rank) {
      if (dims(level) < 0) dims(level) = 0
      level += 1
    }
    if (zlib) {
      deflater.reset()
      deflater.setInput(raw, 0, rawLength)
      deflater.finish()
      packedLength = 0
      while (!deflater.finished()) {
        if (packedLength == packed.length) packed = java.util.Arrays.copyOf(packed,
          RecordSerializer.checkedSize(2L * packed.length, column))
        packedLength += deflater.deflate(packed, packedLength, packed.length - packedLength)
      }
    }
  }

  private def walk(array: ArrayData, level: Int): Unit = {
    val n = array.numElements()
    if (dims(level) < 0) dims(level) = n
    else if (dims(level) != n) {
      fail(s"is not rectangular: its arrays at depth ${level + 1} hold ${dims(level)} and $n " +
        "values")
    }
    var i = 0
    while (i < n) {
      if (array.isNullAt(i)) fail(s"holds a null at depth ${level + 1}")
      i += 1
    }
    if (level < rank - 1) {
      i = 0
      while (i < n) {
        walk(array.getArray(i), level + 1)
        i += 1
      }
    } else values(array, n)
  }

  private def values(array: ArrayData, n: Int): Unit = {
    val size = element.itemSize
    val end = rawLength + n.toLong * size
    if (end > raw.length) {
      raw = java.util.Arrays.copyOf(raw,
        RecordSerializer.checkedSize(math.max(end, 2L * raw.length), column))
    }
    var p = rawLength
    var i = 0
    while (i < n) {
      element.code match {
        case Float32 => p = putLE(p, java.lang.Float.floatToRawIntBits(array.getFloat(i)), 4)
        case Float64 => p = putLE(p, java.lang.Double.doubleToRawLongBits(array.getDouble(i)), 8)
        case Int8 => p = putLE(p, array.getByte(i), 1)
        case Int16 => p = putLE(p, array.getShort(i), 2)
        case Int32 => p = putLE(p, array.getInt(i), 4)
        case Int64 => p = putLE(p, array.getLong(i), 8)
        case UInt8 =>
          val v = array.getShort(i)
          if (v < 0 || v > 255) fail(s"holds $v, which an uint8 tensor cannot hold")
          p = putLE(p, v, 1)
        case _ => p = putLE(p, if (array.getBoolean(i)) 1 else 0, 1)
      }
      i += 1
    }
    rawLength = p
  }

  private def putLE(pos: Int, v: Long, size: Int): Int = {
    var k = 0
    while (k < size) {
      raw(pos + k) = (v >>> (8 * k)).toByte
      k += 1
    }
    pos + size
  }

  private def fail(what: String): Nothing = throw TFRecordError.writeError(
    TFRecordError.DataMismatch, column,
    s"Column '$column' holds an encoded tensor of rank $rank that $what in a row: each " +
      "row's value must be a rectangular array without nulls.")

  /** `x/value`: Feature { bytes_list = 1 { value = 1 } }. */
  val value: ValueEncoder = new ValueEncoder {
    protected def sizeOf(row: SpecializedGetters, ordinal: Int): Int = {
      flatten(row.getArray(ordinal))
      RecordSerializer.checkedSize(lengthDelimitedSize(lengthDelimitedSize(storedLength)),
        column)
    }

    protected def writeMeasured(
        row: SpecializedGetters,
        ordinal: Int,
        size: Int,
        buf: Array[Byte],
        pos: Int): Int = {
      var p = writeTagAndLength(buf, pos, 1, lengthDelimitedSize(storedLength))
      p = writeTagAndLength(buf, p, 1, storedLength)
      System.arraycopy(stored, 0, buf, p, storedLength)
      p + storedLength
    }
  }

  /** `x/shape`: Feature { int64_list = 3 { value = 1 (packed) } }, the last value's sizes. */
  val shape: ValueEncoder = new ValueEncoder {
    private def packedSize: Int = {
      var s = 0
      var level = 0
      while (level < rank) {
        s += varintSize(dims(level))
        level += 1
      }
      s
    }

    measuredValues = rank

    protected def sizeOf(row: SpecializedGetters, ordinal: Int): Int =
      lengthDelimitedSize(lengthDelimitedSize(packedSize)).toInt

    protected def writeMeasured(
        row: SpecializedGetters,
        ordinal: Int,
        size: Int,
        buf: Array[Byte],
        pos: Int): Int = {
      val n = packedSize
      var p = writeTagAndLength(buf, pos, 3, lengthDelimitedSize(n))
      p = writeTagAndLength(buf, p, 1, n)
      var level = 0
      while (level < rank) {
        p = writeVarint(buf, p, dims(level))
        level += 1
      }
      p
    }
  }
}
