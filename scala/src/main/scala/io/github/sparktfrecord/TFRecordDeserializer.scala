package io.github.sparktfrecord

import java.nio.charset.StandardCharsets.UTF_8

import scala.annotation.switch

import org.apache.spark.sql.catalyst.expressions.{UnsafeArrayData, UnsafeRow}
import org.apache.spark.sql.catalyst.expressions.codegen.{UnsafeArrayWriter, UnsafeRowWriter}
import org.apache.spark.sql.catalyst.expressions.codegen.UnsafeWriter
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.Platform

/**
 * Decodes serialized `tf.train.Example` (or `SequenceExample`) messages straight into one reused
 * [[UnsafeRow]] holding the requested columns only.
 *
 * Everything that depends on the schema is decided here, once: the feature-name lookup (on UTF-8
 * bytes, so no String is built per feature), and one [[FeatureDecoder]] per column. Features that
 * were not requested are skipped at the wire level without decoding their values.
 *
 * In a SequenceExample, `array<array<T>>` columns are read from the feature lists (one inner
 * array per step) and every other column from the context.
 *
 * The returned row is overwritten by the next call.
 *
 * `corruptColumn`, when not -1, is the ordinal of the column that [[corruptRow]] fills with a bad
 * record's raw bytes (mode PERMISSIVE); it is never read from a feature.
 */
