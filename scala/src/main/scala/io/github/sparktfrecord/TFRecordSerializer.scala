package io.github.sparktfrecord

import java.nio.charset.StandardCharsets.UTF_8

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.SpecializedGetters
import org.apache.spark.sql.catalyst.util.ArrayData
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.Platform
import org.apache.spark.unsafe.types.UTF8String

/**
 * Turns rows into serialized `tf.train.Example` (or `SequenceExample`) messages.
 *
 * One encoder per column is chosen when the serializer is built; per row, a first pass sizes every
 * present feature (protobuf prefixes each message with its length), a second writes them into one
 * reused buffer. The message is written at [[TFRecordFraming.HeaderBytes]] so the framing can be
 * added around it without a copy.
 *
 * In a SequenceExample, `array<array<T>>` columns become feature lists (one Feature per inner
 * array) and all other columns context features.
 */
private[sparktfrecord] final class TFRecordSerializer(schema: StructType, recordType: RecordType)
  extends RecordSerializer {
  import ProtoWire._

  private val numColumns = schema.length
  private val sequence = recordType == RecordType.SequenceExample
  private val keys: Array[Array[Byte]] = schema.fields.map(_.name.getBytes(UTF_8))
  /** Whether column i goes to SequenceExample.feature_lists rather than the features/context. */
  private val inLists: Array[Boolean] = schema.fields.map { f =>
    sequence && (f.dataType match {
      case ArrayType(ArrayType(_, _), _) => true
      case _ => false
    })
  }
  private val encoders: Array[ValueEncoder] = schema.fields.map { f =>
    f.dataType match {
      case ArrayType(step @ ArrayType(_, _), _) if sequence =>
        new FeatureListEncoder(f.name, FeatureEncoder(f.name, step))
      case t => FeatureEncoder(f.name, t)
    }
  }
  /** Per row: the size of each present column's entry value, -1 for a null column. */
  private val valueSizes = new Array[Int](numColumns)

  def serialize(row: InternalRow): Int = {
    var featuresSize = 0L // Example.features, or SequenceExample.context
    var listsSize = 0L // SequenceExample.feature_lists
    var i = 0
    while (i < numColumns) {
      if (row.isNullAt(i)) {
        valueSizes(i) = -1
      } else {
        val valueSize = encoders(i).valueSize(row, i)
        valueSizes(i) = valueSize
        val entrySize = this.entrySize(i, valueSize)
        val fieldSize = 1 + varintSize(entrySize) + entrySize
        if (inLists(i)) listsSize += fieldSize else featuresSize += fieldSize
      }
      i += 1
    }
    val total =
      (if (!sequence || featuresSize > 0) 1 + varintSize(featuresSize) + featuresSize else 0L) +
        (if (listsSize > 0) 1 + varintSize(listsSize) + listsSize else 0L)
    if (total > TFRecordOptions.DefaultMaxRecordBytes - TFRecordFraming.OverheadBytes) {
      throw new IllegalArgumentException(s"Row too large for one TFRecord: $total bytes")
    }
    val buf = reserve(total.toInt)
    var p = TFRecordFraming.HeaderBytes
    if (!sequence || featuresSize > 0) {
      buf(p) = tag(1, WireLengthDelimited).toByte // Example.features / SequenceExample.context
      p = writeVarint(buf, p + 1, featuresSize)
      p = writeEntries(row, buf, p, lists = false)
    }
    if (listsSize > 0) {
      buf(p) = tag(2, WireLengthDelimited).toByte // SequenceExample.feature_lists
      p = writeVarint(buf, p + 1, listsSize)
      p = writeEntries(row, buf, p, lists = true)
    }
    total.toInt
  }

  private def entrySize(column: Int, valueSize: Int): Int = {
    val keyLength = keys(column).length
    2 + varintSize(keyLength) + keyLength + varintSize(valueSize) + valueSize
  }

  /** The map entries { key = 1, value = 2 } of the present columns of one map. */
  private def writeEntries(row: InternalRow, buf: Array[Byte], pos: Int, lists: Boolean): Int = {
    var p = pos
    var i = 0
    while (i < numColumns) {
      val valueSize = valueSizes(i)
      if (valueSize >= 0 && inLists(i) == lists) {
        val key = keys(i)
        buf(p) = tag(1, WireLengthDelimited).toByte // Features.feature / FeatureLists.feature_list
        p = writeVarint(buf, p + 1, entrySize(i, valueSize))
        buf(p) = tag(1, WireLengthDelimited).toByte // key
        p = writeVarint(buf, p + 1, key.length)
        System.arraycopy(key, 0, buf, p, key.length)
        p += key.length
        buf(p) = tag(2, WireLengthDelimited).toByte // value: a Feature or a FeatureList
        p = writeVarint(buf, p + 1, valueSize)
        p = encoders(i).writeValue(row, i, buf, p)
      }
      i += 1
    }
    p
  }
}

