package io.github.sparktfrecord.codec

import java.nio.charset.StandardCharsets.UTF_8

import org.apache.spark.sql.catalyst.expressions.UnsafeArrayData
import org.apache.spark.sql.catalyst.expressions.codegen.{UnsafeArrayWriter, UnsafeRowWriter}
import org.apache.spark.sql.catalyst.expressions.codegen.UnsafeWriter
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.Platform

import io.github.sparktfrecord.ValueOutOfRangeException
import io.github.sparktfrecord.wire.{ProtoWire, ValueSink}

/**
 * Writes the values of one feature into one column: a scalar into the row, a list into an array.
 * Conversions are chosen per column when the deserializer is built: int64 to any integral type
 * (range-checked), date (days), timestamp (microseconds), Boolean (0 or 1), float, double or
 * decimal; float to float, double or decimal;
 * bytes to string or binary. A string column also takes int64 and float values as their decimal
 * text, which is what schema inference chooses for a feature seen with mixed kinds.
 */
private[sparktfrecord] abstract class FeatureDecoder(
    val column: String,
    val dataType: DataType,
    val ordinal: Int,
    val shape: Int,
    rowWriter: UnsafeRowWriter) extends ValueSink {
  import FeatureDecoder._

  /** The type of each value: the column's, its arrays' innermost, or double for a vector. */
  val elementType: DataType = dataType match {
    case ArrayType(ArrayType(e, _), _) => e
    case ArrayType(e, _) => e
    case _ if shape == ShapeVector => DoubleType
    case t => t
  }

  /** The values of a vector column live in this struct (VectorUDT's storage); else null. */
  val structWriter: UnsafeRowWriter =
    if (shape == ShapeVector) new UnsafeRowWriter(rowWriter, 4) else null

  /** Where the values go for every shape but a scalar. */
  val arrayWriter: UnsafeArrayWriter = shape match {
    case ShapeScalar => null
    case ShapeVector => new UnsafeArrayWriter(structWriter, 8)
    case _ => new UnsafeArrayWriter(rowWriter, elementSize)
  }

  /** The outer array (of steps) of an `array<array<T>>` column; else null. */
  val outerWriter: UnsafeArrayWriter =
    if (shape == ShapeNested) new UnsafeArrayWriter(rowWriter, 8) else null

  /**
   * Where the next value goes: the row (at the column's ordinal) or the array (at its index).
   * Set by [[beginScalar]] / [[beginArray]], advanced by each value, checked by [[end]].
   */
  protected var target: UnsafeWriter = rowWriter
  protected var slot: Int = ordinal
  private var slotsEnd: Int = ordinal
  /** While filling an array: the address of its first element (the writer's cursor units). */
  protected var elementsAt: Long = 0L

  /** The next value is the column's scalar, written into the row. */
  final def beginScalar(): Unit = {
    target = rowWriter
    slot = ordinal
    slotsEnd = ordinal + 1
  }

  /** The next `count` values fill a new array at the array writer's cursor. */
  final def beginArray(count: Int): Unit = {
    elementsAt = arrayWriter.cursor() + UnsafeArrayData.calculateHeaderPortionInBytes(count)
    arrayWriter.initialize(count)
    target = arrayWriter
    slot = 0
    slotsEnd = count
  }

  /** After the values: fails loudly unless exactly as many came as were announced. */
  final def end(): Unit = if (slot != slotsEnd) miscounted()

  // Out of line, so that end() stays small enough to inline everywhere.
  private def miscounted(): Nothing = {
    val begun = if (target eq rowWriter) 1 else slotsEnd
    throw new IllegalStateException(
      s"Column '$column': ${begun - (slotsEnd - slot)} values written, $begun begun")
  }

  def elementSize: Int
  def accepts(kind: Int): Boolean

  def writeNull(): Unit = rowWriter.setNullAt(ordinal)

  def int64(v: Long): Unit = throw new IllegalStateException("int64 value for " + column)
  def float(v: Float): Unit = throw new IllegalStateException("float value for " + column)
  def bytes(buf: Array[Byte], off: Int, len: Int): Unit =
    throw new IllegalStateException("bytes value for " + column)

  protected final def outOfRange(v: Any): Nothing =
    throw new ValueOutOfRangeException(s"cannot hold the value $v")
}

