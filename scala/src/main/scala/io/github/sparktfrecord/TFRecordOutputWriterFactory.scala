package io.github.sparktfrecord

import org.apache.hadoop.mapreduce.TaskAttemptContext

import org.apache.spark.sql.execution.datasources.{OutputWriter, OutputWriterFactory}
import org.apache.spark.sql.types.StructType

/** Made on the driver by `prepareWrite`, shipped to the tasks, one writer per output file. */
private[sparktfrecord] final class TFRecordOutputWriterFactory(options: TFRecordOptions)
  extends OutputWriterFactory {

  override def getFileExtension(context: TaskAttemptContext): String =
    TFRecordOutputWriterFactory.Extension + options.compression.extension

  override def newInstance(
      path: String,
      dataSchema: StructType,
      context: TaskAttemptContext): OutputWriter =
    new TFRecordOutputWriter(path, dataSchema, options, context)
}

private[sparktfrecord] object TFRecordOutputWriterFactory {
  final val Extension = ".tfrecord"
}
