package io.github.sparktfrecord.sql

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.util.{DropMalformedMode, FailFastMode, ParseMode}
import org.apache.spark.sql.catalyst.util.PermissiveMode
import org.apache.spark.sql.types.{BinaryType, StringType, StructType}

import io.github.sparktfrecord.{TFRecordDataException, TFRecordError}
import io.github.sparktfrecord.codec.RowDecoder
import io.github.sparktfrecord.framing.TFRecordReader

/**
 * The `mode` option, written once for the flat and the nested decoders ([[RowDecoder]]), as Spark's
 * `FailureSafeParser` is for its JSON and CSV sources. A record whose framing is sound but whose
 * payload does not decode or does not fit the schema (a [[TFRecordDataException]]) fails the
 * read (FAILFAST), is dropped (DROPMALFORMED) or becomes a row of nulls holding the record's
 * bytes in the corrupt-record column, when the schema has one (PERMISSIVE).
 *
 * The mode is chosen once, when a file's decoder is built: the per-record function tests nothing.
 */
private[sparktfrecord] object FailureSafeReader {

  /** The row of the reader's current record as `mode` makes it (null: drop the record). */
  def apply(mode: ParseMode, decoder: RowDecoder): TFRecordReader => InternalRow =
    mode match {
      case FailFastMode =>
        reader => decoder.decode(reader.data, reader.dataStart, reader.dataEnd, reader.offset)
      case DropMalformedMode => reader =>
          try decoder.decode(reader.data, reader.dataStart, reader.dataEnd, reader.offset)
          catch {
            case _: TFRecordDataException => null
          }
      case PermissiveMode => reader =>
          try decoder.decode(reader.data, reader.dataStart, reader.dataEnd, reader.offset)
          catch {
            case _: TFRecordDataException =>
              decoder.corruptRow(reader.data, reader.dataStart, reader.dataEnd, reader.offset)
          }
    }

  /**
   * Checks, before any file is read, that the corrupt-record column of `schema`, if PERMISSIVE
   * has one, can hold a record's bytes.
   */
  def checkCorruptColumn(schema: StructType, options: TFRecordOptions): Unit =
    if (options.mode == PermissiveMode) {
      schema.find(_.name == options.columnNameOfCorruptRecord).foreach { f =>
        if (f.dataType != BinaryType && f.dataType != StringType) {
          throw TFRecordError.argument(TFRecordError.InvalidSchema,
            s"The corrupt-record column '${f.name}' must be binary or string, not " +
              f.dataType.simpleString, "column" -> f.name)
        }
      }
    }

  /**
   * The ordinal in `flatSchema` (the columns the deserializer decodes) of the column that
   * PERMISSIVE fills with a bad record's bytes: the top-level column of `schema` named by
   * `columnNameOfCorruptRecord`. -1 when there is none, or in the other modes.
   */
  def corruptColumn(schema: StructType, flatSchema: StructType, options: TFRecordOptions): Int =
    if (options.mode == PermissiveMode &&
        schema.fieldNames.contains(options.columnNameOfCorruptRecord)) {
      flatSchema.fieldNames.indexOf(options.columnNameOfCorruptRecord)
    } else -1
}
