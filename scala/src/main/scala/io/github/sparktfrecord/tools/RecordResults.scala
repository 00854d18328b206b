package io.github.sparktfrecord.tools

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import org.apache.spark.sql.types.{DataType, StructType}

import io.github.sparktfrecord.{TFRecordCorruptException, TFRecordDataException, TFRecordError}
import io.github.sparktfrecord.codec.TFRecordSchema
import io.github.sparktfrecord.framing.TFRecordReader
import io.github.sparktfrecord.sql.{FailureSafeReader, TFRecordOptions, TFRecordRows}

/**
 * What the data source's scan makes of each record of a file, for a schema, record by record:
 * its row as [[ExactText]], or its error's condition and parameters. The oracle of the
 * differential tests, which hold the Python codec to it (called through JPype, tests/support/
 * jar_decoder.py).
 *
 * The read is the scan's: the checks `TFRecordFileFormat.buildReader` makes of the schema, the
 * framing of [[TFRecordReader]] and the row decoder of [[TFRecordRows.decoder]], with the
 * options as a read without a session takes them ([[TFRecordOptions.sessionFree]]). Only one
 * thing differs: where the scan stops at a record whose payload fails (FAILFAST), this goes on
 * with the next record, since the framing is sound; a framing error ends the file, as it ends
 * the scan.
 */
object RecordResults {

  /** A result's first element: the record's row. */
  final val Row = "row"

  /** A result's first element: the record's error (or the schema's, at offset -1). */
  final val Error = "error"

  /**
   * Each record's result, in file order: `[row, offset, text]`, or `[error, offset, condition,
   * name, value, name, value...]` (the error's parameters, in its order). An error of the schema
   * or the options is one result at offset -1; a framing error is the last result, at the offset
   * of the record whose framing is broken. An exception that is no [[TFRecordError]] (a bug) is
   * an error whose condition is its class name, with its message as the parameter `message`.
   */
  def read(
      path: String,
      schemaJson: String,
      options: java.util.Map[String, String]): Array[Array[String]] = {
    val out = Array.newBuilder[Array[String]]
    try {
      val schema = DataType.fromJson(schemaJson).asInstanceOf[StructType]
      val parsed = TFRecordOptions.sessionFree(options)
      // The checks of TFRecordFileFormat.buildReader, where data schema and required schema
      // are the same.
      TFRecordSchema.validate(schema, parsed.recordType, writing = false, parsed.pathSeparator)
      FailureSafeReader.checkCorruptColumn(schema, parsed)
      val file = new Path(path)
      val conf = new Configuration()
      val length = file.getFileSystem(conf).getFileStatus(file).getLen
      val reader = TFRecordReader.open(file, conf, parsed.framing(schema.nonEmpty), length)
      try {
        val decode = TFRecordRows.decoder(schema, parsed, file.toString)
        val text = new ExactText(schema)
        var offset = -1L
        try {
          while (reader.next()) {
            offset = reader.offset
            try {
              val row = decode(reader)
              if (row != null) out += Array(Row, offset.toString, text.row(row))
            } catch {
              case e: TFRecordDataException => out += error(offset, e)
              case NonFatal(e) => out += error(offset, e)
            }
          }
        } catch {
          case e: TFRecordCorruptException => out += error(e.offset, e)
        }
      } finally reader.close()
    } catch {
      case e: TFRecordError with Throwable => out += error(-1L, e)
    }
    out.result()
  }

  private def error(offset: Long, e: Throwable): Array[String] = e match {
    case t: TFRecordError =>
      val parameters = t.parameters.toSeq.sortBy(_._1).flatMap { case (k, v) => Seq(k, v) }
      (Seq(Error, offset.toString, t.condition) ++ parameters).toArray
    case other =>
      Array(Error, offset.toString, other.getClass.getName, "message", String.valueOf(other))
  }
}
