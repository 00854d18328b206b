package io.github.sparktfrecord.sql

import org.apache.hadoop.fs.Path
import org.apache.hadoop.mapreduce.TaskAttemptContext

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.execution.datasources.OutputWriter
import org.apache.spark.sql.types.StructType

import io.github.sparktfrecord.TFRecordDataException
import io.github.sparktfrecord.codec.{ByteArraySerializer, ExampleSerializer, RecordSerializer}
import io.github.sparktfrecord.codec.RecordType
import io.github.sparktfrecord.framing.TFRecordWriter

/**
 * Writes one TFRecord file of a write task. Each row is serialized into the serializer's reused
 * buffer, framed in place, and written with one call. In a write counted at job commit
 * ([[CountedWrite]]) it reports the file's record count, and its features' numbers of values,
 * when it closes.
 */
private[sparktfrecord] final class TFRecordOutputWriter(
    val path: String,
    schema: StructType,
    options: TFRecordOptions,
    context: TaskAttemptContext,
    counted: Option[CountedWrite] = None) extends OutputWriter {

  private val writer =
    new TFRecordWriter(new Path(path), context.getConfiguration, options.compression,
      index = options.writeIndex)
  private val serializer: RecordSerializer = options.recordType match {
    case RecordType.ByteArray => new ByteArraySerializer(schema.head.name)
    case other => new ExampleSerializer(schema, other, options.pathSeparator,
        requireValues = counted.exists(_.requireValues), sparseVectors = options.sparseVectors)
  }
  private var records = 0L

  override def write(row: InternalRow): Unit = {
    val length =
      try serializer.serialize(row)
      catch {
        // A value the row cannot be written with: said with where its record would start.
        case e: TFRecordDataException if e.path == null => throw e.at(path, writer.nextRecordOffset)
      }
    writer.writeFramed(serializer.buffer, length)
    records += 1
  }

  override def close(): Unit = {
    writer.close()
    counted.foreach(
      _.fileClosed(new Path(path), records, serializer.valueCounts, context.getConfiguration))
  }
}
