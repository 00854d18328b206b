package io.github.sparktfrecord.sql

import org.apache.hadoop.fs.Path

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.catalyst.expressions.codegen.UnsafeRowWriter
import org.apache.spark.sql.types.StructType

import io.github.sparktfrecord.codec.{FeaturePaths, NestedRowAssembler, NestedRowDecoder}
import io.github.sparktfrecord.codec.{ExampleDeserializer, RecordType, RowDecoder}
import io.github.sparktfrecord.framing.TFRecordReader

/**
 * The rows of a file's records, for a schema: what the data source's reader and the inspector
 * make of each file they read.
 */
private[sparktfrecord] object TFRecordRows {
  private val EmptyRow = new UnsafeRow(0)
  EmptyRow.pointTo(new Array[Byte](8), 0)

  /** The rows `decode` makes of the records of `path`, closing its reader at the end. */
  def apply(reader: TFRecordReader, decode: TFRecordReader => InternalRow, path: Path)
      : Iterator[InternalRow] =
    new Iterator[InternalRow] {
      private var row: InternalRow = _
      private var done = false

      override def hasNext: Boolean = {
        // DROPMALFORMED decodes a bad record to null: keep reading.
        while (row == null && !done) {
          if (reader.next()) row = decode(reader)
          else { done = true; reader.close() }
        }
        row != null
      }

      override def next(): InternalRow = {
        if (!hasNext) throw new NoSuchElementException("end of " + path)
        val r = row
        row = null
        r
      }
    }

  /**
   * Turns the reader's current record into a row of `schema` (null: drop it); chosen once per
   * file. Records whose payload does not decode or fit are handled by the `mode` option
   * ([[FailureSafeReader]]).
   */
  def decoder(
      schema: StructType,
      options: TFRecordOptions,
      path: String): TFRecordReader => InternalRow =
    if (schema.isEmpty) {
      // count() and friends: the framing is walked (and checked), the records are never parsed.
      _ => EmptyRow
    } else options.recordType match {
      case RecordType.ByteArray =>
        val writer = new UnsafeRowWriter(1, 64)
        reader => {
          writer.reset()
          writer.zeroOutNullBytes()
          writer.write(0, reader.data, reader.dataStart, reader.length)
          writer.getRow
        }
      case recordType if FeaturePaths.isNested(schema) =>
        FailureSafeReader(options.mode, nestedDecoder(schema, recordType, options, path))
      case recordType =>
        FailureSafeReader(options.mode,
          new ExampleDeserializer(schema, recordType, path,
            FailureSafeReader.corruptColumn(schema, schema, options), null, options.fastPath,
            options.pathSeparator))
    }

  /**
   * A nested schema ([[FeaturePaths]]): its features are decoded as a flat row, which
   * [[NestedRowAssembler]] turns into the row of `schema`. Kept apart from the flat decoder, so
   * that a flat schema's records pay nothing for nesting.
   */
  private def nestedDecoder(
      schema: StructType,
      recordType: RecordType,
      options: TFRecordOptions,
      path: String): RowDecoder = {
    val leaves = FeaturePaths.leaves(schema, recordType, options.pathSeparator)
    val flatSchema = FeaturePaths.flatSchema(leaves)
    new NestedRowDecoder(
      new ExampleDeserializer(flatSchema, recordType, path,
        FailureSafeReader.corruptColumn(schema, flatSchema, options),
        leaves.map(_.column).toArray, options.fastPath, options.pathSeparator),
      new NestedRowAssembler(schema, leaves, recordType, path))
  }
}
