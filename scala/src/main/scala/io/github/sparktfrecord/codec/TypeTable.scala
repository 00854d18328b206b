package io.github.sparktfrecord.codec

import java.nio.charset.StandardCharsets.UTF_8

import org.apache.spark.sql.catalyst.expressions.{SpecializedGetters, UnsafeArrayData, UnsafeRow}
import org.apache.spark.sql.catalyst.expressions.codegen.{UnsafeRowWriter, UnsafeWriter}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.Platform

import io.github.sparktfrecord.ValueOutOfRangeException
import io.github.sparktfrecord.json.JsonWriter
import io.github.sparktfrecord.wire.{ProtoWire, Utf8}

import FeatureEncoder._

/**
 * How one Spark type meets TensorFlow: one entry per type a feature value can take, which every
 * component consults instead of matching on Spark types itself. Adding a type is adding an entry
 * (and a line in [[TypeTable.entry]]); adding a layout is adding a [[Layout]].
 *
 * An entry declares, for its Spark type:
 *  - '''kind''': the `Feature.kind` its values are written as ([[ProtoWire.KindInt64]],
 *    `KindFloat` or `KindBytes`); what the subclass is says the same and declares the value
 *    written: [[Int64Entry.int64]], [[FloatEntry.float32]], or a [[BytesEntry]]'s bytes;
 *  - '''writer''': [[encoder]], the encoder of a column of the type (one value or a list),
 *    chosen once per schema: a final class whose loop reads the values with the type's own getter
 *    and writes them as `int64`/`float32` do, so that no value passes through a virtual call;
 *  - '''reader''': [[accepts]] says which kinds a column of the type reads, and [[fromInt64]],
 *    [[fromFloat]], [[fromBytes]] set one decoded value into slot `slot` of a row or array writer
 *    (range-checked: a value the type cannot hold throws [[ValueOutOfRangeException]]);
 *    [[elementSize]] is the slot width for an `UnsafeArrayWriter`; [[setNull]] nulls a row field;
 *  - '''nested copy''': [[copy]] copies one value from an unsafe row or array (or any
 *    `SpecializedGetters`) into a row or array writer, bytes as bytes;
 *  - '''JSON''': [[json]] renders one value for people (see [[JsonText]]);
 *  - '''TFDS''': [[tfdsDtype]] and [[tfdsConnector]], the feature a column of the type is written
 *    as when no features are given, and [[holdsTfds]], whether it holds a stored dtype;
 *  - '''messages''': [[name]] (Spark SQL's) and [[doc]], as the supported-types message lists it.
 *
 * The reader, copy and JSON hooks are called per value: they are small, allocate nothing (but
 * [[StringEntry]]'s reading of numbers as text, and decimals, as Spark's own `Decimal` does), and
 * are chosen once per column.
 */
private[sparktfrecord] sealed abstract class TypeEntry(val kind: Int) {
  import TypeTable._

  /** The Spark type. */
  def dataType: DataType

  /** Spark SQL's name of the type (`bigint`). */
  final def name: String = dataType.simpleString

  /** The type as the supported-types message lists it: its name, and a note where it needs one. */
  def doc: String = name

  /** Bytes of one value in an unsafe array's slot (a variable-size value's is its offset+size). */
  def elementSize: Int

  /** Whether a column of this type reads a feature of kind `k` (a `ProtoWire.Kind…`). */
  def accepts(k: Int): Boolean = k == kind

  /** Sets a decoded int64 value at `slot` of `to`. */
  def fromInt64(v: Long, to: UnsafeWriter, slot: Int): Unit = wrongKind(ProtoWire.KindInt64)

  /** Sets a decoded float value at `slot` of `to`. */
  def fromFloat(v: Float, to: UnsafeWriter, slot: Int): Unit = wrongKind(ProtoWire.KindFloat)

  /** Sets a decoded bytes value at `slot` of `to`. */
  def fromBytes(buf: Array[Byte], off: Int, len: Int, to: UnsafeWriter, slot: Int): Unit =
    wrongKind(ProtoWire.KindBytes)

  /** Nulls field `ordinal` of a row (a decimal's null keeps its variable-size space). */
  def setNull(to: UnsafeRowWriter, ordinal: Int): Unit = to.setNullAt(ordinal)

  /** The encoder of a column of this type: one value, or a `list` of them. */
  def encoder(column: String, list: Boolean): FeatureEncoder

  /** Copies value `i` of `from` to slot `slot` of `to`. */
  def copy(from: SpecializedGetters, i: Int, to: UnsafeWriter, slot: Int): Unit

  /** Writes value `i` of `from` (not null) as JSON. */
  def json(out: JsonWriter, from: SpecializedGetters, i: Int): Unit

  /** The dtype TFDS stores a column of this type as, when no features are given. */
  def tfdsDtype: Option[String] = None

  /** The TFDS connector of that feature. */
  def tfdsConnector: String = "Tensor"

  /** Whether a column of this type holds the values of a TFDS tensor of `dtype`. */
  def holdsTfds(dtype: String): Boolean = false

  private def wrongKind(k: Int): Nothing =
    throw new IllegalStateException(s"${ProtoWire.KindNames(k)} value for a $name column")
}