private[sparktfrecord] final class TFRecordDeserializer(
    schema: StructType,
    recordType: RecordType,
    corruptColumn: Int = -1) {
  import FeatureDecoder._
  import ProtoWire._

  private val numColumns = schema.length
  private val sequence = recordType == RecordType.SequenceExample
  private val rowWriter = new UnsafeRowWriter(numColumns, 64)
  private val index = new FeatureIndex(
    schema.fieldNames.zipWithIndex.map { case (n, i) => if (i == corruptColumn) null else n })
  private val decoders: Array[FeatureDecoder] =
    Array.tabulate(numColumns)(i => FeatureDecoder(schema(i), i, rowWriter))
  /** Bit `kind` of `accepted(i)` is set when column i can be read from a feature of that kind. */
  private val accepted: Array[Int] = decoders.map { d =>
    Seq(KindBytes, KindFloat, KindInt64).filter(d.accepts).map(1 << _).sum
  }
  /**
   * `hints(e)`: the column the e-th feature of the previous record went to. Records of one file
   * usually list their features in the same order, so the hint saves hashing the name.
   */
  private var hints = Array.fill(numColumns)(-1)
  private var entry = 0
  /** `seen(i) == stamp` when column i was set by the current record. */
  private val seen = new Array[Int](numColumns)
  private var stamp = 0
  private val cursor = new WireCursor
  private val lists = new FeatureLists(cursor)
  private val walker = new ExampleWalker(cursor)

  private val visitor = new FeatureVisitor {
    def lookup(buf: Array[Byte], keyOff: Int, keyLen: Int): Int = {
      val e = entry
      entry += 1
      if (e < hints.length) {
        val hint = hints(e)
        if (hint >= 0 && index.is(hint, buf, keyOff, keyLen)) return hint
      } else {
        hints = java.util.Arrays.copyOf(hints, math.max(e + 1, hints.length * 2))
      }
      val found = index.find(buf, keyOff, keyLen)
      hints(e) = found
      found
    }

    def feature(ordinal: Int, kind: Int, start: Int, end: Int): Unit = {
      // A key repeated in one map: the last entry wins, as in protobuf.
      seen(ordinal) = stamp
      decode(decoders(ordinal), kind, start, end)
    }

    def featureList(ordinal: Int, start: Int, end: Int): Unit = {
      seen(ordinal) = stamp
      decodeSteps(decoders(ordinal), start, end)
    }
  }

  /** For error messages: the file and the byte offset of the record being decoded. */
  var path: String = ""
  var recordOffset: Long = 0L

  def deserialize(data: Array[Byte], length: Int): UnsafeRow = {
    rowWriter.reset()
    rowWriter.zeroOutNullBytes()
    stamp += 1
    if (stamp == 0) { java.util.Arrays.fill(seen, -1); stamp = 1 }
    entry = 0
    try {
      if (sequence) walker.walkSequenceExample(data, length, visitor)
      else walker.walkExample(data, length, visitor)
    } catch {
      case e: WireFormatException => throw TFRecordDataException.malformed(e, sequence, path,
        recordOffset)
    }
    var i = 0
    while (i < numColumns) {
      if (seen(i) != stamp) decoders(i).writeNull()
      i += 1
    }
    rowWriter.getRow
  }

  /** A row of nulls but for the corrupt-record column, which holds the record's bytes. */
  def corruptRow(data: Array[Byte], length: Int): UnsafeRow = {
    rowWriter.reset()
    rowWriter.zeroOutNullBytes()
    var i = 0
    while (i < numColumns) {
      if (i == corruptColumn) rowWriter.write(i, data, 0, length) else decoders(i).writeNull()
      i += 1
    }
    rowWriter.getRow
  }

  /** One Feature into a scalar, array or vector column. */
  private def decode(d: FeatureDecoder, kind: Int, start: Int, end: Int): Unit = {
    if (d.shape == ShapeNested) {
      throw columnError(d, "is read from a SequenceExample feature list, but the record has a " +
        "single feature of that name (context or Example feature): read it as " +
        s"array<${d.elementType.simpleString}>")
    }
    val count = valueCount(d, kind, start, end)
    try {
      (d.shape: @switch) match {
        case ShapeScalar =>
          if (count == 0) {
            d.writeNull()
          } else if (count > 1) {
            throw columnError(d, s"is a scalar but the feature holds $count values; read it " +
              s"as array<${d.elementType.simpleString}> to get them all")
          } else {
            d.target = rowWriter
            d.slot = d.ordinal
            emit(d, kind, start, end, count)
          }
        case ShapeArray =>
          val previousCursor = rowWriter.cursor()
          fillArray(d, kind, start, end, count)
          rowWriter.setOffsetAndSizeFromPreviousCursor(d.ordinal, previousCursor)
        case ShapeVector =>
          // VectorUDT's storage: struct<type: tinyint, size: int, indices: array<int>,
          // values: array<double>>, here always dense (type 1, values only).
          val previousCursor = rowWriter.cursor()
          val struct = d.structWriter
          struct.resetRowWriter()
          struct.write(0, 1.toByte)
          struct.setNullAt(1)
          struct.setNullAt(2)
          val valuesCursor = struct.cursor()
          fillArray(d, kind, start, end, count)
          struct.setOffsetAndSizeFromPreviousCursor(3, valuesCursor)
          rowWriter.setOffsetAndSizeFromPreviousCursor(d.ordinal, previousCursor)
      }
    } catch {
      case e: ValueOutOfRangeException => throw columnError(d, e.getMessage)
    }
  }

  /** A FeatureList into an `array<array<T>>` column: one inner array per step. */
  private def decodeSteps(d: FeatureDecoder, start: Int, end: Int): Unit = {
    if (d.shape != ShapeNested) {
      throw columnError(d, "is read from a single feature, but the record has a feature list " +
        s"of that name: read it as array<array<${d.elementType.simpleString}>>")
    }
    val steps = walker.countSteps(start, end)
    val previousCursor = rowWriter.cursor()
    d.outerWriter.initialize(steps)
    var from = start
    var i = 0
    try {
      while (i < steps) {
        val stepEnd = walker.nextStep(from, end)
        val kind = walker.featureKind(walker.stepStart, stepEnd)
        val runStart = walker.runStart
        val count = valueCount(d, kind, runStart, stepEnd)
        val stepCursor = rowWriter.cursor()
        fillArray(d, kind, runStart, stepEnd, count)
        d.outerWriter.setOffsetAndSizeFromPreviousCursor(i, stepCursor)
        from = stepEnd
        i += 1
      }
    } catch {
      case e: ValueOutOfRangeException => throw columnError(d, e.getMessage)
    }
    rowWriter.setOffsetAndSizeFromPreviousCursor(d.ordinal, previousCursor)
  }

  /**
   * The number of values of `kind` in `[start, end)`, checked against the column's type; called
   * right after the walker's `featureKind` of that Feature.
   */
  private def valueCount(d: FeatureDecoder, kind: Int, start: Int, end: Int): Int = {
    val count = if (kind == KindNone) 0 else {
      // The walker has just read the Feature: with one list message, count it where it lies.
      val single =
        if (walker.runLists == 1) lists.countSingleList(kind, walker.listStart, walker.listEnd)
        else -1
      if (single >= 0) single else lists.scan(kind, start, end, null)
    }
    if (count > 0 && (accepted(d.ordinal) & (1 << kind)) == 0) {
      throw columnError(d, s"cannot be read from a ${KindNames(kind)} feature")
    }
    count
  }

  private def fillArray(d: FeatureDecoder, kind: Int, start: Int, end: Int, count: Int): Unit = {
    d.elementsAt = d.arrayWriter.cursor() + UnsafeArrayData.calculateHeaderPortionInBytes(count)
    d.arrayWriter.initialize(count)
    d.target = d.arrayWriter
    d.slot = 0
    if (count > 0) emit(d, kind, start, end, count)
  }

  /** The `count` values [[valueCount]] just counted, into `d`. */
  private def emit(d: FeatureDecoder, kind: Int, start: Int, end: Int, count: Int): Unit =
    if (lists.fields == 1) lists.emitSingle(d, count) else lists.scan(kind, start, end, d)

  private def columnError(d: FeatureDecoder, what: String): TFRecordDataException =
    new TFRecordDataException(
      s"Column '${d.column}' (${d.dataType.simpleString}) $what", path, recordOffset, null)
}

