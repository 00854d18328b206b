package io.github.sparktfrecord.codec

import org.apache.spark.sql.catalyst.expressions.UnsafeRow

/**
 * Decodes one record's payload into one reused [[UnsafeRow]] of the required columns: the
 * interpreter ([[TFRecordDeserializer]]) and the decoder generated per schema
 * ([[GeneratedExampleDecoder]]) both do, and read the same records into the same rows.
 */
private[sparktfrecord] trait RowDecoder {
  /**
   * The row of the record `buf[start, end)` whose header starts at byte `offset` of the file,
   * overwritten by the next call; a [[TFRecordDataException]] when it does not decode or fit.
   */
  def deserialize(buf: Array[Byte], start: Int, end: Int, offset: Long): UnsafeRow

  /** A row of nulls but for the corrupt-record column, which holds `buf[start, end)`. */
  def corruptRow(buf: Array[Byte], start: Int, end: Int): UnsafeRow
}