/** A type written as `int64_list`: integers, booleans (0, 1), dates (days), timestamps (µs). */
private[sparktfrecord] sealed abstract class Int64Entry extends TypeEntry(ProtoWire.KindInt64) {

  /** Value `i` of `from` as the int64 it is written as. */
  def int64(from: SpecializedGetters, i: Int): Long

  override def holdsTfds(dtype: String): Boolean = TypeTable.isTfdsInteger(dtype)
}

/** A type written as `float_list`: floats, doubles and decimals, rounded to float. */
private[sparktfrecord] sealed abstract class FloatEntry extends TypeEntry(ProtoWire.KindFloat) {

  /** Value `i` of `from` as the float it is written as. */
  def float32(from: SpecializedGetters, i: Int): Float

  /** An int64 feature read into a float column: its value, as TensorFlow would cast it. */
  override def accepts(k: Int): Boolean = k == ProtoWire.KindFloat || k == ProtoWire.KindInt64

  override def holdsTfds(dtype: String): Boolean =
    dtype.startsWith("float") || dtype == "bfloat16"
}

/** A type written as `bytes_list`: strings (UTF-8) and binaries. */
private[sparktfrecord] sealed abstract class BytesEntry(val binary: Boolean)
  extends TypeEntry(ProtoWire.KindBytes) {
  def elementSize: Int = 8
  def encoder(column: String, list: Boolean): FeatureEncoder =
    if (list) new BytesArray(column, binary)
    else if (binary) new BinaryScalar(column)
    else new StringScalar(column)

  override def fromBytes(buf: Array[Byte], off: Int, len: Int, to: UnsafeWriter, slot: Int)
      : Unit = to.write(slot, buf, off, len)

  def copy(from: SpecializedGetters, i: Int, to: UnsafeWriter, slot: Int): Unit = from match {
    case _: UnsafeRow | _: UnsafeArrayData => TypeTable.copyBytes(from, i, to, slot)
    case _ =>
      if (binary) to.write(slot, from.getBinary(i)) else to.write(slot, from.getUTF8String(i))
  }

  override def tfdsDtype: Option[String] = Some("string")
  override def holdsTfds(dtype: String): Boolean = dtype == "string"
}

/**
 * How a column lays its values out in a feature: one value, a list, lists of lists, or an ML
 * vector (a struct Spark stores it as, written as a dense `float_list`). Lists of lists
 * (`array<array<…<T>>>`, [[Layout.Nested]]) are a feature list of lists in a `SequenceExample`
 * (two levels only) and ragged features in an `Example` ([[FeaturePaths.raggedNames]]). `code`
 * is the number [[ColumnWriter]] knows the shape by.
 */
private[sparktfrecord] sealed abstract class Layout(val code: Int)