/** A record whose framing is sound but whose content does not decode or does not fit the schema. */
class TFRecordDataException(message: String, val path: String, val offset: Long, cause: Throwable)
  extends RuntimeException(s"$message, in the record at byte offset $offset of $path", cause)

private[sparktfrecord] object TFRecordDataException {
  /** The record's bytes are not a valid (Sequence)Example. */
  def malformed(
      e: WireFormatException,
      sequence: Boolean,
      path: String,
      offset: Long): TFRecordDataException = {
    val message = if (sequence) "tf.train.SequenceExample" else "tf.train.Example"
    new TFRecordDataException(
      s"Malformed $message (${e.getMessage} at byte ${e.position} of the record)", path, offset, e)
  }
}

/** A value that does not fit its column (overflow, NaN into decimal, ...); gets context above. */
private[sparktfrecord] final class ValueOutOfRangeException(message: String)
  extends RuntimeException(message, null, false, false)

/** Open-addressing lookup from a feature name's UTF-8 bytes to its column ordinal (null: none). */
private[sparktfrecord] final class FeatureIndex(names: Array[String]) {
  private val keys = names.map(n => if (n == null) null else n.getBytes(UTF_8))
  private val mask = Integer.highestOneBit(math.max(4, keys.length * 4)) - 1
  private val slots: Array[Int] = {
    val table = Array.fill(mask + 1)(-1)
    keys.indices.filter(keys(_) != null).foreach { i =>
      var s = FeatureIndex.hash(keys(i), 0, keys(i).length) & mask
      while (table(s) >= 0) s = (s + 1) & mask
      // Spark may request the same name twice only if the schema has it twice; first one wins.
      if (!keys.indices.take(i).exists(j => java.util.Arrays.equals(keys(j), keys(i)))) {
        table(s) = i
      }
    }
    table
  }

  /** Names of up to eight bytes as little-endian longs, compared in one go (else unused). */
  private val words: Array[Long] = keys.map { k =>
    if (k == null || k.length > 8) 0L
    else k.indices.map(j => (k(j) & 0xffL) << (8 * j)).foldLeft(0L)(_ | _)
  }
  private val wordMasks: Array[Long] =
    keys.map(k => if (k == null || k.length > 8 || k.isEmpty) 0L else -1L >>> (64 - 8 * k.length))

  /** Whether column `i` is named by `buf[off, off + len)`. */
  def is(i: Int, buf: Array[Byte], off: Int, len: Int): Boolean = {
    val k = keys(i)
    if (k.length != len) return false
    if (len <= 8 && ProtoWire.WordReads && buf.length - off >= 8) {
      val word = Platform.getLong(buf, Platform.BYTE_ARRAY_OFFSET + off)
      return ((word ^ words(i)) & wordMasks(i)) == 0L
    }
    var j = 0
    while (j < len) {
      if (k(j) != buf(off + j)) return false
      j += 1
    }
    true
  }

  /** The ordinal of the column named by `buf[off, off + len)`, or -1. */
  def find(buf: Array[Byte], off: Int, len: Int): Int = {
    var s = FeatureIndex.hash(buf, off, len) & mask
    while (true) {
      val i = slots(s)
      if (i < 0) return -1
      if (is(i, buf, off, len)) return i
      s = (s + 1) & mask
    }
    -1
  }
}