private[sparktfrecord] object FeatureDecoder {
  import ProtoWire._

  final val ShapeScalar = 0
  final val ShapeArray = 1
  final val ShapeNested = 2
  final val ShapeVector = 3

  /** The decoder of `field`; `column` names it in messages (a nested leaf's Spark path). */
  def apply(
      field: StructField,
      ordinal: Int,
      row: UnsafeRowWriter,
      column: String = null): FeatureDecoder = {
    val (shape, element) = field.dataType match {
      case ArrayType(ArrayType(e, _), _) => (ShapeNested, e)
      case ArrayType(e, _) => (ShapeArray, e)
      case u: UserDefinedType[_] if TFRecordSchema.isVector(u) => (ShapeVector, DoubleType)
      case t => (ShapeScalar, t)
    }
    val (name, t) = (if (column == null) field.name else column, field.dataType)
    element match {
      case LongType | TimestampType | TimestampNTZType =>
        new Int64Decoder(name, t, ordinal, shape, row) {
          def elementSize = 8
          override def int64(v: Long): Unit = { target.write(slot, v); slot += 1 }
        }
      // Narrower integers are range-checked: an int64 that does not fit is an error, not a wrap.
      case IntegerType | DateType => new Int64Decoder(name, t, ordinal, shape, row) {
          def elementSize = 4
          override def int64(v: Long): Unit =
            if (v == v.toInt) { target.write(slot, v.toInt); slot += 1 }
            else outOfRange(v)
        }
      case ShortType => new Int64Decoder(name, t, ordinal, shape, row) {
          def elementSize = 2
          override def int64(v: Long): Unit =
            if (v == v.toShort) { target.write(slot, v.toShort); slot += 1 }
            else outOfRange(v)
        }
      case ByteType => new Int64Decoder(name, t, ordinal, shape, row) {
          def elementSize = 1
          override def int64(v: Long): Unit =
            if (v == v.toByte) { target.write(slot, v.toByte); slot += 1 }
            else outOfRange(v)
        }
      case BooleanType => new Int64Decoder(name, t, ordinal, shape, row) {
          def elementSize = 1
          override def int64(v: Long): Unit = {
            if (v != 0L && v != 1L) outOfRange(s"$v (a boolean is stored as 0 or 1)")
            target.write(slot, v == 1L); slot += 1
          }
        }
      case FloatType => new FeatureDecoder(name, t, ordinal, shape, row) {
          def elementSize = 4
          def accepts(kind: Int) = kind == KindFloat || kind == KindInt64
          override def float(v: Float): Unit = { target.write(slot, v); slot += 1 }
          override def floats(buf: Array[Byte], off: Int, count: Int): Unit =
            if (ProtoWire.LittleEndian && (target eq arrayWriter)) {
              // float_list and Spark's arrays both hold little-endian IEEE floats: one copy.
              Platform.copyMemory(buf, Platform.BYTE_ARRAY_OFFSET + off, arrayWriter.getBuffer,
                elementsAt + 4L * slot, 4L * count)
              slot += count
            } else super.floats(buf, off, count)
          override def int64(v: Long): Unit = { target.write(slot, v.toFloat); slot += 1 }
        }
      case DoubleType => new FeatureDecoder(name, t, ordinal, shape, row) {
          def elementSize = 8
          def accepts(kind: Int) = kind == KindFloat || kind == KindInt64
          override def float(v: Float): Unit = { target.write(slot, v.toDouble); slot += 1 }
          override def int64(v: Long): Unit = { target.write(slot, v.toDouble); slot += 1 }
        }
      case d: DecimalType => new FeatureDecoder(name, t, ordinal, shape, row) {
          def elementSize = 8
          def accepts(kind: Int) = kind == KindFloat || kind == KindInt64
          override def writeNull(): Unit =
            if (this.shape == ShapeScalar) {
              row.write(this.ordinal, null: Decimal, d.precision, d.scale)
            } else row.setNullAt(this.ordinal)
          override def float(v: Float): Unit = {
            if (v.isNaN || v.isInfinite) outOfRange(v)
            // The shortest decimal that reads back as this float: what Python and TF print.
            put(Decimal(new java.math.BigDecimal(java.lang.Float.toString(v))))
          }
          override def int64(v: Long): Unit = put(Decimal(v))
          private def put(value: Decimal): Unit = {
            if (!value.changePrecision(d.precision, d.scale)) outOfRange(value)
            target.write(slot, value, d.precision, d.scale); slot += 1
          }
        }
      case StringType => new FeatureDecoder(name, t, ordinal, shape, row) {
          def elementSize = 8
          def accepts(kind: Int) = kind != KindNone
          override def bytes(buf: Array[Byte], off: Int, len: Int): Unit = {
            target.write(slot, buf, off, len); slot += 1
          }
          override def int64(v: Long): Unit = text(java.lang.Long.toString(v))
          override def float(v: Float): Unit = text(java.lang.Float.toString(v))
          private def text(s: String): Unit = {
            val b = s.getBytes(UTF_8)
            target.write(slot, b, 0, b.length); slot += 1
          }
        }
      case BinaryType => new FeatureDecoder(name, t, ordinal, shape, row) {
          def elementSize = 8
          def accepts(kind: Int) = kind == KindBytes
          override def bytes(buf: Array[Byte], off: Int, len: Int): Unit = {
            target.write(slot, buf, off, len); slot += 1
          }
        }
      case _ => throw TFRecordSchema.unsupported(name, t, RecordType.SequenceExample)
    }
  }

  /** A column whose values come from `int64_list` only. */
  private abstract class Int64Decoder(
      column: String,
      dataType: DataType,
      ordinal: Int,
      shape: Int,
      row: UnsafeRowWriter) extends FeatureDecoder(column, dataType, ordinal, shape, row) {
    def accepts(kind: Int): Boolean = kind == KindInt64
  }
}