private[sparktfrecord] object Layout {
  case object Scalar extends Layout(0)
  case object List extends Layout(1)
  case object Nested extends Layout(2)
  case object Vector extends Layout(3)
}

/** The entries, and the one match from a Spark type to its entry. */
private[sparktfrecord] object TypeTable {
  import ProtoWire._

  /** The entry of a type a feature value can take; None for every other type. */
  def entry(dataType: DataType): Option[TypeEntry] = dataType match {
    case BooleanType => Some(BooleanEntry)
    case ByteType => Some(ByteEntry)
    case ShortType => Some(ShortEntry)
    case IntegerType => Some(IntegerEntry)
    case LongType => Some(LongEntry)
    case DateType => Some(DateEntry)
    case TimestampType => Some(TimestampEntry)
    case TimestampNTZType => Some(TimestampNTZEntry)
    case FloatType => Some(FloatTypeEntry)
    case DoubleType => Some(DoubleEntry)
    case d: DecimalType => Some(DecimalEntry(d))
    // A collated string is a string (STRING COLLATE UTF8_LCASE): its collation orders and
    // compares values, their bytes are UTF-8 all the same. Read, it takes the given schema's.
    case _: StringType => Some(StringEntry)
    case BinaryType => Some(BinaryEntry)
    case t if isTime(t) => Some(TimeEntry(t))
    case _ => None
  }

  /**
   * Spark 4.1's `TIME(p)`, recognised by name: the Spark 4 jar is compiled against Spark 4.0,
   * which has no `TimeType`, and runs on 4.1+ all the same. Spark holds it as a long of
   * nanoseconds since midnight, which is what a feature stores.
   */
  def isTime(dataType: DataType): Boolean =
    dataType.getClass.getName == "org.apache.spark.sql.types.TimeType"

  /** Nanoseconds in a day: a `TIME` value is below it. */
  final val NanosPerDay = 86400L * 1000000000L

  /** Every entry but decimal's, with decimal(10,0) for it: for messages, docs and tests. */
  val entries: Seq[TypeEntry] = Seq(BooleanEntry, ByteEntry, ShortEntry, IntegerEntry, LongEntry,
    DateEntry, TimestampEntry, TimestampNTZEntry, FloatTypeEntry, DoubleEntry,
    DecimalEntry(DecimalType.USER_DEFAULT), StringEntry, BinaryEntry)

  /**
   * A column's layout and the entry of its values (a vector's values are doubles; lists of
   * lists, those of the innermost lists), or None when no record type can hold the type as one
   * column (structs, maps).
   */
  def column(dataType: DataType): Option[(Layout, TypeEntry)] = dataType match {
    case ArrayType(inner: ArrayType, _) => entry(innermost(inner)).map(Layout.Nested -> _)
    case ArrayType(e, _) => entry(e).map(Layout.List -> _)
    case v if isVector(v) => Some(Layout.Vector -> DoubleEntry)
    case t => entry(t).map(Layout.Scalar -> _)
  }

  /** The number of arrays `dataType` is nested in: 0 for a non-array, 2 for array<array<T>>. */
  def depth(dataType: DataType): Int = dataType match {
    case ArrayType(e, _) => 1 + depth(e)
    case _ => 0
  }

  /** The type inside every array of `dataType` (T of array<array<T>>). */
  def innermost(dataType: DataType): DataType = dataType match {
    case ArrayType(e, _) => innermost(e)
    case t => t
  }

  /**
   * Spark ML's `VectorUDT` (and the older mllib one), recognised by name so that the jar does not
   * depend on spark-mllib: a vector is written as a dense `float_list`.
   */
  def isVector(dataType: DataType): Boolean = dataType match {
    case u: UserDefinedType[_] =>
      val name = u.getClass.getName
      name == "org.apache.spark.ml.linalg.VectorUDT" ||
        name == "org.apache.spark.mllib.linalg.VectorUDT"
    case _ => false
  }

  /**
   * Spark ML's vector type (`org.apache.spark.ml.linalg.VectorUDT`), made by name when
   * spark-mllib is on the class path, which schema inference gives a vector written sparse.
   */
  lazy val vectorType: Option[DataType] =
    try {
      Some(Class.forName("org.apache.spark.ml.linalg.VectorUDT", true,
        Option(Thread.currentThread.getContextClassLoader).getOrElse(getClass.getClassLoader))
        .getConstructor().newInstance().asInstanceOf[DataType])
    } catch {
      case _: ReflectiveOperationException | _: LinkageError => None
    }

  /** The types of each kind, as the supported-types message lists them. */
  def describeSupported: String = {
    def of(k: Int) = entries.filter(_.kind == k).map(e => docOf(e))
    s"${of(KindInt64).mkString(", ")} (int64_list); " +
      s"${(of(KindFloat) :+ "ML vectors").mkString(", ")} (float_list); " +
      s"${of(KindBytes).mkString(", ")} (bytes_list)"
  }

  private def docOf(e: TypeEntry): String = e match {
    case _: DecimalEntry => "decimal"
    case other => other.doc
  }

  /** The type schema inference gives a feature of kind `k` (`binary`: bytes not UTF-8). */
  def inferred(k: Int, binary: Boolean): TypeEntry = k match {
    case KindInt64 => LongEntry
    case KindFloat => FloatTypeEntry
    case _ => if (binary) BinaryEntry else StringEntry
  }

  /** The entry a TFDS tensor of `dtype` is read as, or None when no list holds it. */
  def fromTfdsDtype(dtype: String): Option[TypeEntry] = dtype match {
    case "bool" => Some(BooleanEntry)
    case "float32" | "float16" | "bfloat16" => Some(FloatTypeEntry)
    case "float64" => Some(DoubleEntry)
    case "string" => Some(BinaryEntry)
    case d if isTfdsInteger(d) => Some(LongEntry)
    case _ => None
  }

  private[sparktfrecord] def isTfdsInteger(dtype: String): Boolean =
    dtype.startsWith("int") || dtype.startsWith("uint")

  /** An int64 a type cannot hold: the error the reader raises. */
  def outOfRange(v: Any): Nothing = throw new ValueOutOfRangeException(s"cannot hold the value $v")

  /**
   * Copies a variable-size value (a string, binary, array or struct) of an unsafe row or array as
   * the bytes its slot points at, without making an object of them.
   */
  def copyBytes(from: SpecializedGetters, i: Int, to: UnsafeWriter, slot: Int): Unit =
    from match {
      case r: UnsafeRow => copySlot(r.getBaseObject, r.getBaseOffset, r.getLong(i), to, slot)
      case a: UnsafeArrayData => copySlot(a.getBaseObject, a.getBaseOffset, a.getLong(i), to, slot)
    }

  private def copySlot(base: AnyRef, baseOffset: Long, s: Long, to: UnsafeWriter, slot: Int)
      : Unit = base match {
    case bytes: Array[Byte] =>
      val at = UnsafeSlot.offset(baseOffset, s) - Platform.BYTE_ARRAY_OFFSET
      to.write(slot, bytes, at.toInt, UnsafeSlot.size(s))
    case _ =>
      val bytes = new Array[Byte](UnsafeSlot.size(s))
      Platform.copyMemory(base, UnsafeSlot.offset(baseOffset, s), bytes,
        Platform.BYTE_ARRAY_OFFSET, bytes.length)
      to.write(slot, bytes)
  }

  /** A number as JSON: its text, quoted where JSON has no number for it (NaN, infinities). */
  private def jsonNumber(out: JsonWriter, d: Double, text: String): Unit =
    if (d.isNaN || d.isInfinite) out.string(text) else out.numberText(text)

  /** Bytes as JSON: their text when they are UTF-8, else `0x` and their hex. */
  def jsonBytes(out: JsonWriter, b: Array[Byte]): Unit =
    if (Utf8.isValid(b, 0, b.length)) out.string(new String(b, UTF_8))
    else {
      val sb = new java.lang.StringBuilder(2 + 2 * b.length).append("0x")
      b.foreach { x =>
        sb.append(Character.forDigit((x >> 4) & 0xf, 16)).append(Character.forDigit(x & 0xf, 16))
      }
      out.string(sb.toString)
    }

  /** Microseconds since 1970-01-01 as ISO-8601 text. */
  private def instant(micros: Long): String =
    java.time.Instant.EPOCH.plusNanos(Math.multiplyExact(micros, 1000L)).toString

  case object BooleanEntry extends Int64Entry {
    def dataType: DataType = BooleanType
    def elementSize: Int = 1
    def encoder(column: String, list: Boolean): FeatureEncoder =
      if (list) new BooleanArray(column) else new BooleanScalar(column)
    def int64(from: SpecializedGetters, i: Int): Long = if (from.getBoolean(i)) 1L else 0L
    override def fromInt64(v: Long, to: UnsafeWriter, slot: Int): Unit =
      if (v == 0L || v == 1L) to.write(slot, v == 1L)
      else outOfRange(s"$v (a boolean is stored as 0 or 1)")
    def copy(from: SpecializedGetters, i: Int, to: UnsafeWriter, slot: Int): Unit =
      to.write(slot, from.getBoolean(i))
    def json(out: JsonWriter, from: SpecializedGetters, i: Int): Unit =
      out.boolean(from.getBoolean(i))
    override def tfdsDtype: Option[String] = Some("bool")
    override def holdsTfds(dtype: String): Boolean = dtype == "bool"
  }

  case object ByteEntry extends Int64Entry {
    def dataType: DataType = ByteType
    def elementSize: Int = 1
    def encoder(column: String, list: Boolean): FeatureEncoder =
      if (list) new ByteArray(column) else new ByteScalar(column)
    def int64(from: SpecializedGetters, i: Int): Long = from.getByte(i)
    override def fromInt64(v: Long, to: UnsafeWriter, slot: Int): Unit =
      if (v == v.toByte) to.write(slot, v.toByte) else outOfRange(v)
    def copy(from: SpecializedGetters, i: Int, to: UnsafeWriter, slot: Int): Unit =
      to.write(slot, from.getByte(i))
    def json(out: JsonWriter, from: SpecializedGetters, i: Int): Unit =
      out.number(from.getByte(i).toShort)
    override def tfdsDtype: Option[String] = Some("int64")
  }

  case object ShortEntry extends Int64Entry {
    def dataType: DataType = ShortType
    def elementSize: Int = 2
    def encoder(column: String, list: Boolean): FeatureEncoder =
      if (list) new ShortArray(column) else new ShortScalar(column)
    def int64(from: SpecializedGetters, i: Int): Long = from.getShort(i)
    override def fromInt64(v: Long, to: UnsafeWriter, slot: Int): Unit =
      if (v == v.toShort) to.write(slot, v.toShort) else outOfRange(v)
    def copy(from: SpecializedGetters, i: Int, to: UnsafeWriter, slot: Int): Unit =
      to.write(slot, from.getShort(i))
    def json(out: JsonWriter, from: SpecializedGetters, i: Int): Unit =
      out.number(from.getShort(i))
    override def tfdsDtype: Option[String] = Some("int64")
  }

  /** An int, or a date (days since 1970-01-01): both are 4-byte ints in Spark's rows. */
  sealed abstract class Int32Entry extends Int64Entry {
    def elementSize: Int = 4
    def encoder(column: String, list: Boolean): FeatureEncoder =
      if (list) new IntArray(column) else new IntScalar(column)
    def int64(from: SpecializedGetters, i: Int): Long = from.getInt(i)
    override def fromInt64(v: Long, to: UnsafeWriter, slot: Int): Unit =
      if (v == v.toInt) to.write(slot, v.toInt) else outOfRange(v)
    def copy(from: SpecializedGetters, i: Int, to: UnsafeWriter, slot: Int): Unit =
      to.write(slot, from.getInt(i))
  }

  case object IntegerEntry extends Int32Entry {
    def dataType: DataType = IntegerType
    def json(out: JsonWriter, from: SpecializedGetters, i: Int): Unit =
      out.number(from.getInt(i))
    override def tfdsDtype: Option[String] = Some("int64")
  }

  case object DateEntry extends Int32Entry {
    def dataType: DataType = DateType
    override def doc: String = "date (days since 1970-01-01)"
    def json(out: JsonWriter, from: SpecializedGetters, i: Int): Unit =
      out.string(java.time.LocalDate.ofEpochDay(from.getInt(i).toLong).toString)
    override def holdsTfds(dtype: String): Boolean = false
  }

  /** A bigint, or a timestamp (microseconds since 1970-01-01): 8-byte longs in Spark's rows. */
  sealed abstract class Int64ValueEntry extends Int64Entry {
    def elementSize: Int = 8
    def encoder(column: String, list: Boolean): FeatureEncoder =
      if (list) new LongArray(column) else new LongScalar(column)
    def int64(from: SpecializedGetters, i: Int): Long = from.getLong(i)
    override def fromInt64(v: Long, to: UnsafeWriter, slot: Int): Unit = to.write(slot, v)
    def copy(from: SpecializedGetters, i: Int, to: UnsafeWriter, slot: Int): Unit =
      to.write(slot, from.getLong(i))
  }

  case object LongEntry extends Int64ValueEntry {
    def dataType: DataType = LongType
    def json(out: JsonWriter, from: SpecializedGetters, i: Int): Unit =
      out.number(from.getLong(i))
    override def tfdsDtype: Option[String] = Some("int64")
  }

  case object TimestampEntry extends Int64ValueEntry {
    def dataType: DataType = TimestampType
    def json(out: JsonWriter, from: SpecializedGetters, i: Int): Unit =
      out.string(instant(from.getLong(i)))
    override def holdsTfds(dtype: String): Boolean = false
  }

  case object TimestampNTZEntry extends Int64ValueEntry {
    def dataType: DataType = TimestampNTZType
    override def doc: String = "timestamp_ntz (microseconds since 1970-01-01)"
    def json(out: JsonWriter, from: SpecializedGetters, i: Int): Unit =
      out.string(instant(from.getLong(i)))
    override def holdsTfds(dtype: String): Boolean = false
  }

  /**
   * A `TIME(p)` of any precision (Spark 4.1+): nanoseconds since midnight, Spark's own long, as a
   * timestamp is its microseconds since 1970-01-01; read, a value outside the day is refused.
   */
  final case class TimeEntry(t: DataType) extends Int64ValueEntry {
    def dataType: DataType = t
    override def doc: String = s"$name (nanoseconds since midnight)"
    override def fromInt64(v: Long, to: UnsafeWriter, slot: Int): Unit =
      if (v >= 0L && v < NanosPerDay) to.write(slot, v)
      else outOfRange(s"$v (a time is nanoseconds since midnight, from 0 to $NanosPerDay)")
    def json(out: JsonWriter, from: SpecializedGetters, i: Int): Unit =
      out.string(java.time.LocalTime.ofNanoOfDay(from.getLong(i)).toString)
    override def holdsTfds(dtype: String): Boolean = false
  }

  /** `FloatType`'s entry (named so that it does not hide Scala's `Float`). */
  case object FloatTypeEntry extends FloatEntry {
    def dataType: DataType = FloatType
    def elementSize: Int = 4
    def encoder(column: String, list: Boolean): FeatureEncoder =
      if (list) new FloatValueArray(column) else new FloatValueScalar(column)
    def float32(from: SpecializedGetters, i: Int): Float = from.getFloat(i)
    override def fromFloat(v: Float, to: UnsafeWriter, slot: Int): Unit = to.write(slot, v)
    override def fromInt64(v: Long, to: UnsafeWriter, slot: Int): Unit = to.write(slot, v.toFloat)
    def copy(from: SpecializedGetters, i: Int, to: UnsafeWriter, slot: Int): Unit =
      to.write(slot, from.getFloat(i))
    def json(out: JsonWriter, from: SpecializedGetters, i: Int): Unit = {
      val v = from.getFloat(i)
      jsonNumber(out, v.toDouble, FloatText.text(v))
    }
    override def tfdsDtype: Option[String] = Some("float32")
  }

  case object DoubleEntry extends FloatEntry {
    def dataType: DataType = DoubleType
    def elementSize: Int = 8
    def encoder(column: String, list: Boolean): FeatureEncoder =
      if (list) new DoubleArray(column) else new DoubleScalar(column)
    def float32(from: SpecializedGetters, i: Int): Float = from.getDouble(i).toFloat
    override def fromFloat(v: Float, to: UnsafeWriter, slot: Int): Unit =
      to.write(slot, v.toDouble)
    override def fromInt64(v: Long, to: UnsafeWriter, slot: Int): Unit =
      to.write(slot, v.toDouble)
    def copy(from: SpecializedGetters, i: Int, to: UnsafeWriter, slot: Int): Unit =
      to.write(slot, from.getDouble(i))
    def json(out: JsonWriter, from: SpecializedGetters, i: Int): Unit = {
      val v = from.getDouble(i)
      jsonNumber(out, v, java.lang.Double.toString(v))
    }
    override def tfdsDtype: Option[String] = Some("float32")
  }

  /** A decimal of one precision and scale: written as float, read range-checked. */
  final case class DecimalEntry(t: DecimalType) extends FloatEntry {
    private val precision = t.precision
    private val scale = t.scale
    def dataType: DataType = t
    def elementSize: Int = 8
    def encoder(column: String, list: Boolean): FeatureEncoder =
      if (list) new DecimalArray(column, precision, scale)
      else new DecimalScalar(column, precision, scale)
    def float32(from: SpecializedGetters, i: Int): Float =
      from.getDecimal(i, precision, scale).toFloat
    override def fromFloat(v: Float, to: UnsafeWriter, slot: Int): Unit = {
      if (v.isNaN || v.isInfinite) outOfRange(v)
      // The shortest decimal that reads back as this float: what Python and TF print.
      put(Decimal(new java.math.BigDecimal(FloatText.text(v))), to, slot)
    }
    override def fromInt64(v: Long, to: UnsafeWriter, slot: Int): Unit =
      put(Decimal(v), to, slot)
    private def put(value: Decimal, to: UnsafeWriter, slot: Int): Unit = {
      if (!value.changePrecision(precision, scale)) outOfRange(value)
      to.write(slot, value, precision, scale)
    }
    override def setNull(to: UnsafeRowWriter, ordinal: Int): Unit =
      to.write(ordinal, null: Decimal, precision, scale)
    def copy(from: SpecializedGetters, i: Int, to: UnsafeWriter, slot: Int): Unit =
      to.write(slot, from.getDecimal(i, precision, scale), precision, scale)
    def json(out: JsonWriter, from: SpecializedGetters, i: Int): Unit =
      out.numberText(from.getDecimal(i, precision, scale).toJavaBigDecimal.toPlainString)
    override def holdsTfds(dtype: String): Boolean = false
  }

  /** A string: UTF-8 bytes; it also reads int64 and float values, as their decimal text. */
  case object StringEntry extends BytesEntry(binary = false) {
    def dataType: DataType = StringType
    override def accepts(k: Int): Boolean = k != KindNone
    override def fromInt64(v: Long, to: UnsafeWriter, slot: Int): Unit =
      to.write(slot, java.lang.Long.toString(v).getBytes(UTF_8))
    override def fromFloat(v: Float, to: UnsafeWriter, slot: Int): Unit =
      to.write(slot, FloatText.text(v).getBytes(UTF_8))
    def json(out: JsonWriter, from: SpecializedGetters, i: Int): Unit =
      jsonBytes(out, from.getUTF8String(i).getBytes)
    override def tfdsConnector: String = "Text"
  }

  case object BinaryEntry extends BytesEntry(binary = true) {
    def dataType: DataType = BinaryType
    def json(out: JsonWriter, from: SpecializedGetters, i: Int): Unit =
      jsonBytes(out, from.getBinary(i))
  }
}
