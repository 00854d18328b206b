package io.github.sparktfrecord.codec

import org.apache.spark.sql.catalyst.expressions.UnsafeRow

/**
 * Decodes one record's payload into one reused [[UnsafeRow]]: the flat decoder
 * ([[ExampleDeserializer]]) and the nested one over it ([[NestedRowDecoder]]) are one, and the
 * `mode` option ([[io.github.sparktfrecord.sql.FailureSafeReader]]) wraps either.
 */
private[sparktfrecord] trait RowDecoder {
  /**
   * The row of the record `buf[start, end)` whose header starts at byte `offset` of the file,
   * overwritten by the next call; a [[io.github.sparktfrecord.TFRecordDataException]] when it
   * does not decode or fit.
   */
  def decode(buf: Array[Byte], start: Int, end: Int, offset: Long): UnsafeRow

  /** The row of a bad record: nulls, but for the corrupt-record column, which holds its bytes. */
  def corruptRow(buf: Array[Byte], start: Int, end: Int, offset: Long): UnsafeRow
}