/** Serializes a row into a reused buffer, leaving room for the TFRecord framing around it. */
private[sparktfrecord] abstract class RecordSerializer {
  /** The record after [[serialize]]: its data at `[HeaderBytes, HeaderBytes + length)`. */
  var buffer: Array[Byte] = new Array[Byte](1 << 12)

  /** Serializes `row` into [[buffer]] and returns the data length. */
  def serialize(row: InternalRow): Int

  /** Makes room for `length` data bytes plus framing; returns the buffer. */
  protected final def reserve(length: Int): Array[Byte] = {
    val needed = TFRecordFraming.OverheadBytes + length
    if (buffer.length < needed) {
      val grown = math.min(buffer.length * 2L, Int.MaxValue - 8).toInt
      buffer = new Array[Byte](math.max(needed, grown))
    }
    buffer
  }
}

/** `recordType` ByteArray: the one binary column is the record. */
private[sparktfrecord] final class ByteArraySerializer(column: String) extends RecordSerializer {
  def serialize(row: InternalRow): Int = {
    if (row.isNullAt(0)) {
      throw new IllegalArgumentException(
        s"Column '$column' is null in a row: recordType ByteArray writes each value as one " +
          "record and has nothing to write for a null. Filter the nulls out first.")
    }
    val b = row.getBinary(0)
    System.arraycopy(b, 0, reserve(b.length), TFRecordFraming.HeaderBytes, b.length)
    b.length
  }
}

/**
 * Encodes one column's value as the value of a map entry. [[valueSize]] is always called right
 * before [[writeValue]] for the same value, so an encoder may keep what it measured for the write.
 * Values are read through `SpecializedGetters`, so the same encoders serve row columns and the
 * elements of an array (the steps of a feature list).
 */
private[sparktfrecord] abstract class ValueEncoder {
  def valueSize(row: SpecializedGetters, ordinal: Int): Int
  def writeValue(row: SpecializedGetters, ordinal: Int, buf: Array[Byte], pos: Int): Int
}