private[sparktfrecord] object FeatureIndex {
  def hash(buf: Array[Byte], off: Int, len: Int): Int = {
    var h = len
    var i = off
    val end = off + len
    while (i < end) {
      h = 31 * h + buf(i)
      i += 1
    }
    h ^ (h >>> 16)
  }
}

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

  /** Where the next value goes: the row (at the column's ordinal) or the array (at its index). */
  var target: UnsafeWriter = rowWriter
  var slot: Int = ordinal
  /** While filling an array: the address of its first element (the writer's cursor units). */
  var elementsAt: Long = 0L

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

  def apply(field: StructField, ordinal: Int, row: UnsafeRowWriter): FeatureDecoder = {
    val (shape, element) = field.dataType match {
      case ArrayType(ArrayType(e, _), _) => (ShapeNested, e)
      case ArrayType(e, _) => (ShapeArray, e)
      case u: UserDefinedType[_] if TFRecordSchema.isVector(u) => (ShapeVector, DoubleType)
      case t => (ShapeScalar, t)
    }
    val (name, t) = (field.name, field.dataType)
    element match {
      case LongType | TimestampType | TimestampNTZType =>
        new FeatureDecoder(name, t, ordinal, shape, row) {
          def elementSize = 8
          def accepts(kind: Int) = kind == KindInt64
          override def int64(v: Long): Unit = { target.write(slot, v); slot += 1 }
        }
      case IntegerType | DateType => new FeatureDecoder(name, t, ordinal, shape, row) {
        def elementSize = 4
        def accepts(kind: Int) = kind == KindInt64
        override def int64(v: Long): Unit = {
          if (v != v.toInt) outOfRange(v)
          target.write(slot, v.toInt); slot += 1
        }
      }
      case ShortType => new FeatureDecoder(name, t, ordinal, shape, row) {
        def elementSize = 2
        def accepts(kind: Int) = kind == KindInt64
        override def int64(v: Long): Unit = {
          if (v != v.toShort) outOfRange(v)
          target.write(slot, v.toShort); slot += 1
        }
      }
      case ByteType => new FeatureDecoder(name, t, ordinal, shape, row) {
        def elementSize = 1
        def accepts(kind: Int) = kind == KindInt64
        override def int64(v: Long): Unit = {
          if (v != v.toByte) outOfRange(v)
          target.write(slot, v.toByte); slot += 1
        }
      }
      case BooleanType => new FeatureDecoder(name, t, ordinal, shape, row) {
        def elementSize = 1
        def accepts(kind: Int) = kind == KindInt64
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
          }
          else row.setNullAt(this.ordinal)
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
}
