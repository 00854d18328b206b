package io.github.sparktfrecord.codec

import org.apache.spark.sql.catalyst.expressions.UnsafeArrayData
import org.apache.spark.sql.catalyst.expressions.codegen.{UnsafeArrayWriter, UnsafeRowWriter}
import org.apache.spark.sql.catalyst.expressions.codegen.UnsafeWriter
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.Platform

import io.github.sparktfrecord.wire.{ProtoWire, ValueSink}

/**
 * Writes the values of one feature into one column of the row a [[RowBuilder]] holds: a scalar
 * into the row, a list into an array. What a value becomes is the column's [[TypeEntry]]'s
 * (its `fromInt64` / `fromFloat` / `fromBytes`, range-checked), as are the kinds the column
 * accepts and the width of its array slots: int64 to any integral type, date (days), timestamp
 * (microseconds), Boolean (0 or 1), float, double or decimal; float to float, double or decimal;
 * bytes to string or binary; a string also takes int64 and float values as their decimal text.
 *
 * The general path ([[AnyLayoutReader]]) hands values over one by one; the fast path
 * ([[UsualLayoutReader]]) writes with the writers held here.
 */
private[sparktfrecord] final class ColumnWriter(
    val column: String,
    val dataType: DataType,
    val ordinal: Int,
    val shape: Int,
    val entry: TypeEntry,
    rowWriter: UnsafeRowWriter) extends ValueSink {
  import ColumnWriter._

  /** The type of each value: the column's, its arrays' innermost, or double for a vector. */
  def elementType: DataType = entry.dataType

  /** The values of a vector column live in this struct (VectorUDT's storage); else null. */
  val structWriter: UnsafeRowWriter =
    if (shape == ShapeVector) new UnsafeRowWriter(rowWriter, 4) else null

  /** Where the values go for every shape but a scalar. */
  val arrayWriter: UnsafeArrayWriter = shape match {
    case ShapeScalar => null
    case ShapeVector => new UnsafeArrayWriter(structWriter, entry.elementSize)
    case _ => new UnsafeArrayWriter(rowWriter, entry.elementSize)
  }

  /** The number of nested arrays of a lists-of-lists column (2: `array<array<T>>`); else 0. */
  val depth: Int = if (shape == ShapeNested) TypeTable.depth(dataType) else 0

  /**
   * A lists-of-lists column's arrays of arrays, outermost first (level k holds the lists at
   * depth k+1); its innermost lists are [[arrayWriter]]'s. Empty for other shapes.
   */
  val levelWriters: Array[UnsafeArrayWriter] =
    Array.fill(math.max(depth - 1, 0))(new UnsafeArrayWriter(rowWriter, 8))

  /** The outer array (of steps, or the outermost list) of a lists-of-lists column; else null. */
  val outerWriter: UnsafeArrayWriter = if (shape == ShapeNested) levelWriters(0) else null

  /** Whether the column reads a feature of kind `k` (a `ProtoWire.Kind…`): its entry's answer. */
  def accepts(k: Int): Boolean = entry.accepts(k)

  private val int64s = entry.accepts(ProtoWire.KindInt64)
  private val floats = entry.accepts(ProtoWire.KindFloat)
  private val bytes = entry.accepts(ProtoWire.KindBytes)
  /** Float values into a float array: the packed little-endian floats are copied in one go. */
  private val copiesFloats =
    ProtoWire.LittleEndian && shape != ShapeScalar && (entry eq TypeTable.FloatTypeEntry)

  /**
   * Where the next value goes: the row (at the column's ordinal) or the array (at its index).
   * Set by [[beginScalar]] / [[beginArray]], advanced by each value, checked by [[end]].
   */
  private var target: UnsafeWriter = rowWriter
  private var slot: Int = ordinal
  private var slotsEnd: Int = ordinal
  /** While filling an array: the address of its first element (the writer's cursor units). */
  private var elementsAt: Long = 0L

  /** The next value is the column's scalar, written into the row. */
  def beginScalar(): Unit = {
    target = rowWriter
    slot = ordinal
    slotsEnd = ordinal + 1
  }

  /** The next `count` values fill a new array at the array writer's cursor. */
  def beginArray(count: Int): Unit = {
    elementsAt = arrayWriter.cursor() + UnsafeArrayData.calculateHeaderPortionInBytes(count)
    arrayWriter.initialize(count)
    target = arrayWriter
    slot = 0
    slotsEnd = count
  }

  /** After the values: fails loudly unless exactly as many came as were announced. */
  def end(): Unit = if (slot != slotsEnd) miscounted()

  // Out of line, so that end() stays small enough to inline everywhere.
  private def miscounted(): Nothing = {
    val begun = if (target eq rowWriter) 1 else slotsEnd
    throw new IllegalStateException(
      s"Column '$column': ${begun - (slotsEnd - slot)} values written, $begun begun")
  }

  /** The column is null in this record (a scalar decimal keeps its variable-size space). */
  def writeNull(): Unit =
    if (shape == ShapeScalar) entry.setNull(rowWriter, ordinal) else rowWriter.setNullAt(ordinal)

  def int64(v: Long): Unit = {
    if (!int64s) wrongKind("int64")
    entry.fromInt64(v, target, slot)
    slot += 1
  }

  def float(v: Float): Unit = {
    if (!floats) wrongKind("float")
    entry.fromFloat(v, target, slot)
    slot += 1
  }

  def bytes(buf: Array[Byte], off: Int, len: Int): Unit = {
    if (!bytes) wrongKind("bytes")
    entry.fromBytes(buf, off, len, target, slot)
    slot += 1
  }

  override def floats(buf: Array[Byte], off: Int, count: Int): Unit =
    if (copiesFloats && (target eq arrayWriter)) {
      // float_list and Spark's arrays both hold little-endian IEEE floats: one copy.
      Platform.copyMemory(buf, Platform.BYTE_ARRAY_OFFSET + off, arrayWriter.getBuffer,
        elementsAt + 4L * slot, 4L * count)
      slot += count
    } else super.floats(buf, off, count)

  private def wrongKind(what: String): Nothing =
    throw new IllegalStateException(s"$what value for $column")
}

private[sparktfrecord] object ColumnWriter {
  // A column's shape is its Layout's code, as constants so that a match on it is a tableswitch.
  final val ShapeScalar = 0
  final val ShapeArray = 1
  final val ShapeNested = 2
  final val ShapeVector = 3

  /** The writer of `field`; `column` names it in messages (a nested leaf's Spark path). */
  def apply(
      field: StructField,
      ordinal: Int,
      row: UnsafeRowWriter,
      column: String = null): ColumnWriter = {
    val name = if (column == null) field.name else column
    TypeTable.column(field.dataType) match {
      case Some((layout, entry)) =>
        new ColumnWriter(name, field.dataType, ordinal, layout.code, entry, row)
      case None =>
        throw TFRecordSchema.unsupported(name, field.dataType, RecordType.SequenceExample)
    }
  }
}