/** A `FeatureList`: one Feature per element of an array of arrays. */
private[sparktfrecord] final class FeatureListEncoder(column: String, step: FeatureEncoder)
  extends ValueEncoder {
  import ProtoWire._

  def valueSize(row: SpecializedGetters, ordinal: Int): Int = {
    val steps = row.getArray(ordinal)
    val n = steps.numElements()
    var size = 0L
    var i = 0
    while (i < n) {
      if (steps.isNullAt(i)) step.nullElement(i)
      val featureSize = step.valueSize(steps, i)
      size += 1 + varintSize(featureSize) + featureSize
      i += 1
    }
    if (size > Int.MaxValue / 2) {
      throw new IllegalArgumentException(s"Column '$column': $size bytes do not fit in one record")
    }
    size.toInt
  }

  def writeValue(row: SpecializedGetters, ordinal: Int, buf: Array[Byte], pos: Int): Int = {
    val steps = row.getArray(ordinal)
    val n = steps.numElements()
    var p = pos
    var i = 0
    while (i < n) {
      // Measured again: the step encoder keeps what it measured for one value only.
      val featureSize = step.valueSize(steps, i)
      buf(p) = tag(1, WireLengthDelimited).toByte // FeatureList.feature
      p = writeVarint(buf, p + 1, featureSize)
      p = step.writeValue(steps, i, buf, p)
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

  /** The size of the BytesList / FloatList / Int64List message for the value at `ordinal`. */
  def listSize(row: SpecializedGetters, ordinal: Int): Int

  /** Writes the list message's fields; returns the position after them. */
  def writeList(row: SpecializedGetters, ordinal: Int, buf: Array[Byte], pos: Int): Int

  final def valueSize(row: SpecializedGetters, ordinal: Int): Int = {
    val size = listSize(row, ordinal)
    1 + varintSize(size) + size
  }

  /** Writes the whole Feature message: kind tag, list length, list. */
  final def writeValue(row: SpecializedGetters, ordinal: Int, buf: Array[Byte], pos: Int): Int = {
    buf(pos) = tag(kind, WireLengthDelimited).toByte
    val p = writeVarint(buf, pos + 1, lastListSize)
    writeList(row, ordinal, buf, p)
  }

  protected var lastListSize: Int = 0

  protected final def remember(size: Int): Int = {
    lastListSize = size
    size
  }

  /** Size of a packed field (tag, length, payload), nothing when there are no values. */
  protected final def packedSize(payload: Int): Int =
    if (payload == 0) 0 else 1 + varintSize(payload) + payload

  final def nullElement(index: Int): Nothing =
    throw new IllegalArgumentException(
      s"Column '$column' holds an array with a null element at index $index: TFRecord feature " +
        "lists cannot hold nulls. Drop or fill them first (for example with " +
        "filter(x -> x IS NOT NULL) or coalesce).")
}

private[sparktfrecord] object FeatureEncoder {
  import ProtoWire._

  /** The encoder for a column, or an error naming the column when its type has no encoding. */
  def apply(column: String, dataType: DataType): FeatureEncoder = dataType match {
    case LongType | TimestampType | TimestampNTZType =>
      new Int64Scalar(column) { def value(r: SpecializedGetters, i: Int) = r.getLong(i) }
    case IntegerType | DateType =>
      new Int64Scalar(column) { def value(r: SpecializedGetters, i: Int) = r.getInt(i) }
    case ShortType =>
      new Int64Scalar(column) { def value(r: SpecializedGetters, i: Int) = r.getShort(i) }
    case ByteType =>
      new Int64Scalar(column) { def value(r: SpecializedGetters, i: Int) = r.getByte(i) }
    case BooleanType =>
      new Int64Scalar(column) {
        def value(r: SpecializedGetters, i: Int) = if (r.getBoolean(i)) 1L else 0L
      }
    case FloatType =>
      new FloatScalar(column) { def value(r: SpecializedGetters, i: Int) = r.getFloat(i) }
    case DoubleType =>
      new FloatScalar(column) { def value(r: SpecializedGetters, i: Int) = r.getDouble(i).toFloat }
    case d: DecimalType => new FloatScalar(column) {
      def value(r: SpecializedGetters, i: Int) = r.getDecimal(i, d.precision, d.scale).toFloat
    }
    case StringType => new StringScalar(column)
    case BinaryType => new BinaryScalar(column)
    case ArrayType(LongType | TimestampType | TimestampNTZType, _) =>
      new Int64Array(column) { def value(a: ArrayData, i: Int) = a.getLong(i) }
    case ArrayType(IntegerType | DateType, _) =>
      new Int64Array(column) { def value(a: ArrayData, i: Int) = a.getInt(i) }
    case ArrayType(ShortType, _) =>
      new Int64Array(column) { def value(a: ArrayData, i: Int) = a.getShort(i) }
    case ArrayType(ByteType, _) =>
      new Int64Array(column) { def value(a: ArrayData, i: Int) = a.getByte(i) }
    case ArrayType(BooleanType, _) =>
      new Int64Array(column) { def value(a: ArrayData, i: Int) = if (a.getBoolean(i)) 1L else 0L }
    case ArrayType(FloatType, _) =>
      new FloatArray(column) { def value(a: ArrayData, i: Int) = a.getFloat(i) }
    case ArrayType(DoubleType, _) =>
      new FloatArray(column) { def value(a: ArrayData, i: Int) = a.getDouble(i).toFloat }
    case ArrayType(d: DecimalType, _) => new FloatArray(column) {
      def value(a: ArrayData, i: Int) = a.getDecimal(i, d.precision, d.scale).toFloat
    }
    case ArrayType(StringType, _) => new BytesArray(column, binary = false)
    case ArrayType(BinaryType, _) => new BytesArray(column, binary = true)
    case v if TFRecordSchema.isVector(v) => new VectorEncoder(column)
    case other => throw TFRecordSchema.unsupported(column, other, RecordType.SequenceExample)
  }

  /**
   * A Spark ML vector, stored as struct<type: tinyint (0 sparse, 1 dense), size: int,
   * indices: array<int>, values: array<double>>, written as a dense float_list.
   */
  private final class VectorEncoder(column: String) extends FeatureEncoder(column) {
    private var size = 0
    def kind: Int = KindFloat
    def listSize(row: SpecializedGetters, ordinal: Int): Int = {
      val v = row.getStruct(ordinal, 4)
      size = if (v.getByte(0) == 1) v.getArray(3).numElements() else v.getInt(1)
      if (size.toLong * 4 > Int.MaxValue / 2) {
        throw new IllegalArgumentException(s"Column '$column': a vector of $size does not fit")
      }
      remember(packedSize(4 * size))
    }
    def writeList(row: SpecializedGetters, ordinal: Int, buf: Array[Byte], pos: Int): Int = {
      if (size == 0) return pos
      val v = row.getStruct(ordinal, 4)
      val values = v.getArray(3)
      buf(pos) = tag(1, WireLengthDelimited).toByte
      var p = writeVarint(buf, pos + 1, 4 * size)
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

  private abstract class Int64Scalar(column: String) extends FeatureEncoder(column) {
    def value(row: SpecializedGetters, ordinal: Int): Long
    private var v = 0L
    def kind: Int = KindInt64
    def listSize(row: SpecializedGetters, ordinal: Int): Int = {
      v = value(row, ordinal)
      remember(packedSize(varintSize(v)))
    }
    def writeList(row: SpecializedGetters, ordinal: Int, buf: Array[Byte], pos: Int): Int = {
      buf(pos) = tag(1, WireLengthDelimited).toByte
      buf(pos + 1) = varintSize(v).toByte
      writeVarint(buf, pos + 2, v)
    }
  }

  private abstract class FloatScalar(column: String) extends FeatureEncoder(column) {
    def value(row: SpecializedGetters, ordinal: Int): Float
    def kind: Int = KindFloat
    def listSize(row: SpecializedGetters, ordinal: Int): Int = remember(6)
    def writeList(row: SpecializedGetters, ordinal: Int, buf: Array[Byte], pos: Int): Int = {
      buf(pos) = tag(1, WireLengthDelimited).toByte
      buf(pos + 1) = 4
      writeFixed32(buf, pos + 2, java.lang.Float.floatToRawIntBits(value(row, ordinal)))
    }
  }

  private final class StringScalar(column: String) extends FeatureEncoder(column) {
    private var s: UTF8String = _
    def kind: Int = KindBytes
    def listSize(row: SpecializedGetters, ordinal: Int): Int = {
      s = row.getUTF8String(ordinal)
      val n = s.numBytes()
      remember(1 + varintSize(n) + n)
    }
    def writeList(row: SpecializedGetters, ordinal: Int, buf: Array[Byte], pos: Int): Int = {
      buf(pos) = tag(1, WireLengthDelimited).toByte
      val p = writeVarint(buf, pos + 1, s.numBytes())
      s.writeToMemory(buf, Platform.BYTE_ARRAY_OFFSET + p)
      p + s.numBytes()
    }
  }

  private final class BinaryScalar(column: String) extends FeatureEncoder(column) {
    private var b: Array[Byte] = _
    def kind: Int = KindBytes
    def listSize(row: SpecializedGetters, ordinal: Int): Int = {
      b = row.getBinary(ordinal)
      remember(1 + varintSize(b.length) + b.length)
    }
    def writeList(row: SpecializedGetters, ordinal: Int, buf: Array[Byte], pos: Int): Int = {
      buf(pos) = tag(1, WireLengthDelimited).toByte
      val p = writeVarint(buf, pos + 1, b.length)
      System.arraycopy(b, 0, buf, p, b.length)
      p + b.length
    }
  }

  private abstract class Int64Array(column: String) extends FeatureEncoder(column) {
    def value(array: ArrayData, index: Int): Long
    private var payload = 0
    def kind: Int = KindInt64
    def listSize(row: SpecializedGetters, ordinal: Int): Int = {
      val a = row.getArray(ordinal)
      val n = a.numElements()
      var size = 0
      var i = 0
      while (i < n) {
        if (a.isNullAt(i)) nullElement(i)
        size += varintSize(value(a, i))
        i += 1
      }
      payload = size
      remember(packedSize(size))
    }
    def writeList(row: SpecializedGetters, ordinal: Int, buf: Array[Byte], pos: Int): Int = {
      if (payload == 0) return pos
      val a = row.getArray(ordinal)
      val n = a.numElements()
      buf(pos) = tag(1, WireLengthDelimited).toByte
      var p = writeVarint(buf, pos + 1, payload)
      var i = 0
      while (i < n) {
        p = writeVarint(buf, p, value(a, i))
        i += 1
      }
      p
    }
  }

  private abstract class FloatArray(column: String) extends FeatureEncoder(column) {
    def value(array: ArrayData, index: Int): Float
    def kind: Int = KindFloat
    def listSize(row: SpecializedGetters, ordinal: Int): Int = {
      val a = row.getArray(ordinal)
      val n = a.numElements()
      var i = 0
      while (i < n) {
        if (a.isNullAt(i)) nullElement(i)
        i += 1
      }
      if (n.toLong * 4 > Int.MaxValue / 2) {
        throw new IllegalArgumentException(s"Column '$column': $n floats do not fit in one record")
      }
      remember(packedSize(4 * n))
    }
    def writeList(row: SpecializedGetters, ordinal: Int, buf: Array[Byte], pos: Int): Int = {
      val a = row.getArray(ordinal)
      val n = a.numElements()
      if (n == 0) return pos
      buf(pos) = tag(1, WireLengthDelimited).toByte
      var p = writeVarint(buf, pos + 1, 4 * n)
      var i = 0
      while (i < n) {
        p = writeFixed32(buf, p, java.lang.Float.floatToRawIntBits(value(a, i)))
        i += 1
      }
      p
    }
  }

  private final class BytesArray(column: String, binary: Boolean) extends FeatureEncoder(column) {
    def kind: Int = KindBytes
    def listSize(row: SpecializedGetters, ordinal: Int): Int = {
      val a = row.getArray(ordinal)
      val n = a.numElements()
      var size = 0L
      var i = 0
      while (i < n) {
        if (a.isNullAt(i)) nullElement(i)
        val len = if (binary) a.getBinary(i).length else a.getUTF8String(i).numBytes()
        size += 1 + varintSize(len) + len
        i += 1
      }
      if (size > Int.MaxValue / 2) {
        throw new IllegalArgumentException(
          s"Column '$column': $size bytes do not fit in one record")
      }
      remember(size.toInt)
    }
    def writeList(row: SpecializedGetters, ordinal: Int, buf: Array[Byte], pos: Int): Int = {
      val a = row.getArray(ordinal)
      val n = a.numElements()
      var p = pos
      var i = 0
      while (i < n) {
        buf(p) = tag(1, WireLengthDelimited).toByte
        if (binary) {
          val b = a.getBinary(i)
          p = writeVarint(buf, p + 1, b.length)
          System.arraycopy(b, 0, buf, p, b.length)
          p += b.length
        } else {
          val s = a.getUTF8String(i)
          p = writeVarint(buf, p + 1, s.numBytes())
          s.writeToMemory(buf, Platform.BYTE_ARRAY_OFFSET + p)
          p += s.numBytes()
        }
        i += 1
      }
      p
    }
  }
}
