package io.github.sparktfrecord.codec

import org.apache.spark.sql.catalyst.expressions.UnsafeRow

/**
 * The decoder of a nested schema: the flat decoder of its features (one column per path-named
 * feature, see [[FeaturePaths]]) and the [[NestedRowAssembler]] that turns its row into the row
 * of the schema.
 */
private[sparktfrecord] final class NestedRowDecoder(
    flat: RowDecoder,
    assembler: NestedRowAssembler) extends RowDecoder {
  def decode(buf: Array[Byte], start: Int, end: Int, offset: Long): UnsafeRow =
    assembler.assemble(flat.decode(buf, start, end, offset), offset)

  def corruptRow(buf: Array[Byte], start: Int, end: Int, offset: Long): UnsafeRow =
    assembler.assemble(flat.corruptRow(buf, start, end, offset), offset)
}
