package io.github.sparktfrecord.codec

import scala.annotation.switch

import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.catalyst.expressions.codegen.UnsafeRowWriter
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.Platform
import org.apache.spark.unsafe.bitset.BitSetMethods

import io.github.sparktfrecord.{TFRecordDataException, ValueOutOfRangeException}
import io.github.sparktfrecord.WireFormatException
import io.github.sparktfrecord.wire.{ExampleWalker, FeatureIndex, FeatureOrder, FeatureRun}
import io.github.sparktfrecord.wire.{FeatureValueReader, FeatureVisitor, ProtoWire, WireCursor}

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
 * One deserializer reads the records of one file, `path`, which its errors name with the byte
 * offset each record is given with. The returned row is overwritten by the next call.
 *
 * `corruptColumn`, when not -1, is the ordinal of the column that [[corruptRow]] fills with a bad
 * record's raw bytes (mode PERMISSIVE); it is never read from a feature. `columns`, when given,
 * names each column in messages (the Spark paths of a nested schema's features).
 */
private[sparktfrecord] final class TFRecordDeserializer(
    schema: StructType,
    recordType: RecordType,
    path: String,
    corruptColumn: Int = -1,
    columns: Array[String] = null) extends RowDecoder {
  import FeatureDecoder._
  import ProtoWire._

  private val numColumns = schema.length
  private val sequence = recordType == RecordType.SequenceExample
  /** The writer of the row; the generated decoder writes into it too. */
  val rowWriter = new UnsafeRowWriter(numColumns, 64)
  /** The columns by feature name (the corrupt-record column has none). */
  val index = new FeatureIndex(
    schema.fieldNames.zipWithIndex.map { case (n, i) => if (i == corruptColumn) null else n })
  /** One per column: what [[GeneratedExampleDecoder]] falls back to, and its array writers. */
  val decoders: Array[FeatureDecoder] =
    Array.tabulate(numColumns)(i =>
      FeatureDecoder(schema(i), i, rowWriter, if (columns == null) null else columns(i)))
  /** Bit `kind` of `accepted(i)` is set when column i can be read from a feature of that kind. */
  private val accepted: Array[Int] = decoders.map { d =>
    Seq(KindBytes, KindFloat, KindInt64).filter(d.accepts).map(1 << _).sum
  }
  /** Names by their position in the record, learned from the previous records. */
  private val order = new FeatureOrder(index)
  /** `seen(i) == stamp` when column i was set by the current record. */
  val seen = new Array[Int](numColumns)
  private var stamp = 0
  private val cursor = new WireCursor
  private val values = new FeatureValueReader(cursor)
  private val walker = new ExampleWalker(cursor)
  private val step = new FeatureRun
  private val run = new FeatureRun

  private val visitor = new FeatureVisitor {
    def lookup(buf: Array[Byte], keyOff: Int, keyLen: Int): Int =
      order.next(buf, keyOff, keyLen)

    def feature(ordinal: Int, run: FeatureRun): Unit = {
      // A key repeated in one map: the last entry wins, as in protobuf.
      if (seen(ordinal) == stamp) clearNull(ordinal) else seen(ordinal) = stamp
      decode(decoders(ordinal), run)
    }

    def featureList(ordinal: Int, start: Int, end: Int): Unit = {
      if (seen(ordinal) == stamp) clearNull(ordinal) else seen(ordinal) = stamp
      decodeSteps(decoders(ordinal), start, end)
    }
  }

  /**
   * Column `ordinal` is read again in this record (a repeated key, whose last entry wins): the
   * null an earlier entry set (an unset Feature) is cleared, since the row writer only ever sets
   * null bits. The row's null bits start at its first byte.
   */
  def clearNull(ordinal: Int): Unit =
    BitSetMethods.unset(rowWriter.getBuffer, Platform.BYTE_ARRAY_OFFSET, ordinal)

  /** For error messages: the byte offset of the record being decoded, given with it. */
  private var recordOffset = 0L

  def deserialize(buf: Array[Byte], start: Int, end: Int, offset: Long): UnsafeRow = {
    beginRecord(offset)
    try {
      if (sequence) walker.walkSequenceExample(buf, start, end, visitor)
      else walker.walkExample(buf, start, end, visitor)
    } catch {
      case e: WireFormatException => throw TFRecordDataException.malformed(e, sequence, path,
          offset, start)
    }
    endRecord()
  }

  /**
   * Starts the row of the record at `offset`; returns the stamp that marks, in [[seen]], the
   * columns it sets. [[deserialize]] and the generated decoder both start here...
   */
  def beginRecord(offset: Long): Int = {
    recordOffset = offset
    rowWriter.reset()
    rowWriter.zeroOutNullBytes()
    stamp += 1
    if (stamp == 0) { java.util.Arrays.fill(seen, -1); stamp = 1 }
    order.startRecord()
    stamp
  }

  /** ...and end here: the columns the record did not set are null. */
  def endRecord(): UnsafeRow = {
    var i = 0
    while (i < numColumns) {
      if (seen(i) != stamp) decoders(i).writeNull()
      i += 1
    }
    rowWriter.getRow
  }

  def corruptRow(buf: Array[Byte], start: Int, end: Int): UnsafeRow = {
    rowWriter.reset()
    rowWriter.zeroOutNullBytes()
    var i = 0
    while (i < numColumns) {
      if (i == corruptColumn) rowWriter.write(i, buf, start, end - start)
      else decoders(i).writeNull()
      i += 1
    }
    rowWriter.getRow
  }

  /**
   * The Feature message `buf[start, end)` of an Example into column `ordinal` of the row being
   * written, for the record at `offset`: what the generated decoder hands over when a feature is
   * not laid out as it expects, so that such features read (and fail) exactly as here. A
   * [[WireFormatException]] is the caller's to report.
   */
  def decodeFeature(ordinal: Int, buf: Array[Byte], start: Int, end: Int, offset: Long): Unit = {
    recordOffset = offset
    cursor.buf = buf
    walker.readFeature(start, end, run)
    decode(decoders(ordinal), run)
  }

  /**
   * The field at `pos` of the Features message that ends at `end`, laid out in any way, as
   * [[deserialize]] reads it (marking what it sets in [[seen]]); returns where the next starts.
   */
  def decodeField(buf: Array[Byte], pos: Int, end: Int): Int = {
    cursor.buf = buf
    walker.walkField(pos, end, visitor, lists = false)
  }

  /** One Feature into a scalar, array or vector column. */
  private def decode(d: FeatureDecoder, run: FeatureRun): Unit = {
    if (d.shape == ShapeNested) {
      throw columnError(d,
        "is read from a SequenceExample feature list, but the record has a " +
          "single feature of that name (context or Example feature): read it as " +
          s"array<${d.elementType.simpleString}>")
    }
    val count = valueCount(d, run)
    try {
      (d.shape: @switch) match {
        case ShapeScalar =>
          if (count == 0) {
            d.writeNull()
          } else if (count > 1) {
            throw columnError(d,
              s"is a scalar but the feature holds $count values; read it " +
                s"as array<${d.elementType.simpleString}> to get them all")
          } else {
            d.beginScalar()
            values.emit(run, d)
            d.end()
          }
        case ShapeArray =>
          val previousCursor = rowWriter.cursor()
          fillArray(d, run)
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
          fillArray(d, run)
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
      throw columnError(d,
        "is read from a single feature, but the record has a feature list " +
          s"of that name: read it as array<array<${d.elementType.simpleString}>>")
    }
    val steps = walker.countSteps(start, end)
    val previousCursor = rowWriter.cursor()
    d.outerWriter.initialize(steps)
    var from = start
    var i = 0
    try {
      while (i < steps) {
        from = walker.nextStep(from, end, step)
        valueCount(d, step)
        val stepCursor = rowWriter.cursor()
        fillArray(d, step)
        d.outerWriter.setOffsetAndSizeFromPreviousCursor(i, stepCursor)
        i += 1
      }
    } catch {
      case e: ValueOutOfRangeException => throw columnError(d, e.getMessage)
    }
    rowWriter.setOffsetAndSizeFromPreviousCursor(d.ordinal, previousCursor)
  }

  /** Counts the values of `run` ([[FeatureValueReader.count]]), checked against the column type. */
  private def valueCount(d: FeatureDecoder, run: FeatureRun): Int = {
    val count = values.count(run)
    if (count > 0 && (accepted(d.ordinal) & (1 << run.kind)) == 0) {
      throw columnError(d, s"cannot be read from a ${KindNames(run.kind)} feature")
    }
    count
  }

  /** The counted values of `run` into a new array of the column. */
  private def fillArray(d: FeatureDecoder, run: FeatureRun): Unit = {
    d.beginArray(run.count)
    if (run.count > 0) values.emit(run, d)
    d.end()
  }

  private def columnError(d: FeatureDecoder, what: String): TFRecordDataException =
    TFRecordDataException.mismatch(
      d.column, s"Column '${d.column}' (${d.dataType.simpleString}) $what", path, recordOffset)
}
