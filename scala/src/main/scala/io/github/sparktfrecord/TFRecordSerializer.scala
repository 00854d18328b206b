package io.github.sparktfrecord

import java.nio.charset.StandardCharsets.UTF_8

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.util.ArrayData
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.Platform
import org.apache.spark.unsafe.types.UTF8String

/**
 * Turns rows into serialized `tf.train.Example` messages.
 *
 * One [[FeatureEncoder]] per column is chosen when the serializer is built; per row, a first pass
 * sizes every present feature (protobuf prefixes each message with its length), a second writes
 * them into one reused buffer. The message is written at [[TFRecordFraming.HeaderBytes]] so the
 * framing can be added around it without a copy.
 */
private[sparktfrecord] final class TFRecordSerializer(schema: StructType)
  extends RecordSerializer {
  import ProtoWire._

  private val numColumns = schema.length
  private val keys: Array[Array[Byte]] = schema.fields.map(_.name.getBytes(UTF_8))
  private val encoders: Array[FeatureEncoder] =
    schema.fields.map(f => FeatureEncoder(f.name, f.dataType))
  /** Per row: the size of each present column's Feature message, -1 for a null column. */
  private val featureSizes = new Array[Int](numColumns)

  def serialize(row: InternalRow): Int = {
    var featuresSize = 0L
    var i = 0
    while (i < numColumns) {
      if (row.isNullAt(i)) {
        featureSizes(i) = -1
      } else {
        val enc = encoders(i)
        val listSize = enc.listSize(row, i)
        val featureSize = 1 + varintSize(listSize) + listSize
        featureSizes(i) = featureSize
        val entrySize = 2 + varintSize(keys(i).length) + keys(i).length +
          varintSize(featureSize) + featureSize
        featuresSize += 1 + varintSize(entrySize) + entrySize
      }
      i += 1
    }
    val total = 1 + varintSize(featuresSize) + featuresSize
    if (total > TFRecordOptions.DefaultMaxRecordBytes - TFRecordFraming.OverheadBytes) {
      throw new IllegalArgumentException(s"Row too large for one TFRecord: $total bytes")
    }
    val buf = reserve(total.toInt)
    var p = TFRecordFraming.HeaderBytes
    buf(p) = tag(1, WireLengthDelimited).toByte // Example.features
    p = writeVarint(buf, p + 1, featuresSize)
    i = 0
    while (i < numColumns) {
      val featureSize = featureSizes(i)
      if (featureSize >= 0) {
        val key = keys(i)
        val entrySize = 2 + varintSize(key.length) + key.length + varintSize(featureSize) + featureSize
        buf(p) = tag(1, WireLengthDelimited).toByte // Features.feature (a map entry)
        p = writeVarint(buf, p + 1, entrySize)
        buf(p) = tag(1, WireLengthDelimited).toByte // entry key
        p = writeVarint(buf, p + 1, key.length)
        System.arraycopy(key, 0, buf, p, key.length)
        p += key.length
        buf(p) = tag(2, WireLengthDelimited).toByte // entry value: the Feature
        p = writeVarint(buf, p + 1, featureSize)
        p = encoders(i).writeFeature(row, i, buf, p)
      }
      i += 1
    }
    total.toInt
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
      buffer = new Array[Byte](math.max(needed, math.min(buffer.length * 2L, Int.MaxValue - 8).toInt))
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
 * Encodes one column's value as a `Feature`. [[listSize]] is always called right before
 * [[writeFeature]] for the same value, so an encoder may keep what it measured for the write.
 */
private[sparktfrecord] abstract class FeatureEncoder(val column: String) {
  import ProtoWire._

  /** `Feature.kind` field number: [[ProtoWire.KindBytes]], `KindFloat` or `KindInt64`. */
  def kind: Int

  /** The size of the BytesList / FloatList / Int64List message for the value at `ordinal`. */
  def listSize(row: InternalRow, ordinal: Int): Int

  /** Writes the list message's fields; returns the position after them. */
  def writeList(row: InternalRow, ordinal: Int, buf: Array[Byte], pos: Int): Int

  /** Writes the whole Feature message: kind tag, list length, list. */
  final def writeFeature(row: InternalRow, ordinal: Int, buf: Array[Byte], pos: Int): Int = {
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

  protected final def nullElement(index: Int): Nothing =
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
      new Int64Scalar(column) { def value(r: InternalRow, i: Int) = r.getLong(i) }
    case IntegerType | DateType =>
      new Int64Scalar(column) { def value(r: InternalRow, i: Int) = r.getInt(i) }
    case ShortType => new Int64Scalar(column) { def value(r: InternalRow, i: Int) = r.getShort(i) }
    case ByteType => new Int64Scalar(column) { def value(r: InternalRow, i: Int) = r.getByte(i) }
    case BooleanType =>
      new Int64Scalar(column) { def value(r: InternalRow, i: Int) = if (r.getBoolean(i)) 1L else 0L }
    case FloatType => new FloatScalar(column) { def value(r: InternalRow, i: Int) = r.getFloat(i) }
    case DoubleType =>
      new FloatScalar(column) { def value(r: InternalRow, i: Int) = r.getDouble(i).toFloat }
    case d: DecimalType => new FloatScalar(column) {
      def value(r: InternalRow, i: Int) = r.getDecimal(i, d.precision, d.scale).toFloat
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
    case other => throw TFRecordSchema.unsupported(column, other, RecordType.Example)
  }

  private abstract class Int64Scalar(column: String) extends FeatureEncoder(column) {
    def value(row: InternalRow, ordinal: Int): Long
    private var v = 0L
    def kind: Int = KindInt64
    def listSize(row: InternalRow, ordinal: Int): Int = {
      v = value(row, ordinal)
      remember(packedSize(varintSize(v)))
    }
    def writeList(row: InternalRow, ordinal: Int, buf: Array[Byte], pos: Int): Int = {
      buf(pos) = tag(1, WireLengthDelimited).toByte
      buf(pos + 1) = varintSize(v).toByte
      writeVarint(buf, pos + 2, v)
    }
  }

  private abstract class FloatScalar(column: String) extends FeatureEncoder(column) {
    def value(row: InternalRow, ordinal: Int): Float
    def kind: Int = KindFloat
    def listSize(row: InternalRow, ordinal: Int): Int = remember(6)
    def writeList(row: InternalRow, ordinal: Int, buf: Array[Byte], pos: Int): Int = {
      buf(pos) = tag(1, WireLengthDelimited).toByte
      buf(pos + 1) = 4
      writeFixed32(buf, pos + 2, java.lang.Float.floatToRawIntBits(value(row, ordinal)))
    }
  }

  private final class StringScalar(column: String) extends FeatureEncoder(column) {
    private var s: UTF8String = _
    def kind: Int = KindBytes
    def listSize(row: InternalRow, ordinal: Int): Int = {
      s = row.getUTF8String(ordinal)
      val n = s.numBytes()
      remember(1 + varintSize(n) + n)
    }
    def writeList(row: InternalRow, ordinal: Int, buf: Array[Byte], pos: Int): Int = {
      buf(pos) = tag(1, WireLengthDelimited).toByte
      val p = writeVarint(buf, pos + 1, s.numBytes())
      s.writeToMemory(buf, Platform.BYTE_ARRAY_OFFSET + p)
      p + s.numBytes()
    }
  }

  private final class BinaryScalar(column: String) extends FeatureEncoder(column) {
    private var b: Array[Byte] = _
    def kind: Int = KindBytes
    def listSize(row: InternalRow, ordinal: Int): Int = {
      b = row.getBinary(ordinal)
      remember(1 + varintSize(b.length) + b.length)
    }
    def writeList(row: InternalRow, ordinal: Int, buf: Array[Byte], pos: Int): Int = {
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
    def listSize(row: InternalRow, ordinal: Int): Int = {
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
    def writeList(row: InternalRow, ordinal: Int, buf: Array[Byte], pos: Int): Int = {
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
    def listSize(row: InternalRow, ordinal: Int): Int = {
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
    def writeList(row: InternalRow, ordinal: Int, buf: Array[Byte], pos: Int): Int = {
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
    def listSize(row: InternalRow, ordinal: Int): Int = {
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
        throw new IllegalArgumentException(s"Column '$column': $size bytes do not fit in one record")
      }
      remember(size.toInt)
    }
    def writeList(row: InternalRow, ordinal: Int, buf: Array[Byte], pos: Int): Int = {
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
