package io.github.sparktfrecord.codec

import org.apache.spark.sql.catalyst.expressions.{SpecializedGetters, UnsafeRow}
import org.apache.spark.sql.catalyst.util.ArrayData
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.Platform
import org.apache.spark.unsafe.types.UTF8String

import io.github.sparktfrecord.TFRecordError
import io.github.sparktfrecord.wire.ProtoWire

/**
 * Encodes one column's value as the value of a map entry, in two steps per value: [[measure]]
 * returns its size (protobuf prefixes each message with its length) and keeps what the write
 * needs; [[write]] then writes that value. A write of any other value than the one measured last,
 * or of another size than measured, fails loudly. Values are read through `SpecializedGetters`,
 * so the same encoders serve row columns and the elements of an array (the steps of a feature
 * list).
 */
private[sparktfrecord] abstract class ValueEncoder {
  private var measuredRow: SpecializedGetters = _
  private var measuredOrdinal = -1
  /** The number of values of the value measured last (see [[valueCount]]). */
  protected var measuredValues = 1

  /**
   * How many values the value [[measure]] measured last holds, as TensorFlow counts them: the
   * list's length (1 for a scalar). A write's manifest keeps each feature's smallest and largest.
   */
  final def valueCount: Int = measuredValues

  /** The encoded size of the value at `ordinal`. */
  final def measure(row: SpecializedGetters, ordinal: Int): Int = {
    val size = sizeOf(row, ordinal)
    measuredRow = row
    measuredOrdinal = ordinal
    size
  }

  /** Writes the value [[measure]] measured last, `size` bytes at `pos`; returns the end. */
  final def write(
      row: SpecializedGetters,
      ordinal: Int,
      size: Int,
      buf: Array[Byte],
      pos: Int): Int = {
    if ((row ne measuredRow) || ordinal != measuredOrdinal) notMeasured(ordinal)
    measuredRow = null
    val end = writeMeasured(row, ordinal, size, buf, pos)
    if (end - pos != size) mismeasured(end - pos, size)
    end
  }

  // Out of line, so that write() stays small enough to inline.
  private def notMeasured(ordinal: Int): Nothing =
    throw new IllegalStateException(s"ValueEncoder.write of value $ordinal without measure")

  private def mismeasured(written: Int, size: Int): Nothing =
    throw new IllegalStateException(s"ValueEncoder wrote $written bytes, measured $size")

  /** Measures the value at `ordinal`, keeping what [[writeMeasured]] needs. */
  protected def sizeOf(row: SpecializedGetters, ordinal: Int): Int

  /** Writes the value at `ordinal`, which [[sizeOf]] has just measured at `size` bytes. */
  protected def writeMeasured(
      row: SpecializedGetters,
      ordinal: Int,
      size: Int,
      buf: Array[Byte],
      pos: Int): Int
}

/** A `FeatureList`: one Feature per element of an array of arrays. */
private[sparktfrecord] final class FeatureListEncoder(column: String, step: FeatureEncoder)
  extends ValueEncoder {
  import ProtoWire._

  /** The fewest and most values of one step of the list measured last (0, 0 without steps). */
  var stepMin = 0
  var stepMax = 0

  protected def sizeOf(row: SpecializedGetters, ordinal: Int): Int = {
    val steps = row.getArray(ordinal)
    val n = steps.numElements()
    var size = 0L
    var fewest = Int.MaxValue
    var most = 0
    var i = 0
    while (i < n) {
      if (steps.isNullAt(i)) step.nullElement(i)
      size += lengthDelimitedSize(step.measure(steps, i)) // FeatureList.feature
      val c = step.valueCount
      if (c < fewest) fewest = c
      if (c > most) most = c
      i += 1
    }
    measuredValues = n
    stepMin = if (n == 0) 0 else fewest
    stepMax = most
    RecordSerializer.checkedSize(size, column)
  }

  protected def writeMeasured(
      row: SpecializedGetters,
      ordinal: Int,
      size: Int,
      buf: Array[Byte],
      pos: Int): Int = {
    val steps = row.getArray(ordinal)
    val n = steps.numElements()
    var p = pos
    var i = 0
    while (i < n) {
      // Measured again: the step encoder keeps what it measured for one value only.
      val featureSize = step.measure(steps, i)
      p = writeTagAndLength(buf, p, 1, featureSize) // FeatureList.feature
      p = step.write(steps, i, featureSize, buf, p)
      i += 1
    }
    p
  }
}

