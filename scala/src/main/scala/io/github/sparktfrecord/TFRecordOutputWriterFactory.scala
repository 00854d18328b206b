package io.github.sparktfrecord

import org.apache.hadoop.mapreduce.TaskAttemptContext

import org.apache.spark.sql.execution.datasources.{OutputWriter, OutputWriterFactory}
import org.apache.spark.sql.types.StructType

/**
 * Made on the driver by `prepareWrite`, shipped to the tasks, one writer per output file. A
 * sharded write serializes with the schema [[TFRecordShardedWrite.prepare]] gave (the same
 * columns, with the metadata of their TFDS features).
 */
private[sparktfrecord] final class TFRecordOutputWriterFactory(
    options: TFRecordOptions,
    sharded: Option[TFRecordShardedWrite.Prepared] = None)
  extends OutputWriterFactory {

  override def getFileExtension(context: TaskAttemptContext): String =
    TFRecordOutputWriterFactory.Extension + options.compression.extension

  override def newInstance(
      path: String,
      dataSchema: StructType,
      context: TaskAttemptContext): OutputWriter =
    new TFRecordOutputWriter(path, sharded.map(_.schema).getOrElse(dataSchema), options, context,
      sharded)
}

private[sparktfrecord] object TFRecordOutputWriterFactory {
  final val Extension = ".tfrecord"
}
