package io.github.sparktfrecord.codec

import scala.annotation.switch

import io.github.sparktfrecord.{TFRecordDataException, ValueOutOfRangeException}
import io.github.sparktfrecord.WireFormatException
import io.github.sparktfrecord.wire.{ExampleWalker, FeatureOrder, FeatureRun}
import io.github.sparktfrecord.wire.{FeatureValueReader, FeatureVisitor}

/**
 * The general path: reads a record laid out in any way protobuf allows ([[ExampleWalker]]), value
 * by value ([[FeatureValueReader]]) into the columns' writers: Example and SequenceExample
 * records, every type (decimals, vectors, `array<array<T>>` from feature lists), unpacked and
 * repeated lists, empty and unset features. It is also what says what is wrong with a record:
 * every [[TFRecordDataException]] of the read path is raised here.
 *
 * In a SequenceExample, `array<array<T>>` columns are read from the feature lists (one inner
 * array per step) and every other column from the context. In an Example, lists of lists are
 * read from their ragged features, by [[RaggedListReader]], and encoded tensors from their value
 * and shape, by [[EncodedTensorReader]].
 */
private[sparktfrecord] final class AnyLayoutReader(
    row: RowBuilder,
    order: FeatureOrder,
    sequence: Boolean,
    path: String,
    values: FeatureValueReader,
    sparse: SparseVectorReader,
    ragged: RaggedListReader,
    tensors: EncodedTensorReader) {
  import ColumnWriter._
  import io.github.sparktfrecord.wire.ProtoWire._

  private val writers = row.columnWriters
  private val numColumns = writers.length
  private val rowWriter = row.writer
  private val walker = new ExampleWalker(values.cursor)
  private val step = new FeatureRun
  /** The ordinals past the columns': the sparse vectors' features, then the ragged lists'. */
  private val numSparse = sparse.names.length
  /** Past those: the encoded tensors' features. */
  private val tensorsFrom = numColumns + numSparse + ragged.names.length

  private val visitor = new FeatureVisitor {
    def lookup(buf: Array[Byte], keyOff: Int, keyLen: Int): Int =
      order.next(buf, keyOff, keyLen)

    def feature(ordinal: Int, run: FeatureRun): Unit =
      if (ordinal >= tensorsFrom) tensors.feature(ordinal - tensorsFrom, run)
      else if (ordinal >= numColumns + numSparse) {
        ragged.feature(ordinal - numColumns - numSparse, run)
      } else if (ordinal >= numColumns) sparse.feature(ordinal - numColumns, run)
      else {
        row.set(ordinal)
        decode(writers(ordinal), run)
      }

    def featureList(ordinal: Int, start: Int, end: Int): Unit = {
      if (ordinal >= numColumns) {
        val k = ordinal - numColumns
        val what = if (k < numSparse) s"Feature '${sparse.names(k)}' of a vector's sparse layout"
        else if (ordinal >= tensorsFrom) {
          s"Feature '${tensors.names(ordinal - tensorsFrom)}' of an encoded tensor"
        } else s"Feature '${ragged.names(k - numSparse)}' of a list of lists' ragged layout"
        throw TFRecordDataException.mismatch(null,
          s"$what is a feature list: it must be a feature", path, row.offset)
      }
      row.set(ordinal)
      decodeSteps(writers(ordinal), start, end)
    }
  }

  /** Reads the record `buf[start, end)` whole into the row begun for it. */
  def read(buf: Array[Byte], start: Int, end: Int): Unit = {
    order.startRecord()
    sparse.startRecord()
    ragged.startRecord()
    tensors.startRecord()
    try {
      if (sequence) walker.walkSequenceExample(buf, start, end, visitor)
      else walker.walkExample(buf, start, end, visitor)
    } catch {
      case e: WireFormatException => throw TFRecordDataException.malformed(e, sequence, path,
          row.offset, start)
    }
    sparse.finish()
    ragged.finish()
    tensors.finish()
  }

  /** One Feature into a scalar, array or vector column. */
  private def decode(d: ColumnWriter, run: FeatureRun): Unit = {
    if (d.shape == ShapeNested && !sequence) {
      throw columnError(d,
        s"is read from the ragged features ${ragged.featuresOf(d.ordinal)}, but the record " +
          "has a single feature of the column's own name")
    }
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
  private def decodeSteps(d: ColumnWriter, start: Int, end: Int): Unit = {
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
  private def valueCount(d: ColumnWriter, run: FeatureRun): Int = {
    val count = values.count(run)
    if (count > 0 && !d.accepts(run.kind)) {
      throw columnError(d, s"cannot be read from a ${KindNames(run.kind)} feature")
    }
    count
  }

  /** The counted values of `run` into a new array of the column. */
  private def fillArray(d: ColumnWriter, run: FeatureRun): Unit = {
    d.beginArray(run.count)
    if (run.count > 0) values.emit(run, d)
    d.end()
  }

  private def columnError(d: ColumnWriter, what: String): TFRecordDataException =
    TFRecordDataException.mismatch(
      d.column, s"Column '${d.column}' (${d.dataType.simpleString}) $what", path, row.offset)
}