/** Encodes one value as a `Feature`: its kind, and a BytesList, FloatList or Int64List. */
private[sparktfrecord] abstract class FeatureEncoder(val column: String) extends ValueEncoder {
  import ProtoWire._

  /** `Feature.kind` field number: [[ProtoWire.KindBytes]], `KindFloat` or `KindInt64`. */
  def kind: Int

  /**
   * The size of the BytesList / FloatList / Int64List message for the value at `ordinal`,
   * keeping what [[writeList]] needs. A Long, checked once by the caller: no sum wraps.
   */
  protected def listSize(row: SpecializedGetters, ordinal: Int): Long

  /** Writes the list message's fields just measured; returns the position after them. */
  protected def writeList(row: SpecializedGetters, ordinal: Int, buf: Array[Byte], pos: Int): Int

  private var measuredListSize = 0L

  protected final def sizeOf(row: SpecializedGetters, ordinal: Int): Int = {
    measuredListSize = listSize(row, ordinal)
    RecordSerializer.checkedSize(lengthDelimitedSize(measuredListSize), column)
  }

  /** The whole Feature message: kind tag, list length, list. */
  protected final def writeMeasured(
      row: SpecializedGetters,
      ordinal: Int,
      size: Int,
      buf: Array[Byte],
      pos: Int): Int = {
    writeList(row, ordinal, buf, writeTagAndLength(buf, pos, kind, measuredListSize))
  }

  /** Size of a packed field (tag, length, payload), nothing when there are no values. */
  protected final def packedSize(payload: Long): Long =
    if (payload == 0) 0 else lengthDelimitedSize(payload)

  final def nullElement(index: Int): Nothing =
    throw TFRecordError.writeError(TFRecordError.DataMismatch, column,
      s"Column '$column' holds an array with a null element at index $index: TFRecord feature " +
        "lists cannot hold nulls. Drop or fill them first (for example with " +
        "filter(x -> x IS NOT NULL) or coalesce).")
}

