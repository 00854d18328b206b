package io.github.sparktfrecord

import java.nio.charset.StandardCharsets.UTF_8

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.types._

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
        val valueSize = encoders(i).measure(row, i)
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
        p = encoders(i).write(row, i, valueSize, buf, p)
      }
      i += 1
    }
    p
  }
}

/** Serializes a row into a reused buffer, leaving room for the TFRecord framing around it. */
private[sparktfrecord] abstract class RecordSerializer {
  private val record = new RecordBuffer

  /** The record after [[serialize]]: its data at `[HeaderBytes, HeaderBytes + length)`. */
  final def buffer: Array[Byte] = record.bytes

  /** Serializes `row` into [[buffer]] and returns the data length. */
  def serialize(row: InternalRow): Int

  /** Makes room for `length` data bytes plus framing; returns the buffer. */
  protected final def reserve(length: Int): Array[Byte] = record.reserve(length)
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
