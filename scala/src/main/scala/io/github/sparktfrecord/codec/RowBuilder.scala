package io.github.sparktfrecord.codec

import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.catalyst.expressions.codegen.UnsafeRowWriter
import org.apache.spark.sql.types.StructType
import org.apache.spark.unsafe.Platform
import org.apache.spark.unsafe.bitset.BitSetMethods

/**
 * The one row-writing state of the read path: the reused row writer, one [[ColumnWriter]] per
 * column, and which columns the current record has set. A record's row is [[begin]]-ed, its
 * columns are [[set]] by whichever reader reads the record, and [[end]] makes the columns it did
 * not set null. Beginning again forgets everything written since the last begin, which is how the
 * general path reads a record whole after the fast path gave up on it.
 *
 * `corruptColumn`, when not -1, is the ordinal of the column that [[corruptRow]] fills with a bad
 * record's raw bytes; `columns`, when given, names each column in messages.
 */
private[sparktfrecord] final class RowBuilder(
    schema: StructType,
    corruptColumn: Int,
    columns: Array[String]) {
  private val numColumns = schema.length
  val writer = new UnsafeRowWriter(numColumns, 64)
  val columnWriters: Array[ColumnWriter] = Array.tabulate(numColumns)(i =>
    ColumnWriter(schema(i), i, writer, if (columns == null) null else columns(i)))

  /** `seen(i) == stamp` when column i was set by the current record. */
  private val seen = new Array[Int](numColumns)
  private var stamp = 0
  /** The byte offset of the current record's header in its file, for messages. */
  var offset = 0L

  /** Starts the row of the record at `offset`, forgetting what was written since the last. */
  def begin(offset: Long): Unit = {
    this.offset = offset
    writer.reset()
    writer.zeroOutNullBytes()
    stamp += 1
    if (stamp == 0) { java.util.Arrays.fill(seen, -1); stamp = 1 }
  }

  /**
   * Column `ordinal` is about to be written. A key repeated in one record is read again and its
   * last entry wins, as in protobuf: the null an earlier entry set is cleared, since the row
   * writer only ever sets null bits (which start at the row's first byte).
   */
  def set(ordinal: Int): Unit =
    if (seen(ordinal) == stamp) {
      BitSetMethods.unset(writer.getBuffer, Platform.BYTE_ARRAY_OFFSET, ordinal)
    } else seen(ordinal) = stamp

  /** Whether column `ordinal` was set by the current record. */
  def isSet(ordinal: Int): Boolean = seen(ordinal) == stamp

  /** The row: the columns the record did not set are null (each as its writer writes null). */
  def end(): UnsafeRow = {
    var i = 0
    while (i < numColumns) {
      if (seen(i) != stamp) columnWriters(i).writeNull()
      i += 1
    }
    writer.getRow
  }

  /** A row of nulls but for the corrupt-record column, which holds `buf[start, end)`. */
  def corruptRow(buf: Array[Byte], start: Int, end: Int): UnsafeRow = {
    writer.reset()
    writer.zeroOutNullBytes()
    var i = 0
    while (i < numColumns) {
      if (i == corruptColumn) writer.write(i, buf, start, end - start)
      else columnWriters(i).writeNull()
      i += 1
    }
    writer.getRow
  }
}