private[sparktfrecord] object FeatureEncoder {
  import ProtoWire._

  /**
   * The encoder for a column: its layout and its values' [[TypeEntry]] from the [[TypeTable]],
   * whose [[TypeEntry.encoder]] picks the encoder class that reads its type's values; an error
   * naming the column when its type has no encoding (a feature list's steps are each encoded by
   * this encoder of their array type, see [[FeatureListEncoder]]).
   */
  def apply(column: String, dataType: DataType): FeatureEncoder =
    TypeTable.column(dataType) match {
      case Some((Layout.Scalar, e)) => e.encoder(column, list = false)
      case Some((Layout.List, e)) => e.encoder(column, list = true)
      case Some((Layout.Vector, _)) => new VectorEncoder(column)
      case _ => throw TFRecordSchema.unsupported(column, dataType, RecordType.SequenceExample)
    }

  /**
   * A Spark ML vector, stored as struct<type: tinyint (0 sparse, 1 dense), size: int,
   * indices: array<int>, values: array<double>>, written as a dense float_list.
   */
  private final class VectorEncoder(column: String) extends FeatureEncoder(column) {
    private var size = 0
    def kind: Int = KindFloat
    def listSize(row: SpecializedGetters, ordinal: Int): Long = {
      val v = row.getStruct(ordinal, 4)
      size = if (v.getByte(0) == 1) v.getArray(3).numElements() else v.getInt(1)
      measuredValues = size
      packedSize(4L * size)
    }
    def writeList(row: SpecializedGetters, ordinal: Int, buf: Array[Byte], pos: Int): Int = {
      if (size == 0) return pos
      val v = row.getStruct(ordinal, 4)
      val values = v.getArray(3)
      var p = writeTagAndLength(buf, pos, 1, 4 * size)
      if (v.getByte(0) == 1) {
        var i = 0
        while (i < size) {
          p = writeFixed32(buf, p, java.lang.Float.floatToRawIntBits(values.getDouble(i).toFloat))
          i += 1
        }
      } else {
        val indices = v.getArray(2)
        val nonZeros = indices.numElements()
        var next = 0
        var i = 0
        while (i < size) {
          val x = if (next < nonZeros && indices.getInt(next) == i) {
            next += 1
            values.getDouble(next - 1).toFloat
          } else 0f
          p = writeFixed32(buf, p, java.lang.Float.floatToRawIntBits(x))
          i += 1
        }
      }
      p
    }
  }

  /**
   * The encoder of one of the three features of a vector written sparse
   * ([[FeaturePaths.VectorParts]]): its positions, its values or its size.
   */
  def sparseVector(column: String, part: Int): FeatureEncoder = part match {
    case FeaturePaths.VectorIndices => new VectorIndicesEncoder(column)
    case FeaturePaths.VectorValues => new VectorValuesEncoder(column)
    case FeaturePaths.VectorSize => new VectorSizeEncoder(column)
  }

  /**
   * The entries a vector writes sparse, from VectorUDT's storage struct<type: tinyint (0 sparse,
   * 1 dense), size: int, indices: array<int>, values: array<double>>: a sparse vector's stored
   * entries as stored (explicit zeros kept, so that it reads back the same), a dense vector's
   * non-zero ones. Non-zero is by bits, so that -0.0 and NaN are kept as values.
   */
  private abstract class SparseVectorPart(column: String) extends FeatureEncoder(column) {
    protected var dense = false
    protected var indices: ArrayData = _
    protected var values: ArrayData = _
    /** Entries: a sparse vector's stored ones; a dense vector's non-zero ones. */
    protected var entries = 0

    protected final def view(row: SpecializedGetters, ordinal: Int): Unit = {
      val v = row.getStruct(ordinal, 4)
      dense = v.getByte(0) == 1
      values = v.getArray(3)
      if (dense) {
        indices = null
        val n = values.numElements()
        var count = 0
        var i = 0
        while (i < n) {
          if (stored(i)) count += 1
          i += 1
        }
        entries = count
      } else {
        indices = v.getArray(2)
        entries = indices.numElements()
      }
      measuredValues = entries
    }

    /** Whether dense value `i` is written: its bits are not those of 0.0. */
    protected final def stored(i: Int): Boolean =
      java.lang.Double.doubleToRawLongBits(values.getDouble(i)) != 0L
  }

  /** `<col>/indices`: the entries' positions, increasing, as a packed int64_list. */
  private final class VectorIndicesEncoder(column: String) extends SparseVectorPart(column) {
    private var payload = 0L
    def kind: Int = KindInt64
    def listSize(row: SpecializedGetters, ordinal: Int): Long = {
      view(row, ordinal)
      var sum = 0L
      if (dense) {
        val n = values.numElements()
        var i = 0
        while (i < n) {
          if (stored(i)) sum += varintSize(i.toLong)
          i += 1
        }
      } else {
        var i = 0
        while (i < entries) {
          sum += varintSize(indices.getInt(i).toLong)
          i += 1
        }
      }
      payload = sum
      packedSize(sum)
    }
    def writeList(row: SpecializedGetters, ordinal: Int, buf: Array[Byte], pos: Int): Int = {
      if (payload == 0) return pos
      var p = writeTagAndLength(buf, pos, 1, payload)
      if (dense) {
        val n = values.numElements()
        var i = 0
        while (i < n) {
          if (stored(i)) p = writeVarint(buf, p, i.toLong)
          i += 1
        }
      } else {
        var i = 0
        while (i < entries) {
          p = writeVarint(buf, p, indices.getInt(i).toLong)
          i += 1
        }
      }
      p
    }
  }

  /** `<col>/values`: the entries' values as a packed float_list (doubles rounded to float). */
  private final class VectorValuesEncoder(column: String) extends SparseVectorPart(column) {
    def kind: Int = KindFloat
    def listSize(row: SpecializedGetters, ordinal: Int): Long = {
      view(row, ordinal)
      packedSize(4L * entries)
    }
    def writeList(row: SpecializedGetters, ordinal: Int, buf: Array[Byte], pos: Int): Int = {
      if (entries == 0) return pos
      var p = writeTagAndLength(buf, pos, 1, 4L * entries)
      val n = values.numElements()
      var i = 0
      while (i < n) {
        if (!dense || stored(i)) {
          p = writeFixed32(buf, p, java.lang.Float.floatToRawIntBits(values.getDouble(i).toFloat))
        }
        i += 1
      }
      p
    }
  }

  /** `<col>/size`: the vector's size, one int64, so that a reader rebuilds it exactly. */
  private final class VectorSizeEncoder(column: String) extends Int64Scalar(column) {
    def listSize(row: SpecializedGetters, ordinal: Int): Long = {
      val v = row.getStruct(ordinal, 4)
      measured(if (v.getByte(0) == 1) v.getArray(3).numElements().toLong else v.getInt(1).toLong)
    }
  }

  /**
   * An int64 scalar. Each type's final subclass reads its value with the getter of its type, so
   * that no value passes through another virtual call.
   */
  private[sparktfrecord] abstract class Int64Scalar(column: String)
    extends FeatureEncoder(column) {
    private var v = 0L
    final def kind: Int = KindInt64
    protected final def measured(value: Long): Long = {
      v = value
      packedSize(varintSize(value))
    }
    final def writeList(row: SpecializedGetters, ordinal: Int, buf: Array[Byte], pos: Int): Int =
      writeVarint(buf, writeTagAndLength(buf, pos, 1, varintSize(v)), v)
  }

  final class LongScalar(column: String) extends Int64Scalar(column) {
    def listSize(row: SpecializedGetters, ordinal: Int): Long = measured(row.getLong(ordinal))
  }

  final class IntScalar(column: String) extends Int64Scalar(column) {
    def listSize(row: SpecializedGetters, ordinal: Int): Long = measured(row.getInt(ordinal))
  }

  final class ShortScalar(column: String) extends Int64Scalar(column) {
    def listSize(row: SpecializedGetters, ordinal: Int): Long = measured(row.getShort(ordinal))
  }

  final class ByteScalar(column: String) extends Int64Scalar(column) {
    def listSize(row: SpecializedGetters, ordinal: Int): Long = measured(row.getByte(ordinal))
  }

  final class BooleanScalar(column: String) extends Int64Scalar(column) {
    def listSize(row: SpecializedGetters, ordinal: Int): Long =
      measured(if (row.getBoolean(ordinal)) 1L else 0L)
  }

  /** A float scalar; each type's final subclass reads its value, as [[Int64Scalar]]'s do. */
  private[sparktfrecord] abstract class FloatScalar(column: String)
    extends FeatureEncoder(column) {
    private var f = 0f
    final def kind: Int = KindFloat
    protected final def measured(value: Float): Long = {
      f = value
      packedSize(4)
    }
    final def writeList(row: SpecializedGetters, ordinal: Int, buf: Array[Byte], pos: Int): Int =
      writeFixed32(buf, writeTagAndLength(buf, pos, 1, 4), java.lang.Float.floatToRawIntBits(f))
  }

  final class FloatValueScalar(column: String) extends FloatScalar(column) {
    def listSize(row: SpecializedGetters, ordinal: Int): Long = measured(row.getFloat(ordinal))
  }

  final class DoubleScalar(column: String) extends FloatScalar(column) {
    def listSize(row: SpecializedGetters, ordinal: Int): Long =
      measured(row.getDouble(ordinal).toFloat)
  }

  final class DecimalScalar(column: String, precision: Int, scale: Int)
    extends FloatScalar(column) {
    def listSize(row: SpecializedGetters, ordinal: Int): Long =
      measured(row.getDecimal(ordinal, precision, scale).toFloat)
  }

  final class StringScalar(column: String) extends FeatureEncoder(column) {
    private var s: UTF8String = _
    def kind: Int = KindBytes
    def listSize(row: SpecializedGetters, ordinal: Int): Long = {
      s = row.getUTF8String(ordinal)
      lengthDelimitedSize(s.numBytes())
    }
    def writeList(row: SpecializedGetters, ordinal: Int, buf: Array[Byte], pos: Int): Int = {
      val p = writeTagAndLength(buf, pos, 1, s.numBytes())
      s.writeToMemory(buf, Platform.BYTE_ARRAY_OFFSET + p)
      p + s.numBytes()
    }
  }

  final class BinaryScalar(column: String) extends FeatureEncoder(column) {
    // Where the value's bytes lie: in an UnsafeRow they are copied from there (no array is made
    // for them), else from the array that getBinary returns.
    private var base: AnyRef = _
    private var offset = 0L
    private var length = 0
    def kind: Int = KindBytes
    def listSize(row: SpecializedGetters, ordinal: Int): Long = {
      row match {
        case unsafe: UnsafeRow =>
          val slot = unsafe.getLong(ordinal)
          base = unsafe.getBaseObject
          offset = UnsafeSlot.offset(unsafe.getBaseOffset, slot)
          length = UnsafeSlot.size(slot)
        case _ =>
          val b = row.getBinary(ordinal)
          base = b
          offset = Platform.BYTE_ARRAY_OFFSET
          length = b.length
      }
      lengthDelimitedSize(length)
    }
    def writeList(row: SpecializedGetters, ordinal: Int, buf: Array[Byte], pos: Int): Int = {
      val p = writeTagAndLength(buf, pos, 1, length)
      Platform.copyMemory(base, offset, buf, Platform.BYTE_ARRAY_OFFSET + p, length)
      base = null
      p + length
    }
  }

  /**
   * An int64 list. The loops over the elements are each type's final subclass's, which reads
   * them with the getter of its type: no element passes through another virtual call.
   */
  private[sparktfrecord] abstract class Int64Array(column: String)
    extends FeatureEncoder(column) {
    private var payload = 0L
    final def kind: Int = KindInt64

    /** The varints' bytes of the `n` elements of `a`; an error at a null element. */
    protected def payloadOf(a: ArrayData, n: Int): Long

    /** Writes the `n` elements of `a` as varints at `pos`; returns the end. */
    protected def writeValues(a: ArrayData, n: Int, buf: Array[Byte], pos: Int): Int

    final def listSize(row: SpecializedGetters, ordinal: Int): Long = {
      val a = row.getArray(ordinal)
      measuredValues = a.numElements()
      payload = payloadOf(a, measuredValues)
      packedSize(payload)
    }
    final def writeList(row: SpecializedGetters, ordinal: Int, buf: Array[Byte], pos: Int): Int = {
      if (payload == 0) return pos
      val a = row.getArray(ordinal)
      writeValues(a, a.numElements(), buf, writeTagAndLength(buf, pos, 1, payload))
    }
  }

  final class LongArray(column: String) extends Int64Array(column) {
    protected def payloadOf(a: ArrayData, n: Int): Long = {
      var size = 0L
      var i = 0
      while (i < n) {
        if (a.isNullAt(i)) nullElement(i)
        size += varintSize(a.getLong(i))
        i += 1
      }
      size
    }
    protected def writeValues(a: ArrayData, n: Int, buf: Array[Byte], pos: Int): Int = {
      var p = pos
      var i = 0
      while (i < n) {
        p = writeVarint(buf, p, a.getLong(i))
        i += 1
      }
      p
    }
  }

  final class IntArray(column: String) extends Int64Array(column) {
    protected def payloadOf(a: ArrayData, n: Int): Long = {
      var size = 0L
      var i = 0
      while (i < n) {
        if (a.isNullAt(i)) nullElement(i)
        size += varintSize(a.getInt(i).toLong)
        i += 1
      }
      size
    }
    protected def writeValues(a: ArrayData, n: Int, buf: Array[Byte], pos: Int): Int = {
      var p = pos
      var i = 0
      while (i < n) {
        p = writeVarint(buf, p, a.getInt(i).toLong)
        i += 1
      }
      p
    }
  }

  final class ShortArray(column: String) extends Int64Array(column) {
    protected def payloadOf(a: ArrayData, n: Int): Long = {
      var size = 0L
      var i = 0
      while (i < n) {
        if (a.isNullAt(i)) nullElement(i)
        size += varintSize(a.getShort(i).toLong)
        i += 1
      }
      size
    }
    protected def writeValues(a: ArrayData, n: Int, buf: Array[Byte], pos: Int): Int = {
      var p = pos
      var i = 0
      while (i < n) {
        p = writeVarint(buf, p, a.getShort(i).toLong)
        i += 1
      }
      p
    }
  }

  final class ByteArray(column: String) extends Int64Array(column) {
    protected def payloadOf(a: ArrayData, n: Int): Long = {
      var size = 0L
      var i = 0
      while (i < n) {
        if (a.isNullAt(i)) nullElement(i)
        size += varintSize(a.getByte(i).toLong)
        i += 1
      }
      size
    }
    protected def writeValues(a: ArrayData, n: Int, buf: Array[Byte], pos: Int): Int = {
      var p = pos
      var i = 0
      while (i < n) {
        p = writeVarint(buf, p, a.getByte(i).toLong)
        i += 1
      }
      p
    }
  }

  /** Booleans are 0 or 1: one byte each. */
  final class BooleanArray(column: String) extends Int64Array(column) {
    protected def payloadOf(a: ArrayData, n: Int): Long = {
      var i = 0
      while (i < n) {
        if (a.isNullAt(i)) nullElement(i)
        i += 1
      }
      n
    }
    protected def writeValues(a: ArrayData, n: Int, buf: Array[Byte], pos: Int): Int = {
      var i = 0
      while (i < n) {
        buf(pos + i) = if (a.getBoolean(i)) 1 else 0
        i += 1
      }
      pos + n
    }
  }

  /** A float list; its final subclasses loop over the elements, as [[Int64Array]]'s do. */
  private[sparktfrecord] abstract class FloatArray(column: String)
    extends FeatureEncoder(column) {
    final def kind: Int = KindFloat

    /** Writes the `n` elements of `a` as little-endian floats at `pos`; returns the end. */
    protected def writeValues(a: ArrayData, n: Int, buf: Array[Byte], pos: Int): Int

    final def listSize(row: SpecializedGetters, ordinal: Int): Long = {
      val a = row.getArray(ordinal)
      val n = a.numElements()
      var i = 0
      while (i < n) {
        if (a.isNullAt(i)) nullElement(i)
        i += 1
      }
      measuredValues = n
      packedSize(4L * n)
    }
    final def writeList(row: SpecializedGetters, ordinal: Int, buf: Array[Byte], pos: Int): Int = {
      val a = row.getArray(ordinal)
      val n = a.numElements()
      if (n == 0) pos else writeValues(a, n, buf, writeTagAndLength(buf, pos, 1, 4 * n))
    }
  }

  final class FloatValueArray(column: String) extends FloatArray(column) {
    protected def writeValues(a: ArrayData, n: Int, buf: Array[Byte], pos: Int): Int = {
      var p = pos
      var i = 0
      while (i < n) {
        p = writeFixed32(buf, p, java.lang.Float.floatToRawIntBits(a.getFloat(i)))
        i += 1
      }
      p
    }
  }

  final class DoubleArray(column: String) extends FloatArray(column) {
    protected def writeValues(a: ArrayData, n: Int, buf: Array[Byte], pos: Int): Int = {
      var p = pos
      var i = 0
      while (i < n) {
        p = writeFixed32(buf, p, java.lang.Float.floatToRawIntBits(a.getDouble(i).toFloat))
        i += 1
      }
      p
    }
  }

  final class DecimalArray(column: String, precision: Int, scale: Int)
    extends FloatArray(column) {
    protected def writeValues(a: ArrayData, n: Int, buf: Array[Byte], pos: Int): Int = {
      var p = pos
      var i = 0
      while (i < n) {
        val f = a.getDecimal(i, precision, scale).toFloat
        p = writeFixed32(buf, p, java.lang.Float.floatToRawIntBits(f))
        i += 1
      }
      p
    }
  }

  final class BytesArray(column: String, binary: Boolean) extends FeatureEncoder(column) {
    def kind: Int = KindBytes
    def listSize(row: SpecializedGetters, ordinal: Int): Long = {
      val a = row.getArray(ordinal)
      val n = a.numElements()
      measuredValues = n
      var size = 0L
      var i = 0
      while (i < n) {
        if (a.isNullAt(i)) nullElement(i)
        size += lengthDelimitedSize(
          if (binary) a.getBinary(i).length else a.getUTF8String(i).numBytes())
        i += 1
      }
      size
    }
    def writeList(row: SpecializedGetters, ordinal: Int, buf: Array[Byte], pos: Int): Int = {
      val a = row.getArray(ordinal)
      val n = a.numElements()
      var p = pos
      var i = 0
      while (i < n) {
        if (binary) {
          val b = a.getBinary(i)
          p = writeTagAndLength(buf, p, 1, b.length)
          System.arraycopy(b, 0, buf, p, b.length)
          p += b.length
        } else {
          val s = a.getUTF8String(i)
          p = writeTagAndLength(buf, p, 1, s.numBytes())
          s.writeToMemory(buf, Platform.BYTE_ARRAY_OFFSET + p)
          p += s.numBytes()
        }
        i += 1
      }
      p
    }
  }
}
