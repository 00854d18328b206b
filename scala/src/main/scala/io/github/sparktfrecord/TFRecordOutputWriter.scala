package io.github.sparktfrecord

import java.io.{BufferedOutputStream, OutputStream}
import java.util.zip.CRC32C

import org.apache.hadoop.fs.Path
import org.apache.hadoop.mapreduce.TaskAttemptContext

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.execution.datasources.OutputWriter
import org.apache.spark.sql.types.StructType

/**
 * Writes one TFRecord file of a write task. Each row is serialized into the serializer's reused
 * buffer, framed in place, and written with one call.
 */
private[sparktfrecord] final class TFRecordOutputWriter(
    val path: String,
    schema: StructType,
    options: TFRecordOptions,
    context: TaskAttemptContext) extends OutputWriter {

  private val out: OutputStream = {
    val file = new Path(path)
    val conf = context.getConfiguration
    val raw = file.getFileSystem(conf).create(file, false)
    new BufferedOutputStream(
      options.compression.compress(raw, conf), TFRecordOutputWriter.BufferBytes)
  }
  private val crc = new CRC32C
  private val serializer: RecordSerializer = options.recordType match {
    case RecordType.ByteArray => new ByteArraySerializer(schema.head.name)
    case other => new TFRecordSerializer(schema, other)
  }

  override def write(row: InternalRow): Unit = {
    val length = serializer.serialize(row)
    val buf = serializer.buffer
    out.write(buf, 0, TFRecordFraming.frame(crc, buf, length))
  }

  override def close(): Unit = out.close()
}

private[sparktfrecord] object TFRecordOutputWriter {
  final val BufferBytes = 1 << 16
}
